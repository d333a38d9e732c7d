package agent

import (
	"context"
	"sync"
)

// sessionLocks serializes runs on one session: a second run waits until
// the first has finished, persistence included, or until its context ends.
// The zero value is ready.
type sessionLocks struct {
	mu sync.Mutex
	m  map[any]*sessionLock
}

type sessionLock struct {
	held chan struct{} // one slot: full while a run holds the session
	refs int           // runs holding or waiting
}

func (l *sessionLocks) lock(ctx context.Context, key any) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[any]*sessionLock)
	}
	e := l.m[key]
	if e == nil {
		e = &sessionLock{held: make(chan struct{}, 1)}
		l.m[key] = e
	}
	e.refs++
	l.mu.Unlock()

	release := func() {
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	select {
	case e.held <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-e.held
			release()
		})
	}, nil
}
