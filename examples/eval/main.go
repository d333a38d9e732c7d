// Command eval runs an eval set offline, with no network and no key: the
// cases of testdata/notes.eval.json against an agent over the demo model
// (which lists the notes directory, reads its files and summarizes them),
// plus a case made from the committed record testdata/notes.record.jsonl
// (agcore run --record), whose model calls are answered from the record.
// It prints the table of cases × scorers, then runs the set again with
// changed instructions: the record's case drifts and fails.
//
//	go run ./examples/eval
//
// The same from the command line (from the repository's root):
//
//	agcore eval --provider demo --root examples/eval/testdata/notes --from-record examples/eval/testdata/notes.record.jsonl examples/eval/testdata/notes.eval.json
package main

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/eval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/provider/demo"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/tool/fstool"
)

//go:embed testdata
var testdata embed.FS

func main() {
	rep, err := run(context.Background(), os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	if !rep.OK() {
		os.Exit(1)
	}
}

// run evaluates the set as recorded, then with changed instructions, and
// returns the first report.
func run(ctx context.Context, out io.Writer) (*eval.Report, error) {
	dir, err := os.MkdirTemp("", "eval-notes-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, testdata); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "testdata")

	set, err := eval.Load(filepath.Join(data, "notes.eval.json"), nil)
	if err != nil {
		return nil, err
	}
	b, _ := testdata.ReadFile("testdata/notes.record.jsonl")
	rec, err := replay.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c, err := eval.FromRecord(rec, "notes.record.jsonl", "recorded-summary")
	if err != nil {
		return nil, err
	}
	set.Cases = append(set.Cases, c)
	recorded := rec.Header.Meta["system"]

	fmt.Fprintln(out, "== as recorded ==")
	rep, err := evaluate(ctx, out, set, filepath.Join(data, "notes"), recorded)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(out, "\n== instructions changed ==")
	if _, err := evaluate(ctx, out, set, filepath.Join(data, "notes"), "Answer in French."); err != nil {
		return nil, err
	}
	return rep, nil
}

// evaluate builds the agent with instructions over the demo model (for the
// cases without a record) and runs the set.
func evaluate(ctx context.Context, out io.Writer, set *eval.Set, root, instructions string) (*eval.Report, error) {
	tools, err := fstool.ByName(root, []string{"list_dir", "read_file"}, fstool.Options{})
	if err != nil {
		return nil, err
	}
	a, err := agent.New(eval.Offline(&demo.Model{}, llm.ModelInfo{}), agent.Config{
		Name:         "agcore",
		Instructions: instructions,
		Tools:        tools,
		// A recorded error is the answer its call got after its retries.
		Retry: middleware.RetryConfig{MaxAttempts: 1},
	})
	if err != nil {
		return nil, err
	}
	rep, err := eval.Run(ctx, a, set, &eval.Options{Concurrency: 2})
	if err != nil {
		return nil, err
	}
	return rep, rep.WriteTable(out)
}
