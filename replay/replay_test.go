package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// rig is what a recorded run and its replay share: how to build the
// agent's configuration (fresh tools each time) and the turns.
type rig struct {
	cfg   func(t *testing.T) agent.Config
	info  llm.ModelInfo
	turns []string
	// summarize: the budget policy summarizes with the model (through the
	// recorder when recording, the replaying model when replaying).
	summarize bool
}

// summarizing returns the policy that summarizes with model.
func summarizing(model llm.Model) *compact.Policy {
	return &compact.Policy{Strategy: compact.NewIncremental(compact.DefaultPipeline(model))}
}

// record runs the rig's turns on one session over the scripted model,
// recording them, and returns the record as read back from its file form.
func record(t *testing.T, r rig, steps ...llmtest.Step) *replay.Record {
	t.Helper()
	var file bytes.Buffer
	rec, err := replay.NewRecorder(&file, replay.Header{Provider: r.info.Provider, Model: r.info.Name, ContextWindow: r.info.ContextWindow, MaxOutputTokens: r.info.MaxOutputTokens})
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(steps...).WithInfo(r.info).Verify(t)
	cfg := r.cfg(t)
	var summaries *llmtest.Model
	if r.summarize {
		var steps []llmtest.Step
		for i := range 20 {
			steps = append(steps, llmtest.Text(fmt.Sprintf("summary %d: the user sent long texts", i+1)))
		}
		summaries = llmtest.New(steps...).WithInfo(r.info)
		cfg.Compaction = summarizing(rec.Middleware()(summaries))
	}
	cfg.Middleware = append(cfg.Middleware, rec.Middleware())
	cfg.ToolMiddleware = append(cfg.ToolMiddleware, rec.ToolMiddleware())
	a, err := agent.New(model, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sess := &session.Session{ID: "s1"}
	for _, in := range r.turns {
		msgs := []llm.Message{llm.UserText(in)}
		rec.Turn(sess.ID, msgs)
		if _, err := a.Run(context.Background(), msgs, &agent.RunOptions{Session: sess}); err != nil {
			t.Fatalf("recorded run: %v", err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := replay.Parse(&file)
	if err != nil {
		t.Fatalf("parse the record: %v\n%s", err, file.String())
	}
	sent := model.Requests()
	if summaries != nil {
		if summaries.Calls() == 0 {
			t.Fatal("the summarizing case never summarized: the test proves nothing")
		}
		sent = nil // interleaved: compared by purpose below
		for _, c := range got.Calls {
			if c.Request.Metadata["agcore.purpose"] == "" {
				sent = append(sent, c.Request)
			}
		}
		if len(sent) != model.Calls() {
			t.Fatalf("the record has %d agent calls, the model got %d", len(sent), model.Calls())
		}
		for i, want := range model.Requests() {
			if w, g := mustJSON(t, want), mustJSON(t, sent[i]); !bytes.Equal(w, g) {
				t.Fatalf("recorded request %d differs from the one the model got:\n%s\n%s", i+1, w, g)
			}
		}
		return got
	}
	if len(got.Calls) != model.Calls() {
		t.Fatalf("the record has %d calls, the model got %d", len(got.Calls), model.Calls())
	}
	for i, want := range sent {
		if w, g := mustJSON(t, want), mustJSON(t, got.Calls[i].Request); !bytes.Equal(w, g) {
			t.Fatalf("recorded request %d differs from the one the model got:\n%s\n%s", i+1, w, g)
		}
	}
	return got
}

// rerun replays rec's turns with the rig's configuration and returns the
// replaying model.
func rerun(t *testing.T, r rig, rec *replay.Record, opts replay.Options, tools ...string) (*replay.Model, error) {
	t.Helper()
	m := replay.NewModel(rec, opts)
	cfg := r.cfg(t)
	cfg.Retry = middleware.RetryConfig{MaxAttempts: 1}
	if r.summarize {
		cfg.Compaction = summarizing(m)
	}
	if len(tools) > 0 {
		cfg.ToolMiddleware = append(cfg.ToolMiddleware, rec.ToolMiddleware(tools...))
	}
	a, err := agent.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]*session.Session{}
	for _, turn := range rec.Turns {
		sess := sessions[turn.Session]
		if sess == nil {
			sess = &session.Session{ID: turn.Session, Messages: turn.History}
			sessions[turn.Session] = sess
		}
		if _, err := a.Run(context.Background(), turn.Input, &agent.RunOptions{Session: sess}); err != nil {
			return m, err
		}
	}
	m.Finish()
	return m, nil
}

func mustJSON(t *testing.T, req *llm.Request) []byte {
	t.Helper()
	b, err := replay.MarshalRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// counted is a tool whose calls are counted, answering "<name>:<input>".
func counted(t *testing.T, name string, calls *atomic.Int32, opts ...tool.Option) tool.Tool {
	t.Helper()
	tl, err := tool.Func(name, "Looks up "+name+".", func(_ context.Context, in struct {
		Q string `json:"q"`
	}) (string, error) {
		calls.Add(1)
		return name + ":" + in.Q, nil
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

var info = llm.ModelInfo{Provider: "anthropic", Name: "claude-test", ContextWindow: 200_000, MaxOutputTokens: 8192}

// TestReplayIsByteIdentical records each kind of turn and replays it: every
// replayed request is byte for byte (neutral JSON) the recorded one, no
// drift is reported, and the replayed answers are the recorded ones.
func TestReplayIsByteIdentical(t *testing.T) {
	var runs atomic.Int32
	withTools := func(opts ...tool.Option) func(t *testing.T) agent.Config {
		return func(t *testing.T) agent.Config {
			return agent.Config{Instructions: "Be brief.", Tools: []tool.Tool{counted(t, "grep", &runs, opts...), counted(t, "read", &runs, opts...)},
				Approver: tool.ApproverFunc(func(context.Context, tool.Call) (tool.Decision, error) {
					return tool.Decision{Approved: true}, nil
				})}
		}
	}
	plain := func(*testing.T) agent.Config { return agent.Config{Instructions: "Be brief."} }
	small := llm.ModelInfo{Provider: "openai", Name: "tiny", ContextWindow: 1500, MaxOutputTokens: 100}
	long := strings.Repeat("lorem ipsum dolor sit amet ", 25)
	cases := []struct {
		name  string
		r     rig
		steps []llmtest.Step
	}{
		{"text", rig{cfg: plain, info: info, turns: []string{"hi", "and again"}},
			[]llmtest.Step{llmtest.Text("hello"), llmtest.Text("hello again").WithUsage(llm.Usage{InputTokens: 9, OutputTokens: 3})}},
		{"parallel tools", rig{cfg: withTools(), info: info, turns: []string{"find it"}},
			[]llmtest.Step{
				llmtest.Reply(llmtest.Call("call_1", "grep", map[string]string{"q": "a"}), llmtest.Call("call_2", "read", map[string]string{"q": "b"}), llmtest.Call("call_3", "grep", map[string]string{"q": "c"})),
				llmtest.Text("found")}},
		{"approval", rig{cfg: withTools(tool.WithApproval()), info: info, turns: []string{"write it"}},
			[]llmtest.Step{llmtest.Reply(llmtest.Call("call_1", "grep", map[string]string{"q": "w"})), llmtest.Text("done")}},
		{"compaction", rig{cfg: func(t *testing.T) agent.Config {
			c := withTools()(t)
			c.Compaction = &compact.Policy{}
			return c
		}, info: small, turns: []string{long, long, long, long, long, "last"}},
			[]llmtest.Step{llmtest.Text(long), llmtest.Text(long), llmtest.Text(long), llmtest.Reply(llmtest.Call("c1", "grep", map[string]string{"q": "x"})), llmtest.Text(long), llmtest.Text(long), llmtest.Text("ok")}},
		{"compaction with summaries", rig{cfg: withTools(), info: small, summarize: true, turns: []string{long, long, long, long, long, "last"}},
			[]llmtest.Step{llmtest.Text(long), llmtest.Text(long), llmtest.Text(long), llmtest.Reply(llmtest.Call("c1", "grep", map[string]string{"q": "x"})), llmtest.Text(long), llmtest.Text(long), llmtest.Text("ok")}},
		{"anthropic thinking", rig{cfg: withTools(), info: info, turns: []string{"think"}},
			[]llmtest.Step{
				llmtest.Reply(llm.Thinking{Text: "let me look", Signature: "EqQBCkgIAhABGAIiQ…sig=="}, llm.RedactedThinking{Data: "ENCRYPTED=="}, llmtest.Call("toolu_01", "grep", map[string]string{"q": "x"})),
				llmtest.Reply(llm.Thinking{Text: "found", Signature: "EsYBsig2=="}, llm.Text{Text: "it is x"})}},
		{"gemini thought signatures", rig{cfg: withTools(), info: llm.ModelInfo{Provider: "gemini", Name: "gemini-2.5-flash", ContextWindow: 1_000_000}, turns: []string{"look"}},
			[]llmtest.Step{
				llmtest.Reply(llm.Thinking{Text: "plan", Signature: "CiQB0e2Kb…", Provider: "gemini"}, llm.ToolUse{ID: "g1", Name: "read", Input: []byte(`{"q":"y"}`), Signature: "Cp8BAdHtim…", Provider: "gemini"}),
				llmtest.Reply(llm.Text{Text: "y it is"}, llm.Extension{Kind: "gemini.executable_code", Data: []byte(`{"code":"print(1)"}`)})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := record(t, tc.r, tc.steps...)
			if tc.name == "compaction" && !compactedSomewhere(rec) {
				t.Fatal("the compaction case never compacted: the test proves nothing")
			}
			runs.Store(0)
			m, err := rerun(t, tc.r, rec, replay.Options{Strict: true})
			if err != nil {
				t.Fatalf("strict replay: %v", err)
			}
			if d := m.Drifts(); len(d) != 0 {
				t.Fatalf("drift: %v", d)
			}
			got := m.Requests()
			if len(got) != len(rec.Calls) {
				t.Fatalf("replayed %d calls, recorded %d", len(got), len(rec.Calls))
			}
			for i, c := range rec.Calls {
				if w, g := mustJSON(t, c.Request), mustJSON(t, got[i]); !bytes.Equal(w, g) {
					t.Errorf("call %d: replayed request differs:\n recorded %s\n replayed %s", i+1, w, g)
				}
			}
		})
	}
}

// compactedSomewhere reports whether some recorded request dropped
// messages of the history (the compaction case must compact).
func compactedSomewhere(rec *replay.Record) bool {
	for i := 1; i < len(rec.Calls); i++ {
		if len(rec.Calls[i].Request.Messages) < len(rec.Calls[i-1].Request.Messages) {
			return true
		}
	}
	return false
}

// TestReplayedToolsFromTheRecord: a tool named for replay is never run, its
// recorded results answer its calls (by id), while the other tool runs.
func TestReplayedToolsFromTheRecord(t *testing.T) {
	var grep, read atomic.Int32
	r := rig{info: info, turns: []string{"go"}}
	r.cfg = func(t *testing.T) agent.Config {
		return agent.Config{Tools: []tool.Tool{counted(t, "grep", &grep), counted(t, "read", &read)}}
	}
	rec := record(t, r,
		llmtest.Reply(llmtest.Call("call_1", "grep", map[string]string{"q": "a"}), llmtest.Call("call_2", "read", map[string]string{"q": "b"})),
		llmtest.Text("ok"))
	// The live grep now answers differently: replayed from the record, it
	// causes no drift.
	grep.Store(0)
	read.Store(0)
	r.cfg = func(t *testing.T) agent.Config {
		changed, _ := tool.Func("grep", "Looks up grep.", func(context.Context, struct {
			Q string `json:"q"`
		}) (string, error) {
			grep.Add(1)
			return "something else", nil
		})
		return agent.Config{Tools: []tool.Tool{changed, counted(t, "read", &read)}}
	}
	m, err := rerun(t, r, rec, replay.Options{Strict: true}, "grep")
	if err != nil {
		t.Fatalf("replay with grep from the record: %v", err)
	}
	if grep.Load() != 0 || read.Load() != 1 {
		t.Fatalf("grep ran %d times (want 0), read %d (want 1)", grep.Load(), read.Load())
	}
	if len(m.Drifts()) != 0 {
		t.Fatalf("drift: %v", m.Drifts())
	}
	// Run for real, the changed grep is drift, named by its call.
	_, err = rerun(t, r, rec, replay.Options{Strict: true})
	var de *replay.DriftError
	if !errors.As(err, &de) || !errors.Is(err, replay.ErrDrift) {
		t.Fatalf("strict replay with the changed tool: %v, want a *DriftError", err)
	}
	if len(de.Differences) != 1 || de.Differences[0].Kind != replay.ToolResultChanged || de.Differences[0].ToolCallID != "call_1" || de.Differences[0].Tool != "grep" {
		t.Fatalf("differences %v, want the tool result of call_1 (grep)", de.Differences)
	}
}

// TestStandIns: a tool the current configuration lacks is offered from
// the record and answered from it.
func TestStandIns(t *testing.T) {
	var n atomic.Int32
	r := rig{info: info, turns: []string{"go"}}
	r.cfg = func(t *testing.T) agent.Config { return agent.Config{Tools: []tool.Tool{counted(t, "grep", &n)}} }
	rec := record(t, r, llmtest.Reply(llmtest.Call("call_1", "grep", map[string]string{"q": "a"})), llmtest.Text("ok"))
	r.cfg = func(t *testing.T) agent.Config {
		return agent.Config{Tools: rec.StandIns(nil)}
	}
	m, err := rerun(t, r, rec, replay.Options{Strict: true}, rec.ToolNames()...)
	if err != nil || len(m.Drifts()) != 0 {
		t.Fatalf("replay over stand-ins: %v, drift %v", err, m.Drifts())
	}
}

// TestLenientReplayReportsDrift: a changed prompt is reported (OnDrift,
// Drifts) and the recorded answers still come back.
func TestLenientReplayReportsDrift(t *testing.T) {
	r := rig{info: info, turns: []string{"hi"}, cfg: func(*testing.T) agent.Config { return agent.Config{Instructions: "Be brief."} }}
	rec := record(t, r, llmtest.Text("hello"))
	r.cfg = func(*testing.T) agent.Config { return agent.Config{Instructions: "Be verbose."} }
	var told []replay.Drift
	m := replay.NewModel(rec, replay.Options{OnDrift: func(d replay.Drift) { told = append(told, d) }})
	a, _ := agent.New(m, r.cfg(t))
	resp, err := a.Run(context.Background(), rec.Turns[0].Input, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "hello" {
		t.Fatalf("answer %q, want the recorded one", resp.Text())
	}
	if len(told) != 1 || len(m.Drifts()) != 1 || told[0].Differences[0].Kind != replay.SystemChanged {
		t.Fatalf("drift told %v, kept %v; want the system prompt changed", told, m.Drifts())
	}
	if s := told[0].String(); !strings.Contains(s, `call 1: system prompt changed: "Be brief." → "Be verbose."`) {
		t.Fatalf("drift reads %q", s)
	}
}

// TestReplayedErrorsAndCalls: a recorded error is answered again (with
// its kind), a call beyond the record is drift, a call never made too.
func TestReplayedErrorsAndCalls(t *testing.T) {
	rec := &replay.Record{Header: replay.Header{Version: 1}, Calls: []replay.Call{
		{N: 1, Request: &llm.Request{Messages: []llm.Message{llm.UserText("a")}}, Err: &llm.Error{Kind: llm.KindRateLimited, Provider: "openai", StatusCode: 429, Message: "slow down"}},
		{N: 2, Request: &llm.Request{Messages: []llm.Message{llm.UserText("b")}}, Response: &llm.Response{Message: llm.AssistantText("B"), FinishReason: llm.FinishStop}},
	}}
	var buf bytes.Buffer
	if _, err := rec.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	rec, err := replay.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	m := replay.NewModel(rec, replay.Options{})
	_, err = m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("a")}})
	if !errors.Is(err, llm.ErrRateLimited) || llm.KindOf(err) != llm.KindRateLimited {
		t.Fatalf("call 1: %v, want the recorded rate limit", err)
	}
	if m.Finish() == nil || m.Remaining() != 0 {
		t.Fatal("Finish did not report call 2 as never made")
	}
	if d := m.Drifts(); len(d) != 1 || d[0].Differences[0].Kind != replay.CallMissing {
		t.Fatalf("drifts %v", d)
	}
	_, err = m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("c")}})
	if !errors.Is(err, replay.ErrExhausted) {
		t.Fatalf("call beyond the record: %v", err)
	}
	if d := m.Drifts(); len(d) != 2 || d[1].Differences[0].Kind != replay.CallAdded {
		t.Fatalf("drifts %v", d)
	}
}

// TestReplayStreamsEvents: the replayed answer comes as a whole event
// stream: message start, each block, usage, completion.
func TestReplayStreamsEvents(t *testing.T) {
	resp := &llm.Response{ID: "msg_1", Model: "m", Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "t", Signature: "s"}, llm.Text{Text: "hi"}}}, FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 3, OutputTokens: 2}}
	rec := &replay.Record{Calls: []replay.Call{{N: 1, Request: &llm.Request{}, Response: resp}}}
	var types []string
	var final *llm.Response
	for ev, err := range replay.NewModel(rec, replay.Options{}).Stream(context.Background(), &llm.Request{}) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type.String())
		if ev.Type == llm.EventComplete {
			final = ev.Response
		}
	}
	want := "message_start block_start thinking_delta signature_delta block_stop block_start text_delta block_stop usage complete"
	if strings.Join(types, " ") != want {
		t.Fatalf("events %v", types)
	}
	if final == nil || !final.Message.Equal(resp.Message) || final.Usage != resp.Usage {
		t.Fatalf("final %+v", final)
	}
}

// TestCompactionCutMovedIsNamed replays a run that compacted with a larger
// context window: the replayed requests keep more of the history, and the
// drift says the compaction cut moved (not that messages changed).
func TestCompactionCutMovedIsNamed(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 25)
	r := rig{cfg: func(*testing.T) agent.Config { return agent.Config{} }, info: llm.ModelInfo{Provider: "openai", Name: "tiny", ContextWindow: 1500, MaxOutputTokens: 100},
		turns: []string{long, long, long, long, long, long, "last"}}
	rec := record(t, r, llmtest.Text(long), llmtest.Text(long), llmtest.Text(long), llmtest.Text(long), llmtest.Text(long), llmtest.Text(long), llmtest.Text("ok"))
	if !compactedSomewhere(rec) {
		t.Fatal("the run never compacted")
	}
	wide := r.info
	wide.ContextWindow = 100_000
	m, err := rerun(t, r, rec, replay.Options{Info: &wide})
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, d := range m.Drifts() {
		for _, x := range d.Differences {
			switch x.Kind {
			case replay.CompactionMoved:
				moved++
			default:
				t.Errorf("call %d: %s, want only the compaction cut moved", d.Call, x)
			}
		}
	}
	if moved == 0 {
		t.Fatalf("no compaction_moved drift: %v", m.Drifts())
	}
}

// noSleep is a clock whose sleeps return at once.
type noSleep struct{}

func (noSleep) Now() time.Time                             { return time.Unix(0, 0) }
func (noSleep) Sleep(context.Context, time.Duration) error { return nil }

// TestRetriedCallIsRecordedOnce: the recorder sits above the retries, so a
// call that failed once and then succeeded is one call in the record, with
// the answer it finally got; and a call that failed every attempt is one
// call with its error, which the replay answers again.
func TestRetriedCallIsRecordedOnce(t *testing.T) {
	limited := &llm.Error{Kind: llm.KindRateLimited, Provider: "openai", StatusCode: 429, Message: "slow down"}
	model := llmtest.New(llmtest.Fail(limited), llmtest.Text("hello"), llmtest.Fail(limited), llmtest.Fail(limited)).Verify(t)
	rec := replay.Memory(replay.Header{})
	a, err := agent.New(model, agent.Config{Clock: noSleep{}, Retry: middleware.RetryConfig{MaxAttempts: 2},
		Middleware: []middleware.Middleware{rec.Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"one", "two"} {
		rec.Turn("", []llm.Message{llm.UserText(in)})
		a.Run(context.Background(), []llm.Message{llm.UserText(in)}, nil)
	}
	got, err := roundTrip(rec.Record())
	if err != nil {
		t.Fatal(err)
	}
	if model.Calls() != 4 || len(got.Calls) != 2 {
		t.Fatalf("the model got %d calls, the record has %d; want 4 and 2", model.Calls(), len(got.Calls))
	}
	if got.Calls[0].Response == nil || got.Calls[0].Response.Message.Text() != "hello" || got.Calls[1].Err == nil || got.Calls[1].Err.Kind != llm.KindRateLimited || got.Calls[1].Err.StatusCode != 429 {
		t.Fatalf("recorded %+v / %+v", got.Calls[0], got.Calls[1])
	}
	m := replay.NewModel(got, replay.Options{Strict: true})
	b, _ := agent.New(m, agent.Config{Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if _, err := b.Run(context.Background(), got.Turns[0].Input, nil); err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	if _, err := b.Run(context.Background(), got.Turns[1].Input, nil); !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("turn 2: %v, want the recorded rate limit", err)
	}
	if len(m.Drifts()) != 0 || m.Remaining() != 0 {
		t.Fatalf("drift %v, %d calls left", m.Drifts(), m.Remaining())
	}
}

// TestInferredTurns: a recorder whose Turn is never called finds the
// turns itself, in runs on a session and in runs without one, and the
// record replays without drift.
func TestInferredTurns(t *testing.T) {
	var n atomic.Int32
	grep := counted(t, "grep", &n)
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "grep", map[string]string{"q": "a"})), llmtest.Text("one"), // session, turn 1
		llmtest.Text("two"),   // session, turn 2
		llmtest.Text("three"), // no session
	).Verify(t)
	rec := replay.Memory(replay.Header{})
	cfg := agent.Config{Instructions: "Be brief.", Tools: []tool.Tool{grep}}
	live := cfg
	live.Middleware = []middleware.Middleware{rec.Middleware()}
	a, _ := agent.New(model, live)
	sess := &session.Session{ID: "s"}
	for _, in := range []string{"first", "second"} {
		if _, err := a.Run(context.Background(), []llm.Message{llm.UserText(in)}, &agent.RunOptions{Session: sess}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Run(context.Background(), []llm.Message{llm.UserText("alone"), llm.UserText("really")}, nil); err != nil {
		t.Fatal(err)
	}
	rec.Close()
	got, err := roundTrip(rec.Record())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != 3 || len(got.Turns[1].History) != 4 || len(got.Turns[2].Input) != 2 || got.Calls[1].Turn != 1 || got.Calls[2].Turn != 2 {
		t.Fatalf("turns %+v, calls' turns %d %d", got.Turns, got.Calls[1].Turn, got.Calls[2].Turn)
	}
	m, err := rerun(t, rig{cfg: func(*testing.T) agent.Config { return cfg }}, got, replay.Options{Strict: true})
	if err != nil || len(m.Drifts()) != 0 {
		t.Fatalf("replay of inferred turns: %v, drift %v", err, m.Drifts())
	}
}

// TestRecordedResultsMatchByCallID: parallel calls of one tool finish out
// of order, so the record holds their results in another order than the
// calls; each replayed call gets the result of its own call id, not the
// next one of its tool's name.
func TestRecordedResultsMatchByCallID(t *testing.T) {
	rec := &replay.Record{Tools: []replay.ToolResult{
		{Turn: 1, ID: "call_b", Name: "grep", Output: "matches of b"},
		{Turn: 1, ID: "call_a", Name: "grep", Output: "matches of a"},
		{Turn: 1, ID: "call_c", Name: "grep", Output: "no such file", IsError: true},
	}}
	h := rec.ToolMiddleware("grep")(func(context.Context, tool.Call) (string, error) {
		t.Fatal("a recorded tool ran")
		return "", nil
	})
	tests := []struct {
		id, want string
		isErr    bool
	}{
		{"call_a", "matches of a", false},
		{"call_c", "no such file", true},
		{"call_b", "matches of b", false},
	}
	for _, tt := range tests {
		out, err := h(t.Context(), tool.Call{ID: tt.id, Name: "grep", Input: []byte(`{}`)})
		if tt.isErr {
			if err == nil || err.Error() != tt.want {
				t.Errorf("%s: %q, %v; want the error %q", tt.id, out, err, tt.want)
			}
			continue
		}
		if err != nil || out != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.id, out, err, tt.want)
		}
	}
}
