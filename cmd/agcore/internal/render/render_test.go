package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestJSONEventsHaveTheContractShapes(t *testing.T) {
	var b strings.Builder
	j := NewJSON(&b)
	j.Start("s1", "gpt-4o")
	j.Thinking("hmm")
	j.Text("Hi <b>&")
	j.ToolCall(llm.ToolUse{ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"a.txt"}`)})
	j.ToolResult(&llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Block{llm.Text{Text: "alpha\n"}}})
	j.ToolCall(llm.ToolUse{ID: "call_2", Name: "grep", Input: json.RawMessage(`{"pattern":`)}) // cut-off JSON
	j.ToolResult(&llm.Message{Role: llm.RoleTool, ToolCallID: "call_2", IsError: true, Content: []llm.Block{llm.Text{Text: "bad"}}})
	j.Retry(1, time.Second, errors.New("x"))
	j.Done(Done{FinishReason: llm.FinishStop, Text: "Hi", Usage: llm.Usage{InputTokens: 10, OutputTokens: 2, CachedInputTokens: 4, ReasoningTokens: 1}, CostUSD: 0.5, CostKnown: true})
	j.Done(Done{FinishReason: llm.FinishMaxSteps, CostUSD: 9, CostKnown: false})
	j.Error("rate_limited", "slow down")

	want := `{"type":"start","session":"s1","model":"gpt-4o"}
{"type":"thinking_delta","text":"hmm"}
{"type":"text_delta","text":"Hi <b>&"}
{"type":"tool_call","id":"call_1","name":"read_file","input":{"path":"a.txt"}}
{"type":"tool_result","id":"call_1","name":"read_file","is_error":false,"output":"alpha\n"}
{"type":"tool_call","id":"call_2","name":"grep","input":"{\"pattern\":"}
{"type":"tool_result","id":"call_2","name":"grep","is_error":true,"output":"bad"}
{"type":"done","finish_reason":"stop","text":"Hi","usage":{"input_tokens":10,"output_tokens":2,"cached_input_tokens":4},"cost_usd":0.5,"cost_known":true}
{"type":"done","finish_reason":"max_steps","text":"","usage":{"input_tokens":0,"output_tokens":0,"cached_input_tokens":0},"cost_usd":0,"cost_known":false}
{"type":"error","code":"rate_limited","message":"slow down"}
`
	if b.String() != want {
		t.Errorf("events:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestErrorCodes(t *testing.T) {
	tests := []struct {
		err  error
		code string
	}{
		{&llm.Error{Kind: llm.KindRateLimited}, "rate_limited"},
		{&llm.Error{Kind: llm.KindAuth}, "auth"},
		{&llm.Error{Kind: llm.KindContextLength}, "context_length"},
		{&llm.Error{Kind: llm.KindOverloaded}, "overloaded"},
		{&llm.Error{Kind: llm.KindServer}, "server"},
		{&llm.Error{Kind: llm.KindNetwork}, "network"},
		{&llm.Error{Kind: llm.KindIdleTimeout}, "network"},
		{&llm.Error{Kind: llm.KindInvalidRequest}, "invalid_request"},
		{&middleware.BlockedError{Event: "PreRequest"}, "blocked"},
		{&llm.Error{Kind: llm.KindMalformed}, "server"},
		{&llm.Error{Kind: llm.KindTooLarge}, "server"},
		{fmt.Errorf("wrapped: %w", context.Canceled), "cancelled"},
		{context.DeadlineExceeded, "cancelled"},
		{errors.New("disk full"), "internal"},
	}
	for _, tt := range tests {
		if got := ErrorCode(tt.err); got != tt.code {
			t.Errorf("ErrorCode(%v) = %q, want %q", tt.err, got, tt.code)
		}
	}
}

func TestFormats(t *testing.T) {
	tests := []struct{ got, want string }{
		{Size(0), "0 B"},
		{Size(999), "999 B"},
		{Size(1234), "1.2 KB"},
		{Size(3_400_000), "3.4 MB"},
		{Thousands(0), "0"},
		{Thousands(999), "999"},
		{Thousands(1234567), "1,234,567"},
		{Thousands(-1234), "-1,234"},
		{USD(0), "$0"},
		{USD(0.000123), "$0.000123"},
		{USD(1.23456), "$1.2346"},
		{Duration(850 * time.Millisecond), "850ms"},
		{Duration(2340 * time.Millisecond), "2.3s"},
		{Duration(64 * time.Second), "1m4s"},
		{Clip("héllo", 3), "hé…"},
		{Clip("hi", 3), "hi"},
		{ShortArgs(json.RawMessage(`{"path":"README.md","limit":40}`), 100), `path="README.md" limit=40`},
		{ShortArgs(json.RawMessage(`{"content":"`+strings.Repeat("x", 60)+`"}`), 100), `content="` + strings.Repeat("x", 39) + `…"`},
		{ShortArgs(json.RawMessage(`{"a":{"b":[1,2]}}`), 100), `a={"b":[1,2]}`},
		{ShortArgs(json.RawMessage(`{}`), 100), ``},
		{ShortArgs(json.RawMessage(`not json`), 100), `not json`},
		{UsageLine(Done{Usage: llm.Usage{InputTokens: 1234, CachedInputTokens: 1000, OutputTokens: 56}, CostUSD: 0.0012, CostKnown: true, Duration: 2300 * time.Millisecond, FinishReason: llm.FinishStop}),
			"── 1,234 input / 1,000 cached / 56 output tokens · $0.001200 · 2.3s"},
		{UsageLine(Done{FinishReason: llm.FinishMaxSteps, Duration: time.Second}), "── 0 input / 0 cached / 0 output tokens · cost unknown · 1s · stopped: max_steps"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestTextKeepsStdoutForTheAnswer(t *testing.T) {
	var out, errw strings.Builder
	s := NewText(&out, &errw, TextOptions{})
	defer s.Close()
	s.Start("s1", "m")
	s.Thinking("Let me see.")
	s.Text("Looking")
	s.Text(" now.")
	s.ToolCall(llm.ToolUse{ID: "1", Name: "read_file", Input: json.RawMessage(`{"path":"a"}`)})
	s.ToolCall(llm.ToolUse{ID: "2", Name: "grep", Input: json.RawMessage(`{"pattern":"x"}`)})
	s.ToolResult(&llm.Message{Role: llm.RoleTool, ToolCallID: "1", Content: []llm.Block{llm.Text{Text: "abc"}}})
	s.ToolResult(&llm.Message{Role: llm.RoleTool, ToolCallID: "2", IsError: true, Content: []llm.Block{llm.Text{Text: "bad pattern\nmore"}}})
	s.Text("Done.")
	s.Done(Done{Usage: llm.Usage{InputTokens: 5}, Duration: time.Second})

	if want := "Looking now.\nDone.\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out.String(), want)
	}
	wantErr := "thinking: Let me see.\n" +
		"  → read_file path=\"a\"\n" +
		"  → grep pattern=\"x\"\n" +
		"  ✓ read_file 3 B\n" +
		"  ✗ grep error: bad pattern …\n" +
		"── 5 input / 0 cached / 0 output tokens · cost unknown · 1s\n"
	if errw.String() != wantErr {
		t.Errorf("stderr = %q\nwant     %q", errw.String(), wantErr)
	}
}

// TestTextOnATerminalDrawsAndStopsTheStatusLine runs in a synctest bubble:
// the spinner's ticks come from the bubble's clock, so the sleep below
// lets exactly that much fake time pass.
func TestTextOnATerminalDrawsAndStopsTheStatusLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out, errw syncBuilder
		s := NewText(&out, &errw, TextOptions{Terminal: true, Color: true, HideThinking: true})
		s.st.tick = time.Millisecond
		s.Start("s1", "gpt-x")
		s.Thinking("secret thoughts")
		time.Sleep(20 * time.Millisecond)
		s.Text("Hi")
		resume := s.Pause()
		resume()
		s.Error("network", "lost")
		s.Close() // goleak checks the spinner goroutine has ended
		e := errw.String()
		if !strings.Contains(e, "waiting for gpt-x") || !strings.Contains(e, "\r\x1b[K") || strings.Contains(e, "secret thoughts") {
			t.Errorf("stderr = %q: want the status line, cleared, and no thinking", e)
		}
		if !strings.Contains(e, "\x1b[31merror (network): lost\x1b[0m") || out.String() != "Hi\n" {
			t.Errorf("stdout %q, stderr %q", out.String(), e)
		}
	})
}

// syncBuilder is a strings.Builder safe for the spinner's goroutine.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A streamed answer is rendered a line at a time: each delta gives the
// rendered lines it completed, a table waits for its block's end, and the
// lines written never change.
func TestMarkdownStreamsLineByLine(t *testing.T) {
	md, err := NewMarkdown(80, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		deltas []string
		want   []string // what each delta gives, then the flush
	}{
		{"heading and paragraph lines",
			[]string{"# Ti", "tle\n", "\nPara", "graph one.\nLine two", ".\n", "\nLast"},
			[]string{"", "  Title\n", "", "\n  Paragraph one.\n", "  Line two.\n", "", "\n  Last\n"}},
		{"a code block line by line, its empty lines kept",
			[]string{"```go\n", "x := 1\n", "\n", "y := 2\n", "```\n", "\n"},
			[]string{"", "    x := 1\n", "", "    \n    y := 2\n", "", "", ""}},
		{"list items as they end",
			[]string{"- one\n", "- two\n", "- thr", "ee\n"},
			[]string{"  • one\n", "  • two\n", "", "  • three\n", ""}},
		{"a table once whole",
			[]string{"| a | b |\n", "|---|---|\n", "| 1 | 2 |\n", "\nAfter\n"},
			[]string{"", "", "", "  a │ b\n  ──┼──\n  1 │ 2\n\n  After\n", ""}},
		{"a table at the end",
			[]string{"| a |\n|---|\n| 1 |"},
			[]string{"", "  a\n  ─\n  1\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mdStream{m: md}
			var got []string
			for _, d := range tc.deltas {
				got = append(got, s.add(d))
			}
			got = append(got, s.flush())
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("rendered = %q\nwant       %q", got, tc.want)
			}
		})
	}
	if out := md.Render("Some **bold** text"); strings.Contains(out, "**") || !strings.Contains(out, "bold") {
		t.Errorf("Render = %q", out)
	}
}

// A long block streamed a line at a time (rendered from a window of its
// last lines, in linear time) shows what rendering it whole shows, and
// does so fast.
func TestMarkdownStreamsLongBlocksInLinearTime(t *testing.T) {
	md, err := NewMarkdown(100, false)
	if err != nil {
		t.Fatal(err)
	}
	var code, para, list, mixed strings.Builder
	code.WriteString("```go\n")
	mixed.WriteString("Intro line.\n")
	for i := range 600 {
		fmt.Fprintf(&code, "x%d := compute(%d, \"str\") // comment %d\n", i, i, i)
		fmt.Fprintf(&para, "Line %d has some **bold** words and `code` in it, enough to wrap at a hundred columns or so.\n", i)
		fmt.Fprintf(&list, "- item %d\n  continued %d\n", i, i)
		if i%100 == 50 {
			mixed.WriteString("```sh\n")
		}
		fmt.Fprintf(&mixed, "mixed %d\n", i)
		if i%100 == 90 {
			mixed.WriteString("```\n")
		}
	}
	code.WriteString("```\n")
	for _, tc := range []struct{ name, src string }{
		{"code", code.String()}, {"paragraph", para.String()}, {"list", list.String()}, {"code blocks inside", mixed.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			s := mdStream{m: md}
			var got strings.Builder
			for _, p := range pieces(tc.src, 7) {
				got.WriteString(s.add(p))
			}
			got.WriteString(s.flush())
			took := time.Since(start)
			if want := md.render(tc.src, true); got.String() != want {
				g, w := strings.Split(got.String(), "\n"), strings.Split(want, "\n")
				for i := range min(len(g), len(w)) {
					if g[i] != w[i] {
						t.Fatalf("line %d streamed %q, rendered whole %q (%d and %d lines)", i, g[i], w[i], len(g), len(w))
					}
				}
				t.Fatalf("streamed %d lines, rendered whole %d", len(g), len(w))
			}
			t.Logf("%s: %d lines streamed in %s", tc.name, strings.Count(tc.src, "\n"), took.Round(time.Millisecond))
		})
	}
}

// Streaming a block costs linear time in its length: four times the
// lines take about four times as long, not sixteen (rendering the whole
// block again for each line, 2,000 lines of one paragraph took 32 s).
func TestMarkdownStreamCostIsLinear(t *testing.T) {
	md, err := NewMarkdown(100, false)
	if err != nil {
		t.Fatal(err)
	}
	// The cost is counted as the source the renderer is given (timings
	// on a shared machine prove nothing): with the window, each new line
	// renders a bounded window again, so the total grows with the lines;
	// without it, the whole block again each time (quadratic: 16x for 4x
	// the lines).
	stream := func(lines int) (work int, took time.Duration) {
		start := time.Now()
		s := mdStream{m: md}
		for i := range lines {
			s.add(fmt.Sprintf("Line %d has some **bold** words and `code` in it.\n", i))
		}
		s.flush()
		return s.work, time.Since(start)
	}
	shortWork, shortTook := stream(400)
	longWork, longTook := stream(1600)
	t.Logf("400 lines: %d bytes rendered (%s), 1600 lines: %d bytes (%s): %.1fx", shortWork, shortTook, longWork, longTook, float64(longWork)/float64(shortWork))
	if longWork > 5*shortWork {
		t.Errorf("1600 lines rendered %d bytes of source, 400 lines %d: %.1fx, want about 4x (linear)", longWork, shortWork, float64(longWork)/float64(shortWork))
	}
}

// pieces cuts s into chunks of n bytes, as a provider streams it.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func TestCitationsAreShownAfterTheAnswer(t *testing.T) {
	cites := []llm.Citation{
		{Kind: llm.CitationURL, URL: "https://go.dev/doc", Title: "Go docs", Start: 0, End: 4},
		{Kind: llm.CitationURL, URL: "https://go.dev/doc", Title: "Go docs"}, // the same source again
		{Kind: llm.CitationDocument, Document: 1, Title: "Report", CitedText: "p.2 text"},
		{Kind: llm.CitationURL, URL: "https://example.com"},
	}
	var out, errw strings.Builder
	s := NewText(&out, &errw, TextOptions{})
	s.Start("s1", "m")
	s.Text("Read the docs.")
	s.Done(Done{Citations: cites, Duration: time.Second})
	s.Close()
	want := "Read the docs.\n\nSources:\n  [1] Go docs — https://go.dev/doc\n  [2] Report (\"p.2 text\")\n  [3] https://example.com\n"
	if out.String() != want {
		t.Errorf("stdout = %q\nwant     %q", out.String(), want)
	}

	var js strings.Builder
	j := NewJSON(&js)
	j.Done(Done{Citations: cites[:1]})
	if !strings.Contains(js.String(), `"citations":[{"kind":"url","url":"https://go.dev/doc","title":"Go docs","end":4}]`) {
		t.Errorf("done event %s lacks the citations", js.String())
	}
	js.Reset()
	j.Done(Done{})
	if strings.Contains(js.String(), "citations") {
		t.Errorf("done event %s has citations it was not given", js.String())
	}
}
