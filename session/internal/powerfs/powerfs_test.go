package powerfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
)

func create(t *testing.T, f *FS, name, data string) *File {
	t.Helper()
	h, err := f.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func syncDir(t *testing.T, f *FS) {
	t.Helper()
	d, err := f.OpenFile(".", os.O_RDONLY, 0)
	must(t, err)
	must(t, d.Sync())
	must(t, d.Close())
}

// contents returns every file and its content as reads see them.
func contents(t *testing.T, f *FS) map[string]string {
	t.Helper()
	ents, err := f.ReadDir(".")
	must(t, err)
	m := map[string]string{}
	for _, e := range ents {
		data, err := f.ReadFile(e.Name())
		must(t, err)
		m[e.Name()] = string(data)
	}
	return m
}

func wantContents(t *testing.T, f *FS, want map[string]string) {
	t.Helper()
	if got := contents(t, f); !maps.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

func TestSyncMakesContentDurableAndDirSyncNames(t *testing.T) {
	f := New()
	a := create(t, f, "a", "synced")
	must(t, a.Sync())
	must(t, a.Close())
	b := create(t, f, "b", "unsynced content") // a durable name, no content
	must(t, b.Close())
	syncDir(t, f)
	c := create(t, f, "c", "synced content, unsynced name")
	must(t, c.Sync())
	must(t, c.Close())
	a, err := f.OpenFile("a", os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	a.Write([]byte(" and more"))
	wantContents(t, f, map[string]string{"a": "synced and more", "b": "unsynced content", "c": "synced content, unsynced name"})

	f.PowerLoss(Loss{})
	wantContents(t, f, map[string]string{"a": "synced", "b": ""})
	if _, err := a.Write([]byte("x")); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("a handle from before the power loss: %v, want ErrClosed", err)
	}
	// The state after a power loss is durable.
	f.PowerLoss(Loss{})
	wantContents(t, f, map[string]string{"a": "synced", "b": ""})
}

func TestKeepAllIsWhatAKillLeaves(t *testing.T) {
	f := New()
	a := create(t, f, "a", "one")
	a.Close()
	must(t, f.Rename("a", "b"))
	before := contents(t, f)
	f.PowerLoss(KeepAll)
	wantContents(t, f, before)
}

func TestTearKeepsAPrefixOfTheAppendedBytes(t *testing.T) {
	for _, tc := range []struct {
		tear Tear
		want string
	}{
		{Tear{}, "line 1\n"},
		{Tear{Keep: 3}, "line 1\nlin"},
		{Tear{Keep: 7}, "line 1\nline 2\n"},
		{Tear{Keep: 99}, "line 1\nline 2\n"}, // clamped
		{Tear{Keep: 2, Zeros: true}, "line 1\n\x00\x00"},
	} {
		t.Run(fmt.Sprint(tc.tear), func(t *testing.T) {
			f := New()
			h := create(t, f, "log", "line 1\n")
			must(t, h.Sync())
			syncDir(t, f)
			h.Write([]byte("line 2\n"))
			var asked []string
			f.PowerLoss(Loss{Tear: func(name string, n int) Tear {
				asked = append(asked, fmt.Sprint(name, " ", n))
				return tc.tear
			}})
			wantContents(t, f, map[string]string{"log": tc.want})
			if !slices.Equal(asked, []string{"log 7"}) {
				t.Errorf("Tear asked %q, want [log 7]", asked)
			}
		})
	}
}

// A file cut back and rewritten keeps either its durable content or the
// new content up to a point after the part the two share.
func TestTearAfterTruncate(t *testing.T) {
	for keep, want := range map[int]string{0: "head torn", 1: "head n", 4: "head new\n"} {
		f := New()
		h := create(t, f, "log", "head torn")
		must(t, h.Sync())
		syncDir(t, f)
		must(t, h.Truncate(5))
		h.WriteAt([]byte("new\n"), 5)
		f.PowerLoss(Loss{Tear: func(_ string, n int) Tear {
			if n != 4 {
				t.Errorf("n = %d, want 4", n)
			}
			return Tear{Keep: keep}
		}})
		wantContents(t, f, map[string]string{"log": want})
	}
}

// Directory operations survive as a prefix of their order.
func TestDirOpsSurviveInOrder(t *testing.T) {
	states := []map[string]string{}
	run := func(f *FS, record bool) {
		snap := func() {
			if record {
				states = append(states, contents(t, f))
			}
		}
		for _, n := range []string{"a", "gone"} {
			h := create(t, f, n, n)
			must(t, h.Sync())
			h.Close()
		}
		syncDir(t, f)
		snap()
		create(t, f, "tmp", "tmp").Sync()
		snap()
		must(t, f.Link("tmp", "log"))
		snap()
		must(t, f.Remove("tmp"))
		snap()
		must(t, f.Rename("a", "gone"))
		snap()
	}
	f := New()
	run(f, true)
	for keep := range 5 {
		f := New()
		run(f, false)
		f.PowerLoss(Loss{DirOps: func(n int) int {
			if n != 4 {
				t.Errorf("DirOps asked about %d operations, want 4", n)
			}
			return keep
		}})
		wantContents(t, f, states[keep])
	}
}

func TestErrors(t *testing.T) {
	f := New()
	create(t, f, "a", "x").Close()
	if _, err := f.OpenFile("a", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL on an existing file: %v", err)
	}
	if _, err := f.OpenFile("b", os.O_WRONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open of a missing file: %v", err)
	}
	if err := f.Link("a", "a"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("link onto an existing name: %v", err)
	}
	for _, err := range []error{f.Remove("b"), f.Link("b", "c"), f.Rename("b", "c")} {
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("operation on a missing file: %v", err)
		}
	}
	if _, err := f.Lstat("b"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lstat of a missing file: %v", err)
	}
	if _, err := f.OpenFile("../x", os.O_RDONLY, 0); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("a path out of the directory: %v", err)
	}
	if _, err := f.OpenFile(".", os.O_WRONLY, 0); err == nil {
		t.Error("the directory opened for writing")
	}
	r, _ := f.OpenFile("a", os.O_RDONLY, 0)
	if _, err := r.Write([]byte("x")); err == nil {
		t.Error("a write through a read-only file")
	}
	ap, _ := f.OpenFile("a", os.O_WRONLY|os.O_APPEND, 0)
	if _, err := ap.WriteAt([]byte("x"), 0); err == nil {
		t.Error("WriteAt on an O_APPEND file")
	}
	ap.Close()
	if err := ap.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if fi, err := f.Lstat("a"); err != nil || fi.Size() != 1 || fi.IsDir() || !fi.Mode().IsRegular() {
		t.Errorf("Lstat = %v, %v", fi, err)
	}
}

func TestCutStopsEverything(t *testing.T) {
	f := New()
	h := create(t, f, "a", "one") // create, write: 2 ops
	must(t, h.Sync())
	syncDir(t, f)
	if f.Ops() != 4 {
		t.Fatalf("Ops = %d, want 4", f.Ops())
	}
	f.CutAfter(1)
	if _, err := h.Write([]byte(" two")); err != nil {
		t.Fatalf("the op before the cut: %v", err)
	}
	if err := h.Sync(); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("Sync at the cut: %v, want ErrPowerCut", err)
	}
	if op, ok := f.Cut(); !ok || op != (Op{N: 5, Kind: OpSync, Name: "a"}) {
		t.Errorf("Cut = %v, %v", op, ok)
	}
	if _, err := f.ReadFile("a"); !errors.Is(err, ErrPowerCut) {
		t.Errorf("a read with the power cut: %v", err)
	}
	if err := f.Remove("a"); !errors.Is(err, ErrPowerCut) {
		t.Errorf("a change with the power cut: %v", err)
	}
	f.PowerLoss(Loss{})
	if _, ok := f.Cut(); ok {
		t.Error("still cut after the power loss")
	}
	wantContents(t, f, map[string]string{"a": "one"})
	f.CutWhen(func(op Op) bool { return op.Kind == OpRename })
	create(t, f, "b", "b").Close()
	if err := f.Rename("b", "c"); !errors.Is(err, ErrPowerCut) {
		t.Errorf("Rename with a cut at renames: %v", err)
	}
}

func TestRandomIsReproducible(t *testing.T) {
	run := func(seed uint64) map[string]string {
		f := New()
		for i := range 20 {
			h := create(t, f, fmt.Sprint("f", i), "durable\n")
			must(t, h.Sync())
		}
		syncDir(t, f)
		for i := range 20 {
			h, _ := f.OpenFile(fmt.Sprint("f", i), os.O_WRONLY|os.O_APPEND, 0)
			h.Write(bytes.Repeat([]byte("x"), 100))
			create(t, f, fmt.Sprint("g", i), "new")
		}
		f.PowerLoss(Random(seed))
		return contents(t, f)
	}
	a, b, c := run(1), run(1), run(2)
	if !maps.Equal(a, b) {
		t.Error("the same seed gave different outcomes")
	}
	if maps.Equal(a, c) {
		t.Error("different seeds gave the same outcome")
	}
}

func TestConcurrentUse(t *testing.T) {
	f := New()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			name := fmt.Sprint("f", g)
			h, err := f.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				t.Error(err)
				return
			}
			for range 100 {
				h.Write([]byte("x"))
				h.Sync()
				f.ReadDir(".")
			}
			h.Close()
		})
	}
	wg.Wait()
	if len(contents(t, f)) != 4 {
		t.Error("files lost")
	}
}
