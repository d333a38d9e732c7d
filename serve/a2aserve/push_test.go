package a2aserve

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// TestPushPolicy: webhook URLs on private, loopback, link-local and
// other internal addresses are refused unless their host is allowed.
func TestPushPolicy(t *testing.T) {
	p := newPushPolicy([]string{"127.0.0.1", "hooks.internal"})
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://93.184.216.34/hook", true},
		{"http://127.0.0.1:9000/hook", true}, // allowed by the operator
		{"http://hooks.internal/x", true},    // allowed by name (not resolved)
		{"http://127.0.0.2/hook", false},
		{"http://10.1.2.3/hook", false},
		{"http://172.16.0.1/hook", false},
		{"http://192.168.1.1/hook", false},
		{"http://169.254.169.254/latest/meta-data", false},
		{"http://[::1]/hook", false},
		{"http://[fe80::1]/hook", false},
		{"http://[fd00::1]/hook", false},
		{"http://[::ffff:10.0.0.1]/hook", false},
		{"http://0.0.0.0/hook", false},
		{"http://100.64.0.1/hook", false},
		{"http://localhost/hook", false}, // resolves to loopback
		{"ftp://93.184.216.34/hook", false},
		{"http://user:pw@93.184.216.34/hook", false},
		{"not a url", false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			err := p.check(context.Background(), tc.url)
			if (err == nil) != tc.ok {
				t.Fatalf("check(%q) = %v, want ok %v", tc.url, err, tc.ok)
			}
			if err != nil && (!errors.Is(err, ErrPushURLRefused) || !errors.Is(err, a2a.ErrInvalidParams)) {
				t.Fatalf("check(%q) = %v: not ErrPushURLRefused and ErrInvalidParams", tc.url, err)
			}
		})
	}
}

// TestPushDialCheck: a delivery to a forbidden address is refused when
// it is dialled, whatever the name said when it was set.
func TestPushDialCheck(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	refused := newPushSender(newPushPolicy(nil), discard())
	if err := refused.post(a2a.PushConfig{URL: srv.URL}, []byte(`{}`)); !errors.Is(err, ErrPushURLRefused) || hits.Load() != 0 {
		t.Fatalf("a post to %s: %v, %d hits", u.Host, err, hits.Load())
	}
	allowed := newPushSender(newPushPolicy([]string{u.Hostname()}), discard())
	if err := allowed.post(a2a.PushConfig{URL: srv.URL}, []byte(`{}`)); err != nil || hits.Load() != 1 {
		t.Fatalf("a post to an allowed host: %v, %d hits", err, hits.Load())
	}
}

// TestPushSender: a notification per change of state (not per event), in
// order, with the token, retried after a failure.
func TestPushSender(t *testing.T) {
	var mu sync.Mutex
	var got []string
	fails := 1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		got = append(got, r.Header.Get("X-A2A-Notification-Token"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	s := newPushSender(newPushPolicy([]string{u.Hostname()}), discard())
	cfg := &a2a.PushConfig{ID: "c", URL: srv.URL, Token: "tok"}
	task := &a2a.Task{ID: "t1", ContextID: "c1"}
	for _, st := range []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateWorking, a2a.TaskStateWorking, a2a.TaskStateCompleted} {
		task.Status.State = st
		if err := s.SendPush(context.Background(), cfg, task); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d notifications, want 3", n)
		}
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "tok" {
		t.Fatalf("delivered %q, want three with the token (submitted, working, completed)", got)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
