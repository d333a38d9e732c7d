package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/goleak"
)

// cli is the agcore binary, built once from the repository by TestMain.
var cli string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agcore-e2e")
	if err != nil {
		panic(err)
	}
	cli = filepath.Join(dir, "agcore")
	// Built by the main module, with its own dependency versions: the binary
	// users get, not one resolved against this module's.
	build := exec.Command("go", "build", "-o", cli, "./cmd/agcore")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("building agcore: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// freeAddr returns a 127.0.0.1 address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// collector is the OpenTelemetry Collector's OTLP receiver on 127.0.0.1,
// over gRPC and HTTP, handing what it receives to in-memory sinks.
type collector struct {
	grpc, http string // host:port
	traces     *consumertest.TracesSink
	metrics    *consumertest.MetricsSink
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{grpc: freeAddr(t), http: freeAddr(t), traces: new(consumertest.TracesSink), metrics: new(consumertest.MetricsSink)}
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = c.grpc
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = c.http
	ctx := context.Background()
	set := receivertest.NewNopSettings(f.Type())
	tr, err := f.CreateTraces(ctx, set, cfg, c.traces)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(ctx, set, cfg, c.metrics)
	if err != nil {
		t.Fatal(err)
	}
	// The factory shares one receiver between the signals: start it once.
	if err := tr.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		_ = mr
	})
	return c
}

// span is one received span, flattened.
type span struct {
	name, kind     string
	traceID        string
	spanID, parent string
	attrs          map[string]string
	status         string
	service        string
}

func (c *collector) spans() []span {
	var out []span
	for _, td := range c.traces.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					a := map[string]string{}
					s.Attributes().Range(func(k string, v pcommon.Value) bool {
						a[k] = v.AsString()
						return true
					})
					out = append(out, span{
						name: s.Name(), kind: s.Kind().String(), traceID: s.TraceID().String(),
						spanID: s.SpanID().String(), parent: s.ParentSpanID().String(), attrs: a,
						status: s.Status().Code().String(), service: svc.AsString(),
					})
				}
			}
		}
	}
	return out
}

func (c *collector) metricNames() []string {
	var out []string
	for _, md := range c.metrics.AllMetrics() {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					out = append(out, m.Name())
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// runDemo runs `agcore demo` (the offline scripted model: one turn that
// lists and reads files with the real tools) with env and args, and returns
// its exit error, stderr and how long it took.
func runDemo(t *testing.T, env []string, args ...string) (error, string, time.Duration) {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# demo project\nA project to look at.\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	home := t.TempDir()
	cmd := exec.Command(cli, append([]string{"demo", "--json", "--store", "memory:", "--root", root}, args...)...)
	cmd.Dir = root
	cmd.Env = append([]string{"HOME=" + home, "AGCORE_HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if !strings.Contains(stdout.String(), `"type":"done"`) {
		t.Errorf("the turn did not finish: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	return err, stderr.String(), took
}

// checkTurn checks the spans of one demo turn: one trace, rooted at
// invoke_agent, with the model calls, the tool calls and persistence as
// its children, from the named service.
func checkTurn(t *testing.T, spans []span, service string) {
	t.Helper()
	var names []string
	for _, s := range spans {
		names = append(names, s.name)
	}
	var root *span
	for i := range spans {
		if spans[i].name == "invoke_agent agcore" {
			if root != nil {
				t.Fatalf("two invoke_agent spans: %q", names)
			}
			root = &spans[i]
		}
	}
	slices.Sort(names)
	t.Logf("received spans: %q", names)
	if root == nil {
		t.Fatalf("no invoke_agent span among %q", names)
	}
	count := map[string]int{}
	for _, s := range spans {
		count[s.name]++
		if s.traceID != root.traceID {
			t.Errorf("span %q is in another trace", s.name)
		}
		if s.service != service {
			t.Errorf("span %q comes from service %q, want %q", s.name, s.service, service)
		}
		if s.spanID != root.spanID && s.parent != root.spanID {
			t.Errorf("span %q is not a child of the run", s.name)
		}
		if s.status == "Error" {
			t.Errorf("span %q failed: %v", s.name, s.attrs)
		}
	}
	if count["chat scripted-demo"] < 2 || count["execute_tool list_dir"] != 1 || count["execute_tool read_file"] < 1 || count["agcore.persistence"] != 0 && count["agcore.persistence"] != 1 {
		t.Errorf("span counts %v", count)
	}
	want := map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "agcore", "gen_ai.request.model": "scripted-demo", "gen_ai.provider.name": "demo"}
	for k, v := range want {
		if root.attrs[k] != v {
			t.Errorf("invoke_agent %s = %q, want %q (all: %v)", k, root.attrs[k], v, root.attrs)
		}
	}
	for _, s := range spans {
		if s.name == "chat scripted-demo" && (s.kind != ptrace.SpanKindClient.String() || s.attrs["gen_ai.usage.output_tokens"] == "") {
			t.Errorf("chat span %s %v", s.kind, s.attrs)
		}
		if s.name == "execute_tool list_dir" && s.attrs["gen_ai.tool.call.id"] == "" {
			t.Errorf("execute_tool span %v", s.attrs)
		}
		if _, ok := s.attrs["gen_ai.input.messages"]; ok {
			t.Errorf("span %q records content without the opt-in", s.name)
		}
	}
}

// TestCLIExportsOverOTLP: the built CLI, told by the standard environment
// variables or --otel, exports a turn's spans and metrics to a real OTLP
// receiver, over HTTP (protobuf) and gRPC.
func TestCLIExportsOverOTLP(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(c *collector) []string
		args func(c *collector) []string
	}{
		{"env http/protobuf", func(c *collector) []string {
			return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + c.http, "OTEL_SERVICE_NAME=e2e-http"}
		}, nil},
		{"env grpc", func(c *collector) []string {
			return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + c.grpc, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_SERVICE_NAME=e2e-grpc"}
		}, nil},
		{"flag, despite OTEL_SDK_DISABLED", func(*collector) []string {
			return []string{"OTEL_SDK_DISABLED=true", "OTEL_SERVICE_NAME=e2e-flag"}
		}, func(c *collector) []string { return []string{"--otel", "http://" + c.http} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCollector(t)
			var args []string
			if tc.args != nil {
				args = tc.args(c)
			}
			env := tc.env(c)
			if err, stderr, _ := runDemo(t, env, args...); err != nil || strings.Contains(stderr, "telemetry") {
				t.Fatalf("exit: %v; stderr: %s", err, stderr)
			}
			service := strings.TrimPrefix(env[len(env)-1], "OTEL_SERVICE_NAME=")
			checkTurn(t, c.spans(), service)
			names := c.metricNames()
			for _, m := range []string{"gen_ai.client.operation.duration", "gen_ai.client.token.usage", "gen_ai.client.operation.time_to_first_chunk"} {
				if !slices.Contains(names, m) {
					t.Errorf("metric %s not received; got %q", m, names)
				}
			}
		})
	}
}

// TestCLIWithoutExport: without --otel and an endpoint, or with
// OTEL_SDK_DISABLED, nothing is sent.
func TestCLIWithoutExport(t *testing.T) {
	c := startCollector(t)
	for _, env := range [][]string{nil, {"OTEL_SDK_DISABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + c.http}} {
		if err, stderr, _ := runDemo(t, env); err != nil {
			t.Fatalf("exit: %v; stderr: %s", err, stderr)
		}
	}
	if n := c.traces.SpanCount(); n != 0 {
		t.Errorf("%d spans received", n)
	}
}

// TestCLIExportNeverFailsATurn: a collector that is not there fails no
// turn, and the CLI exits within the flush deadline, saying so once.
func TestCLIExportNeverFailsATurn(t *testing.T) {
	dead := freeAddr(t)
	err, stderr, took := runDemo(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + dead})
	if err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, stderr)
	}
	if !strings.Contains(stderr, "agcore: telemetry export failed") {
		t.Errorf("stderr does not say the export failed: %q", stderr)
	}
	if took > 10*time.Second {
		t.Errorf("the CLI took %s with a dead collector", took)
	}
}

// TestCLIExitWaitsAtMostTheFlushDeadline: a collector that accepts
// connections and never answers delays the CLI's exit by at most the
// flush deadline (2 s), and the turn itself not at all.
func TestCLIExitWaitsAtMostTheFlushDeadline(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }() // hold it, say nothing
		}
	}()
	err, stderr, took := runDemo(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + l.Addr().String()})
	if err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, stderr)
	}
	if took > 6*time.Second {
		t.Errorf("the CLI took %s to exit with a silent collector", took)
	}
	t.Logf("exit after %s; stderr: %s", took.Round(time.Millisecond), strings.TrimSpace(stderr))
}

// TestCLIContentOptIn: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
// records the messages.
func TestCLIContentOptIn(t *testing.T) {
	c := startCollector(t)
	if err, stderr, _ := runDemo(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + c.http, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"}); err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, stderr)
	}
	found := false
	for _, s := range c.spans() {
		if s.name == "chat scripted-demo" && strings.Contains(s.attrs["gen_ai.input.messages"], "overview of the working directory") {
			found = true
		}
	}
	if !found {
		t.Error("no chat span holds the prompt")
	}
}
