package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// echoing is a model that answers whatever it is asked, in any order: a
// user message "tool X" gets a call of the note tool with X, a tool
// result gets "noted: RESULT", any other "echo: TEXT".
func echoing(n int) *llmtest.Model {
	steps := make([]llmtest.Step, n)
	for i := range steps {
		steps[i] = llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			last := req.Messages[len(req.Messages)-1]
			switch {
			case last.Role == llm.RoleTool:
				return &llm.Response{Message: llm.AssistantText("noted: " + last.Text()), FinishReason: llm.FinishStop}, nil
			case strings.HasPrefix(last.Text(), "tool "):
				in, _ := json.Marshal(map[string]string{"text": strings.TrimPrefix(last.Text(), "tool ")})
				return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
					llm.ToolUse{ID: "call_" + last.Text()[5:], Name: "note", Input: in}}}, FinishReason: llm.FinishToolUse}, nil
			}
			return &llm.Response{Message: llm.AssistantText("echo: " + last.Text()), FinishReason: llm.FinishStop}, nil
		})
	}
	return llmtest.New(steps...)
}

// contextAgent is an agent over model whose runs are recorded in the
// recorder of their context.
func contextAgent(t *testing.T, model llm.Model) *agent.Agent {
	t.Helper()
	note, err := tool.Func("note", "Notes a text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return "kept " + in.Text, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(model, agent.Config{
		Tools:          []tool.Tool{note},
		Middleware:     []middleware.Middleware{replay.ContextMiddleware()},
		ToolMiddleware: []tool.Middleware{replay.ContextToolMiddleware()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestConcurrentRunsRecordInTheirOwnRecords runs the turns of several
// sessions at once on one agent, each run with its session's recorder in
// its context: every record holds its session's turns, calls and tool
// results, and none of another's.
func TestConcurrentRunsRecordInTheirOwnRecords(t *testing.T) {
	t.Parallel()
	const sessions = 6
	a := contextAgent(t, echoing(sessions*3))
	recs := make([]*replay.Recorder, sessions)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		recs[i] = replay.Memory(replay.Header{})
		wg.Go(func() {
			sess := &session.Session{ID: fmt.Sprintf("s%d", i)}
			for _, in := range []string{fmt.Sprintf("hello %d", i), fmt.Sprintf("tool %d", i)} {
				msgs := []llm.Message{llm.UserText(in)}
				ctx := replay.WithTurn(context.Background(), recs[i], sess.ID, msgs)
				if _, err := a.Run(ctx, msgs, &agent.RunOptions{Session: sess}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, rec := range recs {
		r := rec.Record()
		id := fmt.Sprintf("s%d", i)
		if len(r.Turns) != 2 || len(r.Calls) != 3 || len(r.Tools) != 1 {
			t.Fatalf("session %s: %d turns, %d calls, %d tool results; want 2, 3, 1", id, len(r.Turns), len(r.Calls), len(r.Tools))
		}
		for _, tr := range r.Turns {
			if tr.Session != id || !strings.HasSuffix(tr.Input[0].Text(), fmt.Sprint(" ", i)) {
				t.Errorf("session %s: turn %d is %q on %s", id, tr.N, tr.Input[0].Text(), tr.Session)
			}
		}
		if len(r.Turns[1].History) != 0 {
			t.Errorf("session %s: the second turn keeps a history", id)
		}
		for _, c := range r.Calls {
			for _, m := range c.Request.Messages {
				if m.Role == llm.RoleUser && !strings.HasSuffix(m.Text(), fmt.Sprint(" ", i)) {
					t.Errorf("session %s: call %d carries another session's message %q", id, c.N, m.Text())
				}
			}
		}
		if wantTurn := []int{1, 2, 2}; r.Calls[0].Turn != wantTurn[0] || r.Calls[1].Turn != wantTurn[1] || r.Calls[2].Turn != wantTurn[2] {
			t.Errorf("session %s: calls in turns %d, %d, %d", id, r.Calls[0].Turn, r.Calls[1].Turn, r.Calls[2].Turn)
		}
		if tr := r.Tools[0]; tr.Turn != 2 || tr.Output != fmt.Sprint("kept ", i) {
			t.Errorf("session %s: tool result %+v", id, tr)
		}
	}
}

// TestWithTurnMarksTheTurnAtItsFirstCall: a context that makes no model
// call leaves no turn in the record; a context without a recorder passes
// its calls through.
func TestWithTurnMarksTheTurnAtItsFirstCall(t *testing.T) {
	t.Parallel()
	rec := replay.Memory(replay.Header{})
	m := replay.ContextMiddleware()(echoing(2))
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	_ = replay.WithTurn(context.Background(), rec, "s", req.Messages) // a run that never called
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if r := rec.Record(); len(r.Turns) != 0 || len(r.Calls) != 0 {
		t.Fatalf("recorded without a call under the context: %d turns, %d calls", len(r.Turns), len(r.Calls))
	}
	ctx := replay.WithTurn(context.Background(), rec, "s", []llm.Message{llm.SystemText("ignored"), llm.UserText("hi")})
	if replay.FromContext(ctx) != rec {
		t.Fatal("FromContext does not return the context's recorder")
	}
	if _, err := m.Generate(ctx, req); err != nil {
		t.Fatal(err)
	}
	if r := rec.Record(); len(r.Turns) != 1 || len(r.Calls) != 1 || len(r.Turns[0].Input) != 1 || r.Calls[0].Turn != 1 {
		t.Fatalf("record: %+v", r)
	}

	// WithRecorder marks nothing: a recorder never marked infers its turns.
	inferred := replay.Memory(replay.Header{})
	ctx = replay.WithRecorder(context.Background(), inferred)
	if replay.FromContext(ctx) != inferred || replay.FromContext(context.Background()) != nil {
		t.Fatal("FromContext does not return the context's recorder")
	}
	if _, err := replay.ContextMiddleware()(echoing(1)).Generate(ctx, req); err != nil {
		t.Fatal(err)
	}
	if r := inferred.Record(); len(r.Turns) != 1 || r.Turns[0].Session != "turn-1" || len(r.Calls) != 1 {
		t.Fatalf("record with inferred turns: %+v", r)
	}
}

// TestAppendGoesOnAfterTheRecord reopens a record: its header is kept,
// turns and calls are numbered on, a line cut short is dropped, and the
// whole reads back as one record.
func TestAppendGoesOnAfterTheRecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	m := replay.ContextMiddleware()(echoing(3))
	turn := func(h replay.Header, in string) {
		t.Helper()
		rec, err := replay.Append(path, h)
		if err != nil {
			t.Fatal(err)
		}
		msgs := []llm.Message{llm.UserText(in)}
		if _, err := m.Generate(replay.WithTurn(context.Background(), rec, "s", msgs), &llm.Request{Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
	}
	turn(replay.Header{Model: "first"}, "one")
	turn(replay.Header{Model: "second"}, "two")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"call","n":3,"req`) // a writer that died mid-line
	f.Close()
	turn(replay.Header{}, "three")

	rec, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Header.Model != "first" || len(rec.Turns) != 3 || len(rec.Calls) != 3 {
		t.Fatalf("header model %q, %d turns, %d calls", rec.Header.Model, len(rec.Turns), len(rec.Calls))
	}
	for i, tr := range rec.Turns {
		if tr.N != i+1 || rec.Calls[i].Turn != i+1 || rec.Calls[i].Response.Message.Text() != "echo: "+tr.Input[0].Text() {
			t.Errorf("turn %d: %+v, call %+v", i+1, tr, rec.Calls[i])
		}
	}

	// Not a record: refused, left alone.
	other := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(other, []byte("notes\n"), 0o600)
	if _, err := replay.Append(other, replay.Header{}); !errors.Is(err, replay.ErrFormat) {
		t.Fatalf("Append to a file that is not a record: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "notes\n" {
		t.Fatalf("the file was changed: %q", b)
	}
}

// TestDirFileNames: whatever the key, its record is a file directly in
// the directory, and two keys never share one.
func TestDirFileNames(t *testing.T) {
	t.Parallel()
	d, err := replay.OpenDir(filepath.Join(t.TempDir(), "records"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, key := range []string{"", "local/s1", "local/s1 ", "local_s1", "../../etc/passwd", "a/../../b", "..", "/abs", `c:\x`, "x\x00y", strings.Repeat("long", 100), strings.Repeat("long", 100) + "!"} {
		f := d.File(key)
		name := filepath.Base(f)
		if filepath.Dir(f) != d.Path() || !strings.HasSuffix(name, ".jsonl") || strings.Contains(name, "..") || len(name) > 100 {
			t.Errorf("key %q: file %q", key, f)
		}
		if k, dup := seen[f]; dup {
			t.Errorf("keys %q and %q share %s", k, key, f)
		}
		seen[f] = key
	}
}

// TestDirSerializesAKeyAndReopens: a key's runs wait for each other;
// with one record kept open, a key whose record was closed goes on in it
// at its next run.
func TestDirSerializesAKeyAndReopens(t *testing.T) {
	t.Parallel()
	d, err := replay.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.MaxOpen = 1
	m := replay.ContextMiddleware()(echoing(4))
	run := func(ctx context.Context, key, in string) {
		t.Helper()
		msgs := []llm.Message{llm.UserText(in)}
		ctx, end, err := d.Begin(ctx, key, replay.Header{Model: key}, key, msgs)
		if err != nil {
			t.Fatal(err)
		}
		defer end()
		if _, err := m.Generate(ctx, &llm.Request{Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}

	_, end, err := d.Begin(context.Background(), "a", replay.Header{}, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := d.Begin(ctx, "a", replay.Header{}, "a", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("a second run of a key did not wait for the first: %v", err)
	}
	end()

	run(context.Background(), "a", "a1")
	run(context.Background(), "b", "b1") // closes a's record
	run(context.Background(), "c", "c1") // closes b's
	run(context.Background(), "a", "a2") // reopens a's
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Begin(context.Background(), "a", replay.Header{}, "a", nil); !errors.Is(err, replay.ErrDirClosed) {
		t.Fatalf("Begin after Close: %v", err)
	}
	rec, err := replay.Load(d.File("a"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 2 || len(rec.Calls) != 2 || rec.Turns[1].N != 2 || rec.Calls[1].Turn != 2 || rec.Turns[1].Input[0].Text() != "a2" {
		t.Fatalf("a's record: %+v", rec)
	}
	entries, _ := os.ReadDir(d.Path())
	if len(entries) != 3 {
		t.Fatalf("%d files, want 3 (a, b, c)", len(entries))
	}
}
