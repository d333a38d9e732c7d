package filestore_test

// Power-loss tests: the store runs on powerfs, a file system that loses
// every write not yet fsync'd when the power goes (and, as a seeded
// choice, keeps part of them: a torn last line, a prefix of the directory
// journal). SIGKILL tests (TestCrashConsistency) cannot see a missing
// fsync, because the kernel's page cache outlives the process; these can.
// Each test says which mistake of the store it catches.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/internal/powerfs"
	"github.com/agcore/agcore/session/sessiontest"
)

// rig is a store on a file system that can lose power.
type rig struct {
	t    *testing.T
	fs   *powerfs.FS
	s    *filestore.Store
	warn *atomic.Int64 // warnings the current store logged
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, fs: powerfs.New()}
	r.open()
	return r
}

func (r *rig) open() {
	r.t.Helper()
	r.warn = new(atomic.Int64)
	s, err := filestore.OpenPower(r.fs, filestore.WithLogger(slog.New(countingHandler{r.warn})))
	if err != nil {
		r.t.Fatalf("the store does not open after the power loss: %v", err)
	}
	r.s = s
}

// reboot loses the power as l says and opens a new store on what survived.
func (r *rig) reboot(l powerfs.Loss) {
	r.t.Helper()
	r.s.Close()
	r.fs.PowerLoss(l)
	r.open()
}

// powerTurn is the turn tag: four messages of a tool-using exchange (the
// first names the tag), one input token, and the state key "last" set to
// the tag, so that totals and state can be checked against the turns.
// A tag starting with "big" carries about 2 KB more.
func powerTurn(tag string) session.Turn {
	msgs := sessiontest.Conversation(tag, 4)
	if strings.HasPrefix(tag, "big") {
		msgs[3] = llm.AssistantText(msgs[3].Text() + strings.Repeat(" padding", 250))
	}
	return session.Turn{ID: tag, Messages: msgs, Usage: llm.Usage{InputTokens: 1},
		State:  map[string]json.RawMessage{"last": json.RawMessage(fmt.Sprintf("%q", tag))},
		Hashes: []uint64{1, uint64(len(tag))}}
}

// model is what a store holds: each session's turn tags in order. A
// session without turns is an empty (non-nil) slice.
type model map[string][]string

func (m model) clone() model {
	c := make(model, len(m))
	for id, tags := range m {
		c[id] = slices.Clone(tags)
	}
	return c
}

func (m model) equal(o model) bool {
	return maps.EqualFunc(m, o, func(a, b []string) bool { return slices.Equal(a, b) })
}

func (m model) String() string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s%v ", id, m[id])
	}
	return strings.TrimSpace(b.String())
}

// step is one store operation and its effect on the model once it has
// returned nil.
type step struct {
	desc  string
	run   func(r *rig) error
	apply func(m model)
}

func appendStep(id, tag string) step {
	return step{fmt.Sprintf("Append(%s, %s)", id, tag),
		func(r *rig) error { return r.s.Append(r.t.Context(), id, powerTurn(tag)) },
		func(m model) {
			if !slices.Contains(m[id], tag) { // a retry is a no-op
				m[id] = append(m[id], tag)
			}
		}}
}

func createStep(id string) step {
	return step{fmt.Sprintf("Create(%s)", id),
		func(r *rig) error { _, err := r.s.Create(r.t.Context(), id); return err },
		func(m model) { m[id] = []string{} }}
}

func deleteStep(id string) step {
	return step{fmt.Sprintf("Delete(%s)", id),
		func(r *rig) error { return r.s.Delete(r.t.Context(), id) },
		func(m model) { delete(m, id) }}
}

var firstTag = regexp.MustCompile(`^\[(\S+) 0\] `)

// observe returns what the store holds of the sessions ids, checking that
// each session is whole turns whose totals and state agree with them and
// that List agrees with Load.
func (r *rig) observe(ids []string) model {
	r.t.Helper()
	ctx := r.t.Context()
	got := model{}
	for _, id := range ids {
		sess, err := r.s.Load(ctx, id)
		if errors.Is(err, session.ErrNotFound) {
			continue
		}
		if err != nil {
			r.t.Fatalf("Load(%s): %v", id, err)
		}
		tags := []string{}
		if len(sess.Messages)%4 != 0 {
			r.t.Fatalf("session %s holds %d messages: not whole turns", id, len(sess.Messages))
		}
		for i := 0; i < len(sess.Messages); i += 4 {
			m := firstTag.FindStringSubmatch(sess.Messages[i].Text())
			if m == nil || sess.Messages[i+3].Role != llm.RoleAssistant {
				r.t.Fatalf("session %s: messages %d-%d are not a whole turn", id, i, i+3)
			}
			tags = append(tags, m[1])
		}
		if sess.Turns != len(tags) || sess.Usage.InputTokens != len(tags) {
			r.t.Fatalf("session %s: %d turns, %d input tokens, but holds turns %v", id, sess.Turns, sess.Usage.InputTokens, tags)
		}
		if last := sess.State["last"]; len(tags) > 0 && string(last) != fmt.Sprintf("%q", tags[len(tags)-1]) {
			r.t.Fatalf("session %s: state last=%s, but its last turn is %s", id, last, tags[len(tags)-1])
		}
		got[id] = tags
	}
	page, err := r.s.List(ctx, session.ListOptions{Limit: 100})
	if err != nil {
		r.t.Fatalf("List: %v", err)
	}
	listed := map[string]bool{}
	for _, info := range page.Sessions {
		listed[info.ID] = true
		if tags, ok := got[info.ID]; !ok || info.Turns != len(tags) || info.Messages != 4*len(tags) {
			r.t.Fatalf("List shows %+v, Load found %v", info, got)
		}
	}
	if len(listed) != len(got) {
		r.t.Fatalf("List shows %v, Load found %v", slices.Sorted(maps.Keys(listed)), got)
	}
	return got
}

// torn reports whether the session's log ends in a torn line (one without
// its newline: the only kind the file system leaves, as it keeps a prefix of
// an appended line).
func (r *rig) torn(id string) bool {
	data, err := r.fs.ReadFile(id + ".jsonl")
	return err == nil && len(data) > 0 && data[len(data)-1] != '\n'
}

// wholeLines checks that the session's log is lines that each end in a
// newline and decode as JSON, and returns how many there are.
func (r *rig) wholeLines(id string) int {
	r.t.Helper()
	data, err := r.fs.ReadFile(id + ".jsonl")
	if err != nil {
		r.t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		r.t.Fatalf("log %s does not end in a newline: ...%q", id, data[max(0, len(data)-40):])
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty string after the last newline
	for i, l := range lines {
		if !json.Valid(l) {
			r.t.Fatalf("log %s: line %d is not JSON: %.80q", id, i, l)
		}
	}
	return len(lines)
}

// run runs the steps until one fails, which must be because the power is
// cut; it applies the others to acked and returns the failed one (nil if
// none failed).
func (r *rig) run(steps []step, acked model) *step {
	r.t.Helper()
	for i := range steps {
		if err := steps[i].run(r); err != nil {
			if !errors.Is(err, powerfs.ErrPowerCut) {
				r.t.Fatalf("%s: %v", steps[i].desc, err)
			}
			return &steps[i]
		}
		steps[i].apply(acked)
	}
	return nil
}

// TestAcknowledgedAppendsSurvivePowerLoss: after every operation that
// returned nil (Append to a new and to an existing session, Create, Delete)
// the power goes, and the store holds exactly what was acknowledged,
// whatever part of the unsynced writes the disk kept. It catches a missing
// fsync of an appended line and of a new log's directory entry.
func TestAcknowledgedAppendsSurvivePowerLoss(t *testing.T) {
	t.Parallel()
	steps := []step{
		appendStep("s", "t0"), appendStep("s", "t1"), createStep("c"), appendStep("s", "big2"),
		appendStep("c", "c0"), appendStep("n", "n0"), appendStep("s", "t1"), deleteStep("n"),
		appendStep("s", "t3"), appendStep("n", "n1"),
	}
	ids := []string{"s", "c", "n"}
	losses := map[string]powerfs.Loss{"nothing unsynced kept": {}, "everything kept": powerfs.KeepAll}
	for seed := range uint64(4) {
		losses[fmt.Sprint("random ", seed)] = powerfs.Random(seed)
	}
	for name, loss := range losses {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			want := model{}
			for _, st := range steps {
				if err := st.run(r); err != nil {
					t.Fatalf("%s: %v", st.desc, err)
				}
				st.apply(want)
				r.reboot(loss)
				if got := r.observe(ids); !got.equal(want) {
					t.Fatalf("after %s returned and the power went: the store holds %v, want %v", st.desc, got, want)
				}
			}
		})
	}
}

// TestCreateIsDurableOnceItReturns: a session made by Create or by a first
// Append exists after a power loss as soon as the call returned, and a
// deleted one stays deleted. It catches a missing fsync of the directory
// after a log is linked into place (or removed), and of the new log's
// content before the link.
func TestCreateIsDurableOnceItReturns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup []step
		step  step
		want  model
	}{
		{"Create", nil, createStep("c"), model{"c": {}}},
		{"first Append", nil, appendStep("a", "a0"), model{"a": {"a0"}}},
		{"Delete", []step{appendStep("d", "d0")}, deleteStep("d"), model{}},
		{"Create after Delete", []step{appendStep("d", "d0"), deleteStep("d")}, createStep("d"), model{"d": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			for _, st := range tc.setup {
				if err := st.run(r); err != nil {
					t.Fatal(err)
				}
			}
			r.reboot(powerfs.KeepAll)
			if err := tc.step.run(r); err != nil {
				t.Fatalf("%s: %v", tc.step.desc, err)
			}
			r.reboot(powerfs.Loss{}) // nothing unsynced survives
			if got := r.observe([]string{"a", "c", "d"}); !got.equal(tc.want) {
				t.Fatalf("%s returned, then the power went: the store holds %v, want %v", tc.step.desc, got, tc.want)
			}
		})
	}
}

// TestPowerLossTearsTheLastLine: the power goes while an Append's line is
// written but not yet fsync'd, and the disk keeps part of it: the file
// system, not a hand-edited file, makes the torn last line. Load drops it
// (with one warning), List agrees, and the next Append cuts it off and
// leaves a log of whole lines that itself survives a power loss.
func TestPowerLossTearsTheLastLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keep func(n int) int
		zero bool
	}{
		{"one byte", func(int) int { return 1 }, false},
		{"half the line", func(n int) int { return n / 2 }, false},
		{"all but the newline", func(n int) int { return n - 1 }, false},
		{"half the line as zeros", func(n int) int { return n / 2 }, true},
		{"the whole line", func(n int) int { return n }, false}, // not torn: the turn is there
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			for _, st := range []step{appendStep("s", "t0"), appendStep("s", "t1")} {
				if err := st.run(r); err != nil {
					t.Fatal(err)
				}
			}
			r.reboot(powerfs.KeepAll) // whatever the store synced, this much is on disk
			r.fs.CutWhen(func(op powerfs.Op) bool { return op.Kind == powerfs.OpSync && op.Name == "s.jsonl" })
			if err := appendStep("s", "big2").run(r); !errors.Is(err, powerfs.ErrPowerCut) {
				t.Fatalf("Append with the power cut at its fsync: %v", err)
			}
			whole := false
			r.reboot(powerfs.Loss{Tear: func(name string, n int) powerfs.Tear {
				if name != "s.jsonl" {
					return powerfs.Tear{}
				}
				k := tc.keep(n)
				whole = k == n && !tc.zero
				return powerfs.Tear{Keep: k, Zeros: tc.zero}
			}})
			want := model{"s": {"t0", "t1"}}
			if whole {
				want["s"] = append(want["s"], "big2")
			}
			if torn := r.torn("s"); torn == whole {
				t.Fatalf("after the power loss the log ends in a torn line: %v, want %v", torn, !whole)
			}
			if got := r.observe([]string{"s"}); !got.equal(want) {
				t.Fatalf("after the power loss the store holds %v, want %v", got, want)
			}
			if wantWarn := int64(map[bool]int{true: 0, false: 1}[whole]); r.warn.Load() != wantWarn {
				t.Errorf("%d warnings, want %d", r.warn.Load(), wantWarn)
			}
			r.observe([]string{"s"})
			if r.warn.Load() > 1 {
				t.Errorf("the same torn line was reported again")
			}
			// The next Append (shorter than most of the torn lines, so that
			// writing it over them would leave some behind) cuts the torn
			// line off.
			if err := appendStep("s", "fix").run(r); err != nil {
				t.Fatal(err)
			}
			want["s"] = append(want["s"], "fix")
			if n := r.wholeLines("s"); n != 1+len(want["s"]) {
				t.Errorf("the log has %d lines, want the header and %d turns", n, len(want["s"]))
			}
			// The torn turn can be retried, and all of it survives.
			if err := appendStep("s", "big2").run(r); err != nil {
				t.Fatal(err)
			}
			r.reboot(powerfs.Loss{})
			if !whole {
				want["s"] = append(want["s"], "big2")
			}
			if got := r.observe([]string{"s"}); !got.equal(want) || r.warn.Load() != 0 {
				t.Fatalf("after the repair and another power loss: %v (%d warnings), want %v and none", got, r.warn.Load(), want)
			}
			r.wholeLines("s")
		})
	}
}

// TestPowerCutAnywhere cuts the power at every state-changing file-system
// operation of a sequence of store operations in turn (the first of which
// cuts off a torn line left by an earlier power loss), lets the disk keep
// none, all, or a seeded random part of the unsynced writes and directory
// changes, and reopens the store: it must hold exactly the acknowledged
// operations, plus, whole or not at all, the one the cut interrupted. Torn
// lines must be dropped and cut off by the next Append, and the store must
// take new turns, which survive the next power loss.
func TestPowerCutAnywhere(t *testing.T) {
	t.Parallel()
	// At each cut the disk keeps none of the unsynced work, all of it, and
	// a random part of it under a few seeds, which differ from cut to cut.
	randoms := 6
	if testing.Short() || raceEnabled {
		randoms = 1
	}
	type lossCase struct {
		name string
		loss powerfs.Loss
	}
	losses := func(cut int) []lossCase {
		ls := []lossCase{{"none kept", powerfs.Loss{}}, {"all kept", powerfs.KeepAll}}
		for i := range randoms {
			seed := uint64(cut*randoms + i)
			ls = append(ls, lossCase{fmt.Sprint("random seed ", seed), powerfs.Random(seed)})
		}
		return ls
	}
	ids := []string{"long", "c", "n"}
	steps := []step{
		appendStep("long", "big2"), // a retry of the torn turn: truncate, write, fsync
		appendStep("long", "l3"),
		createStep("c"),
		appendStep("c", "c0"),
		appendStep("n", "n0"), // a new session by Append
		appendStep("long", "l3"),
		deleteStep("n"),
		appendStep("long", "big4"),
		appendStep("n", "n1"),
		appendStep("c", "c1"),
	}
	// setup leaves session long with two turns and the torn line of a
	// third, made by a power cut at the fsync of its append.
	setup := func(t *testing.T) *rig {
		r := newRig(t)
		for _, st := range []step{appendStep("long", "l0"), appendStep("long", "l1")} {
			if err := st.run(r); err != nil {
				t.Fatal(err)
			}
		}
		r.reboot(powerfs.KeepAll) // whatever the store synced, this much is on disk
		r.fs.CutWhen(func(op powerfs.Op) bool { return op.Kind == powerfs.OpSync && op.Name == "long.jsonl" })
		appendStep("long", "big2").run(r)
		r.reboot(powerfs.Loss{Tear: func(_ string, n int) powerfs.Tear { return powerfs.Tear{Keep: n / 3} }})
		if !r.torn("long") {
			t.Fatal("setup: no torn line")
		}
		return r
	}
	base := model{"long": {"l0", "l1"}}

	// Count the operations of the steps.
	r := setup(t)
	start := r.fs.Ops()
	if failed := r.run(steps, base.clone()); failed != nil {
		t.Fatalf("%s failed without a power cut", failed.desc)
	}
	total := r.fs.Ops() - start

	sw := &sweep{setup: setup, steps: steps, base: base, ids: ids}
	t.Run("cuts", func(t *testing.T) {
		for cut := 0; cut <= total; cut++ {
			for _, l := range losses(cut) {
				where := fmt.Sprintf("power cut at operation %d of %d, %s", cut, total, l.name)
				t.Run(fmt.Sprintf("%03d/%s", cut, l.name), func(t *testing.T) {
					t.Parallel()
					sw.run(t, where, cut, l.loss)
				})
			}
		}
	})
	if sw.torn.Load() == 0 {
		t.Error("no power loss left a torn line: the torn-line handling went untested")
	}
	t.Logf("%d operations cut at each of %d points under %d losses each: %d runs; an interrupted operation that would change something landed in %d, not in %d; %d torn logs dropped and cut off",
		len(steps), total+1, len(losses(0)), sw.runs.Load(), sw.landed.Load(), sw.lost.Load(), sw.torn.Load())
}

// sweep is TestPowerCutAnywhere's scenario and its counts.
type sweep struct {
	setup func(*testing.T) *rig // the store before the steps
	steps []step
	base  model // what setup leaves
	ids   []string

	runs, torn, landed, lost atomic.Int64
}

// run cuts the power after cut operations of the steps, loses it as loss
// says, and checks the store.
func (sw *sweep) run(t *testing.T, where string, cut int, loss powerfs.Loss) {
	steps, ids := sw.steps, sw.ids
	r := sw.setup(t)
	r.fs.CutAfter(cut)
	acked := sw.base.clone()
	failed := r.run(steps, acked)
	op := "the steps ran whole, then the power went"
	if o, ok := r.fs.Cut(); ok {
		op = "cut at " + o.String()
	}
	r.reboot(loss)
	tornNow := 0
	for _, id := range ids {
		if r.torn(id) {
			tornNow++
		}
	}
	got := r.observe(ids)
	after := acked.clone()
	if failed != nil {
		failed.apply(after)
	}
	switch {
	case after.equal(acked): // nothing interrupted, or a no-op
		if !got.equal(acked) {
			t.Fatalf("%s (%v): the store holds %v, want %v", where, op, got, acked)
		}
	case got.equal(acked):
		sw.lost.Add(1)
	case got.equal(after):
		sw.landed.Add(1)
	default:
		t.Fatalf("%s (%v, during %s): the store holds %v; want the acknowledged %v, or with %s %v",
			where, op, failed.desc, got, acked, failed.desc, after)
	}
	if r.warn.Load() != int64(tornNow) {
		t.Errorf("%s: %d torn logs but %d warnings", where, tornNow, r.warn.Load())
	}
	sw.torn.Add(int64(tornNow))
	// Every session takes a new turn; a torn line is cut off.
	want := got.clone()
	for _, id := range slices.Sorted(maps.Keys(got)) {
		st := appendStep(id, "after-"+id)
		if err := st.run(r); err != nil {
			t.Fatalf("%s: %s after the power loss: %v", where, st.desc, err)
		}
		st.apply(want)
		if n := r.wholeLines(id); n != 1+len(want[id]) {
			t.Fatalf("%s: log %s has %d lines, want a header and %d turns", where, id, n, len(want[id]))
		}
	}
	r.reboot(powerfs.Loss{})
	if got := r.observe(ids); !got.equal(want) {
		t.Fatalf("%s: after the new turns and another power loss the store holds %v, want %v", where, got, want)
	}
	sw.runs.Add(1)
}
