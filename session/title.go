package session

import (
	"strings"
	"unicode/utf8"

	"github.com/agcore/agcore/llm"
)

// TitleRunes is the longest title, in runes, [Title] makes.
const TitleRunes = 80

// Title is the one rule a session's title is derived by: the first line
// with text of the first user message that has any, its runs of white
// space made single spaces, cut to TitleRunes runes (the last one an
// ellipsis when it was longer); "" when no message has one. Stores keep
// the title of a session's first turn that has one ([Info.Title]).
func Title(msgs []llm.Message) string {
	for i := range msgs {
		if t := MessageTitle(&msgs[i]); t != "" {
			return t
		}
	}
	return ""
}

// MessageTitle is [Title] of one message: "" unless it is a user message
// with text.
func MessageTitle(m *llm.Message) string {
	if m.Role != llm.RoleUser {
		return ""
	}
	for line := range strings.Lines(m.Text()) {
		t := strings.Join(strings.Fields(line), " ")
		if t == "" {
			continue
		}
		if utf8.RuneCountInString(t) > TitleRunes {
			r := []rune(t)
			t = string(r[:TitleRunes-1]) + "…"
		}
		return t
	}
	return ""
}
