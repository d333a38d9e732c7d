package agtemporal_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestResponseEndDoesNotWaitForTheWritersPause: a background response
// whose last events come less than EventsFlushInterval after a write ends
// at once, those events in its final write, instead of after the
// writer's pause (a durable timer, which a server fires up to a second
// late). Every event is in the log, numbered without a gap, the final one
// last, and the writes stay at most one per EventsFlushInterval of
// workflow time.
func TestResponseEndDoesNotWaitForTheWritersPause(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply(llm.Text{Text: "Echoing."}, llmtest.Call("c1", "echo", `{"text":"one"}`)),
		llmtest.Text("echoed"))
	ctx := context.Background()
	obj := []byte(`{"id":"resp_s1_1","object":"response","created_at":1,"status":"in_progress","model":"agcore","output":[],"background":true}`)
	if _, err := h.store.CreateRecord(ctx, "agcore.responses", session.Record{Key: "resp_s1_1", Expires: time.Now().Add(time.Hour),
		Value: []byte(`{"status":"in_progress","background":true,"lease":9999999999999,"run":"resp_s1_1.r1","response":` + string(obj) + `}`)}); err != nil {
		t.Fatal(err)
	}
	var writes, ends []time.Time
	var modelDone time.Time
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		switch info.ActivityType.Name {
		case "agcore.ResponseEvents":
			writes = append(writes, h.env.Now())
		case "agcore.ResponseEnd":
			ends = append(ends, h.env.Now())
		}
	})
	h.env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, _ error) {
		if info.ActivityType.Name == "agcore.Model" {
			modelDone = h.env.Now()
		}
	})
	in := input("echo one")
	in.Response = &serve.ResponseLog{ResponseID: "resp_s1_1", Run: "resp_s1_1.r1", Response: obj, Seq: 2}
	if _, err := h.run(t, in); err != nil {
		t.Fatal(err)
	}
	if len(ends) != 1 || len(writes) == 0 {
		t.Fatalf("%d writes, %d ends", len(writes), len(ends))
	}
	if d := ends[0].Sub(modelDone); d >= agtemporal.EventsFlushInterval {
		t.Fatalf("the end was written %s after the last model call: it waited for the writer's pause", d)
	}
	for i := 1; i < len(writes); i++ {
		if d := writes[i].Sub(writes[i-1]); d < agtemporal.EventsFlushInterval {
			t.Fatalf("writes %d and %d %s apart", i-1, i, d)
		}
	}
	evs, final, err := (&runlog.Log{Records: h.store}).Read(ctx, "resp_s1_1.r1", -1)
	if err != nil || !final {
		t.Fatalf("the log: final %v, %v", final, err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i)+2 {
			t.Fatalf("event %d has the number %d", i, ev.Seq)
		}
	}
	if last := evs[len(evs)-1]; last.Type != "response.completed" {
		t.Fatalf("the last event is %s", last.Type)
	}
	t.Logf("%d events in %d writes and the final one", len(evs), len(writes))
}
