package serve

// The approvals of AG-UI runs a RemoteRunner runs: the calls they wait on
// are listed by GET /v1/approvals and decided by POST /v1/approvals/{id}
// on any process, for the principal that started the run only, with the
// id their run's agcore.approval_required event carried ("RUN/CALL_ID",
// RUN the AG-UI run id), as a run of this process's.

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// RemoteAGUIApprovals is implemented by a RemoteRunner whose AG-UI runs
// wait for approvals where they run: the Handler lists and decides those
// calls through it, on any process. A run is named by its lease record's
// key (AGUILog.Key: PRINCIPAL/RUN).
type RemoteAGUIApprovals interface {
	// PendingAGUI returns the calls the AG-UI run key waits on, in the
	// order they began waiting. A run unknown to the runner, or over,
	// waits on none (no error).
	PendingAGUI(ctx context.Context, key string) ([]RemoteApproval, error)
	// DecideAGUI answers the call callID of the AG-UI run key with d (its
	// Content too). It returns an error wrapping approval.ErrUnknown when
	// the run does not wait on that call (never did, already decided, or
	// the run is over), one matching mcp.ErrFormContent when d.Content
	// does not fit the form it answers.
	DecideAGUI(ctx context.Context, key, callID string, d tool.Decision) error
}

// remoteAGUIApprovals returns the Handler's RemoteAGUIApprovals, if its
// runner has them.
func (h *Handler) remoteAGUIApprovals() (RemoteAGUIApprovals, bool) {
	if _, ok := h.opts.Runner.(RemoteRunner); !ok {
		return nil, false
	}
	ra, ok := h.opts.Runner.(RemoteAGUIApprovals)
	return ra, ok
}

// aguiRunOf returns the AG-UI run of a lease record's key under prefix
// (PRINCIPAL/): "" for a key of another principal's, whose name starts
// with this one's.
func aguiRunOf(key, prefix string) string {
	run, ok := strings.CutPrefix(key, prefix)
	if !ok || !validRunID(run) {
		return ""
	}
	return run
}

// remoteAGUIPending lists the calls principal's AG-UI runs wait on where
// the remote runner runs them. Those runs are found through their lease
// records (PRINCIPAL/RUN); the runner is asked about each at once, each
// for a bounded time (remotePendingTimeout).
func (h *Handler) remoteAGUIPending(ctx context.Context, principal string) []approvalObject {
	ra, ok := h.remoteAGUIApprovals()
	if !ok {
		return nil
	}
	type run struct{ key, run, agent string }
	var runs []run
	prefix := principal + "/"
	seen := map[string]bool{}
	for _, recs := range h.storesRecords() {
		leases, err := recs.ListRecords(ctx, aguiNamespace, prefix)
		if err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "listing remote AG-UI approvals", slog.String("error", err.Error()))
			continue
		}
		for _, l := range leases {
			if r := aguiRunOf(l.Key, prefix); r != "" && !seen[l.Key] {
				seen[l.Key] = true
				runs = append(runs, run{l.Key, r, string(l.Value)})
			}
		}
	}
	found := make([][]RemoteApproval, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, remotePendingTimeout)
			defer cancel()
			pending, err := ra.PendingAGUI(qctx, r.key)
			if err != nil {
				h.log.LogAttrs(ctx, slog.LevelWarn, "listing remote AG-UI approvals", slog.String("run", r.run), slog.String("error", err.Error()))
				return
			}
			found[i] = pending
		})
	}
	wg.Wait()
	var out []approvalObject
	for i, r := range runs {
		for _, p := range found[i] {
			out = append(out, approvalObject{ID: r.run + "/" + p.CallID, Object: "approval", Tool: p.Tool, CallID: p.CallID,
				Arguments: string(p.Input), Schema: remoteSchema(p), Agent: r.agent, Run: r.run, Since: p.Since.Unix()})
		}
	}
	return out
}

// decideRemoteAGUI decides the call id ("RUN/CALL_ID") of principal's
// remote AG-UI run RUN, in progress (its lease record there):
// approval.ErrUnknown (wrapped) when no such call waits for the
// principal's decision.
func (h *Handler) decideRemoteAGUI(ctx context.Context, principal, id string, d tool.Decision) error {
	ra, ok := h.remoteAGUIApprovals()
	if !ok {
		return approval.ErrUnknown
	}
	i := strings.LastIndexByte(id, '/')
	if i <= 0 || i == len(id)-1 || !validRunID(id[:i]) {
		return approval.ErrUnknown
	}
	key, call := principal+"/"+id[:i], id[i+1:]
	if session.CheckRecord(aguiNamespace, key) != nil {
		return approval.ErrUnknown
	}
	for _, recs := range h.storesRecords() {
		if _, err := recs.GetRecord(ctx, aguiNamespace, key); err == nil {
			return ra.DecideAGUI(ctx, key, call, d)
		}
	}
	return approval.ErrUnknown
}
