package a2aserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

// Tasks in the store. When an agent's session store has records
// (session.RecordsOf), its tasks live there instead of in memory, so that
// every server over the store answers tasks/get, resubscribes and takes
// the decisions of every task, and a restart loses none:
//
//	agcore.a2a.tasks/AGENT/TASK  {"owner": principal, "task": the a2a.Task as JSON}
//	agcore.a2a.runs/AGENT/TASK   the run's lease: renewed every runLease/3 by
//	                             the process whose turn works on the task
//	agcore.a2a.cancel/AGENT/TASK a cancellation asked through another process,
//	                             read by the running one every storePoll
//	agcore.a2a.push/AGENT/TASK/CONFIG  a push notification config (push.go)
//	agcore.a2a.pushed/TASK/CONFIG/STATE@TIME  a notification claimed by the
//	                             process sending it, for an hour (push.go)
//
// A task that is not over (submitted, working, input-required) while no
// process holds its run's lease has lost its turn with the process that
// ran it: it reads as failed.
const (
	tasksNamespace = "agcore.a2a.tasks"
	runsNamespace  = "agcore.a2a.runs"
	// cancelNamespace holds the cancellations asked of a turn running
	// in another process (tasks/cancel sent elsewhere).
	cancelNamespace = "agcore.a2a.cancel"
	// runLease is how long a task's run is taken to be alive after its
	// process's last renewal.
	runLease = 15 * time.Second
	// taskRetention is how long a task is kept after its last change.
	taskRetention = 30 * 24 * time.Hour
	// storePoll is how often a follower of a task another process runs
	// reads it again.
	storePoll = 250 * time.Millisecond
)

// tasks is what the handler needs of a task store.
type tasks interface {
	a2asrv.TaskStore
	// owner returns the principal that started task id.
	owner(ctx context.Context, id a2a.TaskID) (string, bool)
	// startRun declares the run of task id alive in this process until
	// stop is called (then its lease lapses); canceled is called when a
	// process asks for its cancellation (requestCancel).
	startRun(id a2a.TaskID, canceled func()) (stop func())
	// requestCancel asks the process running task id's turn to cancel it.
	requestCancel(ctx context.Context, id a2a.TaskID) error
	// version returns the stored task and its version (0 without
	// versions), as Get presents it.
	version(ctx context.Context, id a2a.TaskID) (*a2a.Task, int64, error)
	// shared reports whether other processes see the tasks.
	shared() bool
}

// recordTasks keeps an agent's tasks in a store's records.
//
// The SDK saves a task on every event, and a streamed answer is many
// events (one per batch of deltas), each saving the whole task: a task
// still working is written at most once per storePoll, the saves between
// skipped, while every change of state (and so the end of every
// exchange: terminal, input-required) is written at once. Other
// processes (and tasks/get) see a working task's streamed answer up to
// storePoll late.
type recordTasks struct {
	recs  session.Records
	agent string
	// changed, when not nil, is told of every write of a task that
	// changes its state as this process last wrote it (push.go).
	changed func(a2a.TaskID)
	// ended, when not nil, asks whether a remote task's turn still runs
	// (remoteended.go).
	ended *endedCheck

	mu      sync.Mutex
	written map[a2a.TaskID]lastWrite // tasks working in this process
	remote  map[a2a.TaskID]time.Time // tasks known remote (taskRecord.Remote), when last seen so
}

// lastWrite is what this process last wrote of a working task.
type lastWrite struct {
	owner string
	state a2a.TaskState
	at    time.Time
}

type taskRecord struct {
	Owner string          `json:"owner"`
	Task  json.RawMessage `json:"task"`
	// Remote marks a task whose turn runs in another process (Remote,
	// TaskWriter): no lease says it is alive, and only what runs it
	// writes it.
	Remote bool `json:"remote,omitempty"`
}

var _ tasks = (*recordTasks)(nil)

func (s *recordTasks) key(id a2a.TaskID) string { return s.agent + "/" + string(id) }

func (s *recordTasks) shared() bool { return true }

// Save implements a2asrv.TaskStore. The first save of a task records the
// principal of ctx (the request that started it) as its owner.
func (s *recordTasks) Save(ctx context.Context, task *a2a.Task) error {
	if task == nil || task.ID == "" || task.ContextID == "" {
		return fmt.Errorf("a2aserve: a task needs an id and a context id: %w", a2a.ErrInvalidParams)
	}
	state := task.Status.State
	s.mu.Lock()
	last, seen := s.written[task.ID]
	_, remote := s.remote[task.ID]
	s.mu.Unlock()
	if remote {
		// Only what runs a remote task's turn writes it (TaskWriter): what
		// the SDK saves here is the stored task as followed, or older.
		s.markRemote(task.ID)
		return nil
	}
	if seen && state == a2a.TaskStateWorking && last.state == state && time.Since(last.at) < storePoll {
		return nil // a streamed delta: the next write carries it
	}
	data, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("a2aserve: encoding task %s: %w", task.ID, err)
	}
	owner, known := last.owner, seen
	if !known {
		if tr, _, err := s.read(ctx, task.ID); err == nil {
			if tr.Remote {
				s.markRemote(task.ID)
				return nil
			}
			owner, known = tr.Owner, true
		}
	}
	if !known {
		owner, _ = host.PrincipalFrom(ctx)
	}
	v, err := json.Marshal(taskRecord{Owner: owner, Task: data})
	if err != nil {
		return err
	}
	if _, err := s.recs.PutRecord(ctx, tasksNamespace, session.Record{Key: s.key(task.ID), Value: v, Expires: time.Now().Add(taskRetention)}); err != nil {
		return fmt.Errorf("a2aserve: saving task %s: %w", task.ID, err)
	}
	if s.changed != nil && (!seen || last.state != state) {
		s.changed(task.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == a2a.TaskStateWorking || state == a2a.TaskStateSubmitted {
		if s.written == nil {
			s.written = map[a2a.TaskID]lastWrite{}
		}
		s.written[task.ID] = lastWrite{owner: owner, state: state, at: time.Now()}
	} else {
		delete(s.written, task.ID) // at rest: the next save (a resumed turn) writes at once
	}
	return nil
}

func (s *recordTasks) read(ctx context.Context, id a2a.TaskID) (taskRecord, session.Record, error) {
	if session.CheckRecord(tasksNamespace, s.key(id)) != nil {
		return taskRecord{}, session.Record{}, a2a.ErrTaskNotFound
	}
	rec, err := s.recs.GetRecord(ctx, tasksNamespace, s.key(id))
	switch {
	case errors.Is(err, session.ErrNotFound):
		return taskRecord{}, rec, a2a.ErrTaskNotFound
	case err != nil:
		return taskRecord{}, rec, fmt.Errorf("a2aserve: reading task %s: %w", id, err)
	}
	var tr taskRecord
	if err := json.Unmarshal(rec.Value, &tr); err != nil {
		return taskRecord{}, rec, fmt.Errorf("a2aserve: decoding task %s: %w", id, err)
	}
	return tr, rec, nil
}

// Get implements a2asrv.TaskStore.
func (s *recordTasks) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	t, _, err := s.version(ctx, id)
	return t, err
}

func (s *recordTasks) version(ctx context.Context, id a2a.TaskID) (*a2a.Task, int64, error) {
	tr, rec, err := s.read(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	var t a2a.Task
	if err := json.Unmarshal(tr.Task, &t); err != nil {
		return nil, 0, fmt.Errorf("a2aserve: decoding task %s: %w", id, err)
	}
	if !t.Status.State.Terminal() && tr.Remote {
		ended, now := s.endedRemote(ctx, &t, tr, rec)
		return ended, now.Version, nil
	}
	if !t.Status.State.Terminal() && !tr.Remote && !s.alive(ctx, id) {
		// Its turn died with the process that ran it.
		msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, &t, a2a.TextPart{Text: "The server running this task stopped; its turn is lost (nothing of it is stored)."})
		if t.Status.Message != nil {
			t.History = append(t.History, t.Status.Message)
		}
		t.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Message: msg, Timestamp: t.Status.Timestamp}
	}
	return &t, rec.Version, nil
}

// remoteMemory is how long this process remembers a task known remote
// since it last saw it.
const remoteMemory = time.Hour

// markRemote records that task id's turn runs in another process
// (taskRecord.Remote): the SDK's saves of it, and its notifications, are
// skipped (what runs the turn writes and notifies it).
func (s *recordTasks) markRemote(id a2a.TaskID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remote == nil {
		s.remote = map[a2a.TaskID]time.Time{}
	}
	now := time.Now()
	for k, at := range s.remote { // keep the map small: a task's exchanges are over within the hour
		if now.Sub(at) > remoteMemory {
			delete(s.remote, k)
		}
	}
	s.remote[id] = now
}

// putRemote writes t, started by owner, as a remote task
// (taskRecord.Remote), and returns the record's version.
func (s *recordTasks) putRemote(ctx context.Context, owner string, t *a2a.Task) (int64, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return 0, err
	}
	v, err := json.Marshal(taskRecord{Owner: owner, Task: data, Remote: true})
	if err != nil {
		return 0, err
	}
	rec, err := s.recs.PutRecord(ctx, tasksNamespace, session.Record{Key: s.key(t.ID), Value: v, Expires: time.Now().Add(taskRetention)})
	if err != nil {
		return 0, fmt.Errorf("a2aserve: saving task %s: %w", t.ID, err)
	}
	s.markRemote(t.ID)
	return rec.Version, nil
}

// knownRemote reports whether this process knows task id's turn runs in
// another process, without asking the store: the SDK saves a task (Save,
// which learns it) before it notifies its webhooks.
func (s *recordTasks) knownRemote(id a2a.TaskID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.remote[id]
	return ok
}

// isRemote reports whether task id's turn runs in another process
// (taskRecord.Remote).
func (s *recordTasks) isRemote(ctx context.Context, id a2a.TaskID) bool {
	s.mu.Lock()
	_, known := s.remote[id]
	s.mu.Unlock()
	if known {
		return true
	}
	tr, _, err := s.read(ctx, id)
	return err == nil && tr.Remote
}

// owner returns the principal that started task id.
func (s *recordTasks) owner(ctx context.Context, id a2a.TaskID) (string, bool) {
	tr, _, err := s.read(ctx, id)
	if err != nil {
		return "", false
	}
	return tr.Owner, true
}

// alive reports whether a process holds task id's run (or the store
// cannot tell: a read error counts as alive).
func (s *recordTasks) alive(ctx context.Context, id a2a.TaskID) bool {
	_, err := s.recs.GetRecord(ctx, runsNamespace, s.key(id))
	return !errors.Is(err, session.ErrNotFound)
}

func (s *recordTasks) startRun(id a2a.TaskID, canceled func()) func() {
	put := func() {
		ctx, cancel := context.WithTimeout(context.Background(), runLease/3)
		defer cancel()
		_, _ = s.recs.PutRecord(ctx, runsNamespace, session.Record{Key: s.key(id), Value: []byte("{}"), Expires: time.Now().Add(runLease)})
	}
	put()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		// The lease is renewed every runLease/3; a cancellation asked in
		// another process is looked for every storePoll.
		t := time.NewTicker(storePoll)
		defer t.Stop()
		renewed := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if time.Since(renewed) >= runLease/3 {
				put()
				renewed = time.Now()
			}
			ctx, cancel := context.WithTimeout(context.Background(), runLease/3)
			_, err := s.recs.GetRecord(ctx, cancelNamespace, s.key(id))
			cancel()
			if err == nil && canceled != nil {
				canceled() // again at each look while asked: it may come before the turn began
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			// The lease is left to lapse: the turn's last state may still
			// be on its way to the store.
		})
	}
}

// requestCancel writes the cancellation of task id's turn for the
// process that runs it, which looks for it every storePoll.
func (s *recordTasks) requestCancel(ctx context.Context, id a2a.TaskID) error {
	_, err := s.recs.PutRecord(ctx, cancelNamespace, session.Record{Key: s.key(id), Value: []byte("{}"), Expires: time.Now().Add(runLease)})
	return err
}

// follow reads task id from the store until it changed from version
// since and rests (terminal, or waiting for input), returning it; nil
// when ctx ends or stop closes first. A task waiting for input counts as
// resting only when waiting(task) says it waits on a call still pending:
// the process running the turn may write its earlier wait (the one just
// decided) after since was read.
func follow(ctx context.Context, ts tasks, id a2a.TaskID, since int64, stop <-chan struct{}, waiting func(*a2a.Task) bool) (*a2a.Task, error) {
	t := time.NewTicker(storePoll)
	defer t.Stop()
	for {
		task, v, err := ts.version(ctx, id)
		if err != nil && !errors.Is(err, a2a.ErrTaskNotFound) {
			return nil, err
		}
		if err == nil && (task.Status.State.Terminal() || task.Status.State == a2a.TaskStateInputRequired && v != since && (waiting == nil || waiting(task))) {
			return task, nil
		}
		select {
		case <-t.C:
		case <-stop:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		}
	}
}
