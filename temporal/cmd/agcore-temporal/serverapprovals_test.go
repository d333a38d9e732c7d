package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agcore/agcore/mcp"

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
			"a2a too": {Op: op, Response: "resp_1", A2A: "agcore/t1"},
		} {
			if _, err := runnerApprovals(context.Background(), nil, req); err == nil {
				t.Errorf("%s with %s: no error", op, name)
			}
		}
	}
}

// TestRunnerDecideCarriesContent: a decide line's "content" (as agcore
// serve --temporal writes it) is read into the request, and the errors
// of deciding get their reply codes: a form refusal of the workflow's
// validator (mcp.ErrFormContent, as agtemporal.Decide returns it)
// invalid_content, an unknown call unknown_call, anything else none.
func TestRunnerDecideCarriesContent(t *testing.T) {
	var req runnerRequest
	line := `{"id":4,"op":"decide","response":"resp_1","call_id":"call_1","approve":true,"content":"{\"name\":\"Ada\"}"}`
	if err := json.Unmarshal([]byte(line), &req); err != nil {
		t.Fatal(err)
	}
	if req.Content != `{"name":"Ada"}` || !req.Approve || req.CallID != "call_1" {
		t.Fatalf("request %+v", req)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{fmt.Errorf("agtemporal: deciding call_1: %w: /name: want string", mcp.ErrFormContent), codeInvalidContent},
		{fmt.Errorf("%w: %q of response resp_1", agtemporal.ErrUnknownCall, "call_9"), codeUnknownCall},
		{errors.New("agtemporal: deciding call_1 on agcore-response/resp_1: context deadline exceeded"), ""},
	} {
		if got := decideCode(c.err); got != c.want {
			t.Errorf("decideCode(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
