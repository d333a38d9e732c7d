//go:build linux

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStoppingTheWorkerStopsItsChild stops `agcore worker`, which runs
// agcore-temporal as its child, with SIGINT, SIGTERM and SIGKILL sent to
// the agcore process alone: each time the child goes too. (The child here
// is a stand-in that records its pid and sleeps.)
func TestStoppingTheWorkerStopsItsChild(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			stand := filepath.Join(dir, "agcore-temporal")
			script := "#!/bin/sh\necho $$ > '" + pidFile + ".tmp' && mv '" + pidFile + ".tmp' '" + pidFile + "'\nexec sleep 600\n"
			if err := os.WriteFile(stand, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			c := newCLI(t)
			c.env["AGCORE_TEMPORAL_BIN"] = stand
			cmd := exec.Command(binary, "worker", "--provider", "demo")
			cmd.Dir = c.dir
			for k, v := range c.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // signals reach agcore only
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			child := 0
			t.Cleanup(func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				if child > 0 {
					_ = syscall.Kill(child, syscall.SIGKILL)
				}
				select {
				case <-exited:
				case <-time.After(5 * time.Second):
					t.Error("agcore did not exit after SIGKILL")
				}
			})
			deadline := time.Now().Add(10 * time.Second)
			for child == 0 {
				if b, err := os.ReadFile(pidFile); err == nil {
					child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				}
				if time.Now().After(deadline) {
					t.Fatal("the child never started")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(15 * time.Second):
				t.Fatalf("agcore did not exit after %s", sig)
			}
			for alive(child) {
				if time.Now().After(deadline.Add(15 * time.Second)) {
					t.Fatalf("the child %d outlived agcore stopped with %s", child, sig)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting to be reaped has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
