package session

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agcore/agcore/llm"
)

// ErrNoTurn is returned (wrapped) by [Fork] for a turn the session does
// not have, or whose end its history does not show.
var ErrNoTurn = errors.New("session: no such turn")

// TurnStarts returns the index of the first message of each turn of a
// history: a turn begins with the user's message, so a user message that
// follows a message of another role (or opens the history) begins one.
// Consecutive user messages are one turn's input.
func TurnStarts(msgs []llm.Message) []int {
	var out []int
	for i, m := range msgs {
		if m.Role == llm.RoleUser && (i == 0 || msgs[i-1].Role != llm.RoleUser) {
			out = append(out, i)
		}
	}
	return out
}

// Fork makes session dst a branch of session src: its first at turns
// (all of them when at is 0), appended to dst turn by turn, so that dst
// has at turns and the next turn of dst is at+1, as src's was. The
// branch keeps src's owner (and so its view through a [Scoped] store)
// and model; src is not changed. The history is copied (a store may later
// share it); src's state bag, usage and compaction view are not (they
// are src's present, not its past: the branch's first turn compacts
// again if it must).
//
// The end of turn at is found with [TurnStarts]; a history whose turns
// do not each begin with a user message (a turn that only answered
// function calls) can be forked at its last turn only: ErrNoTurn
// otherwise. dst must not exist (ErrExists).
func Fork(ctx context.Context, st Store, src, dst string, at int) (*Session, error) {
	if err := ValidateID(dst); err != nil {
		return nil, err
	}
	sess, err := st.Load(ctx, src)
	if err != nil {
		return nil, err
	}
	if at == 0 {
		at = sess.Turns
	}
	if at < 1 || at > sess.Turns {
		return nil, fmt.Errorf("session %s: turn %d of %d: %w", src, at, sess.Turns, ErrNoTurn)
	}
	if _, err := st.LoadView(ctx, dst); err == nil {
		return nil, fmt.Errorf("session %s: %w", dst, ErrExists)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	starts := TurnStarts(sess.Messages)
	if len(starts) != sess.Turns {
		if at != sess.Turns {
			return nil, fmt.Errorf("session %s: its %d turns do not each begin with a user message, so turn %d's end is unknown: %w", src, sess.Turns, at, ErrNoTurn)
		}
		starts = []int{0} // the whole history, as one turn
	}
	if starts[0] != 0 {
		starts[0] = 0 // what precedes the first user message is the first turn's
	}
	end := len(sess.Messages)
	if at < len(starts) {
		end = starts[at]
	}
	n := min(at, len(starts))
	now := time.Now()
	for k := range n {
		hi := end
		if k+1 < n {
			hi = starts[k+1]
		}
		t := Turn{ID: "fork-" + dst + "-" + strconv.Itoa(k+1), Messages: sess.Messages[starts[k]:hi], Owner: sess.Owner, Model: sess.Model, Time: now}
		if err := st.Append(ctx, dst, t); err != nil {
			return nil, fmt.Errorf("session %s: forking %s: %w", dst, src, err)
		}
	}
	return st.Load(ctx, dst)
}
