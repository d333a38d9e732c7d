package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/replay"
)

// post sends body as JSON to u and decodes the JSON answer; safe to call
// from any goroutine (it returns errors rather than failing the test).
func post(u string, body any) (map[string]any, error) {
	b, _ := json.Marshal(body)
	resp, err := http.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: %d %s", u, resp.StatusCode, data)
	}
	return out, nil
}

// TestServeRecordDirThenReplay runs the built agcore serve --record-dir
// against a fake OpenAI provider: two Responses turns of one session
// (previous_response_id) and one of another, the first of each session
// and a stateless chat completion sent at once. Each session gets its
// own record file in the directory, with its turns in order and no call
// of another; then the built agcore replay re-runs the two-turn record
// with the same provider settings and no server: no drift; with another
// --system: the drift of every call.
func TestServeRecordDirThenReplay(t *testing.T) {
	t.Parallel()
	echo := echoProvider(t)
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "openai"
	c.env["OPENAI_BASE_URL"] = echo.URL + "/v1"
	c.env["OPENAI_API_KEY"] = "sk-test"
	c.env["AGCORE_MODEL"] = "gpt-4o-mini"
	dir := filepath.Join(t.TempDir(), "records")
	base, cmd, lines := c.startServe(t, "--store", "memory:", "--system", "Be brief.", "--record-dir", dir)

	// The first turn of each session, and a stateless request, at once.
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		firstA  map[string]any
		errs    []error
		collect = func(out map[string]any, err error, into *map[string]any) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if into != nil {
				*into = out
			}
		}
	)
	wg.Add(3)
	go func() {
		defer wg.Done()
		out, err := post(base+"/v1/responses", map[string]any{"model": "agcore", "input": "alpha one"})
		collect(out, err, &firstA)
	}()
	go func() {
		defer wg.Done()
		out, err := post(base+"/v1/responses", map[string]any{"model": "agcore", "input": "beta one"})
		collect(out, err, nil)
	}()
	go func() {
		defer wg.Done()
		out, err := post(base+"/v1/chat/completions", map[string]any{"model": "agcore", "messages": []any{map[string]any{"role": "user", "content": "gamma"}}})
		collect(out, err, nil)
	}()
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := respText(firstA); got != "echo: alpha one" {
		t.Fatalf("first turn of session A: %q", got)
	}
	second, err := post(base+"/v1/responses", map[string]any{"model": "agcore", "input": "alpha two", "previous_response_id": firstA["id"]})
	if err != nil {
		t.Fatal(err)
	}
	if got := respText(second); got != "echo: alpha two" {
		t.Fatalf("second turn of session A: %q", got)
	}
	if log, err := interrupt(t, cmd, lines); err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}
	echo.Close() // the replay has no provider to reach

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	byInput := map[string]string{} // the first turn's input → its file
	var files []string
	for _, e := range entries {
		file := filepath.Join(dir, e.Name())
		files = append(files, e.Name())
		rec, err := replay.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		var inputs []string
		for _, tr := range rec.Turns {
			inputs = append(inputs, tr.Input[0].Text())
		}
		for _, call := range rec.Calls {
			last := call.Request.Messages[len(call.Request.Messages)-1].Text()
			if call.Turn < 1 || call.Turn > len(inputs) || last != inputs[call.Turn-1] {
				t.Errorf("%s: call %d (turn %d) asks %q; the turns: %q", e.Name(), call.N, call.Turn, last, inputs)
			}
		}
		if len(rec.Calls) != len(rec.Turns) || rec.Header.Provider != "openai" || rec.Header.Model != "gpt-4o-mini" || rec.Header.Instructions != "Be brief." {
			t.Errorf("%s: %d turns, %d calls, header %+v", e.Name(), len(rec.Turns), len(rec.Calls), rec.Header)
		}
		byInput[strings.Join(inputs, " | ")] = file
		if info, _ := e.Info(); info == nil || info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want no access for others", e.Name(), info.Mode())
		}
	}
	t.Logf("records: %q", files)
	want := []string{"alpha one | alpha two", "beta one", "gamma"}
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range byInput {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, want) {
		t.Fatalf("records %q hold the turns %q, want %q", files, got, want)
	}

	// The session's record, replayed where the server is gone.
	file := byInput["alpha one | alpha two"]
	r := c.ok("replay", file)
	if !strings.Contains(r.stdout, "replaying "+file+": 2 turns, 2 model calls") || !strings.Contains(r.stdout, "no drift: 2 of 2 calls") {
		t.Fatalf("replay of the unchanged configuration:\n%s%s", r.stdout, r.stderr)
	}
	r = c.ok("replay", "--system", "Be thorough.", file)
	for _, l := range []string{
		`call 1 (turn 1): system prompt changed: "Be brief." → "Be thorough."`,
		`call 2 (turn 2): system prompt changed: "Be brief." → "Be thorough."`,
		"drift in 2 of 2 calls",
	} {
		if !strings.Contains(r.stdout, l) {
			t.Errorf("replay with another prompt: stdout lacks %q:\n%s", l, r.stdout)
		}
	}
}
