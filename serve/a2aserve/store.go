package a2aserve

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/agcore/agcore/serve/host"
)

// taskStore is the a2asrv.TaskStore of one agent: tasks in memory, each
// with the principal that started it, the oldest finished ones forgotten
// beyond max. Tasks are kept gob-encoded, so what Get returns is the
// caller's to change (the SDK's own store copies the same way).
type taskStore struct {
	max int

	mu    sync.Mutex
	tasks map[a2a.TaskID]*storedTask
	order []a2a.TaskID // insertion order, for eviction
}

type storedTask struct {
	data     []byte // the gob-encoded task
	owner    string // host.PrincipalFrom of the request that created it
	terminal bool
}

func newTaskStore(max int) *taskStore {
	return &taskStore{max: max, tasks: make(map[a2a.TaskID]*storedTask)}
}

// Save implements a2asrv.TaskStore. The first save of a task records the
// principal of ctx (the request that started it) as its owner.
func (s *taskStore) Save(ctx context.Context, task *a2a.Task) error {
	if task == nil || task.ID == "" || task.ContextID == "" {
		return fmt.Errorf("a2aserve: a task needs an id and a context id: %w", a2a.ErrInvalidParams)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(task); err != nil {
		return fmt.Errorf("a2aserve: encoding task %s: %w", task.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[task.ID]
	if !ok {
		owner, _ := host.PrincipalFrom(ctx)
		st = &storedTask{owner: owner}
		s.tasks[task.ID] = st
		s.order = append(s.order, task.ID)
	}
	st.data = buf.Bytes()
	st.terminal = task.Status.State.Terminal()
	if !ok {
		s.evictLocked()
	}
	return nil
}

// evictLocked forgets the oldest finished tasks while there are more than
// max.
func (s *taskStore) evictLocked() {
	excess := len(s.tasks) - s.max
	if excess <= 0 {
		return
	}
	kept := s.order[:0]
	for _, id := range s.order {
		if excess > 0 && s.tasks[id].terminal {
			delete(s.tasks, id)
			excess--
			continue
		}
		kept = append(kept, id)
	}
	clear(s.order[len(kept):])
	s.order = kept
}

// Get implements a2asrv.TaskStore.
func (s *taskStore) Get(_ context.Context, id a2a.TaskID) (*a2a.Task, error) {
	s.mu.Lock()
	st, ok := s.tasks[id]
	var data []byte
	if ok {
		data = st.data
	}
	s.mu.Unlock()
	if !ok {
		return nil, a2a.ErrTaskNotFound
	}
	var t a2a.Task
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&t); err != nil {
		return nil, fmt.Errorf("a2aserve: decoding task %s: %w", id, err)
	}
	return &t, nil
}

func (s *taskStore) shared() bool { return false }

// startRun does nothing: tasks in memory die with their runs.
func (s *taskStore) startRun(a2a.TaskID, func()) func() { return func() {} }

// requestCancel does nothing: a task in memory runs in this process.
func (s *taskStore) requestCancel(context.Context, a2a.TaskID) error { return nil }

func (s *taskStore) version(ctx context.Context, id a2a.TaskID) (*a2a.Task, int64, error) {
	t, err := s.Get(ctx, id)
	return t, 0, err
}

// owner returns the principal that started task id.
func (s *taskStore) owner(_ context.Context, id a2a.TaskID) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[id]
	if !ok {
		return "", false
	}
	return st.owner, true
}

var _ tasks = (*taskStore)(nil)

// ownerCheck is the call interceptor that lets only a task's owner read,
// cancel, resubscribe to or continue it: to anyone else the task does not
// exist.
type ownerCheck struct{ store tasks }

// errNotOwner is what another principal is told.
var errNotOwner = fmt.Errorf("%w (or it belongs to another principal)", a2a.ErrTaskNotFound)

func (c ownerCheck) Before(ctx context.Context, _ *a2asrv.CallContext, req *a2asrv.Request) (context.Context, error) {
	var id a2a.TaskID
	switch p := req.Payload.(type) {
	case *a2a.TaskQueryParams:
		id = p.ID
	case *a2a.TaskIDParams:
		id = p.ID
	case *a2a.MessageSendParams:
		if p.Message != nil {
			id = p.Message.TaskID
		}
	case *a2a.GetTaskPushConfigParams:
		return ctx, c.ownTask(ctx, p.TaskID)
	case *a2a.ListTaskPushConfigParams:
		return ctx, c.ownTask(ctx, p.TaskID)
	case *a2a.TaskPushConfig:
		return ctx, c.ownTask(ctx, p.TaskID)
	case *a2a.DeleteTaskPushConfigParams:
		return ctx, c.ownTask(ctx, p.TaskID)
	}
	if id == "" {
		return ctx, nil
	}
	owner, ok := c.store.owner(ctx, id)
	if !ok {
		return ctx, nil // the SDK answers "not found" itself
	}
	if p, _ := host.PrincipalFrom(ctx); p != owner {
		return ctx, errNotOwner
	}
	return ctx, nil
}

// ownTask lets the push notification configs of a task be read and
// changed only by its owner, and only for a task that exists.
func (c ownerCheck) ownTask(ctx context.Context, id a2a.TaskID) error {
	owner, ok := c.store.owner(ctx, id)
	if p, _ := host.PrincipalFrom(ctx); !ok || p != owner {
		return errNotOwner
	}
	return nil
}

func (ownerCheck) After(context.Context, *a2asrv.CallContext, *a2asrv.Response) error { return nil }

var _ a2asrv.CallInterceptor = ownerCheck{}

// errNoRun is the failure of a message to a task whose turn is over.
var errNoRun = errors.New("no turn of this task is in progress (tasks do not survive a restart)")
