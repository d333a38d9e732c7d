// Command agcore-temporal runs agcore turns as durable Temporal workflows:
// `worker` runs the turns (model calls, tools, persistence), `run` submits
// one turn and streams its output, `approve` lists and decides the tool
// calls a turn waits on. The agcore command runs it for `agcore worker`,
// `agcore approve` and `agcore run --temporal`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"log/slog"

	agtemporal "github.com/agcore/agcore/temporal"
)

// Exit statuses, as the agcore command's.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var se silentExit
	if errors.As(err, &se) {
		return se.code
	}
	fmt.Fprintln(os.Stderr, "agcore-temporal:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailed
}

// common are the flags every command shares: where Temporal is, the task
// queue, the live-output Redis and the claim-check blob store.
type common struct {
	address, namespace, queue, redisURL, blobs, otel string
	tracing                                          *tracing // --otel's, once dial opened it
}

func (c *common) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	def := os.Getenv("TEMPORAL_ADDRESS")
	if def == "" {
		def = client.DefaultHostPort
	}
	fs.StringVar(&c.address, "temporal", def, "Temporal frontend HOST:PORT ($TEMPORAL_ADDRESS)")
	fs.StringVar(&c.namespace, "namespace", "default", "Temporal namespace")
	fs.StringVar(&c.queue, "task-queue", agtemporal.DefaultTaskQueue, "task queue of the workers")
	fs.StringVar(&c.redisURL, "redis", os.Getenv("AGCORE_REDIS"), "Redis URL of the live output ($AGCORE_REDIS; empty: none)")
	fs.StringVar(&c.otel, "otel", "", "export traces over OTLP/HTTP to this collector URL ($OTEL_EXPORTER_OTLP_ENDPOINT): one trace from the client through the workflow to each model and tool call")
	fs.StringVar(&c.blobs, "blobs", os.Getenv("AGCORE_BLOBS"), "claim-check store of payloads over 256 KiB: a directory or a redis:// URL ($AGCORE_BLOBS; empty: none); clients and workers must agree")
}

// redis returns the live-output client, or nil.
func (c *common) redis() (*redis.Client, error) {
	if c.redisURL == "" {
		return nil, nil
	}
	opt, err := redis.ParseURL(c.redisURL)
	if err != nil {
		return nil, usageError{fmt.Errorf("--redis: %v", err)}
	}
	return redis.NewClient(opt), nil
}

// dial connects to Temporal, logging from level on, with the claim-check
// codec when --blobs is set.
func (c *common) dial(ctx context.Context, level slog.Level, service string) (client.Client, error) {
	opts := client.Options{HostPort: c.address, Namespace: c.namespace}
	tr, err := openTracing(ctx, c.otel, service)
	if err != nil {
		return nil, usageError{err}
	}
	c.tracing = tr
	opts.Interceptors = tr.interceptors()
	opts.Logger = tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	if c.blobs != "" {
		var store agtemporal.BlobStore = agtemporal.FileBlobs{Dir: c.blobs}
		if u, err := redis.ParseURL(c.blobs); err == nil {
			store = agtemporal.RedisBlobs{Client: redis.NewClient(u), Prefix: "agcore:blob:"}
		}
		opts.DataConverter = (&agtemporal.ClaimCheck{Store: store}).NewDataConverter()
	} else {
		opts.DataConverter = converter.GetDefaultDataConverter()
	}
	cl, err := client.DialContext(ctx, opts)
	if err != nil {
		tr.close()
		return nil, fmt.Errorf("connecting to Temporal at %s: %w", c.address, err)
	}
	return cl, nil
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "agcore-temporal",
		Short: "Durable agcore turns on Temporal: worker, run, approve, serve-runner",
		Long: `agcore-temporal runs agcore turns as Temporal workflows: a turn survives a
crashed worker, a completed tool call is never run again, and a call that
needs approval waits (for days if need be) for "approve".

Start a dev server (temporal server start-dev), then a worker, then turns:

  agcore-temporal worker --provider openai --store sqlite:./agcore.db --redis redis://127.0.0.1:6379/0
  agcore-temporal run --session work --turn sum-1 --redis redis://127.0.0.1:6379/0 "Summarize README.md"
  agcore-temporal approve --session work --turn sum-1          # list pending calls
  agcore-temporal approve --session work --turn sum-1 call_1   # approve one (--deny to deny)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newWorkerCmd(), newRunCmd(), newApproveCmd(), newServeRunnerCmd())
	return root
}
