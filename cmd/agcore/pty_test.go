package main_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal runs the binary under a pseudo-terminal, as a person at a
// terminal would: it types and pastes keys and reads the screen's text.
// The line editor is told not to query the cursor position, as its
// documentation advises for pseudo-terminal harnesses (a terminal emulator
// answers the query; this harness is none).
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	done chan struct{} // closed when the reader has stopped
	exit chan error    // the process's end

	mu      sync.Mutex
	out     strings.Builder // everything written to the terminal
	seen    int             // where the next expect starts, in the plain text
	changed chan struct{}   // closed and replaced on every write
}

const expectTimeout = 30 * time.Second

// startTerminal runs agcore with args in c's environment under a pty.
func (c *cli) startTerminal(args ...string) *terminal {
	c.t.Helper()
	writeFiles(c.t, c.home, map[string]string{"inputrc": "set cursor-position-probe off\n"})
	c.env["INPUTRC"] = filepath.Join(c.home, "inputrc")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := c.command(ctx, args...)
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	tm := &terminal{t: c.t, cmd: cmd, pty: f, done: make(chan struct{}), exit: make(chan error, 1), changed: make(chan struct{})}
	go tm.read()
	go func() { tm.exit <- cmd.Wait() }()
	c.t.Cleanup(func() {
		cancel()
		f.Close()
		<-tm.done
	})
	return tm
}

// read copies the terminal's output.
func (tm *terminal) read() {
	defer close(tm.done)
	buf := make([]byte, 4096)
	for {
		n, err := tm.pty.Read(buf)
		if n > 0 {
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			close(tm.changed)
			tm.changed = make(chan struct{})
			tm.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]|\r`)

// screen is the output so far as plain text (escape sequences and
// carriage returns removed).
func (tm *terminal) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return ansi.ReplaceAllString(tm.out.String(), "")
}

// expect waits until want appears after what earlier expects matched.
func (tm *terminal) expect(want string) {
	tm.t.Helper()
	deadline := time.After(expectTimeout)
	for {
		tm.mu.Lock()
		plain := ansi.ReplaceAllString(tm.out.String(), "")
		from := min(tm.seen, len(plain))
		if i := strings.Index(plain[from:], want); i >= 0 {
			tm.seen = from + i + len(want)
			tm.mu.Unlock()
			return
		}
		changed := tm.changed
		tm.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			tm.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, plain[from:])
		}
	}
}

// send types keys.
func (tm *terminal) send(keys string) {
	tm.t.Helper()
	if _, err := tm.pty.WriteString(keys); err != nil {
		tm.t.Fatal(err)
	}
}

// paste pastes text the way terminals do with bracketed paste on.
func (tm *terminal) paste(text string) { tm.send("\x1b[200~" + text + "\x1b[201~") }

// wait waits for the program to end and returns its exit status.
func (tm *terminal) wait() int {
	tm.t.Helper()
	select {
	case err := <-tm.exit:
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.ExitCode()
		}
		tm.t.Fatalf("waiting for agcore: %v", err)
	case <-time.After(expectTimeout):
		tm.t.Fatalf("agcore did not exit; the terminal shows:\n%s", tm.screen())
	}
	return -1
}
