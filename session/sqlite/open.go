package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

func init() { session.Register("sqlite", opener{}) }

// DefaultPath is agcore's default database, the one "sqlite:" (and an
// empty store URL) names: agcore.db in home, where home "" means
// $AGCORE_HOME, or ~/.agcore when AGCORE_HOME is not set.
func DefaultPath(home string) string {
	if home == "" {
		home = os.Getenv("AGCORE_HOME")
	}
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".agcore")
		} else {
			home = ".agcore"
		}
	}
	return filepath.Join(home, "agcore.db")
}

// opener opens sqlite:PATH for session.Open.
type opener struct{}

func (opener) Syntax() string { return "sqlite:PATH" }

func (opener) Check(string) error { return nil }

func (opener) Open(ctx context.Context, url string, o session.OpenOptions) (*session.Opened, error) {
	_, path, _ := strings.Cut(url, ":")
	dflt := path == ""
	if dflt {
		path = DefaultPath(o.Home)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	opts := []Option{WithCacheBytes(o.CacheSize())}
	if o.ReadOnly {
		if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
			if dflt { // nothing stored yet in the default database: an empty store
				return &session.Opened{Store: stored.Empty{Name: "sqlite:" + abs}, Description: "sqlite:" + abs, Durable: true}, nil
			}
			return nil, fmt.Errorf("no such database (%w): check the path", session.ErrNoStore)
		}
		opts = append(opts, ReadOnly())
	} else if dflt {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, err
		}
	} else if st, err := os.Stat(filepath.Dir(abs)); err != nil || !st.IsDir() {
		// A path the user typed: a mistyped directory is an error, not a
		// new directory tree.
		return nil, fmt.Errorf("the directory %s does not exist (%w): check the path", filepath.Dir(abs), session.ErrNoStore)
	}
	db, err := Open(ctx, abs, opts...)
	if err != nil {
		return nil, err
	}
	return &session.Opened{Store: db, Description: "sqlite:" + db.Path(), Durable: true, Closer: db.Close}, nil
}
