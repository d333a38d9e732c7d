package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/tool"
)

// fakeServeRunner is a serve-runner child (a shell loop) that answers
// decisions as agcore-temporal's does: the form's answer {"name":"Ada"}
// of a response's or an AG-UI run's call_1 is taken, {"name":7} refused
// by the workflow's validator (code invalid_content), call_9 unknown
// (code unknown_call), anything else an error that has no code.
const fakeServeRunner = `n=0
while IFS= read -r l; do
  n=$((n+1))
  case "$l" in
    *'"call_id":"call_9"'*) printf '{"id":%d,"error":"agtemporal: unknown call","code":"unknown_call"}\n' "$n" ;;
    *'"op":"decide"'*'"call_id":"call_1"'*'"content":"{\"name\":7}"'*)
      printf '{"id":%d,"error":"agtemporal: deciding call_1: the answer does not match the requested schema: /name: want string","code":"invalid_content"}\n' "$n" ;;
    *'"op":"decide"'*'"call_id":"call_1"'*'"approve":true'*'"content":"{\"name\":\"Ada\"}"'*) printf '{"id":%d}\n' "$n" ;;
    *) printf '{"id":%d,"error":"unexpected request"}\n' "$n" ;;
  esac
done`

// TestTemporalRunnerDecidesWithContent: a remote decision's content goes
// to serve-runner as the decide op's "content", for a response's call, an
// AG-UI run's and a web page chat turn's; the child's codes come back as the errors serve maps:
// invalid_content matches mcp.ErrFormContent (saying why, without the
// agtemporal prefix), unknown_call approval.ErrUnknown, and an error
// without a code is neither.
func TestTemporalRunnerDecidesWithContent(t *testing.T) {
	r := &temporalRunner{bin: "/bin/sh", args: []string{"-c", fakeServeRunner}, stderr: io.Discard}
	defer r.Close()
	ctx := context.Background()
	decide := map[string]func(call string, d tool.Decision) error{
		"response": func(call string, d tool.Decision) error { return r.DecideRemote(ctx, "resp_1", call, d) },
		"agui":     func(call string, d tool.Decision) error { return r.DecideAGUI(ctx, "alice/run_1", call, d) },
		"a2a":      func(call string, d tool.Decision) error { return r.DecideTask(ctx, "agcore", "task-1", call, d) },
		"chat":     func(call string, d tool.Decision) error { return r.DecideChat(ctx, "alice/s1/run_1", call, d) },
	}
	for name, do := range decide {
		for _, c := range []struct {
			name    string
			call    string
			d       tool.Decision
			form    bool // the error matches mcp.ErrFormContent
			unknown bool // the error matches approval.ErrUnknown
			ok      bool
		}{
			{name: "fits", call: "call_1", d: tool.Decision{Approved: true, Content: `{"name":"Ada"}`}, ok: true},
			{name: "does not fit", call: "call_1", d: tool.Decision{Approved: true, Content: `{"name":7}`}, form: true},
			{name: "unknown call", call: "call_9", d: tool.Decision{Approved: true}, unknown: true},
			{name: "no content", call: "call_1", d: tool.Decision{Approved: true}},
		} {
			err := do(c.call, c.d)
			switch {
			case c.ok && err != nil:
				t.Errorf("%s, %s: %v", name, c.name, err)
			case c.ok:
			case err == nil:
				t.Errorf("%s, %s: no error", name, c.name)
			case errors.Is(err, mcp.ErrFormContent) != c.form || errors.Is(err, approval.ErrUnknown) != c.unknown:
				t.Errorf("%s, %s: %v (form %v, unknown %v)", name, c.name, err, errors.Is(err, mcp.ErrFormContent), errors.Is(err, approval.ErrUnknown))
			case c.form && (strings.Contains(err.Error(), "agtemporal") || !strings.HasSuffix(err.Error(), "/name: want string")):
				t.Errorf("%s, %s: %q, want the reason alone after mcp.ErrFormContent", name, c.name, err)
			}
		}
	}
}

// fakeStatusRunner is a serve-runner child answering "status" as
// agcore-temporal's does: resp_1's workflow was terminated, AG-UI run
// alice/run_1's is running, web chat turn alice/s1/run_2's timed out and
// run_3's runs, A2A task agcore/task-1's was terminated and task-2's runs,
// anything else unknown.
const fakeStatusRunner = `n=0
while IFS= read -r l; do
  n=$((n+1))
  case "$l" in
    *'"op":"status"'*'"response":"resp_1"'*) printf '{"id":%d,"status":"Terminated","ended":true}\n' "$n" ;;
    *'"op":"status"'*'"agui":"alice/run_1"'*) printf '{"id":%d,"status":"Running"}\n' "$n" ;;
    *'"op":"status"'*'"chat_id":"alice/s1/run_2"'*) printf '{"id":%d,"status":"TimedOut","ended":true}\n' "$n" ;;
    *'"op":"status"'*'"chat_id":"alice/s1/run_3"'*) printf '{"id":%d,"status":"Running"}\n' "$n" ;;
    *'"op":"status"'*'"a2a":"agcore/task-1"'*) printf '{"id":%d,"status":"Terminated","ended":true}\n' "$n" ;;
    *'"op":"status"'*'"a2a":"agcore/task-2"'*) printf '{"id":%d,"status":"Running"}\n' "$n" ;;
    *'"op":"status"'*'"a2a":"agcore/task-down"'*) printf '{"id":%d,"error":"the server is unreachable"}\n' "$n" ;;
    *'"op":"status"'*'"response":"resp_down"'*) printf '{"id":%d,"error":"the server is unreachable"}\n' "$n" ;;
    *'"op":"status"'*) printf '{"id":%d,"status":"NotFound"}\n' "$n" ;;
    *) printf '{"id":%d,"error":"unexpected request"}\n' "$n" ;;
  esac
done`

// TestTemporalRunnerRemoteEnded: serve.RemoteWatcher's RemoteEnded and
// web.RemoteWatcher's ChatEnded ask serve-runner's "status" op: a workflow
// that ended is ended, its reason naming its status; a running one is not;
// one the server does not know is not, its error serve.ErrRemoteNotFound
// (web.ErrChatNotFound); a failed question is an error of its own. So too
// a2aserve.RemoteWatcher's TaskEnded (a2aserve.ErrRemoteNotFound).
func TestTemporalRunnerRemoteEnded(t *testing.T) {
	r := &temporalRunner{bin: "/bin/sh", args: []string{"-c", fakeStatusRunner}, stderr: io.Discard}
	defer r.Close()
	ctx := context.Background()
	ended, reason, err := r.RemoteEnded(ctx, "resp_1", "")
	if err != nil || !ended || !strings.Contains(reason, "ended without its outcome") || !strings.Contains(reason, "Terminated") {
		t.Errorf("resp_1: %v %q %v", ended, reason, err)
	}
	for _, c := range []struct {
		response, agui string
		want           string // "running", "not found" or "failed" (an error, not ErrRemoteNotFound)
	}{
		{agui: "alice/run_1", want: "running"},
		{response: "resp_2", want: "not found"},
		{response: "resp_down", want: "failed"},
	} {
		ended, reason, err := r.RemoteEnded(ctx, c.response, c.agui)
		ok := !ended && reason == ""
		switch c.want {
		case "running":
			ok = ok && err == nil
		case "not found":
			ok = ok && errors.Is(err, serve.ErrRemoteNotFound)
		default:
			ok = ok && err != nil && !errors.Is(err, serve.ErrRemoteNotFound)
		}
		if !ok {
			t.Errorf("%+v: %v %q %v", c, ended, reason, err)
		}
	}

	// The web page's chat turns (web.RemoteWatcher), by their turn id.
	ended, reason, err = r.ChatEnded(ctx, "alice/s1/run_2")
	if err != nil || !ended || !strings.Contains(reason, "TimedOut") {
		t.Errorf("run_2: %v %q %v", ended, reason, err)
	}
	if ended, _, err := r.ChatEnded(ctx, "alice/s1/run_3"); err != nil || ended {
		t.Errorf("run_3: %v %v", ended, err)
	}
	if ended, _, err := r.ChatEnded(ctx, "alice/s1/run_4"); ended || !errors.Is(err, web.ErrChatNotFound) || errors.Is(err, serve.ErrRemoteNotFound) {
		t.Errorf("run_4: %v %v", ended, err)
	}

	// The A2A tasks (a2aserve.RemoteWatcher), by agent and task.
	ended, reason, err = r.TaskEnded(ctx, "agcore", "task-1")
	if err != nil || !ended || !strings.Contains(reason, "ended without its outcome") || !strings.Contains(reason, "Terminated") {
		t.Errorf("task-1: %v %q %v", ended, reason, err)
	}
	if ended, _, err := r.TaskEnded(ctx, "agcore", "task-2"); err != nil || ended {
		t.Errorf("task-2: %v %v", ended, err)
	}
	if ended, _, err := r.TaskEnded(ctx, "agcore", "task-3"); ended || !errors.Is(err, a2aserve.ErrRemoteNotFound) || errors.Is(err, serve.ErrRemoteNotFound) {
		t.Errorf("task-3: %v %v", ended, err)
	}
	if ended, _, err := r.TaskEnded(ctx, "agcore", "task-down"); ended || err == nil || errors.Is(err, a2aserve.ErrRemoteNotFound) {
		t.Errorf("task-down: %v %v", ended, err)
	}
}
