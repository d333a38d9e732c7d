package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestOtelPlan: which of --otel and the OTEL_* environment export, where
// and how.
func TestOtelPlan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flag    string
		env     map[string]string
		want    string // protocol traces metrics service content, or "none"
		wantErr string
	}{
		{name: "nothing set", want: "none"},
		{name: "base endpoint, http/protobuf by default", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318/"},
			want: "http/protobuf http://localhost:4318/v1/traces http://localhost:4318/v1/metrics agcore false"},
		{name: "grpc takes the endpoint as it is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_SERVICE_NAME": "svc"},
			want: "grpc http://collector:4317 http://collector:4317 svc false"},
		{name: "per-signal endpoints are full URLs", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://x/traces"},
			want: "http/protobuf https://x/traces  agcore false"},
		{name: "metrics off", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_METRICS_EXPORTER": "none", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
			want: "http/protobuf http://h:4318/v1/traces  agcore true"},
		{name: "both off", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_METRICS_EXPORTER": "none", "OTEL_TRACES_EXPORTER": "none"}, want: "none"},
		{name: "disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_SDK_DISABLED": "TRUE"}, want: "none"},
		{name: "the flag wins over disabled and the environment's endpoints", flag: "http://127.0.0.1:9", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://other/v1/traces"},
			want: "http/protobuf http://127.0.0.1:9/v1/traces http://127.0.0.1:9/v1/metrics agcore false"},
		{name: "http/json", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: "not supported"},
		{name: "a console exporter", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_TRACES_EXPORTER": "console"}, wantErr: "not supported"},
		{name: "not a URL", flag: "localhost:4318", wantErr: "not an http or https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := otelPlan(tc.flag, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := "none"
			if p != nil {
				got = strings.Join([]string{p.protocol, p.traces, p.metrics, p.service, map[bool]string{true: "true", false: "false"}[p.content]}, " ")
			}
			if got != tc.want {
				t.Errorf("plan %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOtelFlagExports: --otel makes a turn export its spans (protobuf over
// HTTP; the real-collector test is in e2e/) and a bad --otel only warns.
func TestOtelFlagExports(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		got[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	for _, tc := range []struct {
		otel, wantErr string
	}{{srv.URL, ""}, {"localhost:4318", "agcore: telemetry not exported: the OTLP endpoint"}} {
		home := t.TempDir()
		var stdout, stderr strings.Builder
		code := Main(context.Background(), []string{"demo", "--json", "--store", "memory:", "--root", home, "--otel", tc.otel}, Env{
			Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Cwd: home, UserHome: home,
			Getenv: func(k string) (string, bool) { return map[string]string{"AGCORE_HOME": home}[k], k == "AGCORE_HOME" },
		})
		if code != ExitOK || !strings.Contains(stdout.String(), `"type":"done"`) {
			t.Fatalf("--otel %s: exit %d\n%s\n%s", tc.otel, code, stdout.String(), stderr.String())
		}
		if tc.wantErr != "" && !strings.Contains(stderr.String(), tc.wantErr) || tc.wantErr == "" && stderr.Len() > 0 {
			t.Errorf("--otel %s: stderr %q", tc.otel, stderr.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got["/v1/traces"] == 0 || got["/v1/metrics"] == 0 {
		t.Errorf("the collector received %v", got)
	}
}
