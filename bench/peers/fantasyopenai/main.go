// Command fantasyopenai is the benchmark's "fantasy" row: charm.land/fantasy
// v0.41.2 through its OpenAI provider. It lives in a module of its own
// because that fantasy release compiles only against openai-go v3.50.0,
// while the bench module measures the current openai-go.
//
// The bench runner builds it and drives it over standard input and output;
// it is not meant to be run by hand. With -base URL it reads commands, one
// a line:
//
//	measure MODEL CHUNKS TEXTLEN STREAMS
//
// makes STREAMS sequential streams asking for MODEL, checks that each
// brought CHUNKS text deltas totalling TEXTLEN bytes, and answers
//
//	sample CPU_NS MALLOCS BYTES WALL_NS
//
// (or "error MESSAGE"). With -conc it runs the concurrency scenario once
// (-streams streams of -model, checked against -chunks and -textlen) and
// prints "result JSON" with the fields of bench.ConcurrencyResult.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"charm.land/fantasy"
	fantasyopenai "charm.land/fantasy/providers/openai"
	"github.com/openai/openai-go/v3/option"
)

const prompt = "Write a long answer."

func main() {
	base := flag.String("base", "", "server base URL, without /v1")
	conc := flag.Bool("conc", false, "run the concurrency scenario once")
	streams := flag.Int("streams", 500, "concurrent streams (-conc)")
	model := flag.String("model", "", "model name of each concurrent stream (-conc)")
	chunks := flag.Int("chunks", 0, "text chunks each stream must bring (-conc)")
	textLen := flag.Int("textlen", 0, "bytes of text each stream must bring (-conc)")
	flag.Parse()
	if *base == "" {
		fmt.Fprintln(os.Stderr, "fantasyopenai: -base is required")
		os.Exit(2)
	}
	c, err := newClient(*base)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fantasyopenai:", err)
		os.Exit(1)
	}
	if *conc {
		err = concurrency(c, *model, *chunks, *textLen, *streams)
	} else {
		err = serveCommands(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fantasyopenai:", err)
		os.Exit(1)
	}
}

// client streams with fantasy, one LanguageModel per model name.
type client struct {
	provider fantasy.Provider
	models   sync.Map
}

func newClient(base string) (*client, error) {
	hc := &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          2048,
		MaxIdleConnsPerHost:   2048,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
	p, err := fantasyopenai.New(
		fantasyopenai.WithBaseURL(base+"/v1"),
		fantasyopenai.WithAPIKey("sk-bench-not-a-real-key"),
		fantasyopenai.WithHTTPClient(hc),
		fantasyopenai.WithSDKOptions(option.WithMaxRetries(0)),
	)
	if err != nil {
		return nil, err
	}
	return &client{provider: p}, nil
}

func (c *client) stream(ctx context.Context, model string) (chunks, textLen int, err error) {
	lm, ok := c.models.Load(model)
	if !ok {
		m, err := c.provider.LanguageModel(ctx, model)
		if err != nil {
			return 0, 0, err
		}
		lm, _ = c.models.LoadOrStore(model, m)
	}
	stream, err := lm.(fantasy.LanguageModel).Stream(ctx, fantasy.Call{
		Prompt: fantasy.Prompt{fantasy.NewUserMessage(prompt)},
	})
	if err != nil {
		return 0, 0, err
	}
	for part := range stream {
		switch part.Type {
		case fantasy.StreamPartTypeTextDelta:
			if part.Delta != "" {
				chunks++
				textLen += len(part.Delta)
			}
		case fantasy.StreamPartTypeError:
			err = part.Error
		}
	}
	return chunks, textLen, err
}

func (c *client) checked(ctx context.Context, model string, wantChunks, wantLen int) error {
	chunks, textLen, err := c.stream(ctx, model)
	if err != nil {
		return err
	}
	if chunks != wantChunks || textLen != wantLen {
		return fmt.Errorf("got %d chunks and %d bytes of text, want %d and %d", chunks, textLen, wantChunks, wantLen)
	}
	return nil
}

func serveCommands(c *client) error {
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 5 || f[0] != "measure" {
			return fmt.Errorf("bad command %q", in.Text())
		}
		var n [3]int
		for i, s := range f[2:] {
			v, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("bad command %q", in.Text())
			}
			n[i] = v
		}
		model, chunks, textLen, streams := f[1], n[0], n[1], n[2]

		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		cpu0 := cpuTime()
		var err error
		for range streams {
			if err = c.checked(ctx, model, chunks, textLen); err != nil {
				break
			}
		}
		cpu1 := cpuTime()
		wall := time.Since(start)
		runtime.ReadMemStats(&m1)
		if err != nil {
			fmt.Fprintf(out, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Fprintf(out, "sample %d %d %d %d\n", (cpu1 - cpu0).Nanoseconds(), m1.Mallocs-m0.Mallocs, m1.TotalAlloc-m0.TotalAlloc, wall.Nanoseconds())
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return in.Err()
}

// result mirrors bench.ConcurrencyResult's JSON.
type result struct {
	Streams     int
	BaselineRSS int64
	PeakRSS     int64
	PeakReset   bool
	Wall        time.Duration
	Errors      int
	FirstErr    string
}

func concurrency(c *client, model string, chunks, textLen, streams int) error {
	ctx := context.Background()
	// A short warm-up stream at the same length, unpaced.
	warm, _, _ := strings.Cut(model, "-p")
	if err := c.checked(ctx, warm, chunks, textLen); err != nil {
		return fmt.Errorf("warm-up stream: %w", err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	res := result{Streams: streams}
	var err error
	if res.BaselineRSS, err = procStatus("VmRSS"); err != nil {
		return err
	}
	res.PeakReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{})
	)
	for range streams {
		wg.Go(func() {
			<-start
			if err := c.checked(ctx, model, chunks, textLen); err != nil {
				mu.Lock()
				res.Errors++
				if res.FirstErr == "" {
					res.FirstErr = err.Error()
				}
				mu.Unlock()
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	res.Wall = time.Since(t0)
	if res.PeakRSS, err = procStatus("VmHWM"); err != nil {
		return err
	}
	j, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Printf("result %s\n", j)
	return nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func procStatus(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		v, ok := bytes.CutPrefix(line, []byte(field+":"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) != 2 {
			return 0, fmt.Errorf("unexpected %s line %q", field, line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		return kb * 1024, err
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}
