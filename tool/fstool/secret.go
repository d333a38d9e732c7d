package fstool

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// DefaultSecretPatterns are the paths the tools refuse unless
// [Options.AllowSecrets] allows them: keys, credentials and the
// directories that hold them. A pattern ending in "/" names a directory
// (".config/gcloud/": those two names in a row); any other pattern is
// matched against each name of the path ("*.pem", ".env*"), so it also
// catches a directory of that name. "id_*" is the name of an SSH key: it
// matches names without an extension or ending in ".pub" (id_rsa,
// id_ed25519.pub), not source files such as id_test.go.
var DefaultSecretPatterns = []string{
	".ssh/",
	".aws/",
	".config/gcloud/",
	".gnupg/",
	".env*",
	"*.pem",
	"*.key",
	"id_*",
	".netrc",
	".pgpass",
	".git-credentials",
}

// ErrSecret is matched (errors.Is) by the error of a path the tools refuse
// because it matches a secret pattern.
var ErrSecret = errors.New("refused: the path matches a secret pattern")

// SecretError is the error of a refused path: which pattern it matched.
type SecretError struct {
	Path    string // the path as the model gave it
	Pattern string // the secret pattern it matched
	Hint    string // how the user allows the pattern (Options.AllowHint)
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("refused: %s matches the secret pattern %s; %s", e.Path, e.Pattern, allowText(e.Hint, e.Pattern))
}

// Is makes a *SecretError match [ErrSecret].
func (e *SecretError) Is(target error) bool { return target == ErrSecret }

// allowText says how the user allows pattern.
func allowText(hint, pattern string) string {
	if hint == "" {
		return "files matching it are not read or written unless the user allows the pattern"
	}
	return fmt.Sprintf("the user can allow it with %s '%s'", hint, pattern)
}

// allowAny says how the user allows one of patterns.
func allowAny(hint string, patterns []string) string {
	if len(patterns) == 1 {
		return allowText(hint, patterns[0])
	}
	if hint == "" {
		return allowText("", "")
	}
	return "the user can allow one with " + hint + " PATTERN"
}

// secrets decides which paths are refused.
type secrets struct {
	deny  []string // the secret patterns
	allow []string // the user's exceptions
	hint  string   // Options.AllowHint
	// root is the real root's names: a directory pattern also matches the
	// directories the root itself is in (a root inside ~/.aws).
	root []string
}

func newSecrets(realRoot string, opts Options) *secrets {
	deny := opts.SecretPatterns
	if deny == nil {
		deny = DefaultSecretPatterns
	}
	var root []string
	for _, n := range strings.Split(filepath.ToSlash(realRoot), "/") {
		if n != "" {
			root = append(root, n)
		}
	}
	return &secrets{deny: deny, allow: opts.AllowSecrets, hint: opts.AllowHint, root: root}
}

// match returns the secret pattern rel (relative to the root, free of
// links or as given) matches and is not allowed, or "".
func (s *secrets) match(rel string) string {
	if s == nil || len(s.deny) == 0 {
		return ""
	}
	rel = filepath.ToSlash(rel)
	var names []string
	for _, n := range strings.Split(rel, "/") {
		if n != "" && n != "." {
			names = append(names, n)
		}
	}
	full := append(append([]string(nil), s.root...), names...)
	for _, pat := range s.deny {
		if dir, ok := strings.CutSuffix(pat, "/"); ok {
			parts := strings.Split(dir, "/")
			for i := 0; i+len(parts) <= len(full); i++ {
				// The window may lie in the root's own path: a root
				// inside ~/.aws has every path below it refused.
				if windowMatch(parts, full[i:i+len(parts)]) && !s.allowed(pat, strings.Join(full[i:i+len(parts)], "/"), rel) {
					return pat
				}
			}
			continue
		}
		for _, n := range names {
			if nameMatch(pat, n) && !s.allowed(pat, n, rel) {
				return pat
			}
		}
	}
	return ""
}

// allowed reports whether an allow pattern lifts the secret pattern pat,
// which matched the name (or names) matched of the path rel: the pattern
// itself, "*", or a glob matching the name or the whole path.
func (s *secrets) allowed(pat, matched, rel string) bool {
	for _, a := range s.allow {
		a = strings.TrimSpace(a)
		if a == pat || a == "*" || a == strings.TrimSuffix(pat, "/") {
			return true
		}
		if ok, _ := path.Match(strings.TrimSuffix(a, "/"), matched); ok {
			return true
		}
		if ok, _ := path.Match(a, rel); ok {
			return true
		}
	}
	return false
}

// windowMatch reports whether each name matches its part of a directory
// pattern.
func windowMatch(parts, names []string) bool {
	for i, p := range parts {
		if ok, _ := path.Match(p, names[i]); !ok {
			return false
		}
	}
	return true
}

// nameMatch matches one name against a name pattern; "id_*" only matches
// names shaped like SSH keys.
func nameMatch(pat, name string) bool {
	ok, _ := path.Match(pat, name)
	if ok && pat == "id_*" {
		ext := path.Ext(name)
		return ext == "" || ext == ".pub"
	}
	return ok
}

// check refuses name (as the model gave it) when the path as given (rel,
// relative to the root) or its target (real, relative to the real root)
// matches a secret pattern.
func (s *secrets) check(name, rel, real string) error {
	for _, p := range []string{rel, real} {
		if pat := s.match(p); pat != "" {
			shown := name
			if shown == "" || shown == "." {
				shown = display(rel)
			}
			if p == real && real != rel {
				shown += " (a link to " + display(real) + ")"
			}
			return &SecretError{Path: shown, Pattern: pat, Hint: s.hint}
		}
	}
	return nil
}
