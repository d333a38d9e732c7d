package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/session"
)

// sessionSpec is the session a turn command was asked for.
type sessionSpec struct {
	id   string // --session: an id, a unique prefix of one, or a new name
	cont bool   // -c/--continue: the most recently updated session
}

// sessionSpecOf reads --session and --continue.
func sessionSpecOf(cmd *cobra.Command) (sessionSpec, error) {
	var spec sessionSpec
	spec.id, _ = cmd.Flags().GetString("session")
	spec.cont, _ = cmd.Flags().GetBool("continue")
	if spec.id != "" && spec.cont {
		return spec, exit(ExitUsage, "--session and --continue both name a session: give one of them")
	}
	if spec.id != "" {
		if err := session.ValidateID(spec.id); err != nil {
			return spec, exit(ExitUsage, "--session %q: %v", spec.id, err)
		}
	}
	return spec, nil
}

// pickSession returns the id of the session spec names in the runtime's
// store, and whether it already holds turns. A new session gets a new id.
func (a *app) pickSession(ctx context.Context, rt *runtime, spec sessionSpec) (string, bool, error) {
	switch {
	case spec.cont:
		all, err := listSessions(ctx, rt.store)
		if err != nil {
			return "", false, exit(ExitFailed, "listing sessions: %v", err)
		}
		if len(all) == 0 {
			return "", false, exit(ExitUsage, "--continue: there is no session in %s yet; start one without -c", rt.store.Description)
		}
		return all[0].ID, true, nil
	case spec.id == "":
		return session.NewID(), false, nil
	}
	id, err := resolveID(ctx, rt.store, spec.id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return spec.id, false, nil // a new session by that name
	case err != nil:
		return "", false, err
	}
	return id, true, nil
}

// resolveID finds the stored session id names: the session of that id, or
// the one session whose id starts with it. ErrNotFound when there is none;
// an exit error when the prefix is ambiguous.
func resolveID(ctx context.Context, st *openedStore, id string) (string, error) {
	if err := session.ValidateID(id); err != nil {
		return "", exit(ExitUsage, "%v", err)
	}
	if _, err := st.Load(ctx, id); err == nil {
		return id, nil
	} else if !errors.Is(err, session.ErrNotFound) {
		return "", exit(ExitFailed, "session %q: %v", id, err)
	}
	all, err := listSessions(ctx, st)
	if err != nil {
		return "", exit(ExitFailed, "listing sessions: %v", err)
	}
	var matches []string
	for _, s := range all {
		if strings.HasPrefix(s.ID, id) {
			matches = append(matches, s.ID)
		}
	}
	switch len(matches) {
	case 0:
		return "", session.ErrNotFound
	case 1:
		return matches[0], nil
	}
	shown := matches[:min(len(matches), 3)]
	more := ""
	if len(matches) > 3 {
		more = ", …"
	}
	return "", exit(ExitUsage, "%q matches %d sessions (%s%s): give more of the id", id, len(matches), strings.Join(shown, ", "), more)
}

// listSessions returns every session summary, newest first.
func listSessions(ctx context.Context, st session.Store) ([]session.Info, error) {
	var all []session.Info
	for cursor := ""; ; {
		page, err := st.List(ctx, session.ListOptions{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		all = append(all, page.Sessions...)
		if cursor = page.Next; cursor == "" {
			return all, nil
		}
	}
}

// newSessionID makes the id of a new session.
func newSessionID() string { return session.NewID() }
