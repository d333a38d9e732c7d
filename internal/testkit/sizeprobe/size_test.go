package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// maxProbeBytes is the most the standard agent (this directory's main) may
// weigh, built with go build's default flags. It was 22.9 MB while package
// compact linked the tiktoken vocabularies; it is 10.6 MB without them
// (10.8 MB with the telemetry seam, agent.Telemetry and package observe,
// which link no OpenTelemetry: the OpenTelemetry API alone would add 0.6 MB;
// 10.99 MB before milestone 3, 11.13 MB with its spending limits, handoffs,
// agents as tools and guardrails, all in the standard agent).
const maxProbeBytes = 11_300_000

// exactTokenizer is the tokenizer module (its vocabularies add about 9 MB
// to a binary; compact/tiktoken links only its split patterns and keeps
// its own compact vocabularies, 1.6 MB); only compact/tiktoken may link it.
const exactTokenizer = "github.com/tiktoken-go/tokenizer"

func goTool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "go is not on PATH")
	}
	return path
}

// TestCorePackagesDoNotLinkTheExactTokenizer keeps the tokenizer's tables
// out of every agent binary: agent, middleware, compact and the provider
// adapters must not depend on it, directly or not.
func TestCorePackagesDoNotLinkTheExactTokenizer(t *testing.T) {
	goBin := goTool(t)
	pkgs := []string{"agent", "middleware", "compact", "catalog", "usage", "provider/openai", "provider/anthropic", "conversation"}
	for _, p := range pkgs {
		out, err := exec.Command(goBin, "list", "-deps", "github.com/agcore/agcore/"+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == exactTokenizer || strings.HasPrefix(dep, exactTokenizer+"/") {
				t.Errorf("%s depends on %s; exact counting belongs in compact/tiktoken", p, dep)
			}
		}
	}
	// The check itself works: compact/tiktoken does link it.
	out, err := exec.Command(goBin, "list", "-deps", "github.com/agcore/agcore/compact/tiktoken").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\n"+exactTokenizer) {
		t.Fatalf("compact/tiktoken does not list %s: %v", exactTokenizer, err)
	}
}

// openTelemetry is the path prefix of the OpenTelemetry modules: about
// 0.6 MB of API alone in an agent binary, so only otelagent (and what
// imports it, the CLI) may link them; the core reaches telemetry through
// agent.Telemetry and package observe, which import neither.
const openTelemetry = "go.opentelemetry.io/"

// TestCorePackagesDoNotLinkOpenTelemetry keeps OpenTelemetry out of every
// program that does not import otelagent.
func TestCorePackagesDoNotLinkOpenTelemetry(t *testing.T) {
	goBin := goTool(t)
	pkgs := []string{"agent", "middleware", "compact", "catalog", "usage", "provider/openai", "provider/anthropic",
		"conversation", "tool", "mcp", "observe", "session/sqlite", "memory", "internal/testkit/sizeprobe"}
	for _, p := range pkgs {
		out, err := exec.Command(goBin, "list", "-deps", "github.com/agcore/agcore/"+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, openTelemetry) {
				t.Errorf("%s depends on %s; OpenTelemetry belongs in otelagent", p, dep)
				break
			}
		}
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/agcore/agcore/otelagent").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\n"+openTelemetry+"otel/trace\n") {
		t.Fatalf("otelagent does not list %sotel/trace: %v", openTelemetry, err)
	}
}

// TestStandardAgentBinarySize builds this directory's main (agent, tool
// loop and retry over the OpenAI adapter, estimator, no store) and checks
// its size. Skipped in -short mode: the build takes a few seconds.
func TestStandardAgentBinarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	goBin := goTool(t)
	bin := filepath.Join(t.TempDir(), "probe")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("standard agent binary: %d bytes (%.1f MB)", fi.Size(), float64(fi.Size())/1e6)
	if fi.Size() > maxProbeBytes {
		t.Errorf("the standard agent binary is %d bytes, over %d: see what grew with go tool nm -size -sort size", fi.Size(), maxProbeBytes)
	}
}
