package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

var (
	ctx = context.Background()
	est = Estimator{}
)

func bigText(words int) string { return randText(rand.New(rand.NewPCG(9, uint64(words))), words) }

func toolCall(id, name, path string) llm.Message {
	in, _ := json.Marshal(map[string]string{"path": path})
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: id, Name: name, Input: in}}}
}

// exchanges returns a conversation: system, first user message, then n
// turns of user → tool call → large result → answer.
func exchanges(n int) []llm.Message {
	msgs := []llm.Message{llm.SystemText("system prompt"), llm.UserText("the task")}
	for i := range n {
		id := "call_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		msgs = append(msgs,
			llm.UserText("step "+id),
			toolCall(id, "read_file", "src/"+id+".go"),
			llm.ToolResultText(id, bigText(300), false),
			llm.AssistantText("done "+id))
	}
	return msgs
}

func isPrefixOf(a, b []llm.Message) bool {
	return len(a) <= len(b) && reflect.DeepEqual(a, b[:len(a)])
}

func TestMicrocompactClearsOldResultsWithANamedPlaceholder(t *testing.T) {
	t.Parallel()
	msgs := exchanges(6)
	budget := est.CountMessages(msgs) / 2
	out, rep, err := Microcompact{KeepRecent: 4, Step: 1, MinFree: -1}.CompressReport(ctx, msgs, budget, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	first := out[4].Text() // the first tool result
	if !strings.HasPrefix(first, placeholderPrefix) || !strings.Contains(first, "read_file") || !strings.Contains(first, "KB") {
		t.Errorf("placeholder = %q", first)
	}
	last := out[len(out)-2]
	if last.Role != llm.RoleTool || strings.HasPrefix(last.Text(), placeholderPrefix) {
		t.Error("a result among the last KeepRecent messages was cleared")
	}
	if rep.Freed() <= 0 || rep.TokensAfter != est.CountMessages(out) || rep.KeptPrefix != 4 {
		t.Errorf("report = %+v", rep)
	}
	if len(out) != len(msgs) {
		t.Error("microcompact changed the number of messages")
	}
}

func TestMicrocompactNeverClearsErrorResults(t *testing.T) {
	t.Parallel()
	msgs := exchanges(4)
	msgs[4].IsError = true // the reason a call failed must stay
	out, _, _ := Microcompact{KeepRecent: 2, Step: 1, MinFree: -1}.CompressReport(ctx, msgs, 10, Estimator{})
	if !reflect.DeepEqual(out[4], msgs[4]) {
		t.Error("an error result was cleared")
	}
	if !strings.HasPrefix(out[8].Text(), placeholderPrefix) {
		t.Error("a successful result was not cleared")
	}
}

func TestMicrocompactClearsNestedResults(t *testing.T) {
	t.Parallel()
	msgs := []llm.Message{llm.UserText("go"), toolCall("a", "grep", "x"),
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult{ToolUseID: "a", Content: []llm.Block{llm.Text{Text: bigText(400)}}}}},
		llm.AssistantText("ok"), llm.UserText("next"), llm.AssistantText("fine")}
	out, _, err := Microcompact{KeepRecent: 2, Step: 1, MinFree: -1}.CompressReport(ctx, msgs, 100, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	tr := out[2].Content[0].(llm.ToolResult)
	if !isPlaceholder(tr.Content) || !strings.Contains(tr.Content[0].(llm.Text).Text, "grep") {
		t.Errorf("nested result = %+v", tr)
	}
}

func TestMicrocompactNeverClearsNestedErrorResults(t *testing.T) {
	t.Parallel()
	// Anthropic's form: results nested in a user message, one failed, one
	// not. Only the successful one is cleared.
	failed := llm.ToolResult{ToolUseID: "a", IsError: true, Content: []llm.Block{llm.Text{Text: "error: " + bigText(400)}}}
	msgs := []llm.Message{llm.UserText("go"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "a", Name: "grep", Input: []byte(`{}`)}, llm.ToolUse{ID: "b", Name: "read", Input: []byte(`{}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{failed,
			llm.ToolResult{ToolUseID: "b", Content: []llm.Block{llm.Text{Text: bigText(400)}}}}},
		llm.AssistantText("ok"), llm.UserText("next"), llm.AssistantText("fine")}
	out, _, err := Microcompact{KeepRecent: 2, Step: 1, MinFree: -1}.CompressReport(ctx, msgs, 600, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[2].Content[0].(llm.ToolResult); !reflect.DeepEqual(got, failed) {
		t.Errorf("the nested error result was changed: %+v", got)
	}
	if got := out[2].Content[1].(llm.ToolResult); !isPlaceholder(got.Content) {
		t.Errorf("the nested successful result was not cleared: %+v", got)
	}
}

func TestMicrocompactActsOnlyWhenItFreesEnough(t *testing.T) {
	t.Parallel()
	msgs := exchanges(3)
	total := est.CountMessages(msgs)
	out, rep, err := Microcompact{KeepRecent: 2, Step: 1, MinFree: 1_000_000}.CompressReport(ctx, msgs, total-10, Estimator{})
	if !errors.Is(err, ErrCannotFit) {
		t.Fatalf("err = %v, want ErrCannotFit", err)
	}
	if rep.Changed || !reflect.DeepEqual(out, msgs) {
		t.Error("microcompact acted although it would free less than MinFree")
	}
}

func TestStrategiesLeaveConversationsWithinTheBudgetAlone(t *testing.T) {
	t.Parallel()
	msgs := exchanges(3)
	total := est.CountMessages(msgs)
	for _, s := range []Reporter{Microcompact{}, Truncate{}, &Summarize{Model: &fakeModel{}}, DefaultPipeline(nil)} {
		out, rep, err := s.CompressReport(ctx, msgs, total, Estimator{})
		if err != nil || rep.Changed || !reflect.DeepEqual(out, msgs) {
			t.Errorf("%s changed a conversation within the budget: %v %+v", rep.Strategy, err, rep)
		}
	}
}

func TestMicrocompactBoundaryMovesInSteps(t *testing.T) {
	t.Parallel()
	// Between two steps the cleared part is byte-identical, so the
	// previous output is a prefix of the next one (the cache keeps hitting).
	mc := Microcompact{KeepRecent: 4, Step: 8, MinFree: -1}
	msgs := exchanges(12)
	var prev []llm.Message
	moved := 0
	for n := 20; n <= len(msgs); n++ {
		out, _, _ := mc.CompressReport(ctx, msgs[:n], 100, Estimator{})
		if prev != nil && !isPrefixOf(prev, out) {
			moved++
		}
		prev = out
	}
	if moved == 0 || moved > (len(msgs)-20)/8+1 {
		t.Errorf("boundary moved %d times over %d messages with Step 8", moved, len(msgs)-20)
	}
}

func TestMicrocompactIsIdempotent(t *testing.T) {
	t.Parallel()
	mc := Microcompact{KeepRecent: 2, Step: 1, MinFree: -1}
	once, _, _ := mc.CompressReport(ctx, exchanges(5), 10, Estimator{})
	twice, rep, _ := mc.CompressReport(ctx, once, 10, Estimator{})
	if !reflect.DeepEqual(once, twice) || rep.Changed {
		t.Error("clearing cleared results again changed them")
	}
}

func TestTruncateKeepsPinnedGroupsAndDropsOldestFirst(t *testing.T) {
	t.Parallel()
	msgs := exchanges(10)
	budget := est.CountMessages(msgs) / 2
	out, rep, err := Truncate{KeepLast: 2, Step: 1}.CompressReport(ctx, msgs, budget, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out[:2], msgs[:2]) {
		t.Error("the system message and the first user message were not kept")
	}
	if !isPrefixOf(msgs[len(msgs)-3:], out[len(out)-3:]) {
		t.Error("the last groups were not kept")
	}
	if out[2].Text() == msgs[2].Text() {
		t.Error("the oldest group was kept while newer ones were dropped")
	}
	if err := Validate(out); err != nil {
		t.Error(err)
	}
	if rep.KeptPrefix != 2 || !rep.BreaksPrefix(len(msgs)) || rep.BreaksPrefix(2) {
		t.Errorf("report = %+v", rep)
	}
	// Step 1 drops no more than needed: keeping the newest dropped group
	// would not fit.
	p := newPlan(msgs, est, 2)
	m, _ := p.cut(est.CountMessages(msgs)-budget, 1)
	if same, _ := p.without(m); !reflect.DeepEqual(same, out) {
		t.Fatal("the plan does not reproduce the output")
	}
	if fewer, _ := p.without(m - 1); est.CountMessages(fewer) <= budget {
		t.Error("Step 1 dropped more than needed")
	}
}

func TestTruncateFailsWhenPinnedGroupsAloneExceedTheBudget(t *testing.T) {
	t.Parallel()
	msgs := exchanges(4)
	out, _, err := Truncate{KeepLast: 4}.CompressReport(ctx, msgs, 50, Estimator{})
	var cf *CannotFitError
	if !errors.As(err, &cf) || cf.Budget != 50 {
		t.Fatalf("err = %v, want a CannotFitError", err)
	}
	if err := Validate(out); err != nil || cf.Tokens != est.CountMessages(out) {
		t.Errorf("best effort is invalid or miscounted: %v", err)
	}
}

func TestTruncateKeepsTheLastExchangeWithItsThinking(t *testing.T) {
	t.Parallel()
	msgs := exchanges(6)
	think := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		llm.Thinking{Text: "plan", Signature: "sig"}, llm.ToolUse{ID: "z", Name: "t", Input: json.RawMessage(`{}`)}}}
	msgs = append(msgs, llm.UserText("more"), think, res("z"), llm.AssistantText("a"), llm.UserText("b"), llm.AssistantText("c"))
	out, _, err := Truncate{KeepLast: 1, Step: 1}.CompressReport(ctx, msgs, est.CountMessages(msgs)/3, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(out, think) {
		t.Error("the last assistant message with tool calls (and its thinking) was dropped")
	}
}

func TestTruncateCutIsStableAsTheHistoryGrows(t *testing.T) {
	t.Parallel()
	// The agent compresses the full history before every request; with the
	// default Step the cut moves rarely, so most requests extend the last.
	msgs := exchanges(60)
	const budget = 6000
	var prev []llm.Message
	stable, total := 0, 0
	for n := 40; n <= len(msgs); n++ {
		out, _, err := Truncate{}.CompressReport(ctx, msgs[:n], budget, Estimator{})
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil {
			total++
			if isPrefixOf(prev, out) {
				stable++
			}
		}
		prev = out
	}
	if stable*10 < total*7 {
		t.Errorf("only %d of %d requests extended the previous one", stable, total)
	}
}

func TestSummarizeKeepsUserMessagesFilesAndTheRecentGroups(t *testing.T) {
	t.Parallel()
	m := &fakeModel{}
	msgs := exchanges(8)
	out, rep, err := (&Summarize{Model: m, KeepLast: 2}).CompressReport(ctx, msgs, est.CountMessages(msgs)/2, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	if m.callCount() != 1 {
		t.Fatalf("model called %d times", m.callCount())
	}
	if !reflect.DeepEqual(out[:2], msgs[:2]) || !isPrefixOf(msgs[len(msgs)-2:], out[len(out)-2:]) {
		t.Error("system, first user message or the last groups were not kept")
	}
	summary := out[2]
	text := summary.Text()
	for _, want := range []string{"Goal: finish the task", "> step call_a", "Files touched: src/call_a.go", "messages were replaced"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	if summary.Role != llm.RoleUser || rep.KeptPrefix != 2 {
		t.Errorf("summary role %s, report %+v", summary.Role, rep)
	}
	if err := Validate(out); err != nil {
		t.Error(err)
	}
	req := m.requests[0]
	if req.Messages[0].Role != llm.RoleSystem || !strings.Contains(req.Messages[1].Text(), "ASSISTANT calls read_file") {
		t.Errorf("summarizer request = %v", req.Messages)
	}
}

func TestSummarizeReusesItsSummaryWhileTheCutHolds(t *testing.T) {
	t.Parallel()
	m := &fakeModel{}
	s := &Summarize{Model: m, KeepLast: 2}
	msgs := exchanges(30)
	budget := est.CountMessages(msgs[:80]) / 2
	first, _, err := s.CompressReport(ctx, msgs[:80], budget, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	next, rep, err := s.CompressReport(ctx, msgs[:82], budget, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	if m.callCount() != 1 || !strings.Contains(rep.Detail, "reused") {
		t.Errorf("model called %d times; report %q", m.callCount(), rep.Detail)
	}
	if !isPrefixOf(first, next) {
		t.Error("the second request does not extend the first")
	}
	// Much later the cut moves and the previous summary is merged.
	if _, _, err := s.CompressReport(ctx, msgs, budget, Estimator{}); err != nil {
		t.Fatal(err)
	}
	if m.callCount() != 2 || !strings.Contains(m.requests[1].Messages[1].Text(), "Previous summary:") {
		t.Errorf("incremental summary not requested: %d calls", m.callCount())
	}
	if st := s.Stats(); st.Summaries != 2 || st.Reused != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestSummarizeCircuitBreakerOpensAfterThreeFailures(t *testing.T) {
	t.Parallel()
	m := &fakeModel{fail: errors.New("overloaded")}
	s := &Summarize{Model: m}
	msgs := exchanges(10)
	budget := est.CountMessages(msgs) / 2
	for i := range 3 {
		out, _, err := s.CompressReport(ctx, msgs, budget, Estimator{})
		if err == nil || errors.Is(err, ErrCircuitOpen) || !reflect.DeepEqual(out, msgs) {
			t.Fatalf("failure %d: err = %v", i+1, err)
		}
	}
	if _, _, err := s.CompressReport(ctx, msgs, budget, Estimator{}); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("after three failures err = %v, want ErrCircuitOpen", err)
	}
	if m.callCount() != 3 || !s.Stats().Open {
		t.Errorf("model called %d times with the breaker open", m.callCount())
	}
	s.Reset()
	m.fail = nil
	if _, _, err := s.CompressReport(ctx, msgs, budget, Estimator{}); err != nil {
		t.Fatalf("after Reset: %v", err)
	}
}

func TestSummarizeSuccessResetsTheFailureCount(t *testing.T) {
	t.Parallel()
	// Fail, fail, succeed, then fail for good, with the default limit of 3:
	// the success resets the count, so the breaker opens only after three
	// more failures (call 7 is refused). Without the reset it would refuse
	// call 5. Each call is a conversation of its own, so no remembered
	// summary spares a call to the model.
	m := &fakeModel{}
	s := &Summarize{Model: m}
	for i := range 7 {
		msgs := append([]llm.Message{llm.UserText(fmt.Sprintf("conversation %d", i))}, exchanges(10)...)
		budget := est.CountMessages(msgs) / 2
		m.fail = nil
		if i != 2 {
			m.fail = errors.New("flaky")
		}
		_, _, err := s.CompressReport(ctx, msgs, budget, Estimator{})
		switch open := errors.Is(err, ErrCircuitOpen); {
		case i < 6 && open:
			t.Fatalf("call %d: the breaker opened after %d failures since the success", i+1, i-3)
		case i == 6 && !open:
			t.Fatalf("call 7: err = %v, want ErrCircuitOpen after 3 failures in a row", err)
		}
	}
	if n := m.callCount(); n != 6 {
		t.Fatalf("the model was called %d times, want 6 (none once the breaker is open)", n)
	}
}

func TestSummarizeDetectsThrashing(t *testing.T) {
	t.Parallel()
	m := &fakeModel{}
	s := &Summarize{Model: m, KeepLast: 2, Step: 1}
	msgs := exchanges(10)
	budget := est.CountMessages(msgs) / 2
	if _, _, err := s.CompressReport(ctx, msgs, budget, Estimator{}); err != nil {
		t.Fatal(err)
	}
	// One huge message right after: the summary no longer fits.
	more := append(append([]llm.Message(nil), msgs...), llm.UserText(bigText(3000)))
	out, _, err := s.CompressReport(ctx, more, budget, Estimator{})
	if !errors.Is(err, ErrThrashing) {
		t.Fatalf("err = %v, want ErrThrashing", err)
	}
	if m.callCount() != 1 || !reflect.DeepEqual(out, more) || s.Stats().Thrashes != 1 {
		t.Errorf("thrashing called the model (%d calls) or changed the input", m.callCount())
	}
}

func TestSummarizeCancelledIsNotAFailure(t *testing.T) {
	t.Parallel()
	s := &Summarize{Model: &fakeModel{}}
	c, cancel := context.WithCancel(ctx)
	cancel()
	msgs := exchanges(10)
	if _, _, err := s.CompressReport(c, msgs, 100, Estimator{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if st := s.Stats(); st.Failures != 0 {
		t.Errorf("a cancelled call counted as a failure: %+v", st)
	}
}

func TestSummarizeWithoutModelFails(t *testing.T) {
	t.Parallel()
	msgs := exchanges(5)
	if _, _, err := (&Summarize{}).CompressReport(ctx, msgs, 100, Estimator{}); err == nil {
		t.Fatal("no error without a model")
	}
}

// spy is a strategy that records its calls and returns a fixed outcome.
type spy struct {
	name  string
	calls *[]string
	do    func(msgs []llm.Message) ([]llm.Message, error)
}

func (s spy) Compress(_ context.Context, msgs []llm.Message, _ int, _ TokenCounter) ([]llm.Message, error) {
	*s.calls = append(*s.calls, s.name)
	return s.do(msgs)
}

func TestPipelineTriesCheapStrategiesFirstAndStopsWhenItFits(t *testing.T) {
	t.Parallel()
	msgs := exchanges(6)
	budget := est.CountMessages(msgs) - 100
	shrink := func(msgs []llm.Message) ([]llm.Message, error) {
		return Truncate{Step: 1}.Compress(ctx, msgs, budget, Estimator{})
	}
	partial := func(msgs []llm.Message) ([]llm.Message, error) {
		return msgs[:len(msgs)-0], &CannotFitError{Strategy: "partial"}
	}
	broken := func([]llm.Message) ([]llm.Message, error) { return nil, errors.New("broken") }
	tests := []struct {
		rule  string
		steps []string
		fns   []func([]llm.Message) ([]llm.Message, error)
		calls string
		fits  bool
	}{
		{"stops at the first that fits", []string{"a", "b"}, []func([]llm.Message) ([]llm.Message, error){shrink, shrink}, "a", true},
		{"goes on after a partial result", []string{"a", "b"}, []func([]llm.Message) ([]llm.Message, error){partial, shrink}, "a b", true},
		{"skips a broken strategy", []string{"a", "b"}, []func([]llm.Message) ([]llm.Message, error){broken, shrink}, "a b", true},
		{"reports when nothing fits", []string{"a", "b"}, []func([]llm.Message) ([]llm.Message, error){broken, partial}, "a b", false},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			var calls []string
			var p Pipeline
			for i, n := range tc.steps {
				p = append(p, spy{name: n, calls: &calls, do: tc.fns[i]})
			}
			out, rep, err := p.CompressReport(ctx, msgs, budget, Estimator{})
			if got := strings.Join(calls, " "); got != tc.calls {
				t.Errorf("calls = %q, want %q", got, tc.calls)
			}
			if tc.fits != (err == nil) {
				t.Fatalf("err = %v", err)
			}
			if !tc.fits && (!errors.Is(err, ErrCannotFit) || !reflect.DeepEqual(out, msgs)) {
				t.Errorf("err = %v", err)
			}
			if len(rep.Steps) != len(calls) {
				t.Errorf("report has %d steps for %d calls", len(rep.Steps), len(calls))
			}
		})
	}
}

func TestPipelineHandsProgressOn(t *testing.T) {
	t.Parallel()
	// Microcompact frees some tokens but not enough; truncation works on
	// its output, so the cleared results stay cleared.
	msgs := exchanges(12)
	budget := est.CountMessages(msgs) / 6
	out, rep, err := Pipeline{Microcompact{KeepRecent: 4, Step: 1, MinFree: -1}, Truncate{KeepLast: 6}}.CompressReport(ctx, msgs, budget, Estimator{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 2 || rep.Steps[0].Strategy != "microcompact" || rep.Steps[1].Strategy != "truncate" {
		t.Fatalf("steps = %+v", rep.Steps)
	}
	cleared := 0
	for _, m := range out {
		if m.Role == llm.RoleTool && isPlaceholder(m.Content) {
			cleared++
		}
	}
	if cleared == 0 {
		t.Error("truncation did not work on microcompact's output")
	}
	if rep.KeptPrefix != 2 || rep.TokensAfter > budget {
		t.Errorf("report = %+v", rep)
	}
}

func TestApplyReportsForAnyStrategy(t *testing.T) {
	t.Parallel()
	msgs := exchanges(4)
	var calls []string
	s := spy{name: "drop-last", calls: &calls, do: func(m []llm.Message) ([]llm.Message, error) { return m[:len(m)-1], nil }}
	out, rep, err := Apply(ctx, s, msgs, 1<<30, Estimator{})
	if err != nil || len(out) != len(msgs)-1 {
		t.Fatal(err)
	}
	if !rep.Changed || rep.KeptPrefix != len(msgs)-1 || rep.MessagesAfter != len(out) || rep.Freed() <= 0 {
		t.Errorf("report = %+v", rep)
	}
}

func TestStrategiesStopOnCancelledContext(t *testing.T) {
	t.Parallel()
	c, cancel := context.WithCancel(ctx)
	cancel()
	for _, s := range []Strategy{Microcompact{}, Truncate{}, &Summarize{Model: &fakeModel{}}, DefaultPipeline(nil)} {
		if _, err := s.Compress(c, exchanges(3), 10, Estimator{}); !errors.Is(err, context.Canceled) {
			t.Errorf("%T: err = %v", s, err)
		}
	}
}
