package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutsideAdapterJoinsTheCLI: a provider adapter written in another
// module (testdata/outside: module example.com/outside) registers itself
// with provider/registry from its init; a command built from
// cmd/agcore/command with that package imported offers it like agcore's
// own: in --provider's help, in run's providers section, and `agcore run
// --provider echo` answers through it, with its key and base-URL
// variables resolved by the registry.
func TestOutsideAdapterJoinsTheCLI(t *testing.T) {
	skipShort(t, "builds a second agcore binary")
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The outside module, copied out of the tree, in a workspace with
	// this one (it needs agcore at this commit, not a published version).
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte("go "+goVersion(t, root)+"\n\nuse (\n\t.\n\t"+root+"\n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "agcore-outside")
	build := exec.Command("go", "build", "-o", bin, "./cmd/agcore")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the command with the outside adapter: %v\n%s", err, out)
	}

	var got struct{ Model, Prompt, Auth string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got)
		got.Auth = r.Header.Get("Authorization")
		if r.URL.Path != "/echo" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"text": "echo: " + got.Prompt})
	}))
	defer srv.Close()

	c := newCLI(t)
	c.env["ECHO_BASE_URL"] = srv.URL
	c.env["ECHO_API_KEY"] = "echo-key"
	run := func(args ...string) result {
		cmd := c.command(t.Context(), args...)
		cmd.Path, cmd.Args[0] = bin, bin
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := result{stdout: out.String(), stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return r
	}

	help := run("run", "--help")
	if help.code != 0 || !strings.Contains(help.stdout, "openai, openai-responses, anthropic") || !strings.Contains(help.stdout, "demo, echo,") ||
		!strings.Contains(help.stdout, "an adapter from outside agcore's module") {
		t.Fatalf("run --help does not offer echo after the built-in providers (exit %d):\n%s", help.code, help.stdout)
	}
	r := run("run", "--provider", "echo", "--store", "memory:", "hello there")
	if r.code != 0 || !strings.Contains(r.stdout, "echo: hello there") {
		t.Fatalf("agcore run --provider echo: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got.Model != "echo-1" || got.Auth != "Bearer echo-key" {
		t.Fatalf("the adapter was called with model %q and %q; want its default model and ECHO_API_KEY", got.Model, got.Auth)
	}
	r = run("run", "--provider", "nope", "--store", "memory:", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, "echo") {
		t.Fatalf("an unknown provider's error does not list echo: exit %d\n%s", r.code, r.stderr)
	}
}

// goVersion returns the go line of the module at root.
func goVersion(t *testing.T, root string) string {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return v
		}
	}
	t.Fatal("no go line in go.mod")
	return ""
}
