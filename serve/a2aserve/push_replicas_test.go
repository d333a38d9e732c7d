package a2aserve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// webhook records the notifications it receives: their token and the
// task's state.
type webhook struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string // "token state"
}

func newWebhook(t *testing.T) *webhook {
	w := &webhook{}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var task a2a.Task
		if err := json.Unmarshal(body, &task); err != nil {
			t.Errorf("a notification that is not a task: %s", body)
		}
		w.mu.Lock()
		w.got = append(w.got, r.Header.Get("X-A2A-Notification-Token")+" "+string(task.Status.State))
		w.mu.Unlock()
	}))
	testwait.CloseOnCleanup(t, w.srv)
	return w
}

func (w *webhook) received() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.got...)
}

// TestPushAcrossReplicas: a push notification config set through one
// server, for a task whose turn runs on the other, is notified of the
// task's end exactly once, however the task's approval is decided:
// through the shared broker (no A2A request follows the turn: the server
// running it stores its end itself), or by a message to the server that
// set the config (both servers write the end: one sends it).
func TestPushAcrossReplicas(t *testing.T) {
	for _, via := range []string{"broker", "message to the other server"} {
		t.Run(via, func(t *testing.T) {
			hook := newWebhook(t)
			store := memstore.New()
			shared := func() *approval.Broker {
				return &approval.Broker{Shared: host.Approvals(store), Poll: 5 * time.Millisecond}
			}
			opts := a2aserve.Options{PushAllowHosts: []string{"127.0.0.1"}}
			a := newFixtureWith(t, store, shared(), opts, llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`)), llmtest.Text("Deleted x."))
			b := newFixtureWith(t, store, shared(), opts)
			task, approvalID := parked(t, a, "alice")
			bc := b.client("alice")
			if _, err := bc.SetTaskPushConfig(bounded(t), &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{ID: "on-b", URL: hook.srv.URL, Token: "tok-b"}}); err != nil {
				t.Fatal(err)
			}
			switch via {
			case "broker":
				if err := b.broker.Decide(approvalID, tool.Decision{Approved: true}); err != nil {
					t.Fatal(err)
				}
			default:
				if done := send(t, bc, followUp(task.ID, a2a.TextPart{Text: "approve"})); done.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("the decision's answer: %s", done.Status.State)
				}
			}
			waitFor(t, func() bool { return len(hook.received()) > 0 })
			time.Sleep(300 * time.Millisecond) // a second notification would come by now
			if got := hook.received(); len(got) != 1 || got[0] != "tok-b completed" {
				t.Fatalf("the webhook got %q, want one completed notification with the token", got)
			}
			if a.ran.Load() != 1 {
				t.Fatalf("the tool ran %d times", a.ran.Load())
			}
		})
	}
}
