// Package redact hides the secrets a URL may carry: the password of its
// user information and the values of query parameters whose names say they
// are secret (password, token, key, secret, ...). It is agcore's one
// implementation of URL redaction, and [Mask] its one mask: session.Redact
// (store URLs) and session.Open's errors, the CLI's configuration display,
// the provider adapters' base-URL errors and echoed keys (internal/httpx)
// and the MCP client's errors (its header and URL secrets) all call it.
//
// This package imports only the standard library.
package redact

import (
	"net/url"
	"slices"
	"strings"
)

// Mask replaces every secret.
const Mask = "xxxxx"

// URL returns raw with its password and its secret query values replaced
// by [Mask]. A text with no "//" authority (sqlite:PATH, file:DIR,
// memory:) has no user information and is returned as it is; a URL that
// does not parse is shortened to its scheme ("postgres://…"), since where
// its secret is cannot be told, unless it has neither user information
// nor a query or fragment (no '@', '?' or '#'): such a text holds no
// secret and is returned as it is ("http://[::1").
func URL(raw string) string {
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		if !strings.ContainsAny(raw, "@?#") {
			return raw
		}
		return scheme + "://…"
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Mask)
			changed = true
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		secret := false
		for k, vs := range q {
			if secretName(k) {
				for i := range vs {
					vs[i] = Mask
				}
				secret = true
			}
		}
		if secret {
			u.RawQuery = q.Encode()
			changed = true
		}
	}
	if !changed {
		return raw // as written: re-encoding would show "https:" for "https://"
	}
	return u.String()
}

// Base returns a base URL as messages may show it: [URL] of it without its
// query string and fragment (either may hold a key), which are replaced
// by "?…".
func Base(raw string) string {
	if raw == "" {
		return ""
	}
	suffix := ""
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw, suffix = raw[:i], "?…"
	}
	return URL(raw) + suffix
}

// Secrets returns the secrets of raw that [URL] hides, each as written
// and, when different, URL-unescaped and escaped, for [Text]: the
// password and the secret query values. It returns nil for a text that
// does not parse as a URL with an authority.
func Secrets(raw string) []string {
	if !strings.Contains(raw, "://") {
		return nil
	}
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		for _, v := range []string{s, url.PathEscape(s), url.QueryEscape(s), url.UserPassword("", s).String()[1:]} {
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// The password as written between the last ':' of the user
		// information and its '@'.
		_, rest, _ := strings.Cut(raw, "://")
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				add(pw)
				if un, err := url.PathUnescape(pw); err == nil {
					add(un)
				}
			}
		}
		return out
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			add(pw)
		}
	}
	for k, vs := range u.Query() {
		if secretName(k) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}

// Text returns s with every secret replaced by [Mask], longest first (so a
// secret that contains another is hidden whole).
func Text(s string, secrets []string) string {
	sorted := slices.Clone(secrets)
	slices.SortStableFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range sorted {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, Mask)
		}
	}
	return s
}

// secretName reports whether a query parameter's name says its value is a
// secret.
func secretName(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "sig"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
