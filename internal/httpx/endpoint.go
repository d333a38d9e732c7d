package httpx

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agcore/agcore/internal/redact"
	"github.com/agcore/agcore/llm"
)

// Endpoint validates a provider's base URL and appends path to it (such as
// "/chat/completions" or "/v1/messages"), keeping a query string in place
// after the new path: Azure's "?api-version=..." stays a query of the
// endpoint. A trailing slash on the base is dropped first, and a fragment
// (which is never sent) is dropped.
//
// The base must be an absolute http or https URL with a host. Anything else
// is a KindInvalidRequest *llm.Error from provider whose message names the
// provider, the bad value (with its query string and password left out, in
// case they hold a key) and example, a good base URL for that provider.
func Endpoint(provider, base, path, example string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.Hostname() == "" {
		return "", &llm.Error{Kind: llm.KindInvalidRequest, Provider: provider, Message: fmt.Sprintf(
			"invalid %s base URL %q: want an absolute http or https URL such as %q", provider, redact.Base(base), example)}
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/") + path
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// SameHost reports whether base names the same host as official (compared
// without case; scheme, port and path are ignored): how an adapter tells a
// provider's own endpoint, which needs an API key, from a proxy, a gateway
// or a local server, which may not.
func SameHost(base, official string) bool {
	b, err1 := url.Parse(base)
	o, err2 := url.Parse(official)
	return err1 == nil && err2 == nil && b.Hostname() != "" && strings.EqualFold(b.Hostname(), o.Hostname())
}

// MissingKey is the error an adapter returns, before sending anything, when
// it has no API key and its base URL is the provider's own endpoint: a
// KindAuth *llm.Error whose message names the environment variables that
// hold a key (vars, e.g. "OPENAI_API_KEY") and the option that sets one.
func MissingKey(provider, vars, option string) *llm.Error {
	return &llm.Error{Kind: llm.KindAuth, Provider: provider, Message: "no API key: set " + vars + " or use " + option}
}
