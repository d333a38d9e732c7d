package scaleout

import (
	"fmt"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// CheckTurns checks that sess (stored as sid) is whole turns of 4
// messages, each naming one tag: the user's "[TAG] ...", the assistant's
// one tool call with the id "call-TAG", its result, and the answer
// "done TAG"; none interleaved with another turn's, each stored in the
// session its run named (acked: tag → session id, for the turns a writer
// saw acknowledged). It counts each tag it finds in seen, so that after
// every session is checked a tag seen twice is a turn stored twice and an
// acknowledged tag not seen is a turn lost.
func CheckTurns(sess *session.Session, sid string, acked map[string]string, seen map[string]int) error {
	m := sess.Messages
	if len(m) != 4*sess.Turns {
		return fmt.Errorf("%d messages for %d turns", len(m), sess.Turns)
	}
	for i := 0; i < len(m); i += 4 {
		tag, _, _ := strings.Cut(strings.TrimPrefix(m[i].Text(), "["), "]")
		uses := m[i+1].ToolUses()
		switch {
		case m[i].Role != llm.RoleUser:
			return fmt.Errorf("message %d: a turn starts with %s", i, m[i].Role)
		case len(uses) != 1 || uses[0].ID != "call-"+tag:
			return fmt.Errorf("turn %s: message %d is not its tool call (interleaved)", tag, i+1)
		case m[i+2].Role != llm.RoleTool || m[i+2].ToolCallID != "call-"+tag:
			return fmt.Errorf("turn %s: message %d is not its tool result (interleaved)", tag, i+2)
		case m[i+3].Text() != "done "+tag:
			return fmt.Errorf("turn %s: message %d is %q, not its answer (interleaved)", tag, i+3, m[i+3].Text())
		}
		if want, ok := acked[tag]; ok && want != sid {
			return fmt.Errorf("turn %s stored in %s, run on %s", tag, sid, want)
		}
		seen[tag]++
	}
	return nil
}
