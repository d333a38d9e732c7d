// Command retry shows the retry middleware: transient failures (rate
// limits with Retry-After, overload, a stream that breaks before any
// content) are retried with backoff; auth errors and streams that already
// delivered content are not. It runs offline: the model is scripted with
// llmtest, and the delays are kept short.
//
//	go run ./examples/retry
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
)

func main() {
	ctx := context.Background()
	cfg := middleware.RetryConfig{
		MaxAttempts:   4,
		BaseDelay:     50 * time.Millisecond, // real programs keep the 1s default
		MaxDelay:      time.Second,
		MaxTotalDelay: 5 * time.Second,
		OnRetry: func(_ context.Context, attempt int, d time.Duration, err error) {
			fmt.Printf("  attempt %d failed (%v); retrying in %s\n", attempt, err, d.Round(time.Millisecond))
		},
	}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("Hello?")}}

	fmt.Println("1. Rate limited (Retry-After 200ms), then overloaded, then fine:")
	m := llmtest.New(
		llmtest.Fail(&llm.Error{Kind: llm.KindRateLimited, Provider: "demo", StatusCode: 429, Message: "slow down", RetryAfter: 200 * time.Millisecond}),
		llmtest.Fail(&llm.Error{Kind: llm.KindOverloaded, Provider: "demo", StatusCode: 529, Message: "overloaded"}),
		llmtest.Text("Hello! (third attempt)"),
	)
	start := time.Now()
	resp, err := middleware.Retry(cfg)(m).Generate(ctx, req)
	report(resp, err)
	fmt.Printf("  %d calls in %s\n\n", m.Calls(), time.Since(start).Round(10*time.Millisecond))

	fmt.Println("2. A stream that breaks before any content is retried; the caller sees one clean stream:")
	m = llmtest.New(
		llmtest.Text("lost").FailAfter(1, &llm.Error{Kind: llm.KindNetwork, Provider: "demo", Message: "connection reset"}),
		llmtest.Text("Hello from a fresh stream."),
	)
	var text strings.Builder
	for ev, err := range middleware.Retry(cfg)(m).Stream(ctx, req) {
		if err != nil {
			fmt.Println("  error:", err)
			break
		}
		if ev.Type == llm.EventTextDelta {
			text.WriteString(ev.Delta)
		}
	}
	fmt.Printf("  text: %s\n  %d calls\n\n", text.String(), m.Calls())

	fmt.Println("3. A stream that breaks after content reached the caller is not retried:")
	m = llmtest.New(llmtest.Text("Half an answ").FailAfter(4, &llm.Error{Kind: llm.KindNetwork, Provider: "demo", Message: "connection reset"}))
	_, err = llm.Collect(middleware.Retry(cfg)(m).Stream(ctx, req))
	fmt.Printf("  error: %v (%d call)\n\n", err, m.Calls())

	fmt.Println("4. An auth error is never retried:")
	m = llmtest.New(llmtest.Fail(&llm.Error{Kind: llm.KindAuth, Provider: "demo", StatusCode: 401, Message: "invalid API key"}))
	_, err = middleware.Retry(cfg)(m).Generate(ctx, req)
	fmt.Printf("  error: %v; errors.Is(err, llm.ErrAuth) = %v (%d call)\n\n", err, errors.Is(err, llm.ErrAuth), m.Calls())

	fmt.Println("5. Retries switched off (e.g. a durable orchestrator retries instead):")
	m = llmtest.New(llmtest.Fail(&llm.Error{Kind: llm.KindServer, Provider: "demo", StatusCode: 500}))
	_, err = middleware.Retry(middleware.RetryConfig{MaxAttempts: 1})(m).Generate(ctx, req)
	fmt.Printf("  error: %v (%d call)\n", err, m.Calls())
}

func report(resp *llm.Response, err error) {
	if err != nil {
		fmt.Println("  error:", err)
		return
	}
	fmt.Println("  answer:", resp.Message.Text())
}
