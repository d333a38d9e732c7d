package anthropic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

var fixtureRequest = &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}

// replayFixture plays one recorded file through the adapter: streams for
// .sse (200, written whole and in small pieces), Generate for .json (with
// the status its name gives).
func replayFixture(t *testing.T, file string, chunk int, contentType string, opts ...Option) (*llm.Response, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(file, ".sse") {
		srv := serve(t, 200, contentType, data, chunk, nil)
		_, resp, err := drain(t, newTestModel(srv.URL, opts...).Stream(bg, fixtureRequest))
		return resp, err
	}
	status := 200
	if rest, ok := strings.CutPrefix(file, "error-"); ok {
		status, _ = strconv.Atoi(rest[:3])
	}
	srv := serve(t, status, "application/json", data, chunk, nil)
	return newTestModel(srv.URL).Generate(bg, fixtureRequest)
}

func fixtureFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatalf("the recorded fixtures must be at %s: %v", fixtureDir, err)
	}
	var files []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext == ".sse" || ext == ".json" {
			files = append(files, e.Name())
		}
	}
	if len(files) < 19 {
		t.Fatalf("found %d fixtures in %s, want every one of the 19 recorded", len(files), fixtureDir)
	}
	return files
}

// TestEveryFixtureMatchesItsGoldenFile replays every recorded response
// byte-for-byte and compares the assembled Response (or the typed error)
// with a golden file checked by hand (TestConformance replays the streams
// in every piece size).
func TestEveryFixtureMatchesItsGoldenFile(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		name := strings.TrimSuffix(file, filepath.Ext(file))
		t.Run(name, func(t *testing.T) {
			resp, err := replayFixture(t, file, 0, "text/event-stream; charset=utf-8")
			want := goldenOf(resp, err)
			checkGolden(t, name+".json", want)
		})
	}
}

// TestErrorFixturesAreTypedInStreamsToo checks that an HTTP error answering
// a streaming call is the same typed error Generate returns.
func TestErrorFixturesAreTypedInStreamsToo(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		if !strings.HasPrefix(file, "error-") {
			continue
		}
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(fixtureDir, file))
			if err != nil {
				t.Fatal(err)
			}
			status, _ := strconv.Atoi(file[len("error-") : len("error-")+3])
			srv := serve(t, status, "application/json", data, 0, nil)
			_, gen := newTestModel(srv.URL).Generate(bg, fixtureRequest)
			_, _, str := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
			g, _ := json.Marshal(goldenOf(nil, gen))
			s, _ := json.Marshal(goldenOf(nil, str))
			if string(g) != string(s) {
				t.Errorf("stream error %s, Generate error %s", s, g)
			}
		})
	}
}

// TestFixtureFacts states, from PROVENANCE.md and the recordings, what each
// replay must produce, independently of the golden files.
func TestFixtureFacts(t *testing.T) {
	type call struct{ name, args string }
	tests := []struct {
		file     string
		finish   llm.FinishReason
		text     string // prefix of the answer's text
		calls    []call
		thinking bool // a thinking block with a signature
		redacted int
		usage    llm.Usage
	}{
		{file: "messages-stream-text.sse", finish: llm.FinishStop, text: "1\n2\n3\n4\n5",
			usage: llm.Usage{InputTokens: 15, OutputTokens: 13}},
		{file: "messages-stream-max-tokens.sse", finish: llm.FinishLength, text: "Here are all 50 U.S. states",
			usage: llm.Usage{InputTokens: 15, OutputTokens: 50}},
		{file: "messages-stream-parallel-tool-use.sse", finish: llm.FinishToolUse, text: "I'll add and multiply",
			calls: []call{{"add", `{"a":2,"b":3}`}, {"multiply", `{"a":2,"b":3}`}},
			usage: llm.Usage{InputTokens: 502, OutputTokens: 137}},
		{file: "messages-stream-tool-use.sse", finish: llm.FinishToolUse, text: "I'll get the weather",
			calls: []call{{"weather", `{"location":"Florence,Italy"}`}},
			usage: llm.Usage{InputTokens: 394, OutputTokens: 67}},
		{file: "messages-stream-tool-use-no-args.sse", finish: llm.FinishToolUse, text: "I'll update the issue list",
			calls: []call{{"updateIssueList", `{}`}},
			usage: llm.Usage{InputTokens: 565, OutputTokens: 48}},
		{file: "messages-stream-thinking-tool-use.sse", finish: llm.FinishToolUse, thinking: true,
			calls: []call{{"weather", `{"location":"Florence, Italy"}`}},
			usage: llm.Usage{InputTokens: 424, OutputTokens: 119}},
		{file: "messages-stream-redacted-thinking.sse", finish: llm.FinishStop, text: "I notice that you've sent", redacted: 2,
			usage: llm.Usage{InputTokens: 92, OutputTokens: 189}},
		{file: "messages-stream-cache-write.sse", finish: llm.FinishLength, text: "OK",
			usage: llm.Usage{InputTokens: 3 + 18639, OutputTokens: 1, CacheCreationTokens: 18639}},
		{file: "messages-stream-cache-read.sse", finish: llm.FinishLength, text: "OK",
			usage: llm.Usage{InputTokens: 3 + 18639, OutputTokens: 1, CachedInputTokens: 18639}},
		// Usage lists two iterations (compaction, then the answer): billed
		// usage is their sum.
		{file: "messages-stream-compaction-cache-read.sse", finish: llm.FinishStop, text: "Hello! 👋",
			usage: llm.Usage{InputTokens: 100 + 55096 + 181, OutputTokens: 83 + 8, CachedInputTokens: 55096}},
		{file: "messages-max-tokens.json", finish: llm.FinishLength, text: "Here are all 50 U.S. states",
			usage: llm.Usage{InputTokens: 15, OutputTokens: 50}},
		{file: "messages-parallel-tool-use.json", finish: llm.FinishToolUse, text: "I'll add and multiply",
			calls: []call{{"add", `{"a":2,"b":3}`}, {"multiply", `{"a":2,"b":3}`}},
			usage: llm.Usage{InputTokens: 507, OutputTokens: 137}},
		{file: "messages-redacted-thinking.json", finish: llm.FinishStop, text: "I notice that your message", redacted: 1,
			usage: llm.Usage{InputTokens: 92, OutputTokens: 196}},
		{file: "messages-thinking-tool-use.json", finish: llm.FinishToolUse, thinking: true,
			calls: []call{{"weather", `{"location":"Florence, Italy"}`}},
			usage: llm.Usage{InputTokens: 424, OutputTokens: 118}},
		{file: "messages-tool-use-cache-creation.json", finish: llm.FinishToolUse, calls: []call{{"star_wars_tool", `{}`}},
			usage: llm.Usage{InputTokens: 147 + 4602, OutputTokens: 38, CacheCreationTokens: 4602}},
		{file: "messages-tool-use-cache-read.json", finish: llm.FinishToolUse, calls: []call{{"star_wars_tool", `{}`}},
			usage: llm.Usage{InputTokens: 151 + 4602, OutputTokens: 38, CachedInputTokens: 4602}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			resp, err := replayFixture(t, tc.file, 0, "text/event-stream; charset=utf-8")
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != tc.finish {
				t.Errorf("finish = %s, want %s", resp.FinishReason, tc.finish)
			}
			if !strings.HasPrefix(resp.Message.Text(), tc.text) {
				t.Errorf("text = %q, want prefix %q", resp.Message.Text(), tc.text)
			}
			if resp.Usage != tc.usage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tc.usage)
			}
			uses := resp.Message.ToolUses()
			if len(uses) != len(tc.calls) {
				t.Fatalf("%d tool calls, want %d", len(uses), len(tc.calls))
			}
			for i, c := range tc.calls {
				var got, want any
				json.Unmarshal(uses[i].Input, &got)
				json.Unmarshal([]byte(c.args), &want)
				if uses[i].Name != c.name || !strings.HasPrefix(uses[i].ID, "toolu_") || !jsonEqual(got, want) {
					t.Errorf("call %d = %s %s (%s), want %s %s", i, uses[i].Name, uses[i].Input, uses[i].ID, c.name, c.args)
				}
			}
			var thinking, redacted int
			for _, b := range resp.Message.Content {
				switch b := b.(type) {
				case llm.Thinking:
					if b.Text == "" || b.Signature == "" {
						t.Errorf("thinking block without text or signature: %+v", b)
					}
					thinking++
				case llm.RedactedThinking:
					if b.Data == "" {
						t.Error("redacted thinking without data")
					}
					redacted++
				}
			}
			if (thinking > 0) != tc.thinking || redacted != tc.redacted {
				t.Errorf("%d thinking and %d redacted blocks, want thinking %v and %d redacted", thinking, redacted, tc.thinking, tc.redacted)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
