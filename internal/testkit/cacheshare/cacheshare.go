// Package cacheshare replays a long, tool-heavy agent session against a
// compression strategy and measures how much of what is sent a provider's
// prompt cache could serve. It drives the benchmark in package compact
// (BenchmarkCacheShare) and the table of examples/cacheshare; it is test
// and example support, not part of the library.
//
// # The session
//
// Everything is synthetic and deterministic. A fixed system prompt and
// three fixed tool definitions open every request. Each turn the user asks
// a question; the assistant answers with one to three parallel read_file
// calls, each returning a generated source file of a few KB (the same path
// always returns the same text); then the assistant answers in prose. Each
// turn makes two model calls, both requests: the one that asks for the
// tools and the one after their results.
//
// The model is described by [Info] (a 24,000-token window, 4,096 reserved
// for the answer), so the history outgrows the input budget around turn
// 11. Requests pass through [compact.Guard], exactly as an agent's tool
// loop sends them: a request over the budget is compressed by the strategy
// to the budget less the tools' tokens. Tokens are counted with
// [compact.Estimator].
//
// # The figures
//
// The cache-eligible share is the sum over requests of the tokens of the
// longest prefix each shares byte for byte with the previous request,
// divided by the sum of all requests' input tokens. A request is laid out
// as providers serialize it: tool definitions, then the messages (the
// system message first). The tool definitions count as shared when they
// are identical to the previous request's (they always are here); then
// each leading message identical to the previous request's message at the
// same position counts, up to the first that differs. The first request
// shares nothing. An input token is a message token or a tool-definition
// token as the estimator counts them; the reply-priming constant of
// CountMessages is counted as input but never as shared.
//
// Compactions are the requests that do not extend the previous one (a
// message the previous request sent was changed or removed): each is a
// point where the prompt cache misses from the change on. Kept is the mean,
// over the requests from the first compressed one on, of the fraction of
// the history's turns whose user message is still in the request verbatim.
package cacheshare

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
)

// Info is the model the session runs against: a 24,000-token window with
// 4,096 tokens reserved for the answer.
var Info = llm.ModelInfo{Provider: "sim", Name: "sim-24k", ContextWindow: 24000, ReservedOutput: 4096}

// Result is what one replay measured.
type Result struct {
	Name     string
	Turns    int
	Requests int
	// Tokens is the input tokens of all requests; Shared the tokens of
	// each request's prefix shared with the previous request.
	Tokens, Shared int
	// Compactions counts requests that did not extend the previous one.
	Compactions int
	// Compressed counts requests the guard compressed (over the budget).
	Compressed int
	// Kept is the mean fraction of the history's turns present in the
	// requests from the first compressed one on (1 when none was).
	Kept float64
	// MaxTokens is the largest request; Budget the model's input budget.
	MaxTokens, Budget int
	// Violations lists broken invariants: a request over the budget, a
	// tool call without its result, a system prompt or tool definitions
	// that changed.
	Violations []string
}

// Share is the cache-eligible share of the input tokens.
func (r Result) Share() float64 {
	if r.Tokens == 0 {
		return 0
	}
	return float64(r.Shared) / float64(r.Tokens)
}

// SystemPrompt opens every request.
const SystemPrompt = `You are a coding agent working in a Go repository. Read the files you need with read_file before answering; prefer several files in parallel over one after another. Quote identifiers exactly, name the file and function you refer to, and say plainly when something is not in the code you read. Keep answers short: the user reads them in a terminal.`

// Tools are the tool definitions every request offers, in this order.
var Tools = []llm.ToolDefinition{
	{Name: "read_file", Description: "Read a UTF-8 text file of the repository and return its content.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"path relative to the repository root"}},"required":["path"]}`)},
	{Name: "grep", Description: "Search the repository for a regular expression and return the matching lines with their file and line number.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string","description":"directory to search, default the root"}},"required":["pattern"]}`)},
	{Name: "list_dir", Description: "List the entries of a directory of the repository.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
}

// Unbounded is the strategy name for sending the whole history every time,
// with no budget: the upper bound of the share.
const Unbounded = "append-only"

// Run replays a session of turns turns. A nil strategy sends the whole
// history without a budget (the upper bound); any other goes through
// [compact.Guard] with the budget of [Info]. The strategy must be fresh
// (an Incremental remembers earlier conversations).
func Run(ctx context.Context, name string, s compact.Strategy, turns int) (Result, error) {
	counter := compact.Estimator{}
	rec := &recorder{}
	var model llm.Model = rec
	if s != nil {
		model = compact.Guard(&compact.Policy{
			Strategy: s, Counter: counter, Info: Info,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})(rec)
	}
	res := Result{Name: name, Turns: turns, Budget: Info.InputBudget()}
	sys := llm.SystemText(SystemPrompt)
	hist := []llm.Message{sys}
	r := rand.New(rand.NewPCG(2024, 11))
	var userTurns []string // the user message of each turn so far
	call := 0
	compressedYet := false
	var keptSum float64
	keptN := 0

	meter := &Meter{Counter: counter}
	if s != nil {
		meter.Budget = res.Budget
	}
	send := func(turn int) error {
		req := &llm.Request{Messages: hist, Tools: Tools}
		rec.last = nil
		if _, err := model.Generate(ctx, req); err != nil {
			return fmt.Errorf("turn %d: %w", turn, err)
		}
		got := rec.last
		meter.Add(fmt.Sprintf("turn %d", turn), Request{Messages: got.Messages, Tools: got.Tools})
		msgs := got.Messages
		violate := func(format string, args ...any) {
			meter.res.Violations = append(meter.res.Violations, fmt.Sprintf("turn %d request %d: ", turn, meter.res.Requests)+fmt.Sprintf(format, args...))
		}
		if len(msgs) == 0 || !reflect.DeepEqual(msgs[0], sys) {
			violate("the system prompt changed")
		}
		if !reflect.DeepEqual(got.Tools, Tools) {
			violate("the tool definitions changed")
		}
		if len(msgs) != len(hist) || !reflect.DeepEqual(msgs, hist) {
			res.Compressed++
			compressedYet = true
		}
		if compressedYet {
			present := map[string]bool{}
			for i := range msgs {
				if msgs[i].Role == llm.RoleUser {
					present[msgs[i].Text()] = true
				}
			}
			kept := 0
			for _, u := range userTurns {
				if present[u] {
					kept++
				}
			}
			keptSum += float64(kept) / float64(len(userTurns))
			keptN++
		}
		return nil
	}

	for turn := 1; turn <= turns; turn++ {
		u := question(r, turn)
		userTurns = append(userTurns, u)
		hist = append(hist, llm.UserText(u))
		if err := send(turn); err != nil {
			return res, err
		}
		a := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text{Text: "Let me read the relevant files."}}}
		var results []llm.Message
		for range 1 + r.IntN(3) {
			call++
			id := fmt.Sprintf("toolu_%05d", call)
			path := paths[r.IntN(len(paths))]
			in, _ := json.Marshal(map[string]string{"path": path})
			a.Content = append(a.Content, llm.ToolUse{ID: id, Name: "read_file", Input: in})
			results = append(results, llm.ToolResultText(id, fileText(path), false))
		}
		hist = append(hist, a)
		hist = append(hist, results...)
		if err := send(turn); err != nil {
			return res, err
		}
		hist = append(hist, llm.AssistantText(answer(r, turn)))
	}
	m := meter.Result()
	res.Requests, res.Tokens, res.Shared, res.Compactions = m.Requests, m.Tokens, m.Shared, m.Compactions
	res.MaxTokens, res.Violations = m.MaxTokens, m.Violations
	res.Kept = 1
	if keptN > 0 {
		res.Kept = keptSum / float64(keptN)
	}
	return res, nil
}

// Request is one request as a [Meter] sees it: its messages (the system
// message first) and tool definitions, and optionally their bytes as sent.
type Request struct {
	Messages []llm.Message
	Tools    []llm.ToolDefinition
	// Wire, when set, holds each message's bytes as it was sent, and
	// WireTools the tool definitions' bytes: a message then repeats the
	// previous request's when its bytes are equal (the provider's view);
	// otherwise when it is deeply equal.
	Wire      [][]byte
	WireTools []byte
}

// Meter measures a sequence of requests the way [Run] does (see the
// package documentation): the input tokens, the tokens of each request's
// prefix shared with the previous request, the requests that did not
// extend the previous one, the largest request, and the invariants (no
// request over Budget, every tool call paired with its result). It is
// how a test measures requests recorded anywhere (an agent's, a real
// binary's) with the same definitions as the replay.
type Meter struct {
	// Counter counts tokens; nil means compact.Estimator.
	Counter compact.TokenCounter
	// Budget is the most input tokens a request may hold; 0 checks none.
	Budget int

	res  Result
	prev *Request
}

// Add measures the next request; label names it in violations.
func (m *Meter) Add(label string, req Request) {
	counter := m.Counter
	if counter == nil {
		counter = compact.Estimator{}
	}
	toolTokens := counter.CountTools(req.Tools)
	base := counter.CountMessages(nil)
	msgs := req.Messages
	m.res.Requests++
	n := counter.CountMessages(msgs) + toolTokens
	m.res.Tokens += n
	m.res.MaxTokens = max(m.res.MaxTokens, n)
	violate := func(format string, args ...any) {
		m.res.Violations = append(m.res.Violations, fmt.Sprintf("%s request %d: ", label, m.res.Requests)+fmt.Sprintf(format, args...))
	}
	if m.Budget > 0 && n > m.Budget {
		violate("%d tokens over the budget of %d", n, m.Budget)
	}
	if err := compact.ValidatePairing(msgs); err != nil {
		violate("%v", err)
	}
	if prev := m.prev; prev != nil {
		same := func(k int) bool {
			if req.Wire != nil && prev.Wire != nil {
				return bytes.Equal(prev.Wire[k], req.Wire[k])
			}
			return reflect.DeepEqual(prev.Messages[k], msgs[k])
		}
		k := 0
		for k < len(prev.Messages) && k < len(msgs) && same(k) {
			k++
		}
		toolsSame := reflect.DeepEqual(prev.Tools, req.Tools)
		if req.WireTools != nil && prev.WireTools != nil {
			toolsSame = bytes.Equal(prev.WireTools, req.WireTools)
		}
		if toolsSame {
			m.res.Shared += toolTokens + counter.CountMessages(msgs[:k]) - base
		}
		if k < len(prev.Messages) {
			m.res.Compactions++
		}
	}
	m.prev = &req
}

// Result returns what was measured so far (Requests, Tokens, Shared,
// Compactions, MaxTokens, Budget, Violations).
func (m *Meter) Result() Result {
	r := m.res
	r.Budget = m.Budget
	r.Violations = slices.Clone(r.Violations)
	return r
}

// recorder is the model at the bottom of the chain: it keeps the last
// request it received and answers with an empty message (the replay
// scripts the assistant's messages itself).
type recorder struct{ last *llm.Request }

func (m *recorder) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	m.last = req
	return &llm.Response{Message: llm.AssistantText("ok"), FinishReason: llm.FinishStop}, nil
}

func (m *recorder) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	resp, _ := m.Generate(ctx, req)
	return llm.StreamOf(resp)
}

func (m *recorder) Info() llm.ModelInfo { return Info }

// Format renders results as a table.
func Format(w io.Writer, results []Result) {
	fmt.Fprintf(w, "%-28s %6s %8s %6s %11s %6s %13s %s\n", "strategy", "turns", "requests", "share", "compactions", "kept", "max/budget", "violations")
	for _, r := range results {
		fmt.Fprintf(w, "%-28s %6d %8d %6.3f %11d %6.3f %6d/%-6d %d\n", r.Name, r.Turns, r.Requests, r.Share(), r.Compactions, r.Kept, r.MaxTokens, r.Budget, len(r.Violations))
	}
}

var (
	topics = strings.Fields(`retry budget cache session stream decoder encoder tool loop
		guard summary pairing thinking signature registry schema approval timeout
		cancellation store migration index prefix window estimator counter`)
	paths = func() []string {
		var ps []string
		for _, dir := range []string{"agent", "compact", "llm", "middleware", "session", "tool", "provider/openai", "provider/anthropic"} {
			for _, f := range []string{"run.go", "types.go", "stream.go", "errors.go", "util.go"} {
				ps = append(ps, dir+"/"+f)
			}
		}
		return ps
	}()
	idents = strings.Fields(`ctx req resp msgs budget counter out err tokens step group
		cut kept prev next hist state conv key seed buf n i j k id name path`)
	prose = strings.Fields(`the function returns reads writes checks the request message
		budget when it is over and then each call result a tool error stream cache
		prefix keeps drops counts so that if not only after before`)
)

func question(r *rand.Rand, turn int) string {
	return fmt.Sprintf("Turn %d: how does the %s handle %s? %s", turn,
		topics[r.IntN(len(topics))], topics[r.IntN(len(topics))], words(r, prose, 8+r.IntN(20)))
}

func answer(r *rand.Rand, turn int) string {
	return fmt.Sprintf("In turn %d I found: %s.", turn, words(r, prose, 40+r.IntN(80)))
}

func words(r *rand.Rand, vocab []string, n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(vocab[r.IntN(len(vocab))])
	}
	return sb.String()
}

// fileText generates the content of path: Go-like source of 1.3 to 3.5 KB,
// the same for the same path.
func fileText(path string) string { return sourceText(path, 1280, 3328) }

// sourceText generates Go-like source for path of lo to hi bytes (about),
// the same for the same arguments.
func sourceText(path string, lo, hi int) string {
	var seed uint64
	for _, c := range path {
		seed = seed*131 + uint64(c)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	var sb strings.Builder
	pkg := path[:strings.IndexByte(path, '/')]
	fmt.Fprintf(&sb, "package %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n\n", pkg)
	size := lo + r.IntN(hi-lo)
	for fn := 0; sb.Len() < size; fn++ {
		a, b := idents[r.IntN(len(idents))], idents[r.IntN(len(idents))]
		fmt.Fprintf(&sb, "// %s%d %s.\nfunc %s%d(ctx context.Context, %s int) (int, error) {\n", topics[r.IntN(len(topics))], fn, words(r, prose, 6+r.IntN(8)), strings.ToUpper(a[:1])+a[1:], fn, b)
		for range 3 + r.IntN(6) {
			x, y := idents[r.IntN(len(idents))], idents[r.IntN(len(idents))]
			switch r.IntN(3) {
			case 0:
				fmt.Fprintf(&sb, "\tif %s > %d {\n\t\treturn 0, fmt.Errorf(\"%s: %%d\", %s)\n\t}\n", x, r.IntN(100), words(r, prose, 3), x)
			case 1:
				fmt.Fprintf(&sb, "\t%s := %s + %d\n", x, y, r.IntN(10))
			default:
				fmt.Fprintf(&sb, "\tfor %s := range %s {\n\t\t_ = %s\n\t}\n", x, y, x)
			}
		}
		fmt.Fprintf(&sb, "\treturn %s, nil\n}\n\n", b)
	}
	return sb.String()
}

// DropOldestTurns is the naive baseline: it keeps the leading system
// messages and drops the oldest whole turns (a user message and everything
// up to the next one) until the conversation fits. It is stateless and
// drops exactly as little as it must, so the cut moves with almost every
// request.
type DropOldestTurns struct{}

// Compress implements [compact.Strategy].
func (DropOldestTurns) Compress(ctx context.Context, msgs []llm.Message, budget int, counter compact.TokenCounter) ([]llm.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	head := 0
	for head < len(msgs) && msgs[head].Role == llm.RoleSystem {
		head++
	}
	var starts []int // the first message of each turn
	for i := head; i < len(msgs); i++ {
		if msgs[i].Role == llm.RoleUser && msgs[i].ToolCallID == "" && !hasResult(msgs[i]) {
			starts = append(starts, i)
		}
	}
	for _, s := range starts {
		out := append(append([]llm.Message(nil), msgs[:head]...), msgs[s:]...)
		if counter.CountMessages(out) <= budget {
			return out, nil
		}
	}
	return nil, &compact.CannotFitError{Strategy: "drop-oldest-turns", Budget: budget, Reason: "the last turn alone is too large"}
}

func hasResult(m llm.Message) bool {
	for _, b := range m.Content {
		if _, ok := b.(llm.ToolResult); ok {
			return true
		}
	}
	return false
}

// Named is a strategy of the comparison; New returns a fresh one (nil for
// the unbounded upper bound).
type Named struct {
	Name string
	New  func() compact.Strategy
}

// Strategies are the strategies compared, in order: the append-only upper
// bound, the naive baseline (alone and in an Incremental), the default of
// package compact as it was before Incremental tuned its strategies, and
// the default.
func Strategies() []Named {
	return []Named{
		{Unbounded, func() compact.Strategy { return nil }},
		{"naive drop-oldest-turns", func() compact.Strategy { return DropOldestTurns{} }},
		{"naive in Incremental", func() compact.Strategy { return compact.NewIncremental(DropOldestTurns{}) }},
		{"previous default", func() compact.Strategy { return compact.NewIncremental(opaque{compact.DefaultPipeline(nil)}) }},
		{"default", func() compact.Strategy { return compact.NewIncremental(compact.DefaultPipeline(nil)) }},
	}
}

// opaque hides a strategy's identity from Incremental, which then runs it
// as it is: the default pipeline behind it compresses as the default did
// before Incremental tuned its microcompact step.
type opaque struct{ compact.Strategy }
