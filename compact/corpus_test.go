package compact

import (
	"os"
	"path/filepath"
	"testing"
)

// corpus is the calibration corpus: original text written for agcore, one
// file per kind of content an agent's context holds. The calibration of the
// estimator against the exact counts is in compact/tiktoken.
var corpus = []struct{ kind, file string }{
	{"english prose", "english.txt"},
	{"chinese prose", "chinese.txt"},
	{"go code", "code_go.txt"},
	{"json tool results", "tool_results.json"},
}

func readCorpus(tb testing.TB, file string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "corpus", file))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}
