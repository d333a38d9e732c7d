package render

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// spinnerFrames are drawn in turn on the status line.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// status is a one-line spinner on a terminal: "⠋ waiting for gpt-4o (2s)".
// Its owner holds mu around every write to the terminal and calls
// clearLocked first, so output never mixes with the line.
type status struct {
	w     io.Writer
	width func() int // the terminal's columns; nil means 80
	color bool       // dim the line
	mu    *sync.Mutex
	tick  time.Duration
	msg   string
	since time.Time
	drawn bool
	frame int
	stop  chan struct{}
	done  chan struct{}
}

func newStatus(w io.Writer, mu *sync.Mutex) *status {
	return &status{w: w, mu: mu, tick: 100 * time.Millisecond}
}

// setLocked shows msg (an empty msg hides the line). The spinner goroutine
// starts on first use.
func (s *status) setLocked(msg string) {
	if msg != s.msg {
		s.since = time.Now()
	}
	s.msg = msg
	if msg == "" {
		s.clearLocked()
		return
	}
	if s.stop == nil {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.loop(s.stop, s.done)
	}
	s.drawLocked()
}

func (s *status) loop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(s.tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.mu.Lock()
			if s.msg != "" {
				s.frame++
				s.drawLocked()
			}
			s.mu.Unlock()
		}
	}
}

func (s *status) drawLocked() {
	line := spinnerFrames[s.frame%len(spinnerFrames)] + " " + s.msg
	if el := time.Since(s.since); el >= time.Second {
		line += fmt.Sprintf(" (%ds)", int(el.Seconds()))
	}
	cols := 80
	if s.width != nil {
		if w := s.width(); w > 0 {
			cols = w
		}
	}
	line = Clip(line, cols-1) // a wrapped line could not be erased with \r
	if s.color {
		line = "\x1b[2m" + line + "\x1b[0m"
	}
	fmt.Fprint(s.w, "\r\x1b[K"+line)
	s.drawn = true
}

// clearLocked erases the line if it is drawn (it stays set and is drawn
// again on the next tick unless set to "").
func (s *status) clearLocked() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
}

// close hides the line and stops the goroutine. The caller must not hold mu.
func (s *status) close() {
	s.mu.Lock()
	s.msg = ""
	s.clearLocked()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}
