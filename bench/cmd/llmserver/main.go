// Command llmserver serves the benchmark's streams on its own: POST
// /v1/chat/completions (OpenAI style) and POST /v1/messages (Anthropic
// style), each answering as many small text chunks as the request's model
// name asks ("bench-n1000", or "bench-n1000-p20" for 20 ms between chunks).
//
//	go run ./cmd/llmserver -addr 127.0.0.1:8089
//	go run ./cmd/benchtable -server http://127.0.0.1:8089
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/agcore/agcore/bench"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8089", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := bench.ListenAndServe(ctx, *addr, func(u string) {
		fmt.Fprintf(os.Stderr, "llmserver: listening on %s\n", u)
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmserver: %v\n", err)
		os.Exit(1)
	}
}
