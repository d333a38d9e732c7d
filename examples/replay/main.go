// Command replay replays a committed record as a regression test: the
// record (notes.record.jsonl) is a run of `agcore run --provider demo
// --record` over the two files in notes/. The program rebuilds that agent
// (its instructions, the real list_dir and read_file tools) over a
// replay.Model, runs the recorded turn again with no network and no key,
// and prints how its requests drifted: first as configured when it was
// recorded (no drift), then with changed instructions (lenient: the
// recorded answers come back and the drift is listed), then strictly (the
// first drifted call fails with a *replay.DriftError).
//
//	go run ./examples/replay
//
// To re-make the record (from the repository's root):
//
//	agcore run --provider demo --store memory: --root examples/replay/notes --tools list_dir,read_file --system "You are a careful reader. Answer from the notes." --record examples/replay/notes.record.jsonl "What do the notes say?"
package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool/fstool"
)

//go:embed notes.record.jsonl
var recordFile []byte

//go:embed notes
var notes embed.FS

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	rec, err := replay.Parse(bytes.NewReader(recordFile))
	if err != nil {
		return err
	}
	// The tools read the notes from a directory of their own.
	dir, err := os.MkdirTemp("", "replay-notes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, notes); err != nil {
		return err
	}
	root := filepath.Join(dir, "notes")

	recorded := rec.Header.Meta["system"]
	fmt.Fprintf(out, "record: %d turn, %d model calls by %s/%s\n", len(rec.Turns), len(rec.Calls), rec.Header.Provider, rec.Header.Model)

	fmt.Fprintln(out, "\n== as recorded ==")
	if _, err := replayOnce(ctx, out, rec, root, recorded, false); err != nil {
		return err
	}
	fmt.Fprintln(out, "\n== instructions changed, lenient ==")
	if _, err := replayOnce(ctx, out, rec, root, "Answer in French.", false); err != nil {
		return err
	}
	fmt.Fprintln(out, "\n== instructions changed, strict ==")
	_, err = replayOnce(ctx, out, rec, root, "Answer in French.", true)
	var drift *replay.DriftError
	if !errors.As(err, &drift) {
		return fmt.Errorf("the strict replay did not fail with a drift: %v", err)
	}
	fmt.Fprintf(out, "strict replay failed at call %d: %d difference(s)\n", drift.Call, len(drift.Differences))
	return nil
}

// replayOnce runs the record's turns again with the agent as configured
// now and prints the drift and the answers.
func replayOnce(ctx context.Context, out io.Writer, rec *replay.Record, root, instructions string, strict bool) (*replay.Model, error) {
	tools, err := fstool.ByName(root, []string{"list_dir", "read_file"}, fstool.Options{})
	if err != nil {
		return nil, err
	}
	m := replay.NewModel(rec, replay.Options{Strict: strict})
	a, err := agent.New(m, agent.Config{
		Name:         "agcore",
		Instructions: instructions,
		Tools:        tools,
		// A recorded error is the answer its call got after its retries.
		Retry: middleware.RetryConfig{MaxAttempts: 1},
	})
	if err != nil {
		return nil, err
	}
	sessions := map[string]*session.Session{}
	for _, turn := range rec.Turns {
		s := sessions[turn.Session]
		if s == nil {
			s = &session.Session{Messages: turn.History}
			sessions[turn.Session] = s
		}
		resp, err := a.Run(ctx, turn.Input, &agent.RunOptions{Session: s})
		if err != nil {
			return m, err
		}
		fmt.Fprintf(out, "turn %d answered (%d chars, %d input tokens as recorded)\n", turn.N, len(resp.Text()), resp.Usage.InputTokens)
	}
	m.Finish()
	drifts := m.Drifts()
	if len(drifts) == 0 {
		fmt.Fprintf(out, "no drift: %d calls, every request as recorded\n", m.Calls())
	}
	for _, d := range drifts {
		fmt.Fprintln(out, d)
	}
	return m, nil
}
