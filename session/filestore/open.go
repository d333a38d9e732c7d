package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/session"
)

func init() { session.Register("file", opener{}) }

// opener opens file:DIR for session.Open.
type opener struct{}

func (opener) Syntax() string { return "file:DIR" }

func (opener) Check(url string) error {
	if _, dir, _ := strings.Cut(url, ":"); dir == "" {
		return errors.New("names no directory: give one, such as file:./sessions")
	}
	return nil
}

func (opener) Open(_ context.Context, url string, o session.OpenOptions) (*session.Opened, error) {
	_, dir, _ := strings.Cut(url, ":")
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if o.ReadOnly {
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("no such directory (%w): check the path", session.ErrNoStore)
		}
	}
	st, err := Open(abs, WithLogger(o.Logger))
	if err != nil {
		return nil, err
	}
	return &session.Opened{Store: st, Description: "file:" + abs, Durable: true, Closer: st.Close}, nil
}
