package agtemporal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kinds of live events.
const (
	LiveText     = "text"      // a text delta
	LiveThinking = "thinking"  // a thinking delta
	LiveToolCall = "tool_call" // the model called a tool (Text is its name)
	LiveReset    = "reset"     // a retried model call starts: drop the step's partial text
	LiveDone     = "done"      // the model's final answer is complete
)

// LiveEvent is one piece of a turn's live output. Step is the model call
// (1-based) and Attempt the activity attempt that produced it: a client
// keeps, for each step, only the text of the newest attempt.
type LiveEvent struct {
	Kind    string
	Step    int
	Attempt int32
	Text    string
	CallID  string
}

// Live is the side channel a model activity streams a turn's output to.
// Publish must be safe for concurrent use; it is best effort (a failure
// is logged and ends that call's live output, never the call).
type Live interface {
	Publish(ctx context.Context, stream string, ev LiveEvent) error
}

// RedisLive publishes live output to a Redis stream per turn (XADD to
// StreamKey(workflow id)), capped at MaxLen entries and expiring TTL after
// its last event.
type RedisLive struct {
	Client redis.UniversalClient
	MaxLen int64         // 0: 10000
	TTL    time.Duration // 0: 24h
}

// Publish implements Live.
func (r *RedisLive) Publish(ctx context.Context, stream string, ev LiveEvent) error {
	maxLen, ttl := r.MaxLen, r.TTL
	if maxLen <= 0 {
		maxLen = 10000
	}
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	pipe := r.Client.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, MaxLen: maxLen, Approx: true, Values: map[string]any{
		"kind": ev.Kind, "step": ev.Step, "attempt": ev.Attempt, "text": ev.Text, "call": ev.CallID,
	}})
	pipe.Expire(ctx, stream, ttl)
	_, err := pipe.Exec(ctx)
	return err
}

// Watch reads a turn's live output from Redis from the beginning, calling
// fn with each event in order, until fn returns false, ctx ends, or stop
// reports true (checked between reads, which block at most poll).
func Watch(ctx context.Context, rdb redis.UniversalClient, stream string, poll time.Duration, stop func() bool, fn func(LiveEvent) bool) error {
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	last := "0"
	for {
		res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{stream, last}, Block: poll, Count: 256}).Result()
		if errors.Is(err, redis.Nil) {
			if stop != nil && stop() {
				return nil
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("agtemporal: reading live output: %w", err)
		}
		for _, s := range res {
			for _, msg := range s.Messages {
				last = msg.ID
				if !fn(decodeLive(msg.Values)) {
					return nil
				}
			}
		}
	}
}

// Follow reads a turn's live output from the beginning, calling fn with
// each event in order, until fn returns false, ctx ends, or done is
// closed: then it reads what the stream still holds, without waiting, and
// returns. A read blocked on the stream when done closes is woken at once
// (through a key of this call's own, removed on return), so a caller that
// closes done when the turn has ended loses no event and waits for
// nothing.
func Follow(ctx context.Context, rdb *redis.Client, stream string, done <-chan struct{}, fn func(LiveEvent) bool) error {
	wake := fmt.Sprintf("%s:wake:%d", stream, time.Now().UnixNano())
	defer rdb.Del(context.WithoutCancel(ctx), wake)
	woken := make(chan struct{})
	go func() {
		defer close(woken)
		select {
		case <-done:
		case <-ctx.Done():
		}
		// Wakes the blocked read; the key expires if the Del is missed.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		pipe := rdb.Pipeline()
		pipe.XAdd(wctx, &redis.XAddArgs{Stream: wake, Values: map[string]any{"kind": "wake"}})
		pipe.Expire(wctx, wake, time.Minute)
		_, _ = pipe.Exec(wctx)
	}()
	defer func() { <-woken }()
	last, ended := "0", false
	for {
		if !ended {
			select {
			case <-done:
				ended = true
			case <-ctx.Done():
				return ctx.Err()
			default:
			}
		}
		args := &redis.XReadArgs{Streams: []string{stream, wake, last, "0"}, Block: time.Minute, Count: 256}
		if ended {
			args = &redis.XReadArgs{Streams: []string{stream, last}, Block: -1, Count: 256}
		}
		res, err := rdb.XRead(context.WithoutCancel(ctx), args).Result()
		if errors.Is(err, redis.Nil) {
			if ended {
				return nil
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("agtemporal: reading live output: %w", err)
		}
		got := 0
		for _, s := range res {
			if s.Stream != stream {
				continue // woken: done is closed or ctx has ended
			}
			for _, msg := range s.Messages {
				last = msg.ID
				got++
				if !fn(decodeLive(msg.Values)) {
					return nil
				}
			}
		}
		if ended && got == 0 {
			return nil
		}
	}
}

func decodeLive(v map[string]any) LiveEvent {
	str := func(k string) string { s, _ := v[k].(string); return s }
	step, _ := strconv.Atoi(str("step"))
	att, _ := strconv.Atoi(str("attempt"))
	return LiveEvent{Kind: str("kind"), Step: step, Attempt: int32(att), Text: str("text"), CallID: str("call")}
}

// Transcript assembles live events into the text a reader should see: for
// each step, the text of its newest attempt only (a reset, or an event
// from a newer attempt, drops what an earlier attempt streamed).
type Transcript struct {
	steps []liveStep
}

type liveStep struct {
	step    int
	attempt int32
	text    string
}

// Add applies one event and reports whether it dropped text already seen.
func (t *Transcript) Add(ev LiveEvent) (reset bool) {
	var s *liveStep
	for i := range t.steps {
		if t.steps[i].step == ev.Step {
			s = &t.steps[i]
		}
	}
	if s == nil {
		t.steps = append(t.steps, liveStep{step: ev.Step, attempt: ev.Attempt})
		s = &t.steps[len(t.steps)-1]
	}
	switch {
	case ev.Attempt < s.attempt:
		return false // a late event of a failed attempt
	case ev.Attempt > s.attempt || ev.Kind == LiveReset:
		reset = s.text != ""
		s.attempt = ev.Attempt
		s.text = ""
	}
	if ev.Kind == LiveText {
		s.text += ev.Text
	}
	return reset
}

// Text returns the text of every step so far, in step order.
func (t *Transcript) Text() string {
	var b strings.Builder
	for i := range t.steps {
		b.WriteString(t.steps[i].text)
	}
	return b.String()
}
