package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// FuzzStreamParser runs arbitrary bytes through the stream parser: it must
// not panic, must keep the event contract, and a completed stream's
// Response must survive the storage JSON round trip.
func FuzzStreamParser(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.sse"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(evStart + evText + evDelta + inBand("overloaded_error")))
	f.Add([]byte(toolStream(`"{\"a\":"`, "max_tokens")))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := streamState{ctx: context.Background()}
		var failed error
		var resp *llm.Response
		s.run(sse.NewDecoder(bytes.NewReader(data), sse.Options{MaxEventSize: 1 << 16}), func(ev llm.Event, err error) bool {
			if failed != nil || resp != nil {
				t.Fatalf("item after the end: %+v %v", ev, err)
			}
			if err != nil {
				var e *llm.Error
				if !errorAs(err, &e) {
					t.Fatalf("untyped error %T: %v", err, err)
				}
				failed = err
			} else if ev.Type == llm.EventComplete {
				resp = ev.Response
			}
			return true
		})
		if failed == nil && resp == nil {
			t.Fatal("the parser stopped without an error or a completion")
		}
		if resp != nil {
			checkRoundTrip(t, resp)
		}
	})
}

// FuzzResponseParser runs arbitrary bytes through the blocking-response
// parser.
func FuzzResponseParser(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := parseResponse(data)
		if err != nil {
			var e *llm.Error
			if !errorAs(err, &e) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		checkRoundTrip(t, resp)
	})
}

// checkRoundTrip encodes the answer in the storage form, decodes it, and
// checks it maps back to the same request JSON.
func checkRoundTrip(t *testing.T, resp *llm.Response) {
	t.Helper()
	data, err := json.Marshal(resp.Message)
	if err != nil {
		t.Fatalf("cannot store the answer: %v", err)
	}
	var back llm.Message
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("cannot load the stored answer: %v\n%s", err, data)
	}
	again, err := json.Marshal(back)
	if err != nil || !bytes.Equal(again, data) {
		t.Fatalf("storage round trip changed the answer:\n%s\n%s", data, again)
	}
}
