package stored

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []Cursor{
		{Updated: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), ID: "a.b-c_d"},
		{Updated: time.Unix(0, 0).UTC(), ID: "x"},
	} {
		got, err := ParseCursor(c.String())
		if err != nil || !got.Updated.Equal(c.Updated) || got.ID != c.ID {
			t.Errorf("ParseCursor(%v) = %v, %v", c, got, err)
		}
	}
	for _, bad := range []string{"x", "!!", Cursor{ID: "../x"}.String(), "MTIzOg"} { // "123:"
		if _, err := ParseCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("ParseCursor(%q): err = %v, want ErrBadCursor", bad, err)
		}
	}
}

func TestParallelReportsTheFirstError(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	err := Parallel(10_000, 10, func(lo, hi int) error {
		switch {
		case lo == 0:
			return nil
		case hi == 10_000:
			return second
		default:
			return first
		}
	})
	if err == nil {
		t.Fatal("Parallel lost the error")
	}
	covered := make([]bool, 1001)
	Parallel(1001, 10, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			covered[i] = true
		}
		return nil
	})
	for i, c := range covered {
		if !c {
			t.Fatalf("index %d not covered", i)
		}
	}
}

func TestEncodeTurn(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))
	tr, err := EncodeTurn(context.Background(), session.Turn{
		ID:       "t",
		Messages: []llm.Message{llm.UserText("a")},
		State:    map[string]json.RawMessage{"b": nil, "a": nil, "s": json.RawMessage(" { \"x\" : 1 } ")},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Time.Equal(now) || tr.Time.Location() != time.UTC {
		t.Errorf("Time = %v, want %v in UTC", tr.Time, now)
	}
	if string(tr.Set["s"]) != `{"x":1}` || len(tr.Del) != 2 || tr.Del[0] != "a" || tr.Prefix != nil {
		t.Errorf("encoded turn = %+v", tr)
	}
	if _, err := EncodeTurn(context.Background(), session.Turn{ID: string(make([]byte, MaxTurnIDLen+1))}, now); !errors.Is(err, session.ErrInvalidID) {
		t.Errorf("overlong turn id: err = %v", err)
	}
}
