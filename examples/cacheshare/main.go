// Command cacheshare replays a long, tool-heavy session against several
// compression strategies and prints, for each, the share of input tokens a
// provider's prompt cache could serve (the prefix each request shares with
// the previous one), how often the prefix broke, how much of the
// conversation the requests kept, and the largest request against the
// input budget. The session is synthetic and deterministic; it runs
// offline. See package internal/testkit/cacheshare for how each figure is
// measured.
//
//	go run ./examples/cacheshare [-turns 30,200]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/agcore/agcore/internal/testkit/cacheshare"
)

func main() {
	turnsFlag := flag.String("turns", "30,200", "comma-separated session lengths in turns")
	flag.Parse()
	var results []cacheshare.Result
	for _, f := range strings.Split(*turnsFlag, ",") {
		turns, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || turns <= 0 {
			log.Fatalf("bad -turns %q", f)
		}
		for _, s := range cacheshare.Strategies() {
			res, err := cacheshare.Run(context.Background(), s.Name, s.New(), turns)
			if err != nil {
				log.Fatal(err)
			}
			results = append(results, res)
		}
	}
	fmt.Printf("window %d, reserved output %d, input budget %d tokens\n\n", cacheshare.Info.ContextWindow, cacheshare.Info.ReservedOutput, cacheshare.Info.InputBudget())
	cacheshare.Format(os.Stdout, results)
	for _, r := range results {
		for _, v := range r.Violations {
			fmt.Fprintf(os.Stderr, "%s, %d turns: %s\n", r.Name, r.Turns, v)
		}
	}
}
