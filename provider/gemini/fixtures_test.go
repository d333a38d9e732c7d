package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/providertest"
)

var fixtureRequest = &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}

// fixtureCount is how many recorded responses (not requests) the fixture
// folder holds; a missing one fails the replay tests.
const fixtureCount = 25

// replayFixture plays one recorded file through the adapter: Stream for
// .sse (status 200), Generate for .json (with the status its name gives),
// written whole (chunk 0) or chunk bytes at a time.
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
	srv := serve(t, fixtureStatus(file), "application/json; charset=UTF-8", data, chunk, nil)
	return newTestModel(srv.URL).Generate(bg, fixtureRequest)
}

// fixtureStatus is the HTTP status a file was recorded with.
func fixtureStatus(file string) int {
	if rest, ok := strings.CutPrefix(file, "error-"); ok {
		n, _ := strconv.Atoi(rest[:3])
		return n
	}
	return 200
}

// fixtureFiles lists the recorded responses (the .request.json files are
// requests, checked by TestRequestsMatchRecordedOnes).
func fixtureFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatalf("the recorded fixtures must be at %s: %v", fixtureDir, err)
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".request.json") {
			continue
		}
		if ext := filepath.Ext(n); ext == ".sse" || ext == ".json" {
			files = append(files, n)
		}
	}
	if len(files) != fixtureCount {
		t.Fatalf("found %d fixtures in %s, want the %d recorded", len(files), fixtureDir, fixtureCount)
	}
	return files
}

// TestEveryFixtureMatchesItsGoldenFile replays every recorded response
// byte for byte and compares the assembled Response (or the typed error)
// with a golden file checked by hand; JSON bodies also in the kit's piece
// sizes (TestConformance replays the streams in them).
func TestEveryFixtureMatchesItsGoldenFile(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		name := strings.TrimSuffix(file, filepath.Ext(file))
		t.Run(name, func(t *testing.T) {
			resp, err := replayFixture(t, file, 0, "text/event-stream")
			want := goldenOf(resp, err)
			checkGolden(t, name+".json", want)
			wantJSON, _ := json.Marshal(want)
			if strings.HasSuffix(file, ".sse") {
				// TestConformance replays the streams in every piece
				// size; here the other content type Google sends.
				resp, err := replayFixture(t, file, 0, "text/event-stream; charset=utf-8")
				if got, _ := json.Marshal(goldenOf(resp, err)); string(got) != string(wantJSON) {
					t.Errorf("with a charset:\n got %s\nwant %s", got, wantJSON)
				}
				return
			}
			for _, piece := range providertest.Pieces[1:] {
				resp, err := replayFixture(t, file, piece, "application/json")
				if got, _ := json.Marshal(goldenOf(resp, err)); string(got) != string(wantJSON) {
					t.Errorf("in %d-byte writes:\n got %s\nwant %s", piece, got, wantJSON)
				}
			}
		})
	}
}

// TestFixturesDecodeAlikeOnBothPaths replays every stream with the
// hand-written chunk decoder off: encoding/json alone must give the same
// answer.
func TestFixturesDecodeAlikeOnBothPaths(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		if !strings.HasSuffix(file, ".sse") {
			continue
		}
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(fixtureDir, file))
			if err != nil {
				t.Fatal(err)
			}
			srv := serve(t, 200, "text/event-stream", data, 0, nil)
			fast, fresp, ferr := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
			slow, sresp, serr := drain(t, newTestModel(srv.URL, withoutFastPath()).Stream(bg, fixtureRequest))
			f, _ := json.Marshal(goldenOf(fresp, ferr))
			s, _ := json.Marshal(goldenOf(sresp, serr))
			if string(f) != string(s) || len(fast) != len(slow) {
				t.Errorf("fast path: %d events, %s\nencoding/json: %d events, %s", len(fast), f, len(slow), s)
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
			srv := serve(t, fixtureStatus(file), "application/json; charset=UTF-8", data, 0, nil)
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

// withoutFastPath turns the hand-written chunk decoder off.
func withoutFastPath() Option { return func(m *Model) { m.slowPath = true } }
