package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/agcore/agcore/session"
	_ "github.com/agcore/agcore/session/stores" // the kinds of store CheckStore knows
)

// Check finds the mistakes in the settings that would only show once a
// request is sent or a store is opened: a base URL that is not a URL, a
// --store that names no kind of store, a --root that is not a directory.
// Each error is one line that says what to do. run, chat and demo call it
// before anything else happens.
func (s *Settings) Check() error {
	if s.Kind.Wire != "" && s.Kind.Wire != "demo" && s.BaseURL != "" {
		if err := CheckBaseURL(s.BaseURL); err != nil {
			return fmt.Errorf("%s %q %v", s.origin("base_url", "base-url"), RedactURL(s.BaseURL), err)
		}
	}
	if err := CheckStore(s.Store); err != nil {
		return fmt.Errorf("%s %q %v", s.origin("store", "store"), session.Redact(s.Store), err)
	}
	if len(s.Tools) > 0 {
		if err := checkDir(s.Root); err != nil {
			return fmt.Errorf("%s %q: %v; give an existing directory (the default is the working directory)", s.origin("root", "root"), s.Root, err)
		}
	}
	return nil
}

// origin names where a setting came from as the user wrote it: "--flag",
// "ENV_VAR" or "the config file's key".
func (s *Settings) origin(key, flag string) string {
	switch src := s.Sources[key]; {
	case strings.HasPrefix(src, "env "):
		return strings.TrimPrefix(src, "env ")
	case src == "file":
		return fmt.Sprintf("%q in %s", key, s.ConfigFile)
	}
	return "--" + flag
}

// CheckBaseURL reports a base URL that cannot be sent to: it must be an
// absolute http or https URL with a host.
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme == "" || u.Host == "":
		return errors.New("is not a URL: give the server's address, such as http://localhost:8000/v1")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("has the scheme %q: give an http:// or https:// address", u.Scheme)
	}
	return nil
}

// CheckStore reports, without opening it, a --store that names no kind of
// store session.Open knows (sqlite:PATH, file:DIR, memory:, postgres://…,
// redis://…) or that is written wrong for its kind. The error is a phrase
// that follows the redacted store: "is not a store: give …".
func CheckStore(dsn string) error { return session.Check(dsn) }

func checkDir(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such directory")
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	case !fi.IsDir():
		return errors.New("is a file, not a directory")
	}
	return nil
}
