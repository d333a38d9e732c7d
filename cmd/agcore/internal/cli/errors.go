package cli

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
)

// errTurnTimeout is the cause of a turn cut off by --timeout.
var errTurnTimeout = errors.New("turn timeout")

// shouldRetry is the CLI's retry rule: the library's, except for what
// sending again cannot fix here: a server that stayed silent for the whole
// idle budget, and a web page in place of the API.
func shouldRetry(err error) bool {
	return middleware.ShouldRetry(err) && !errors.Is(err, errNoResponse) && !isNotAPI(err)
}

// describe says what went wrong in a turn in words a person can act on,
// naming the provider as the user configured it (not the adapter it runs
// on: a compatible server is not "openai").
// budgetMessage names the limit a turn was stopped by, as the flag that
// sets it.
func budgetMessage(e *budget.ExceededError) string {
	flag := map[budget.Scope]map[budget.Kind]string{
		budget.ScopeRun:     {budget.KindCost: "--max-cost", budget.KindTokens: "--token-budget"},
		budget.ScopeSession: {budget.KindCost: "--session-max-cost", budget.KindTokens: "--session-token-budget"},
	}[e.Scope][e.Kind]
	msg := strings.TrimPrefix(e.Error(), "budget: ")
	if flag == "" {
		return "spending limit reached: " + msg
	}
	return fmt.Sprintf("spending limit %s reached: %s", flag, msg)
}

func describe(s *config.Settings, err error) string {
	var (
		le   *llm.Error
		na   *notAPIError
		perr *agent.PersistError
		be   *budget.ExceededError
	)
	switch {
	case errors.As(err, &be):
		return budgetMessage(be)
	case errors.As(err, &na):
		return fmt.Sprintf("%s; check the base URL (%s): an OpenAI-compatible API is usually under /v1", na.Error(), config.RedactURL(s.BaseURL))
	case errors.As(err, &perr):
		return "the turn could not be stored, so the session keeps its previous state: " + perr.Err.Error()
	case errors.Is(err, errNoResponse):
		msg := err.Error()
		if errors.As(err, &le) {
			msg = le.Message
		}
		return msg + "; is the server running? (--idle-timeout sets how long to wait)"
	case !errors.As(err, &le):
		return err.Error()
	case le.Provider == "compact" && le.Kind == llm.KindContextLength:
		return fmt.Sprintf("the conversation no longer fits %s's context window, even compressed, so nothing was sent; start a new session or send a shorter prompt", s.Model)
	}
	who := providerLabel(s)
	msg := le.Message
	if msg == "" && le.Err != nil {
		msg = le.Err.Error()
	}
	if le.StatusCode == 0 {
		return who + ": " + transportMessage(s, err, msg)
	}
	status := fmt.Sprintf("HTTP %d", le.StatusCode)
	if t := http.StatusText(le.StatusCode); t != "" {
		status += " " + t
	}
	out := fmt.Sprintf("%s answered %s", who, status)
	if msg != "" && msg != http.StatusText(le.StatusCode) && msg != strings.TrimPrefix(status, "HTTP ") {
		out += ": " + msg
	}
	return out + hint(s, le)
}

// transportMessage says why a request got no HTTP answer at all.
func transportMessage(s *config.Settings, err error, msg string) string {
	var (
		ue  *url.Error
		dns *net.DNSError
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing answers there (connection refused): is the server running, and is the base URL right?"
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot find the host %q: check the base URL", dns.Name)
	case errors.As(err, &ue):
		return ue.Err.Error()
	}
	return msg
}

// providerLabel names who answered: the provider as configured, and for
// servers the user points at, where they are.
func providerLabel(s *config.Settings) string {
	if s.Kind.Name == "compatible" || s.Sources["base_url"] != "default" && s.BaseURL != "" && s.Kind.Wire != "demo" {
		return fmt.Sprintf("%s (%s)", s.Provider, config.RedactURL(s.BaseURL))
	}
	return s.Provider
}

// hint is what to try for an HTTP error, if anything is known.
func hint(s *config.Settings, le *llm.Error) string {
	switch {
	case le.StatusCode == http.StatusNotFound && s.Kind.Wire == "openai" && !strings.Contains(strings.ToLower(le.Message), "model"):
		if u, err := url.Parse(s.BaseURL); err == nil && !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
			return fmt.Sprintf(" (requests go to {base}/chat/completions, and the base URL usually ends in /v1: try --base-url %s/v1)", strings.TrimRight(config.RedactURL(s.BaseURL), "/"))
		}
		return " (requests go to {base}/chat/completions: check the base URL)"
	case le.StatusCode == http.StatusNotFound:
		return fmt.Sprintf(" (check the model name %q: agcore models lists the known ones)", s.Model)
	case le.Kind == llm.KindAuth && s.KeyEnv != "":
		return fmt.Sprintf(" (check the key in $%s)", s.KeyEnv)
	}
	return ""
}
