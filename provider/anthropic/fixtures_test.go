package anthropic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

var fixtureRequest = &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}

// replayFixture plays one recorded file through the adapter: streams for
// .sse (200, written whole and in small pieces), Generate for .json (with
// the status its name gives).
func replayFixture(t *testing.T, file string, chunk int, contentType string) (*llm.Response, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(file, ".sse") {
		srv := serve(t, 200, contentType, data, chunk, nil)
		_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
		return resp, err
	}
	status := 200
	if rest, ok := strings.CutPrefix(file, "error-"); ok {
		status, _ = strconv.Atoi(rest[:3])
	}
	srv := serve(t, status, "application/json", data, chunk, nil)
	return newTestModel(srv.URL).Generate(bg, fixtureRequest)
}

func fixtureFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatalf("the recorded fixtures must be at %s: %v", fixtureDir, err)
	}
	var files []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext == ".sse" || ext == ".json" {
			files = append(files, e.Name())
		}
	}
	if len(files) < 19 {
		t.Fatalf("found %d fixtures in %s, want every one of the 19 recorded", len(files), fixtureDir)
	}
	return files
}

// TestEveryFixtureMatchesItsGoldenFile replays every recorded response
// byte-for-byte and compares the assembled Response (or the typed error)
// with a golden file checked by hand. Streams are also replayed in 1-, 7-
// and 64-byte writes and with both content types the providers send; every
// variant must give the same result.
func TestEveryFixtureMatchesItsGoldenFile(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		name := strings.TrimSuffix(file, filepath.Ext(file))
		t.Run(name, func(t *testing.T) {
			resp, err := replayFixture(t, file, 0, "text/event-stream; charset=utf-8")
			want := goldenOf(resp, err)
			checkGolden(t, name+".json", want)
			if !strings.HasSuffix(file, ".sse") {
				return
			}
			wantJSON, _ := json.Marshal(want)
			for _, ct := range []string{"text/event-stream; charset=utf-8", "text/event-stream"} {
				for _, chunk := range []int{1, 7, 64} {
					resp, err := replayFixture(t, file, chunk, ct)
					got, _ := json.Marshal(goldenOf(resp, err))
					if string(got) != string(wantJSON) {
						t.Errorf("%q in %d-byte writes:\n got %s\nwant %s", ct, chunk, got, wantJSON)
					}
				}
			}
		})
	}
}

// TestErrorFixturesAreTypedInStreamsToo checks that an HTTP error answering
// a streaming call is the same typed error Generate returns.
func TestErrorFixturesAreTypedInStreamsToo(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		if !strings.HasPrefix(file, "error-") {
			continue
		}
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(fixtureDir, file))
			if err != nil {
				t.Fatal(err)
			}
			status, _ := strconv.Atoi(file[len("error-") : len("error-")+3])
			srv := serve(t, status, "application/json", data, 0, nil)
			_, gen := newTestModel(srv.URL).Generate(bg, fixtureRequest)
			_, _, str := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
			g, _ := json.Marshal(goldenOf(nil, gen))
			s, _ := json.Marshal(goldenOf(nil, str))
			if string(g) != string(s) {
				t.Errorf("stream error %s, Generate error %s", s, g)
			}
		})
	}
}
