package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"
)

// Prompt is the user message every client sends.
const Prompt = "Write a long answer."

// APIKey is the key every client sends; the server ignores it.
const APIKey = "sk-bench-not-a-real-key"

// StreamFunc makes one streaming call with the given model name (see
// [ModelName]) and consumes the whole answer. It returns how many text
// deltas it received and their total length in bytes; a length of -1 means
// the client does not look at the text (the line-splitting floor).
type StreamFunc func(ctx context.Context, model string) (chunks, textLen int, err error)

// Env is what a library's client is built from.
type Env struct {
	// BaseURL is the server's root, e.g. "http://127.0.0.1:8080", without
	// "/v1".
	BaseURL string
	// HTTP is the client every library is given, so that all of them use
	// the same transport settings.
	HTTP *http.Client
}

// Library is one row of the table: a way of consuming a stream.
type Library struct {
	// Name is the row's name and the -libs filter key.
	Name string
	// Wire is the protocol it consumes.
	Wire Wire
	// Floor marks the two hand-written baselines of each wire.
	Floor bool
	// Note says in a few words what the row measures.
	Note string
	// New builds the library's client once; the StreamFunc it returns is
	// called for every stream and must be safe for concurrent use. It is
	// nil for a remote row.
	New func(ctx context.Context, env Env) (StreamFunc, error)
	// Remote, when set, is the directory (relative to this module) of a
	// nested module whose program measures the library in its own process,
	// for a library whose dependencies conflict with this module's (see
	// remote.go).
	Remote string
}

// Libraries returns every row the table knows, floors first.
func Libraries() []Library {
	libs := []Library{
		{Name: "floor", Wire: WireOpenAI, Floor: true, Note: "net/http + split SSE lines, no JSON", New: floorNew(WireOpenAI, false)},
		{Name: "floor-json", Wire: WireOpenAI, Floor: true, Note: "floor + encoding/json of each chunk into a minimal struct", New: floorNew(WireOpenAI, true)},
		{Name: "floor (anthropic)", Wire: WireAnthropic, Floor: true, Note: "net/http + split SSE lines, no JSON", New: floorNew(WireAnthropic, false)},
		{Name: "floor-json (anthropic)", Wire: WireAnthropic, Floor: true, Note: "floor + encoding/json of each event into a minimal struct", New: floorNew(WireAnthropic, true)},
		{Name: "floor (responses)", Wire: WireResponses, Floor: true, Note: "net/http + split SSE lines, no JSON", New: floorNew(WireResponses, false)},
		{Name: "floor-json (responses)", Wire: WireResponses, Floor: true, Note: "floor + encoding/json of each event into a minimal struct", New: floorNew(WireResponses, true)},
		{Name: "floor (gemini)", Wire: WireGemini, Floor: true, Note: "net/http + split SSE lines, no JSON", New: floorNew(WireGemini, false)},
		{Name: "floor-json (gemini)", Wire: WireGemini, Floor: true, Note: "floor + encoding/json of each chunk into a minimal struct", New: floorNew(WireGemini, true)},
	}
	libs = append(libs, agcoreLibraries()...)
	libs = append(libs, peerLibraries()...)
	return libs
}

// SelectLibraries returns the libraries whose names are in names, in the
// order of [Libraries]; an empty names selects all. Unknown names are an
// error.
func SelectLibraries(names []string) ([]Library, error) {
	all := Libraries()
	if len(names) == 0 {
		return all, nil
	}
	for _, n := range names {
		if !slices.ContainsFunc(all, func(l Library) bool { return l.Name == n }) {
			return nil, fmt.Errorf("bench: unknown library %q", n)
		}
	}
	var out []Library
	for _, l := range all {
		if slices.Contains(names, l.Name) {
			out = append(out, l)
		}
	}
	return out, nil
}

// NewHTTPClient returns the HTTP client every library gets: the default
// transport's settings, with enough idle connections kept per host for the
// concurrency scenario and no overall timeout (streams can be long).
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          2048,
		MaxIdleConnsPerHost:   2048,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     false,
	}}
}

// Check verifies what a stream returned against what an n-chunk stream
// holds.
func Check(n, chunks, textLen int) error {
	if chunks != n {
		return fmt.Errorf("got %d text chunks, want %d", chunks, n)
	}
	if textLen >= 0 && textLen != expectedLen(n) {
		return fmt.Errorf("got %d bytes of text, want %d", textLen, expectedLen(n))
	}
	return nil
}

func expectedLen(n int) int {
	total := 0
	for _, w := range words {
		total += len(w)
	}
	l := n / len(words) * total
	for i := range n % len(words) {
		l += len(words[i])
	}
	return l
}
