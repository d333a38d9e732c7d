// Command benchtable prints the streaming performance table: CPU time,
// allocations and bytes per text chunk of agcore's streaming paths, of a
// hand-written floor and of other Go LLM libraries, all consuming the same
// streams from one local server process, and the peak resident memory per
// stream with many concurrent paced streams.
//
// Run it from the bench module:
//
//	go run ./cmd/benchtable            # full run, several minutes
//	go run ./cmd/benchtable -quick     # smoke run, seconds
//
// The table goes to standard output as markdown, progress to standard
// error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/agcore/agcore/bench"
)

func main() {
	bench.RunChildIfAsked()

	def := bench.DefaultConfig()
	quick := flag.Bool("quick", false, "smoke run: one round, small streams, 20 concurrent streams")
	rounds := flag.Int("rounds", 0, "measured rounds (default 7, quick 1)")
	sizes := flag.String("sizes", "", "comma-separated stream lengths in chunks (default 100,1000,10000)")
	cell := flag.Int("cell", 0, "chunks consumed per measurement (default 20000)")
	conc := flag.Int("conc", -1, "concurrent streams in the memory scenario, 0 to skip (default 500)")
	concChunks := flag.Int("conc-chunks", 0, "chunks per concurrent stream (default 100)")
	pace := flag.Duration("pace", 0, "time between chunks of the concurrent streams (default 20ms)")
	concRounds := flag.Int("conc-rounds", 0, "rounds of the concurrency scenario (default 3)")
	libs := flag.String("libs", "", "comma-separated rows to run (default all): "+libNames())
	server := flag.String("server", "", "base URL of a running cmd/llmserver (default: start one as a child)")
	flag.Parse()

	cfg := def
	if *quick {
		cfg = bench.QuickConfig()
	}
	if *rounds > 0 {
		cfg.Rounds = *rounds
	}
	if *sizes != "" {
		cfg.Sizes = nil
		for _, s := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 || n > bench.MaxChunks {
				fatalf("bad -sizes entry %q", s)
			}
			cfg.Sizes = append(cfg.Sizes, n)
		}
	}
	if *cell > 0 {
		cfg.CellChunks = *cell
	}
	if *conc >= 0 {
		cfg.ConcStreams = *conc
	}
	if *concChunks > 0 {
		cfg.ConcChunks = *concChunks
	}
	if *pace > 0 {
		cfg.Pace = *pace
	}
	if *concRounds > 0 {
		cfg.ConcRounds = *concRounds
	}
	if *libs != "" {
		cfg.Libraries = strings.Split(*libs, ",")
	}
	cfg.ServerURL = strings.TrimSuffix(*server, "/")
	cfg.Log = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		fatalf("%v", err)
	}
	if err := res.Markdown(os.Stdout); err != nil {
		fatalf("%v", err)
	}
}

func libNames() string {
	var names []string
	for _, l := range bench.Libraries() {
		names = append(names, strconv.Quote(l.Name))
	}
	return strings.Join(names, ", ")
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchtable: "+format+"\n", args...)
	os.Exit(1)
}
