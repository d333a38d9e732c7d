package cli

import (
	"context"
	"os"
	"sync"
)

// interrupts turns Ctrl-C into cancellations: the first cancels the running
// turn (its session keeps its previous state), the next one cancels the
// whole command so it can clean up and exit, and one more exits at once.
// Without a running turn, the first already cancels the command; with
// oneShot (run, which has one turn) the first cancels both.
type interrupts struct {
	mu       sync.Mutex
	quit     context.CancelFunc // cancels the command
	exit     func(int)
	turn     context.CancelFunc // the running turn's; nil when none
	hit      bool               // the running turn was interrupted
	quitting bool
	oneShot  bool             // the first Ctrl-C also quits
	notify   func(msg string) // tells the user what an interrupt did; may be nil
}

func newInterrupts(quit context.CancelFunc, exit func(int)) *interrupts {
	return &interrupts{quit: quit, exit: exit}
}

// watch handles the signals of ch until the returned stop is called.
func (in *interrupts) watch(ch <-chan os.Signal) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case _, ok := <-ch:
				if !ok {
					return
				}
				in.interrupt()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// interrupt handles one Ctrl-C.
func (in *interrupts) interrupt() {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case in.turn != nil && !in.hit:
		in.hit = true
		in.turn()
		if in.oneShot {
			in.quitting = true
			in.quit()
		}
		in.say("cancelling")
	case !in.quitting:
		in.quitting = true
		in.quit()
		if in.turn != nil {
			in.turn()
		}
	default:
		in.exit(ExitInterrupted)
	}
}

func (in *interrupts) say(msg string) {
	if in.notify != nil {
		in.notify(msg)
	}
}

// startTurn returns the context of a turn that a Ctrl-C cancels, and the
// function that ends it, which reports whether an interrupt cancelled it.
func (in *interrupts) startTurn(ctx context.Context) (context.Context, func() (interrupted bool)) {
	tctx, cancel := context.WithCancel(ctx)
	in.mu.Lock()
	in.turn, in.hit = cancel, false
	in.mu.Unlock()
	return tctx, func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		hit := in.hit
		in.turn, in.hit = nil, false
		cancel()
		return hit
	}
}

// setNotify sets how interrupts are told to the user.
func (in *interrupts) setNotify(f func(string)) {
	in.mu.Lock()
	in.notify = f
	in.mu.Unlock()
}

// setOneShot makes the first Ctrl-C of a turn quit the command too.
func (in *interrupts) setOneShot() {
	in.mu.Lock()
	in.oneShot = true
	in.mu.Unlock()
}
