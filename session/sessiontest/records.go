package sessiontest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/session"
)

// RunRecords runs the session.Records contract as subtests of t.
// newRecords must return records no other subtest sees (a new store, or a
// store of its own) and should register with t.Cleanup whatever closing it
// needs. Each subtest uses namespaces of its own.
func RunRecords(t *testing.T, newRecords func(t *testing.T) session.Records) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, r session.Records)
	}{
		{"PutGet", testRecordPutGet},
		{"Create", testRecordCreate},
		{"Update", testRecordUpdate},
		{"Delete", testRecordDelete},
		{"List", testRecordList},
		{"ListAfter", testRecordListAfter},
		{"Expiry", testRecordExpiry},
		{"Invalid", testRecordInvalid},
		{"ConcurrentCreate", testRecordConcurrentCreate},
		{"ConcurrentUpdate", testRecordConcurrentUpdate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newRecords(t))
		})
	}
}

func mustGet(t *testing.T, r session.Records, ns, key string) session.Record {
	t.Helper()
	rec, err := r.GetRecord(t.Context(), ns, key)
	if err != nil {
		t.Fatalf("GetRecord(%q, %q): %v", ns, key, err)
	}
	return rec
}

func testRecordPutGet(t *testing.T, r session.Records) {
	ctx := t.Context()
	if _, err := r.GetRecord(ctx, "ns1", "missing"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("GetRecord of a missing key: %v, want ErrNotFound", err)
	}
	val := []byte("{\"a\":1}\x00\xff binary")
	put, err := r.PutRecord(ctx, "ns1", session.Record{Key: "k/1 é", Value: val})
	if err != nil {
		t.Fatal(err)
	}
	if put.Version == 0 || put.Key != "k/1 é" || !bytes.Equal(put.Value, val) {
		t.Fatalf("PutRecord returned %+v", put)
	}
	got := mustGet(t, r, "ns1", "k/1 é")
	if got.Version != put.Version || !bytes.Equal(got.Value, val) || !got.Expires.IsZero() || got.Key != "k/1 é" {
		t.Fatalf("GetRecord = %+v, want %+v", got, put)
	}
	// The namespace is part of the name.
	if _, err := r.GetRecord(ctx, "ns2", "k/1 é"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("another namespace sees the record: %v", err)
	}
	// Put again: a new version, the new value.
	again, err := r.PutRecord(ctx, "ns1", session.Record{Key: "k/1 é", Value: []byte("2")})
	if err != nil {
		t.Fatal(err)
	}
	if again.Version == put.Version {
		t.Fatalf("PutRecord kept version %d", again.Version)
	}
	if got := mustGet(t, r, "ns1", "k/1 é"); string(got.Value) != "2" || got.Version != again.Version {
		t.Fatalf("after the second put: %+v", got)
	}
	// An empty value is a value.
	if _, err := r.PutRecord(ctx, "ns1", session.Record{Key: "empty"}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, r, "ns1", "empty"); len(got.Value) != 0 {
		t.Fatalf("empty value came back as %q", got.Value)
	}
	// What GetRecord returns is the caller's.
	got = mustGet(t, r, "ns1", "k/1 é")
	got.Value[0] = 'X'
	if again := mustGet(t, r, "ns1", "k/1 é"); string(again.Value) != "2" {
		t.Fatalf("changing a returned value changed the store: %q", again.Value)
	}
}

func testRecordCreate(t *testing.T, r session.Records) {
	ctx := t.Context()
	c, err := r.CreateRecord(ctx, "c", session.Record{Key: "one", Value: []byte("first")})
	if err != nil {
		t.Fatal(err)
	}
	if c.Version == 0 {
		t.Fatal("CreateRecord returned version 0")
	}
	if _, err := r.CreateRecord(ctx, "c", session.Record{Key: "one", Value: []byte("second")}); !errors.Is(err, session.ErrExists) {
		t.Fatalf("second CreateRecord: %v, want ErrExists", err)
	}
	if got := mustGet(t, r, "c", "one"); string(got.Value) != "first" || got.Version != c.Version {
		t.Fatalf("after a refused create: %+v", got)
	}
}

func testRecordUpdate(t *testing.T, r session.Records) {
	ctx := t.Context()
	if _, err := r.UpdateRecord(ctx, "u", session.Record{Key: "none", Version: 5}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("UpdateRecord of a missing key: %v, want ErrNotFound", err)
	}
	v1, err := r.CreateRecord(ctx, "u", session.Record{Key: "k", Value: []byte("1")})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := r.UpdateRecord(ctx, "u", session.Record{Key: "k", Value: []byte("2"), Version: v1.Version})
	if err != nil {
		t.Fatalf("UpdateRecord over the current version: %v", err)
	}
	if v2.Version == v1.Version || v2.Version == 0 {
		t.Fatalf("UpdateRecord version %d after %d", v2.Version, v1.Version)
	}
	if _, err := r.UpdateRecord(ctx, "u", session.Record{Key: "k", Value: []byte("3"), Version: v1.Version}); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("UpdateRecord over a stale version: %v, want ErrConflict", err)
	}
	if got := mustGet(t, r, "u", "k"); string(got.Value) != "2" || got.Version != v2.Version {
		t.Fatalf("after a refused update: %+v", got)
	}
	// An update may set and clear the expiry.
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	v3, err := r.UpdateRecord(ctx, "u", session.Record{Key: "k", Value: []byte("3"), Version: v2.Version, Expires: exp})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, r, "u", "k"); !got.Expires.Equal(exp) {
		t.Fatalf("Expires = %v, want %v", got.Expires, exp)
	}
	if _, err := r.UpdateRecord(ctx, "u", session.Record{Key: "k", Value: []byte("4"), Version: v3.Version}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, r, "u", "k"); !got.Expires.IsZero() || string(got.Value) != "4" {
		t.Fatalf("after clearing the expiry: %+v", got)
	}
}

func testRecordDelete(t *testing.T, r session.Records) {
	ctx := t.Context()
	if err := r.DeleteRecord(ctx, "d", "none", 0); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("DeleteRecord of a missing key: %v, want ErrNotFound", err)
	}
	rec, err := r.PutRecord(ctx, "d", session.Record{Key: "k", Value: []byte("v")})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteRecord(ctx, "d", "k", rec.Version+1); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("DeleteRecord of another version: %v, want ErrConflict", err)
	}
	if err := r.DeleteRecord(ctx, "d", "k", rec.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetRecord(ctx, "d", "k"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("GetRecord after delete: %v", err)
	}
	if _, err := r.PutRecord(ctx, "d", session.Record{Key: "k2", Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteRecord(ctx, "d", "k2", 0); err != nil {
		t.Fatalf("unconditional DeleteRecord: %v", err)
	}
	// The key is free again.
	if _, err := r.CreateRecord(ctx, "d", session.Record{Key: "k", Value: []byte("again")}); err != nil {
		t.Fatalf("CreateRecord after delete: %v", err)
	}
}

func testRecordList(t *testing.T, r session.Records) {
	ctx := t.Context()
	if got, err := r.ListRecords(ctx, "l", ""); err != nil || len(got) != 0 {
		t.Fatalf("ListRecords of an empty namespace: %v, %v", got, err)
	}
	keys := []string{"b/2", "a", "b/1", "b/10", "c", "b", "bz"}
	for _, k := range keys {
		if _, err := r.PutRecord(ctx, "l", session.Record{Key: k, Value: []byte("v" + k)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.PutRecord(ctx, "l2", session.Record{Key: "b/3", Value: []byte("other")}); err != nil {
		t.Fatal(err)
	}
	check := func(prefix string, want ...string) {
		t.Helper()
		got, err := r.ListRecords(ctx, "l", prefix)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range got {
			names = append(names, g.Key)
			if string(g.Value) != "v"+g.Key || g.Version == 0 {
				t.Errorf("record %q: %+v", g.Key, g)
			}
		}
		if fmt.Sprint(names) != fmt.Sprint(want) {
			t.Fatalf("ListRecords(%q) = %q, want %q", prefix, names, want)
		}
	}
	check("", "a", "b", "b/1", "b/10", "b/2", "bz", "c")
	check("b/", "b/1", "b/10", "b/2")
	check("b/1", "b/1", "b/10")
	check("zz")
}

// testRecordListAfter checks session.ListRecordsAfter, through the
// store's RecordRange when it has one: the keys of a prefix after a key,
// in byte order, without expired records or other prefixes' keys.
func testRecordListAfter(t *testing.T, r session.Records) {
	ctx := t.Context()
	for _, k := range []string{"run1/0003", "run1/0010", "run1/0007", "run10/0001", "run0/0009", "run1"} {
		if _, err := r.PutRecord(ctx, "la", session.Record{Key: k, Value: []byte("v" + k)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.PutRecord(ctx, "la", session.Record{Key: "run1/0012", Value: []byte("gone"), Expires: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, prefix, after string
		want                []string
	}{
		{"the whole prefix when after sorts before it", "run1/", "", []string{"run1/0003", "run1/0007", "run1/0010"}},
		{"after a key that exists", "run1/", "run1/0003", []string{"run1/0007", "run1/0010"}},
		{"after a key that does not exist", "run1/", "run1/0005", []string{"run1/0007", "run1/0010"}},
		{"after the last key", "run1/", "run1/0010", nil},
		{"no other prefix's keys", "run10/", "run1/0010", []string{"run10/0001"}},
		{"an empty prefix", "", "run1/0007", []string{"run1/0010", "run10/0001"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := session.ListRecordsAfter(ctx, r, "la", tc.prefix, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, g := range got {
				keys = append(keys, g.Key)
				if string(g.Value) != "v"+g.Key || g.Version == 0 {
					t.Errorf("record %q: %+v", g.Key, g)
				}
			}
			if fmt.Sprint(keys) != fmt.Sprint(tc.want) {
				t.Fatalf("ListRecordsAfter(%q, %q) = %q, want %q", tc.prefix, tc.after, keys, tc.want)
			}
		})
	}
}

func testRecordExpiry(t *testing.T, r session.Records) {
	ctx := t.Context()
	past := time.Now().Add(-time.Minute)
	if _, err := r.PutRecord(ctx, "e", session.Record{Key: "gone", Value: []byte("x"), Expires: past}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetRecord(ctx, "e", "gone"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("GetRecord of an expired record: %v, want ErrNotFound", err)
	}
	// The lease starts short and doubles when the checks that need it
	// alive took longer than it lasted (a loaded machine): what they saw
	// then proves nothing, and the next round uses a fresh key.
	var (
		soon time.Time
		live session.Record
		key  string
	)
	for lease := 300 * time.Millisecond; ; lease *= 2 {
		key = fmt.Sprintf("lease-%d", lease.Milliseconds())
		var ok bool
		soon, live, ok = leaseWhileLive(t, r, key, lease)
		if ok {
			break
		}
		if lease > 10*time.Second {
			t.Fatal("the store never answered within a lease of 10 s")
		}
		if err := r.DeleteRecord(ctx, "e", key, 0); err != nil && !errors.Is(err, session.ErrNotFound) {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(soon) + 200*time.Millisecond)
	if _, err := r.GetRecord(ctx, "e", key); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("GetRecord after the expiry: %v, want ErrNotFound", err)
	}
	if got, err := r.ListRecords(ctx, "e", ""); err != nil || len(got) != 1 || got[0].Key != "keep" {
		t.Fatalf("ListRecords after the expiry: %+v, %v", got, err)
	}
	if _, err := r.UpdateRecord(ctx, "e", session.Record{Key: key, Version: live.Version}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("UpdateRecord of an expired record: %v, want ErrNotFound", err)
	}
	if _, err := r.CreateRecord(ctx, "e", session.Record{Key: key, Value: []byte("b")}); err != nil {
		t.Fatalf("CreateRecord over an expired record: %v", err)
	}
	if got := mustGet(t, r, "e", key); string(got.Value) != "b" || !got.Expires.IsZero() {
		t.Fatalf("the new record: %+v", got)
	}
}

// leaseWhileLive creates the record key in namespace "e" with a lease
// (and "keep", without one) and checks what holds while it lives. ok is
// false when the checks ended after the lease did: they may have seen it
// expire, so they prove nothing either way.
func leaseWhileLive(t *testing.T, r session.Records, key string, lease time.Duration) (soon time.Time, live session.Record, ok bool) {
	t.Helper()
	ctx := t.Context()
	soon = time.Now().Add(lease)
	live, err := r.CreateRecord(ctx, "e", session.Record{Key: key, Value: []byte("a"), Expires: soon})
	if err != nil {
		t.Fatal(err)
	}
	_, errExists := r.CreateRecord(ctx, "e", session.Record{Key: key, Value: []byte("b")})
	if _, err := r.PutRecord(ctx, "e", session.Record{Key: "keep", Value: []byte("k")}); err != nil {
		t.Fatal(err)
	}
	got, errList := r.ListRecords(ctx, "e", "")
	if !time.Now().Before(soon) {
		return soon, live, false
	}
	if !errors.Is(errExists, session.ErrExists) {
		t.Fatalf("CreateRecord over a live lease: %v, want ErrExists", errExists)
	}
	if errList != nil || len(got) != 2 || got[0].Key != "keep" || got[1].Key != key {
		t.Fatalf("ListRecords before the expiry: %+v, %v", got, errList)
	}
	return soon, live, true
}

func testRecordInvalid(t *testing.T, r session.Records) {
	ctx := t.Context()
	for _, c := range []struct{ ns, key string }{
		{"", "k"}, {"a/b", "k"}, {"ns", ""}, {"ns", "a\x00b"}, {"ns", "\xff"}, {"ns", string(bytes.Repeat([]byte("k"), session.MaxRecordKeyLen+1))},
	} {
		if _, err := r.PutRecord(ctx, c.ns, session.Record{Key: c.key}); !errors.Is(err, session.ErrInvalidID) {
			t.Errorf("PutRecord(%q, %q): %v, want ErrInvalidID", c.ns, c.key, err)
		}
		if _, err := r.GetRecord(ctx, c.ns, c.key); !errors.Is(err, session.ErrInvalidID) {
			t.Errorf("GetRecord(%q, %q): %v, want ErrInvalidID", c.ns, c.key, err)
		}
	}
}

func testRecordConcurrentCreate(t *testing.T, r session.Records) {
	const n = 8
	var wg sync.WaitGroup
	won := make(chan int, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := r.CreateRecord(t.Context(), "cc", session.Record{Key: "slot", Value: []byte{byte('0' + i)}})
			switch {
			case err == nil:
				won <- i
			case !errors.Is(err, session.ErrExists):
				errs <- err
			}
		})
	}
	wg.Wait()
	close(won)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var winners []int
	for i := range won {
		winners = append(winners, i)
	}
	if len(winners) != 1 {
		t.Fatalf("%d CreateRecord calls won, want 1", len(winners))
	}
	if got := mustGet(t, r, "cc", "slot"); got.Value[0] != byte('0'+winners[0]) {
		t.Fatalf("stored %q, the winner was %d", got.Value, winners[0])
	}
}

func testRecordConcurrentUpdate(t *testing.T, r session.Records) {
	ctx := t.Context()
	first, err := r.PutRecord(ctx, "cu", session.Record{Key: "k", Value: []byte("start")})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	won := make(chan int, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := r.UpdateRecord(ctx, "cu", session.Record{Key: "k", Value: []byte{byte('0' + i)}, Version: first.Version})
			switch {
			case err == nil:
				won <- i
			case !errors.Is(err, session.ErrConflict):
				errs <- err
			}
		})
	}
	wg.Wait()
	close(won)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(won) != 1 {
		t.Fatalf("%d UpdateRecord calls over one version won, want 1", len(won))
	}
}
