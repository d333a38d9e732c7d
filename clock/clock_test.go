package clock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/clock"
)

func TestSystemSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := clock.System.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v, want context.Canceled", err)
	}
	if err := clock.System.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep = %v", err)
	}
	if err := clock.System.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(0) on a cancelled context = %v, want context.Canceled", err)
	}
}

type fixed struct{ clock.Clock }

func TestOr(t *testing.T) {
	if clock.Or(nil) != clock.System {
		t.Error("Or(nil) is not System")
	}
	f := fixed{}
	if clock.Or(f) != clock.Clock(f) {
		t.Error("Or(c) is not c")
	}
}
