package agtemporal_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"

	agtemporal "github.com/agcore/agcore/temporal"
)

// inProcessWorker runs a worker in the test process against the dev
// server at addr, every client using dc as its data converter.
func inProcessWorker(t *testing.T, addr string, opts agtemporal.Options, cc *agtemporal.ClaimCheck) client.Client {
	t.Helper()
	copts := client.Options{HostPort: addr, Logger: quietLogger(), Identity: "agcore-test"}
	if cc != nil {
		copts.DataConverter = cc.NewDataConverter()
	}
	cl, err := client.Dial(copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	w := agtemporal.NewWorker(cl, "inproc", opts, worker.Options{Identity: "agcore-test"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return cl
}

func history(t *testing.T, cl client.Client, id string) *historypb.History {
	t.Helper()
	var h historypb.History
	it := cl.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return &h
}

func TestE2ERepeatedStartsRunTheTurnOnce(t *testing.T) {
	addr, _ := devServer(t)
	model := llmtest.New(llmtest.Reply(llmtest.Call("c1", "echo", `{"text":"once","delay_ms":300}`)), llmtest.Text("done")).Verify(t)
	ts, ran, _ := tools(t)
	cl := inProcessWorker(t, addr, agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m", Tools: ts, Store: memstore.New()}, nil)
	in := agtemporal.TurnInput{SessionID: "again", TurnID: "t1", Messages: []llm.Message{llm.UserText("go")}}
	ctx := context.Background()
	started := make([]client.WorkflowRun, 3)
	var wg sync.WaitGroup
	for i := range started {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := agtemporal.StartTurn(ctx, cl, "inproc", in)
			if err != nil {
				t.Error(err)
				return
			}
			started[i] = r
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, r := range started {
		var res agtemporal.TurnResult
		if err := r.Get(ctx, &res); err != nil || res.Text != "done" {
			t.Fatalf("%v %+v", err, res)
		}
	}
	// Started again after it ended: the same run, not a second one.
	again, err := agtemporal.StartTurn(ctx, cl, "inproc", in)
	if err != nil {
		t.Fatal(err)
	}
	var res agtemporal.TurnResult
	if err := again.Get(ctx, &res); err != nil || res.Text != "done" {
		t.Fatalf("%v %+v", err, res)
	}
	// (A run attached after the end may not know its run id.)
	for _, r := range append(started, again) {
		if r.GetRunID() != started[0].GetRunID() && r.GetRunID() != "" {
			t.Fatalf("runs %s and %s", r.GetRunID(), started[0].GetRunID())
		}
	}
	if model.Calls() != 2 || runs(ran, "once") != 1 {
		t.Fatalf("%d model calls, the tool ran %d times", model.Calls(), runs(ran, "once"))
	}
}

func TestE2EClaimCheckKeepsLargeResultsOutOfHistory(t *testing.T) {
	addr, _ := devServer(t)
	huge := strings.Repeat("a long line of tool output\n", 24000) // ~630 KiB
	model := llmtest.New(llmtest.Reply(llmtest.Call("c1", "cat", `{}`)), llmtest.Text("read")).Verify(t)
	cat := tool.MustFunc("cat", "Print a large file.", func(context.Context, struct{}) (string, error) { return huge, nil })
	cc := &agtemporal.ClaimCheck{Store: agtemporal.FileBlobs{Dir: t.TempDir()}}
	cl := inProcessWorker(t, addr, agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m",
		Tools: []tool.Tool{cat}, Store: memstore.New(), MaxResultBytes: -1}, cc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := agtemporal.StartTurn(ctx, cl, "inproc", agtemporal.TurnInput{SessionID: "big", TurnID: "t1", Messages: []llm.Message{llm.UserText("cat")}})
	if err != nil {
		t.Fatal(err)
	}
	var res agtemporal.TurnResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Transcript[1].Text() != huge {
		t.Fatal("the large result did not come back whole")
	}
	size := proto.Size(history(t, cl, run.GetID()))
	if size > 64<<10 {
		t.Fatalf("history holds %d bytes for a turn with a %d-byte result", size, len(huge))
	}
	t.Logf("history: %d bytes for a turn carrying %d bytes of tool output three times", size, len(huge))
}
