package anthropic

import (
	"errors"
	"strings"

	"github.com/agcore/agcore/llm"
)

// redact removes the API key from an error's text, in case a server or a
// gateway echoes it back in an error body. It returns err.
func (m *Model) redact(err error) error {
	var e *llm.Error
	if errors.As(err, &e) {
		redactKey(e, m.apiKey)
	}
	return err
}

// redactKey replaces key in e's message and code. Keys shorter than 8
// bytes are left alone: replacing them would mangle ordinary words.
func redactKey(e *llm.Error, key string) {
	if len(key) < 8 {
		return
	}
	e.Message = strings.ReplaceAll(e.Message, key, "[redacted]")
	e.Code = strings.ReplaceAll(e.Code, key, "[redacted]")
}
