package runlog_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session/memstore"
)

// A run writes its events; a reader of another process (another Log over
// the same store) resumes after event 0.
func Example() {
	ctx := context.Background()
	store := memstore.New()
	here := &runlog.Log{Records: store}
	w, err := here.Writer("resp_1.abc")
	if err != nil {
		panic(err)
	}
	w.Append(runlog.Event{Seq: 0, Type: "created", Data: []byte(`{}`)})
	w.Append(runlog.Event{Seq: 1, Type: "delta", Data: []byte(`{"delta":"hello"}`)})
	if err := w.Close(ctx, runlog.Event{Seq: 2, Type: "completed", Data: []byte(`{}`)}); err != nil {
		panic(err)
	}

	there := &runlog.Log{Records: store}
	for ev, err := range there.Follow(ctx, "resp_1.abc", 0, nil) {
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Seq, ev.Type, string(ev.Data))
	}
	// Output:
	// 1 delta {"delta":"hello"}
	// 2 completed {}
}
