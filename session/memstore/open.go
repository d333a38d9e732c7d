package memstore

import (
	"context"
	"errors"
	"strings"

	"github.com/agcore/agcore/session"
)

func init() { session.Register("memory", opener{}) }

// opener opens memory: for session.Open.
type opener struct{}

func (opener) Syntax() string { return "memory:" }

func (opener) Check(url string) error {
	if _, rest, _ := strings.Cut(url, ":"); rest != "" {
		return errors.New("is not a store: memory: takes nothing after the colon")
	}
	return nil
}

func (opener) Open(context.Context, string, session.OpenOptions) (*session.Opened, error) {
	return &session.Opened{Store: New(), Description: "memory:"}, nil
}
