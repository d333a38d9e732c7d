package a2aserve

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// holding is an AgentExecutor that keeps each Execute from returning
// until release is closed: the SDK holds the execution until then, as it
// does for a moment after every Execute, widened here at will.
type holding struct {
	*executor
	release chan struct{}
}

func (h holding) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	err := h.executor.Execute(ctx, rc, q)
	<-h.release
	return err
}

// TestCancelWhileTheSDKHoldsTheEndedExecution: a cancellation sent once
// the stream showed input-required, while the SDK still holds the
// execution that parked the task, ends the task canceled. The test
// releases the execution only once the cancellation waits for it (or,
// without that wait, has failed).
func TestCancelWhileTheSDKHoldsTheEndedExecution(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shared bool // tasks in the store's records, else in memory
	}{
		{"tasks in records", true},
		{"tasks in memory", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			model := llmtest.New(llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`))).Verify(t)
			store := memstore.New()
			broker := &approval.Broker{}
			del := tool.MustFunc("delete_file", "Delete a file.", func(context.Context, struct{}) (string, error) {
				t.Error("the tool ran")
				return "", nil
			}, tool.WithApproval())
			ag, err := agent.New(model, agent.Config{Name: "helper", Store: store, Approver: broker, Tools: []tool.Tool{del}})
			if err != nil {
				t.Fatal(err)
			}
			var ts tasks = newTaskStore(DefaultMaxTasks)
			if tt.shared {
				ts = &recordTasks{recs: store, agent: "helper"}
			}
			exec := &executor{agent: host.Agent{Name: "helper", Agent: ag, Store: store}, broker: broker, tasks: ts,
				log: slog.New(slog.DiscardHandler), cancelWait: 10 * time.Second, runs: map[a2a.TaskID]*run{}}
			hold := holding{exec, make(chan struct{})}
			h := retrying{RequestHandler: a2asrv.NewHandler(hold, a2asrv.WithTaskStore(ts), a2asrv.WithCallInterceptor(ownerCheck{ts})), exec: exec, store: ts}
			ctx, cancel := context.WithTimeout(host.WithPrincipal(context.Background(), "alice"), 30*time.Second)
			defer cancel()

			var id a2a.TaskID
			for ev, err := range h.OnSendMessageStream(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "delete x"})}) {
				if err != nil {
					t.Fatal(err)
				}
				if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && st.Status.State == a2a.TaskStateInputRequired {
					id = st.TaskID
					break
				}
			}
			if id == "" {
				t.Fatal("never reached input-required")
			}
			type result struct {
				task *a2a.Task
				err  error
			}
			done := make(chan result, 1)
			go func() {
				task, err := h.OnCancelTask(ctx, &a2a.TaskIDParams{ID: id})
				done <- result{task, err}
			}()
			var res result
			waiting := func() bool {
				exec.mu.Lock()
				defer exec.mu.Unlock()
				return len(exec.begun[id]) > 0 // settle watches the task
			}
		wait:
			for {
				select {
				case res = <-done:
					break wait
				default:
				}
				if waiting() {
					close(hold.release)
					res = <-done
					break
				}
				time.Sleep(time.Millisecond)
			}
			select {
			case <-hold.release:
			default:
				close(hold.release)
			}
			if res.err != nil || res.task.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("tasks/cancel = %+v, %v", res.task, res.err)
			}
			got, err := h.OnGetTask(ctx, &a2a.TaskQueryParams{ID: id})
			if err != nil || got.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("tasks/get = %+v, %v", got, err)
			}
			if p := broker.Pending(nil); len(p) != 0 {
				t.Fatalf("the cancelled turn still waits: %v", p)
			}
		})
	}
}
