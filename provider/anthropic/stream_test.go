package anthropic

import (
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
)

// TestStreamEventsInOrder checks the event sequence for a small answer.
func TestStreamEventsInOrder(t *testing.T) {
	srv := serve(t, 200, "text/event-stream", []byte(evStart+evText+evDelta+evDelta+evStop+evEnd), 0, nil)
	evs, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type.String())
	}
	want := "message_start block_start text_delta text_delta block_stop usage complete"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if stop := evs[4]; !reflect.DeepEqual(stop.Block, llm.Text{Text: "HiHi"}) {
		t.Errorf("BlockStop carries %+v, want the whole text", stop.Block)
	}
	if resp.ID != "msg_1" || resp.Model != "claude-test" || resp.Message.Text() != "HiHi" ||
		resp.Usage != (llm.Usage{InputTokens: 5, OutputTokens: 2}) || resp.FinishReason != llm.FinishStop {
		t.Errorf("response %+v", resp)
	}
	if u := evs[5].Usage; u == nil || *u != resp.Usage {
		t.Errorf("usage event %+v, want %+v", u, resp.Usage)
	}
}

// TestConnectionsAreReused: a server that flushes every event and ends its
// chunked body a moment after message_stop must still get its connection
// back for the next call (HTTP/1.1 closes connections whose body was not
// read to the end).
func TestConnectionsAreReused(t *testing.T) {
	var conns atomic.Int32
	body := streamBody(20)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeChunked(w, body, 64)
		time.Sleep(5 * time.Millisecond)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	m := newTestModel(srv.URL, WithHTTPClient(srv.Client()))
	for range 3 {
		if _, _, err := drain(t, m.Stream(bg, benchRequest)); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 sequential streams used %d connections, want 1", n)
	}
}
