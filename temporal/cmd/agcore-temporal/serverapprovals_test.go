package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestRemoteApprovals: a workflow's pending calls as serve lists them,
// their arguments kept as JSON (a string when they are not JSON).
func TestRemoteApprovals(t *testing.T) {
	since := time.Date(2026, 1, 5, 14, 30, 0, 0, time.UTC)
	got := remoteApprovals([]agtemporal.PendingApproval{
		{CallID: "call_1", Tool: "write_file", Input: `{"path":"a.txt"}`, Since: since},
		{CallID: "call_2", Tool: "odd", Input: `not json`, Since: since},
	})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"call_id":"call_1","tool":"write_file","input":{"path":"a.txt"},"since":"2026-01-05T14:30:00Z"},` +
		`{"call_id":"call_2","tool":"odd","input":"not json","since":"2026-01-05T14:30:00Z"}]`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

// TestRunnerApprovalsNeedAResponse: "pending" and "decide" without a
// response id or an AG-UI run, or with both, are refused before any call
// to the server.
func TestRunnerApprovalsNeedAResponse(t *testing.T) {
	for _, op := range []string{"pending", "decide"} {
		for name, req := range map[string]runnerRequest{
			"neither": {Op: op},
			"both":    {Op: op, Response: "resp_1", AGUI: "local/r1"},
		} {
			if _, err := runnerApprovals(context.Background(), nil, req); err == nil {
				t.Errorf("%s with %s: no error", op, name)
			}
		}
	}
}
