package testkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// modulePath is the root module's path; the temporal/, e2e/ and bench/
// modules live under it.
const modulePath = "github.com/agcore/agcore"

// layers is ARCHITECTURE.md's import order, lowest first, by package tree
// (a path names the package and every package below it; the longest
// match wins). A package may import packages of a lower layer, and
// packages of its own tree; never a package of its own layer's other trees
// or of a higher layer. A new package must be placed here.
var layers = []struct {
	what  string
	trees []string
}{
	{"standard-library foundations (they import only the standard library)",
		[]string{"observe", "clock", "internal/jsonscan", "internal/jsonw", "internal/redact", "internal/sse"}},
	{"the message model", []string{"llm"}},
	{"on llm: the tool model, the catalog, costs, the session model and its stores, the HTTP transport, the scripted model",
		[]string{"tool", "catalog", "usage", "session", "internal/httpx", "llmtest"}},
	{"on those: approval's broker, the budget policy, MCP tools", []string{"approval", "compact", "mcp"}},
	{"the model pipeline's decorators, spending limits, the provider adapters and the record/replay of runs (none imports another)", []string{"middleware", "budget", "provider", "replay"}},
	{"the agent, and history without it", []string{"agent", "conversation"}},
	{"what runs or observes agents, and typed answers over them", []string{"otelagent", "memory", "serve", "structured"}},
	{"evaluation of agents (its judge answers through structured)", []string{"eval"}},
	{"test rigs", []string{"internal/testkit"}},
	{"programs, examples and the other modules", []string{"cmd", "examples", "zz_skipped", "temporal", "e2e", "bench"}},
}

// rigs are the packages that exist for tests: the internal/testkit tree,
// and the test helpers kept beside what they test.
var rigs = []string{"internal/testkit", "llmtest", "session/sessiontest", "provider/providertest", "eval/evaltest", "compact/internal/compacttest", "session/internal/powerfs"}

// nonProduction are the trees that may depend on rigs besides the rigs
// themselves: the examples (they script their model with llmtest) and the
// skip reporter, a test-only package.
var nonProduction = []string{"examples", "zz_skipped", "e2e", "bench"}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// tree returns the entry of trees that holds the module-relative path rel
// (the longest), or "".
func tree(rel string, trees []string) string {
	best := ""
	for _, t := range trees {
		if (rel == t || strings.HasPrefix(rel, t+"/")) && len(t) > len(best) {
			best = t
		}
	}
	return best
}

// layerOf returns the layer index and tree of rel, or -1.
func layerOf(rel string) (int, string) {
	best, at := "", -1
	for i, l := range layers {
		if t := tree(rel, l.trees); len(t) > len(best) {
			best, at = t, i
		}
	}
	return at, best
}

// isStd reports whether path is a standard-library package (its first
// element has no dot).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func rel(path string) (string, bool) {
	if path == modulePath {
		return "", true
	}
	r, ok := strings.CutPrefix(path, modulePath+"/")
	return r, ok
}

// listModule returns `go list -json` of every package of the module in
// dir (Deps: the transitive dependencies, as `go list -deps` walks them).
func listModule(t *testing.T, goBin, dir string) []listed {
	t.Helper()
	cmd := exec.Command(goBin, "list", "-json", "./...")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list in %s listed no package", dir)
	}
	return pkgs
}

// checkLayers returns what is wrong with pkgs: a production package that
// depends on a rig (directly or not), an import that runs upward or
// sideways, a foundation that imports outside the standard library, a
// package the layer table does not place.
func checkLayers(pkgs []listed, std func(string) bool) []string {
	var bad []string
	for _, p := range pkgs {
		r, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		at, own := layerOf(r)
		if at < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no layer: place it in layers (internal/testkit/layers_test.go) and ARCHITECTURE.md", r))
			continue
		}
		if tree(r, rigs) == "" && tree(r, nonProduction) == "" {
			for _, d := range p.Deps {
				if dr, ok := rel(d); ok && tree(dr, rigs) != "" {
					bad = append(bad, fmt.Sprintf("production package %s depends on the test rig %s", r, dr))
				}
			}
		}
		for _, imp := range p.Imports {
			ir, ok := rel(imp)
			if !ok {
				if at == 0 && !std(imp) {
					bad = append(bad, fmt.Sprintf("%s (a standard-library foundation) imports %s", r, imp))
				}
				continue
			}
			iat, itree := layerOf(ir)
			switch {
			case iat < 0:
				// reported for the package itself
			case itree == own:
			case iat > at:
				bad = append(bad, fmt.Sprintf("%s (layer %d, %s) imports %s (layer %d, %s): upward", r, at, layers[at].what, ir, iat, layers[iat].what))
			case iat == at:
				bad = append(bad, fmt.Sprintf("%s imports %s: both in layer %d (%s), whose trees do not import each other", r, ir, at, layers[at].what))
			}
		}
	}
	return bad
}

// TestLayers checks the import graph of the root module and of the
// temporal/, e2e/ and bench/ modules against ARCHITECTURE.md's order: no
// production package depends on a test rig, and no import runs upward.
func TestLayers(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "go is not on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []listed
	for _, dir := range []string{".", "temporal", "e2e", "bench"} {
		pkgs = append(pkgs, listModule(t, goBin, filepath.Join(root, dir))...)
	}
	for _, b := range checkLayers(pkgs, isStd) {
		t.Error(b)
	}
	// The check sees what it must: the module's own packages, the command.
	var names []string
	for _, p := range pkgs {
		names = append(names, p.ImportPath)
	}
	for _, want := range []string{modulePath + "/agent", modulePath + "/cmd/agcore", modulePath + "/temporal"} {
		if !slices.Contains(names, want) {
			t.Errorf("go list did not list %s", want)
		}
	}
}

// TestLayersCatches: the check reports an upward import, a sideways one,
// a production package depending on a rig through another package, a
// foundation importing outside the standard library, and an unplaced
// package; and accepts imports within a tree.
func TestLayersCatches(t *testing.T) {
	m := func(r string) string { return modulePath + "/" + r }
	pkgs := []listed{
		{ImportPath: m("llm"), Imports: []string{m("tool")}},                                                   // upward
		{ImportPath: m("middleware"), Imports: []string{m("provider/openai")}},                                 // sideways
		{ImportPath: m("serve"), Imports: []string{m("agent")}, Deps: []string{m("internal/testkit/testenv")}}, // a rig, indirectly
		{ImportPath: m("observe"), Imports: []string{"github.com/x/y", "context"}},                             // a foundation's dependency
		{ImportPath: m("nowhere"), Imports: nil},                                                               // unplaced
		{ImportPath: m("session/stores"), Imports: []string{m("session/postgres"), m("session")}},              // within a tree
		{ImportPath: m("examples/agent"), Imports: []string{m("llmtest")}, Deps: []string{m("llmtest")}},
		{ImportPath: m("internal/testkit/sizeprobe"), Imports: []string{m("provider/openai")}}, // a rig may import anything below it
	}
	got := checkLayers(pkgs, isStd)
	for _, want := range []string{
		"llm (layer 1", "middleware imports provider/openai", "production package serve depends on the test rig internal/testkit/testenv",
		"observe (a standard-library foundation) imports github.com/x/y", "nowhere is in no layer",
	} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("the check did not report %q; it reported:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 5 {
		t.Errorf("the check reported %d problems, want 5:\n%s", len(got), strings.Join(got, "\n"))
	}
}
