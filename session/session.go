package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agcore/agcore/llm"
)

// Session is one conversation as a Store holds it.
type Session struct {
	ID        string
	Messages  []llm.Message
	State     map[string]json.RawMessage // the providers' state bag; see GetState and SetState
	Usage     llm.Usage                  // summed over every stored turn
	CostUSD   float64                    // summed over turns whose cost was known
	Prefix    PrefixStats                // request-hash (prompt-cache prefix) statistics
	Hashes    []uint64                   // prefix hashes of the last tracked request
	Turns     int                        // number of stored turns
	CreatedAt time.Time
	UpdatedAt time.Time

	// Owner is the principal the session belongs to ("" for single-user
	// use), set by the append that created it and never changed; see
	// [Scoped].
	Owner string
	// Title is a short label from the session's first user message.
	Title string
	// Model is the model that answered the session's last turn.
	Model string
	// Compaction is the view the session's last compressed request was
	// built on: requests send Compaction.Messages in place of the
	// history's first Compaction.Upto messages; nil when no request was
	// compressed. It is stored atomically with the turn that made it.
	Compaction *Compaction
	// Base is the number of history messages before Messages[0]: 0 when
	// the whole history was loaded (Load), Compaction.Upto when only the
	// view was (LoadView).
	Base int

	// hashes holds the content hashes of Messages known so far (see
	// TouchRequest and SetMessageHashes); shared with clones.
	hashes *hashIndex
}

// PrefixStats is the request-hash statistic of a session, kept by
// [Session.TouchRequest]: how often a new request extended the previous one
// byte-for-byte, which is when a provider's prompt cache can hit.
type PrefixStats struct {
	Requests     int `json:"requests"`      // requests tracked
	PrefixStable int `json:"prefix_stable"` // requests that extended the previous request unchanged
	// LastDivergence is the index of the first message of the last request
	// that differed from the previous request; -1 when it extended it (or
	// when there was no previous request).
	LastDivergence int `json:"last_divergence"`
	// HashVersion is the [HashVersion] the session's Hashes were computed
	// under; 0 for statistics stored before versions were recorded
	// (version 1).
	HashVersion int `json:"hash_version,omitempty"`
}

// Turn is what one agent run adds to a session, appended atomically.
type Turn struct {
	// ID identifies the run. Appending a turn whose ID the session already
	// holds is a no-op that returns nil, so a retried append never
	// duplicates.
	ID string
	// Messages are the caller's input messages followed by the turn's
	// transcript (assistant and tool-result messages).
	Messages []llm.Message
	Usage    llm.Usage
	CostUSD  float64 // 0 when unknown
	// State holds state-bag keys this turn sets; a nil value deletes the key.
	State map[string]json.RawMessage
	// Prefix and Hashes, when Hashes is non-nil, replace the session's
	// request-hash statistic and last request hashes.
	Prefix PrefixStats
	Hashes []uint64
	Time   time.Time
	// Owner is the principal appending. The append that creates the
	// session makes it the session's owner; an append to a session of
	// another owner fails with [ErrOwner] and stores nothing.
	Owner string
	// Model is the model that answered the turn (the session's Model
	// after it); "" leaves the session's as it was.
	Model string
	// Compaction, when non-nil, replaces the session's compaction view,
	// atomically with the turn. Its Upto counts messages of the history
	// after this turn's messages are appended.
	Compaction *Compaction
}

// Compaction is a stored view of a session's history for building
// requests: Messages replace the history's first Upto messages. The whole
// history stays stored and readable (Load); a turn needs only the view and
// the messages after Upto (LoadView).
type Compaction struct {
	Upto     int           `json:"upto"`
	Messages []llm.Message `json:"messages"`
}

// View returns the request view of s: the compaction's messages followed
// by the history after it. s must hold the messages from Base on, and
// Base must not be past the compaction's Upto.
func (s *Session) View() []llm.Message {
	if s.Compaction == nil {
		return s.Messages
	}
	rest := s.Messages[max(0, s.Compaction.Upto-s.Base):]
	out := make([]llm.Message, 0, len(s.Compaction.Messages)+len(rest))
	return append(append(out, s.Compaction.Messages...), rest...)
}

// Info is a session's summary, as List returns it: its metadata, kept on
// every append, so a listing reads no messages.
type Info struct {
	ID        string    `json:"id"`
	Owner     string    `json:"owner,omitempty"`
	Title     string    `json:"title,omitempty"`
	Model     string    `json:"model,omitempty"`
	Messages  int       `json:"messages"`
	Turns     int       `json:"turns"`
	Usage     llm.Usage `json:"usage"`
	CostUSD   float64   `json:"cost_usd"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ListOptions pages through sessions, newest UpdatedAt first (ties by ID).
// A listing holds only the sessions of Owner ("" for single-user use),
// unless AnyOwner is set.
type ListOptions struct {
	Limit    int    // most sessions to return; 0 means 100
	Cursor   string // from the previous Page.Next; empty for the first page
	Owner    string // whose sessions to list
	AnyOwner bool   // list every owner's sessions (administration)
}

// Page is one page of a session listing.
type Page struct {
	Sessions []Info
	Next     string // cursor of the next page; empty when this is the last
}

// Store keeps sessions. Implementations are safe for concurrent use. Every
// implementation must pass the contract suite in package sessiontest.
type Store interface {
	// Create makes an empty session; ErrExists if id is taken.
	Create(ctx context.Context, id string) (*Session, error)
	// Load returns the session with its whole history; ErrNotFound if
	// there is none.
	Load(ctx context.Context, id string) (*Session, error)
	// LoadView returns the session with the messages a turn needs: those
	// from its compaction's Upto on (Base = Upto), or all of them when it
	// has no compaction; ErrNotFound if there is none.
	LoadView(ctx context.Context, id string) (*Session, error)
	// Append adds a turn atomically: after a crash either all of its
	// messages are stored or none. It creates the session if it does not
	// exist. An already stored turn ID makes it a no-op.
	Append(ctx context.Context, id string, turn Turn) error
	// List returns one page of session summaries.
	List(ctx context.Context, opts ListOptions) (Page, error)
	// Delete removes the session; ErrNotFound if there is none.
	Delete(ctx context.Context, id string) error
}

// Errors a Store returns (wrapped); test them with errors.Is.
var (
	ErrNotFound  = errors.New("session: not found")
	ErrExists    = errors.New("session: already exists")
	ErrInvalidID = errors.New("session: invalid id")
	// ErrOwner means an append named another owner than the session's:
	// nothing was stored. Callers outside the store answer it as they
	// answer ErrNotFound, so a session's existence is not revealed.
	ErrOwner = errors.New("session: belongs to another owner")
	// ErrUnavailable means the store's server could not be reached, or the
	// connection broke, and the store's own retries did not get through:
	// an Append that returns it may or may not have stored its turn, and
	// retrying it with the same Turn.ID is safe (it stores the turn at most
	// once). Stores over a network (session/postgres, session/redis)
	// return it wrapped together with their driver's error.
	ErrUnavailable = errors.New("session: store unavailable")
)
