package main_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkServeBackgroundCPU measures, through the built agcore serve
// (a process of its own, over the memory store, a scripted OpenAI
// provider streaming an answer of 200 deltas), the server's CPU time per
// streamed Responses turn run in the background (its events kept in the
// event log as they stream) against the same turn in the foreground,
// alternating blocks of 50 turns of each kind. The server's CPU is read
// from /proc (user + system, in clock ticks): run enough turns
// (-benchtime 2000x) for the ticks to count. The client's CPU (this
// process) is not in the figures.
//
//	go test -run X -bench ServeBackgroundCPU -benchtime 2000x ./cmd/agcore
func BenchmarkServeBackgroundCPU(b *testing.B) {
	provider := httptest.NewServer(http.HandlerFunc(openaiReply(turn{text: strings.Repeat("abcd ", 200), in: 10, out: 200})))
	defer provider.Close()
	home := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--addr", "127.0.0.1:0", "--store", "memory:", "--tools", "")
	cmd.Dir = home
	cmd.Env = []string{"AGCORE_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"AGCORE_PROVIDER=compatible", "AGCORE_MODEL=local-model", "OPENAI_BASE_URL=" + provider.URL + "/v1"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	listening := regexp.MustCompile(`listening on (http://\S+) `)
	base := ""
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		b.Fatal("agcore serve did not say where it listens")
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	turnOnce := func(background bool) {
		body := `{"model":"agcore","stream":true,"input":"hello"}`
		if background {
			body = `{"model":"agcore","stream":true,"background":true,"input":"hello"}`
		}
		resp, err := client.Post(base+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Contains(data, []byte("event: response.completed")) {
			b.Fatalf("status %d, %v: %.300s", resp.StatusCode, err, data)
		}
		if n := bytes.Count(data, []byte("event: response.output_text.delta")); n != 200 {
			b.Fatalf("%d deltas, want 200", n)
		}
	}
	pid := cmd.Process.Pid
	for range 20 { // warm up both paths
		turnOnce(false)
		turnOnce(true)
	}
	const block = 50
	var cpu [2]time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += block {
		n := min(block, b.N-done)
		for k, background := range []bool{false, true} {
			before := procCPU(b, pid)
			for range n {
				turnOnce(background)
			}
			cpu[k] += procCPU(b, pid) - before
		}
	}
	b.StopTimer()
	fg, bg := cpu[0], cpu[1]
	b.ReportMetric(float64(fg.Microseconds())/float64(b.N), "foreground-cpu-µs/turn")
	b.ReportMetric(float64(bg.Microseconds())/float64(b.N), "background-cpu-µs/turn")
	if fg > 0 {
		b.ReportMetric(float64(bg)/float64(fg), "background/foreground")
	}
}

// procCPU is the user and system CPU time of process pid so far, from
// /proc/PID/stat (clock ticks of 10 ms, the usual USER_HZ).
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skip("no /proc here:", err)
	}
	// The fields after the command name (which may hold spaces, in
	// parentheses): state is field 3, utime 14, stime 15.
	rest := string(data[bytes.LastIndexByte(data, ')')+2:])
	f := strings.Fields(rest)
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
