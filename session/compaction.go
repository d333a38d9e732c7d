package session

import "github.com/agcore/agcore/llm"

// RequestHistory returns the history part of a request continuing s: the
// compaction's messages, then the stored messages after the compaction
// without system-role ones (a request's instructions are its own). It is
// s.Messages itself when s has no compaction and no system message. s
// must hold the messages from Base on (Load or LoadView).
func (s *Session) RequestHistory() []llm.Message {
	tail := s.tail()
	if s.Compaction == nil && !hasSystem(tail) {
		return tail
	}
	var cm []llm.Message
	if s.Compaction != nil {
		cm = s.Compaction.Messages
	}
	out := make([]llm.Message, 0, len(cm)+len(tail))
	out = append(out, cm...)
	for _, m := range tail {
		if m.Role != llm.RoleSystem {
			out = append(out, m)
		}
	}
	return out
}

// NextCompaction returns the compaction a turn leaves behind, to store
// with it (Turn.Compaction), so that the next turn, in any process,
// continues from what this one sent.
//
// sent are the messages of the turn's last model request as they were
// sent, without the request's leading instructions and without what was
// added for this run only (a context provider's messages); they were
// built from s.RequestHistory() followed by turn (the turn's messages
// before that request: its input, then its transcript up to the request).
// When sent is exactly that list nothing was compressed, and
// NextCompaction returns nil: the session's compaction stays as it is.
// Otherwise it returns the compaction whose view of the history after the
// turn starts with sent: the longest tail of sent that repeats the
// history (after the current compaction) and turn is kept as history, and
// the rest of sent becomes the compaction's messages.
func (s *Session) NextCompaction(sent, turn []llm.Message) *Compaction {
	tail := s.tail()
	from := s.Base + len(s.Messages) - len(tail) // history index of tail[0]
	// pos[i] is the history index of the i-th message requests carry of
	// tail and turn (system messages of tail are skipped).
	pos := make([]int, 0, len(tail)+len(turn))
	var cm []llm.Message
	if s.Compaction != nil {
		cm = s.Compaction.Messages
	}
	at := func(i int) llm.Message { // the i-th message tail and turn contribute
		p := pos[i] - from
		if p < len(tail) {
			return tail[p]
		}
		return turn[p-len(tail)]
	}
	for j, m := range tail {
		if m.Role != llm.RoleSystem {
			pos = append(pos, from+j)
		}
	}
	for k := range turn {
		pos = append(pos, from+len(tail)+k)
	}
	if len(sent) == len(cm)+len(pos) {
		same := true
		for i := range cm {
			if !sent[i].Equal(cm[i]) {
				same = false
				break
			}
		}
		for i := 0; same && i < len(pos); i++ {
			same = sent[len(cm)+i].Equal(at(i))
		}
		if same {
			return nil
		}
	}
	end := from + len(tail) + len(turn) // the history's length after turn
	k := 0
	for k < len(sent) && k < len(pos) && sent[len(sent)-1-k].Equal(at(len(pos)-1-k)) {
		k++
	}
	upto := end
	if k > 0 {
		upto = pos[len(pos)-k]
	}
	return &Compaction{Upto: upto, Messages: append([]llm.Message(nil), sent[:len(sent)-k]...)}
}

// tail returns the stored messages after the compaction (all of them
// without one).
func (s *Session) tail() []llm.Message {
	if s.Compaction == nil {
		return s.Messages
	}
	return s.Messages[min(max(0, s.Compaction.Upto-s.Base), len(s.Messages)):]
}

func hasSystem(msgs []llm.Message) bool {
	for i := range msgs {
		if msgs[i].Role == llm.RoleSystem {
			return true
		}
	}
	return false
}
