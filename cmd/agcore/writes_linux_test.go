package main_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writesOf runs agcore with args and a stdout that keeps each write(2)
// apart (a SOCK_SEQPACKET socket: one write, one packet) and returns the
// writes, in order, and the exit status.
func (c *cli) writesOf(t *testing.T, args ...string) ([]string, int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no SOCK_SEQPACKET socket pair: %v", err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "stdout-reader"), os.NewFile(uintptr(fds[1]), "stdout")
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, args...)
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatal(err)
	}
	w.Close() // the child has its copy: EOF once it exits
	packets := make(chan []string, 1)
	go func() {
		var got []string
		buf := make([]byte, 1<<20)
		for {
			n, err := syscall.Read(fds[0], buf)
			if n <= 0 || err != nil {
				break
			}
			got = append(got, string(buf[:n]))
		}
		packets <- got
	}()
	err = cmd.Wait()
	code := 0
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return <-packets, code
}

// Listing sessions (and models) writes its table in one go, not one write
// call per cell: a table of 12 sessions is one write.
func TestTablesAreWrittenInOneWrite(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	for i := range 12 {
		c.ok("run", fmt.Sprintf("hello %d", i))
	}
	for _, args := range [][]string{{"sessions", "list"}, {"models"}, {"sessions", "show", "NEWEST"}, {"sessions", "export", "--markdown", "NEWEST"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if args[len(args)-1] == "NEWEST" {
				// show and export take an id: the newest session's.
				list := c.ok("sessions", "list").stdout
				lines := strings.Split(list, "\n")
				if len(lines) < 2 {
					t.Fatalf("no session listed:\n%s", list)
				}
				args = append(args[:len(args)-1], strings.Fields(lines[1])[0])
			}
			writes, code := c.writesOf(t, args...)
			if code != 0 {
				t.Fatalf("agcore %s: exit %d", strings.Join(args, " "), code)
			}
			all := strings.Join(writes, "")
			if len(writes) != 1 || len(all) < 100 {
				t.Errorf("agcore %s wrote its %d bytes in %d writes, want 1 (the first: %q)", strings.Join(args, " "), len(all), len(writes), writes[:min(3, len(writes))])
			}
			if len(args) == 2 && args[1] == "list" && strings.Count(all, "hello") != 12 {
				t.Errorf("the list lacks sessions:\n%s", all)
			}
		})
	}
}
