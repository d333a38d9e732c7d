package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"
	"go.uber.org/goleak"

	"github.com/agcore/agcore/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestInterrupts(t *testing.T) {
	tests := []struct {
		name      string
		turn      bool // a turn is running
		hits      int
		turnDone  bool // the turn's context is cancelled
		quit      bool // the command's context is cancelled
		exitCodes int  // times exit was called
	}{
		{"a Ctrl-C during a turn cancels only the turn", true, 1, true, false, 0},
		{"a second one quits", true, 2, true, true, 0},
		{"a third one exits at once", true, 3, true, true, 1},
		{"without a turn the first one quits", false, 1, true /* tctx is the root */, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, quit := context.WithCancel(context.Background())
			defer quit()
			var exits atomic.Int32
			in := newInterrupts(quit, func(code int) {
				if code != ExitInterrupted {
					t.Errorf("exit(%d), want %d", code, ExitInterrupted)
				}
				exits.Add(1)
			})
			said := ""
			in.setNotify(func(msg string) { said = msg })
			tctx := root
			end := func() bool { return false }
			if tt.turn {
				tctx, end = in.startTurn(root)
			}
			for range tt.hits {
				in.interrupt()
			}
			if (tctx.Err() != nil) != tt.turnDone || (root.Err() != nil) != tt.quit || int(exits.Load()) != tt.exitCodes {
				t.Errorf("turn cancelled %v, quit %v, exits %d", tctx.Err() != nil, root.Err() != nil, exits.Load())
			}
			if tt.turn && !end() {
				t.Error("the turn's end does not report the interrupt")
			}
			if tt.turn && said != "cancelling" {
				t.Errorf("the user was told %q", said)
			}
		})
	}
	t.Run("signals are watched until stopped", func(t *testing.T) {
		root, quit := context.WithCancel(context.Background())
		defer quit()
		in := newInterrupts(quit, func(int) {})
		ch := make(chan os.Signal, 1)
		stop := in.watch(ch)
		ch <- os.Interrupt
		<-root.Done()
		stop() // goleak checks the watcher has ended
	})
}

func TestApprover(t *testing.T) {
	call := tool.Call{ID: "w1", Name: "write_file", Input: json.RawMessage(`{"path":"a.txt","content":"x"}`)}
	answer := func(s string, err error) askFunc {
		return func(_ context.Context, q string) (string, error) {
			if !strings.Contains(q, `write_file path="a.txt"`) {
				t.Errorf("question %q does not show the call", q)
			}
			return s, err
		}
	}
	tests := []struct {
		name     string
		yes      bool
		ask      askFunc
		approved bool
		reason   string
	}{
		{"--yes approves", true, nil, true, ""},
		{"not interactive denies and says how to allow", false, nil, false, "--yes"},
		{"y approves", false, answer("y", nil), true, ""},
		{"YES approves", false, answer(" YES ", nil), true, ""},
		{"anything else declines", false, answer("n", nil), false, "declined"},
		{"an empty answer declines", false, answer("", nil), false, "declined"},
		{"end of input does not approve", false, answer("", io.EOF), false, "did not approve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paused := 0
			p := &approver{yes: tt.yes, ask: tt.ask, pause: func() func() { paused++; return func() {} }}
			d, err := p.Approve(context.Background(), call)
			if err != nil || d.Approved != tt.approved || !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("decision %+v, %v; want approved %v with %q", d, err, tt.approved, tt.reason)
			}
			if tt.ask != nil && paused != 1 {
				t.Errorf("the status line was paused %d times around the question", paused)
			}
		})
	}
	t.Run("a cancelled turn stops the question", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		p := &approver{ask: func(ctx context.Context, _ string) (string, error) { return "", ctx.Err() }, pause: func() func() { return func() {} }}
		if _, err := p.Approve(ctx, call); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want cancelled", err)
		}
	})
	var _ tool.Approver = (*approver)(nil)
}

func TestOpenStore(t *testing.T) {
	home := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	tests := []struct {
		dsn     string
		desc    string // a prefix of the description
		durable bool
		err     string
	}{
		{"", "sqlite:" + filepath.Join(home, "agcore.db"), true, ""},
		{"sqlite:" + filepath.Join(home, "s.db"), "sqlite:" + filepath.Join(home, "s.db"), true, ""},
		{"sqlite:" + filepath.Join(home, "x", "s.db"), "", false, "the directory " + filepath.Join(home, "x") + " does not exist"},
		{"file:" + filepath.Join(home, "jsonl"), "file:" + filepath.Join(home, "jsonl"), true, ""},
		{"memory:", "memory:", false, ""},
		{"file:", "", false, "names no directory"},
		{"mysql://db", "", false, "is not a store: give sqlite:PATH, file:DIR, memory:, postgres://… or redis://…"},
	}
	for _, tt := range tests {
		t.Run(tt.dsn, func(t *testing.T) {
			st, err := openStore(context.Background(), tt.dsn, home, logger, false)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if st.Description != tt.desc || st.Durable != tt.durable {
				t.Errorf("desc %q durable %v, want %q %v", st.Description, st.Durable, tt.desc, tt.durable)
			}
		})
	}
}

func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	a := &app{env: Env{Getenv: func(string) (string, bool) { return "", false }}}
	root := a.newRoot()
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if c.Short == "" || (c.Runnable() && c.Example == "") {
			t.Errorf("%q lacks a short description or examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			check(sub)
		}
	}
	check(root)
}
