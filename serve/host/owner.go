package host

import (
	"context"
	"errors"
	"strings"

	"github.com/agcore/agcore/session"
)

// LocalPrincipal is the principal of every request to a server without
// tokens (which agcore serve binds to a loopback address only): the
// single user, whose sessions have the empty owner.
const LocalPrincipal = "local"

// Owner returns the session owner of ctx's principal: the principal's name,
// or "" (the single-user owner) for LocalPrincipal and for a context with
// no principal.
func Owner(ctx context.Context) string {
	p, _ := PrincipalFrom(ctx)
	return ownerOf(p)
}

// ownerOf returns the session owner of a principal: its name, or "" (the
// single-user owner) for LocalPrincipal and for no principal ("").
func ownerOf(principal string) string {
	if principal == LocalPrincipal {
		return ""
	}
	return principal
}

// SessionName returns the session id that name, a conversation name a
// client chose (a Responses conversation, an A2A context id), stands for
// in the namespace of ctx's principal: name itself for the single-user
// owner, "OWNER.name" otherwise. A name is a name, not a capability: the
// same name sent by two principals is two sessions, and a name one
// principal uses reveals nothing to another. The result may not be a
// valid session id (session.ValidateID); callers check.
func SessionName(ctx context.Context, name string) string {
	p, _ := PrincipalFrom(ctx)
	return SessionNameOf(p, name)
}

// SessionNameOf is SessionName for a principal a caller already holds.
func SessionNameOf(principal, name string) string {
	if o := ownerOf(principal); o != "" {
		return o + "." + name
	}
	return name
}

// Sessions returns st as the principal of ctx sees it: the one
// authorization point of every entry point of agcore's server (the
// Responses endpoint, A2A, the web page), and the store their agent runs
// are given (agent.RunOptions.Store), so that a turn's append carries its
// owner. It is session.Scoped(st, Owner(ctx)): listings hold only the
// principal's sessions; loading or deleting another principal's session
// fails with session.ErrNotFound, as for a session that does not exist;
// appending to one fails with session.ErrOwner and stores nothing.
//
// Sessions a server stored before sessions had owners have the empty
// owner. Those in the principal's namespace (ids "OWNER.…", which only the
// Responses endpoint made, for that principal: see SessionName) stay the
// principal's: they are loaded, continued and deleted as the single-user
// owner's, and never listed. Sessions outside it stay the single user's.
// A nil st returns nil.
func Sessions(ctx context.Context, st session.Store) session.Store {
	p, _ := PrincipalFrom(ctx)
	return SessionsOf(p, st)
}

// SessionsOf is Sessions for a principal a caller already holds: st as
// principal sees it.
func SessionsOf(principal string, st session.Store) session.Store {
	if st == nil {
		return nil
	}
	owner := ownerOf(principal)
	scoped := session.Scoped(st, owner)
	if owner == "" {
		return scoped
	}
	return &owned{Store: scoped, legacy: session.Scoped(st, ""), prefix: owner + "."}
}

// owned is a principal's view of a store: its scoped store, and the
// single-user view for the sessions of its namespace stored without an
// owner.
type owned struct {
	session.Store               // session.Scoped(st, owner)
	legacy        session.Store // session.Scoped(st, "")
	prefix        string        // "OWNER."
}

// inNamespace reports whether a failure of the owner's view on id should
// be retried as the single user's.
func (o *owned) inNamespace(id string, err error, want error) bool {
	return errors.Is(err, want) && strings.HasPrefix(id, o.prefix)
}

func (o *owned) Load(ctx context.Context, id string) (*session.Session, error) {
	s, err := o.Store.Load(ctx, id)
	if o.inNamespace(id, err, session.ErrNotFound) {
		return o.legacy.Load(ctx, id)
	}
	return s, err
}

func (o *owned) LoadView(ctx context.Context, id string) (*session.Session, error) {
	s, err := o.Store.LoadView(ctx, id)
	if o.inNamespace(id, err, session.ErrNotFound) {
		return o.legacy.LoadView(ctx, id)
	}
	return s, err
}

func (o *owned) Append(ctx context.Context, id string, turn session.Turn) error {
	err := o.Store.Append(ctx, id, turn)
	if o.inNamespace(id, err, session.ErrOwner) {
		// Refused atomically: nothing was stored. The session has another
		// owner; if it is the single user's, it is this principal's.
		return o.legacy.Append(ctx, id, turn)
	}
	return err
}

func (o *owned) Delete(ctx context.Context, id string) error {
	err := o.Store.Delete(ctx, id)
	if o.inNamespace(id, err, session.ErrNotFound) {
		return o.legacy.Delete(ctx, id)
	}
	return err
}
