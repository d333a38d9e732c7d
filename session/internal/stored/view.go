package stored

import "github.com/agcore/agcore/session"

// View trims a whole loaded session to its view: the messages from its
// compaction's Upto on, with Base set. A session without a compaction is
// returned as it is.
func View(s *session.Session) *session.Session {
	if s.Compaction == nil || s.Base >= s.Compaction.Upto {
		return s
	}
	cut := min(s.Compaction.Upto-s.Base, len(s.Messages))
	s.Messages = s.Messages[cut:]
	s.Base += cut
	return s
}
