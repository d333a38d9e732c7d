package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// fixtureSeeds adds every recorded file with the extension ext.
func fixtureSeeds(f *testing.F, ext string) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*"+ext))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzStreamParser runs arbitrary bytes through the stream parser: it must
// not panic, must keep the event contract, and a completed stream's
// Response must survive the storage JSON round trip and go back into a
// request.
func FuzzStreamParser(f *testing.F) {
	fixtureSeeds(f, ".sse")
	f.Add(sseOf(textChunk("a", ""), statusBody(500, "INTERNAL", "x")))
	f.Add(sseOf(`{"candidates":[{"content":{"parts":[{"text":"x","thoughtSignature":"s"},{"functionCall":{"name":"f"}}]},"finishReason":"STOP","groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}],"groundingSupports":[{"segment":{"startIndex":0,"endIndex":1},"groundingChunkIndices":[0,7]}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, slow := range []bool{false, true} {
			s := streamState{ctx: context.Background(), transport: &httpx.Client{}, slow: slow}
			s.turn.init("gemini-fuzz")
			var evs []llm.Event
			var failed error
			s.run(sse.NewDecoder(bytes.NewReader(data), sse.Options{MaxEventSize: 1 << 16}), func(ev llm.Event, err error) bool {
				if failed != nil {
					t.Fatalf("item after the error: %+v %v", ev, err)
				}
				if err != nil {
					var e *llm.Error
					if !errorAs(err, &e) {
						t.Fatalf("untyped error %T: %v", err, err)
					}
					failed = err
					return true
				}
				evs = append(evs, ev)
				return true
			})
			if resp := checkEvents(t, evs, failed); resp != nil {
				checkRoundTrip(t, resp)
			}
		}
	})
}

// FuzzResponseParser runs arbitrary bytes through the blocking-response
// parser.
func FuzzResponseParser(f *testing.F) {
	fixtureSeeds(f, ".json")
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := parseResponse(data, "gemini-fuzz")
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

// FuzzFastPathMatchesEncodingJSON: wherever the hand-written chunk decoder
// accepts a chunk, encoding/json must decode it to the same chunk.
func FuzzFastPathMatchesEncodingJSON(f *testing.F) {
	for _, file := range []string{"stream-text.sse", "stream-text-multi-chunk.sse", "stream-grounding-google-search.sse", "stream-thought-summaries-text.sse", "stream-max-tokens.sse"} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, file))
		if err != nil {
			f.Fatal(err)
		}
		for _, ev := range bytes.Split(b, []byte("\r\n\r\n")) {
			if data, ok := bytes.CutPrefix(ev, []byte("data: ")); ok {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"a\n\"b\"\u00e9\ud83d\udc4b"},{"text":"","thought":true}]},"index":0}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"safetyRatings":[{"category":"HARM_CATEGORY_HATE_SPEECH","probability":"NEGLIGIBLE"}],"citationMetadata":{"citationSources":[{"startIndex":1,"uri":"u"}]},"index":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastMatchesJSON(t, data)
	})
}

func checkFastMatchesJSON(t *testing.T, data []byte) {
	t.Helper()
	var fast, slow chunk
	var scratch [][]byte
	if !decodeFast(data, &fast, &scratch) {
		return
	}
	if err := decodeChunk(data, &slow); err != nil {
		t.Fatalf("the fast path accepts what encoding/json refuses (%v):\n%s", err, data)
	}
	if !chunksEqual(&fast, &slow) {
		t.Fatalf("the fast path and encoding/json differ on\n%s\nfast %+v\nslow %+v", data, fast, slow)
	}
}

func chunksEqual(a, b *chunk) bool {
	if len(a.parts) != len(b.parts) {
		return false
	}
	for i := range a.parts {
		p, q := &a.parts[i], &b.parts[i]
		if p.kind != q.kind || !bytes.Equal(p.text, q.text) || p.sig != q.sig || !reflect.DeepEqual(p.call, q.call) || !reflect.DeepEqual(p.ext, q.ext) {
			return false
		}
	}
	return a.candidate == b.candidate && a.finish == b.finish && bytes.Equal(a.grounding, b.grounding) &&
		a.usage == b.usage && a.hasUsage == b.hasUsage && bytes.Equal(a.model, b.model) && bytes.Equal(a.id, b.id) &&
		reflect.DeepEqual(a.block, b.block) && reflect.DeepEqual(a.err, b.err) && a.candidates == b.candidates
}

// fuzzKey stands for the API key in error fuzzing: the token KEY in a
// fuzzed body becomes it, so the fuzzer can place the key anywhere.
const fuzzKey = "AIzaSy-fuzz-0123456789SECRET"

// FuzzErrorBody feeds arbitrary error bodies with arbitrary statuses, as an
// HTTP error, as a blocking 200 answer and as an in-band stream error: the
// error is always typed, and never holds the API key even when the server
// echoes it.
func FuzzErrorBody(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{429, statusBody(429, "RESOURCE_EXHAUSTED", "quota KEY", `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}`)},
		{400, statusBody(400, "INVALID_ARGUMENT", "API key not valid. KEY", `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}`)},
		{400, statusBody(400, "INVALID_ARGUMENT", "The input token count (1300000) exceeds the maximum number of tokens allowed (1048576).")},
		{503, "[" + statusBody(503, "UNAVAILABLE", "overloaded") + "]"},
		{502, `<html>bad gateway KEY</html>`},
		{500, ``},
	} {
		f.Add(s.status, []byte(s.body))
	}
	m := New(WithAPIKey(fuzzKey))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		body = bytes.ReplaceAll(body, []byte("KEY"), []byte(fuzzKey))
		code := 400 + abs(status)%200
		err := m.transport.StatusError(&http.Response{StatusCode: code, Header: http.Header{}}, body)
		checkFuzzError(t, err)
		if _, err := parseResponse(body, "m"); err != nil {
			checkFuzzError(t, m.transport.Redact(err))
		}
		ev := append([]byte("data: "), bytes.ReplaceAll(body, []byte("\n"), nil)...)
		s := streamState{ctx: context.Background(), transport: &m.transport}
		s.turn.init("m")
		s.run(sse.NewDecoder(bytes.NewReader(append(ev, "\n\n"...)), sse.Options{}), func(_ llm.Event, err error) bool {
			if err != nil {
				checkFuzzError(t, err)
			}
			return true
		})
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	if llm.KindOf(err) == llm.KindUnknown {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if strings.Contains(err.Error(), fuzzKey) {
		t.Fatalf("the error holds the API key: %v", err)
	}
}

func errorAs(err error, target **llm.Error) bool { return errors.As(err, target) }

// checkRoundTrip stores the answer in the storage JSON, loads it, checks
// nothing changed, and sends it back as history: encoding must not fail
// on anything the parser produced.
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
	msgs := append([]llm.Message{llm.UserText("q"), back}, resultsFor(back, "r")...)
	if _, err := New(WithAPIKey("k")).encodeRequest(&llm.Request{Messages: msgs}); err != nil {
		t.Fatalf("cannot send the answer back: %v", err)
	}
}
