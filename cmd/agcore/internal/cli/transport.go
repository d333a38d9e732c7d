package cli

import (
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
)

// notAPIError is a successful HTTP reply that is a web page, not an API
// response: a base URL that names a web server or a login portal. Sent
// again it would be the same page, so it is never retried.
type notAPIError struct {
	url         string // the request's URL, redacted
	contentType string
}

func (e *notAPIError) Error() string {
	return fmt.Sprintf("%s answered with a web page (%s), not an API response", e.url, e.contentType)
}

// apiTransport checks what a server answers before an adapter reads it.
type apiTransport struct {
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *apiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
		resp.Body.Close()
		return nil, &notAPIError{url: config.RedactURL(req.URL.String()), contentType: mt}
	}
	return resp, nil
}

// newHTTPClient returns the client the adapters send with: the default
// transport behind apiTransport, and no overall timeout (streams are
// bounded by the turn's context and the idle budget instead).
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &apiTransport{base: http.DefaultTransport}}
}

// isNotAPI reports whether err is (or wraps) a notAPIError.
func isNotAPI(err error) bool {
	var na *notAPIError
	return errors.As(err, &na)
}
