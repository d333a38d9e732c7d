// Package compacttest holds the test material package compact and its
// exact counters (compact/tiktoken) share: the calibration corpus and one
// content block of every kind. It is for tests only.
package compacttest

import (
	"embed"
	"encoding/json"

	"github.com/agcore/agcore/llm"
)

//go:embed corpus
var corpusFS embed.FS

// Corpus is the calibration corpus: original text written for agcore, one
// file per kind of content an agent's context holds.
var Corpus = []struct{ Kind, File string }{
	{"english prose", "english.txt"},
	{"chinese prose", "chinese.txt"},
	{"go code", "code_go.txt"},
	{"json tool results", "tool_results.json"},
}

// Text returns the corpus file named file; it panics on a name not in
// Corpus (a test's mistake).
func Text(file string) string {
	data, err := corpusFS.ReadFile("corpus/" + file)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// OneOfEach holds one block of every kind, each with some content.
func OneOfEach() []llm.Block {
	return []llm.Block{
		llm.Text{Text: "some text here"},
		llm.Image{URL: "https://example.com/a.png"},
		llm.Audio{URL: "https://example.com/a.wav"},
		llm.File{FileID: "file-123", Name: "report.pdf"},
		llm.ToolUse{ID: "call_1", Name: "grep", Input: json.RawMessage(`{"q":"x"}`)},
		llm.ToolResult{ToolUseID: "call_1", Content: []llm.Block{llm.Text{Text: "found"}}},
		llm.Thinking{Text: "let me think", Signature: "sig"},
		llm.RedactedThinking{Data: "ZW5jcnlwdGVkIHJlYXNvbmluZw=="},
		llm.Extension{Kind: "citation", Data: json.RawMessage(`{"url":"https://example.com"}`)},
	}
}
