package a2aserve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/session"
)

// TaskWriter writes the progress of remote tasks (TaskEvents) to the
// store, as the serving processes keep their tasks, and sends the push
// notifications of each change of a task's state: to the task's configs
// read from the store, over the policy of the task's TaskLog, each
// claimed in the store first (a change the serving process following the
// task also sends goes once). The zero value works (slog.Default() logs);
// one TaskWriter serves any number of tasks.
type TaskWriter struct {
	// Logger receives the notifications that could not be delivered; nil
	// means slog.Default().
	Logger *slog.Logger

	mu      sync.Mutex
	senders map[string]*pushSender // by the allowed hosts
}

// sender returns the push sender of the policy allowing hosts.
func (w *TaskWriter) sender(hosts []string) (*pushSender, pushPolicy) {
	key := strings.Join(slices.Sorted(slices.Values(hosts)), "\x00")
	policy := newPushPolicy(hosts)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.senders == nil {
		w.senders = map[string]*pushSender{}
	}
	s := w.senders[key]
	if s == nil {
		log := w.Logger
		if log == nil {
			log = slog.Default()
		}
		s = newPushSender(policy, log)
		w.senders[key] = s
	}
	return s, policy
}

// Store writes tasks, the task of l as it changed since the last write
// (TaskEvents.Take; or End's, with final), the last one into the task's
// record (kept marked remote: nobody declares it lost), and notifies its
// webhooks of each change of state among them. With final and a
// completed task, st (the session store, scoped to the task's owner; nil:
// none) places the task's turn in its session (session_turn in its
// MetadataKey metadata) when it is the turn after l.TurnsBefore. Written
// again (a retry), it changes nothing but the record's expiry.
func (w *TaskWriter) Store(ctx context.Context, recs session.Records, st session.Store, l TaskLog, tasks []json.RawMessage, final bool) error {
	if len(tasks) == 0 {
		return nil
	}
	ts := &recordTasks{recs: recs, agent: l.Agent}
	key := ts.key(a2a.TaskID(l.TaskID))
	prev := a2a.TaskStateUnknown
	if tr, _, err := ts.read(ctx, a2a.TaskID(l.TaskID)); err == nil {
		var t a2a.Task
		if json.Unmarshal(tr.Task, &t) == nil {
			prev = t.Status.State
		}
	}
	decoded := make([]*a2a.Task, len(tasks))
	for i, raw := range tasks {
		var t a2a.Task
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("a2aserve: decoding task %s: %w", l.TaskID, err)
		}
		decoded[i] = &t
	}
	last := decoded[len(decoded)-1]
	data := tasks[len(tasks)-1]
	if final && last.Status.State == a2a.TaskStateCompleted && st != nil && l.TurnsBefore >= 0 && l.SessionID != "" {
		if n := turnCount(ctx, st, l.SessionID); n == l.TurnsBefore+1 {
			setTurn(last, n)
			b, err := json.Marshal(last)
			if err != nil {
				return err
			}
			data = b
		}
	}
	v, err := json.Marshal(taskRecord{Owner: l.Principal, Task: data, Remote: true})
	if err != nil {
		return err
	}
	if _, err := recs.PutRecord(ctx, tasksNamespace, session.Record{Key: key, Value: v, Expires: time.Now().Add(taskRetention)}); err != nil {
		return fmt.Errorf("a2aserve: saving task %s: %w", l.TaskID, err)
	}
	var changes []*a2a.Task
	for _, t := range decoded {
		if t.Status.State != prev {
			changes = append(changes, t)
			prev = t.Status.State
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if changes[len(changes)-1].Status.State == last.Status.State {
		changes[len(changes)-1] = last // with its turn
	}
	sender, policy := w.sender(l.PushAllowHosts)
	// The task is stored: a notification that cannot be sent is lost, not
	// the task. The configs are read once (pushConfigs caches them).
	configs := &pushConfigs{policy: policy, recs: recs, agent: l.Agent}
	for _, t := range changes {
		sender.notifyAll(ctx, configs, recs, t)
	}
	return nil
}

// setTurn records in t's metadata, and its answer's, the number of its
// turn in its session.
func setTurn(t *a2a.Task, n int) {
	put := func(m map[string]any) {
		if inner, ok := m[MetadataKey].(map[string]any); ok {
			inner[sessionTurnKey] = n
		}
	}
	put(t.Metadata)
	for _, a := range t.Artifacts {
		if a.Name == "answer" {
			put(a.Metadata)
		}
	}
}
