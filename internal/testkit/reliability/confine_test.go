package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/faultserver"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/sqlite"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/tool/fstool"
)

// confined is a test directory: a root for stores or tools, beside an
// outside directory holding a secret that must stay out of reach.
type confined struct {
	base, root, outside, secretFile string
}

const outsideSecret = "OUTSIDE-THE-ROOT-5ec2e7"

func newConfined(t *testing.T) confined {
	t.Helper()
	base := t.TempDir()
	c := confined{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	c.secretFile = filepath.Join(c.outside, "secret.txt")
	for _, d := range []string{c.root, c.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(c.secretFile, []byte(outsideSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// unchanged fails if anything outside the root was created or changed.
func (c confined) unchanged(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(c.secretFile)
	if err != nil || string(b) != outsideSecret+"\n" {
		t.Fatalf("the file outside the root changed: %q, %v", b, err)
	}
	for _, dir := range []string{c.base, c.outside} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if n := e.Name(); n != "root" && n != "outside" && n != "secret.txt" {
				t.Fatalf("%s appeared outside the root", filepath.Join(dir, n))
			}
		}
	}
}

var escapingIDs = []string{"..", "../escape", "../outside/secret", "/etc/passwd", "a/b", `a\b`, "a\x00b", "C:x", "", "sub/../../x"}

// TestSessionIDsCannotEscapeTheStore runs agent turns whose session ids
// try to leave the store (.., absolute, separators, NUL) against every
// store: each fails with session.ErrInvalidID before any model call, and
// nothing outside the store's root appears or changes. A log file planted
// as a symbolic link to a file outside is not followed either.
func TestSessionIDsCannotEscapeTheStore(t *testing.T) {
	c := newConfined(t)
	fstore, err := filestore.Open(filepath.Join(c.root, "files"))
	if err != nil {
		t.Fatal(err)
	}
	defer fstore.Close()
	sstore, err := sqlite.Open(t.Context(), filepath.Join(c.root, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sstore.Close()
	srv := faultserver.New()
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	model := newAdapter(adapterConfig{format: faultserver.OpenAI, base: srv.OpenAIBaseURL(), key: "k", client: &http.Client{Transport: tr}})

	for _, store := range []session.Store{memstore.New(), fstore, sstore} {
		a := newAgent(pipeline(model, &fakeClock{}, 1), store, nil)
		for _, id := range escapingIDs {
			if id == "" {
				continue // an empty id means a run without a session
			}
			_, err := runTurn(t.Context(), a, id, "hello", true)
			if !errors.Is(err, session.ErrInvalidID) {
				t.Errorf("%T: session id %q: %v, want ErrInvalidID", store, id, err)
			}
		}
	}
	if n := srv.Requests(); n != 0 {
		t.Errorf("%d model calls were made for invalid sessions", n)
	}

	// A log planted as a link to a file outside is refused, not followed.
	if err := os.Symlink(c.secretFile, filepath.Join(c.root, "files", "planted.jsonl")); err != nil {
		t.Fatal(err)
	}
	s, err := fstore.Load(t.Context(), "planted")
	if err == nil && strings.Contains(strings.Join(textsOf(s.Messages), ""), outsideSecret) {
		t.Error("Load followed a planted link out of the store")
	}
	fstore.Append(t.Context(), "planted", session.Turn{ID: "t", Messages: []llm.Message{llm.UserText("x")}})
	fstore.Delete(t.Context(), "planted")
	c.unchanged(t)
}

func textsOf(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Text())
		for _, b := range m.Content {
			if tr, ok := b.(llm.ToolResult); ok {
				b, _ := json.Marshal(tr)
				out = append(out, string(b))
			}
		}
	}
	return out
}

// TestToolPathsCannotEscapeTheRoot has the model ask the built-in file
// tools, through the agent, for paths outside their root (.., absolute,
// links, NUL): every call becomes an error result, the turn goes on, and
// neither the transcript, nor the session, nor the next request ever holds
// what lies outside; write_file creates nothing outside.
func TestToolPathsCannotEscapeTheRoot(t *testing.T) {
	c := newConfined(t)
	for name, target := range map[string]string{
		"out.txt": c.secretFile, "outdir": c.outside, "up": "..", "dangling": filepath.Join(c.outside, "new.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(c.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	tools, err := fstool.New(c.root, fstool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"../outside/secret.txt", c.secretFile, "out.txt", "outdir/secret.txt", "up/outside/secret.txt", "a\x00/../../outside/secret.txt", "/etc/passwd"}
	var calls []faultserver.ToolCall
	for i, p := range paths {
		read, _ := json.Marshal(map[string]string{"path": p})
		write, _ := json.Marshal(map[string]string{"path": p, "content": "pwned"})
		calls = append(calls,
			faultserver.ToolCall{ID: "r" + string(rune('a'+i)), Name: "read_file", Args: string(read)},
			faultserver.ToolCall{ID: "w" + string(rune('a'+i)), Name: "write_file", Args: string(write)})
	}
	calls = append(calls, faultserver.ToolCall{ID: "w-dangling", Name: "write_file", Args: `{"path":"dangling","content":"pwned"}`},
		faultserver.ToolCall{ID: "ld", Name: "list_dir", Args: `{"path":"outdir"}`},
		faultserver.ToolCall{ID: "gr", Name: "grep", Args: `{"pattern":"OUTSIDE","path":"up"}`})

	srv := faultserver.New()
	defer srv.Close()
	srv.Enqueue(faultserver.Step{Reply: faultserver.Reply{ToolCalls: calls}}, faultserver.Step{Reply: faultserver.Reply{Text: "Nothing found."}})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	store := memstore.New()
	approveAll := tool.ApproverFunc(func(context.Context, tool.Call) (tool.Decision, error) {
		return tool.Decision{Approved: true}, nil
	})
	adapter := newAdapter(adapterConfig{format: faultserver.Anthropic, base: srv.AnthropicBaseURL(), key: "k", client: &http.Client{Transport: tr}})
	a := newAgent(built{adapter: adapter, attempts: 1, approver: approveAll, tools: tools}, store, nil)
	resp, err := runTurn(t.Context(), a, "tools", "look around", true)
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, m := range resp.Messages {
		if m.Role == llm.RoleTool {
			results++
			if !m.IsError {
				t.Errorf("call %s succeeded: %q", m.ToolCallID, m.Text())
			}
		}
	}
	if results != len(calls) {
		t.Fatalf("%d tool results for %d calls", results, len(calls))
	}
	s := checkSession(t, store, "tools", 1)
	for _, where := range []string{strings.Join(textsOf(s.Messages), "\n"), string(srv.Calls()[1].Body)} {
		if strings.Contains(where, outsideSecret) {
			t.Fatal("what lies outside the root reached the transcript or the model")
		}
	}
	c.unchanged(t)
}

// TestToolResultsAreSizeLimited has a tool return 8 MiB: the model gets,
// and the session stores, at most the invoker's limit (64 KiB by default)
// with a marker saying how much was cut.
func TestToolResultsAreSizeLimited(t *testing.T) {
	srv := faultserver.New()
	defer srv.Close()
	srv.Enqueue(faultserver.Step{Reply: faultserver.Reply{ToolCalls: []faultserver.ToolCall{{ID: "d1", Name: "dump"}}}},
		faultserver.Step{Reply: faultserver.Reply{Text: "ok"}})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	store := memstore.New()
	b := pipeline(newAdapter(adapterConfig{format: faultserver.OpenAI, base: srv.OpenAIBaseURL(), key: "k", client: &http.Client{Transport: tr}}), &fakeClock{}, 1)
	b.tools = []tool.Tool{bigTool(8 << 20)}
	a := newAgent(b, store, nil)
	if _, err := runTurn(t.Context(), a, "big", "dump it", false); err != nil {
		t.Fatal(err)
	}
	s := checkSession(t, store, "big", 1)
	for _, m := range s.Messages {
		if m.Role == llm.RoleTool {
			if n := len(m.Text()); n > tool.DefaultMaxResultBytes+256 || n < tool.DefaultMaxResultBytes/2 {
				t.Fatalf("the stored result is %d bytes, want about %d", n, tool.DefaultMaxResultBytes)
			}
			if !strings.Contains(m.Text(), "cut") && !strings.Contains(m.Text(), "truncated") {
				t.Fatalf("the cut result has no marker: …%s", m.Text()[len(m.Text())-100:])
			}
		}
	}
	if n := len(srv.Calls()[1].Body); n > 2*tool.DefaultMaxResultBytes {
		t.Fatalf("the request after the tool call is %d bytes", n)
	}
}

func bigTool(n int) tool.Tool {
	return tool.MustFunc("dump", "Returns a lot.", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("x", n), nil
	})
}

// TestErrorBodiesAreSizeLimited answers with a 4 MiB error body: the
// call fails promptly with a typed error whose text stays small.
func TestErrorBodiesAreSizeLimited(t *testing.T) {
	srv := faultserver.New()
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for _, f := range []faultserver.Format{faultserver.OpenAI, faultserver.Anthropic, faultserver.Gemini} {
		// A long idle timeout: the server takes a while to build the body.
		m := newAdapter(adapterConfig{format: f, base: baseURL(srv, f), key: "k", client: &http.Client{Transport: tr}, idle: 30 * time.Second})
		for _, stream := range []bool{false, true} {
			srv.Enqueue(faultserver.Step{Fault: faultserver.Status, Status: 500, Bytes: 4 << 20})
			req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
			var err error
			if stream {
				_, err = llm.Collect(m.Stream(t.Context(), req))
			} else {
				_, err = m.Generate(t.Context(), req)
			}
			if !errors.Is(err, llm.ErrServer) {
				t.Fatalf("%s stream=%v: %v, want ErrServer", f, stream, err)
			}
			if n := len(err.Error()); n > 4<<10 {
				t.Errorf("%s stream=%v: the error text is %d bytes", f, stream, n)
			}
		}
	}
}
