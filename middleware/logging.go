package middleware

import (
	"context"
	"iter"
	"log/slog"
	"time"

	"github.com/agcore/agcore/clock"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// LogConfig configures [Logging] and [ToolLogging]. The zero value logs to
// slog.Default() at Info without message contents.
type LogConfig struct {
	// Logger receives the records; nil means slog.Default().
	Logger *slog.Logger
	// Level is the level of the records of successful calls; failed calls
	// are logged at Warn or above.
	Level slog.Level
	// Contents adds message contents: the last request message and the
	// answer's text for model calls, arguments and result for tool calls.
	// Off by default: contents may be private.
	Contents bool
	// MaxContentBytes cuts each logged content; 0 means 2048.
	MaxContentBytes int
	// Clock measures durations; nil means clock.System.
	Clock clock.Clock
}

func (c *LogConfig) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

func (c *LogConfig) content(s string) string {
	n := c.MaxContentBytes
	if n <= 0 {
		n = 2048
	}
	return tool.Truncate(s, n)
}

// Logging returns middleware that writes one record per model call
// ("model call"): provider, model, whether streamed, duration, token usage,
// finish reason, and on failure the error kind and message. A stream is
// recorded when it ends, also when the caller stops early ("stopped").
// Requests carry no credentials, and nothing from request headers is ever
// logged; message contents only with Contents.
func Logging(cfg LogConfig) Middleware {
	return func(next llm.Model) llm.Model {
		return &logged{next: next, cfg: cfg, clock: clock.Or(cfg.Clock)}
	}
}

type logged struct {
	next  llm.Model
	cfg   LogConfig
	clock clock.Clock
}

func (l *logged) Info() llm.ModelInfo { return l.next.Info() }

func (l *logged) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if !l.enabled(ctx) {
		return l.next.Generate(ctx, req)
	}
	return llm.Collect(l.wrap(ctx, req, llm.Next{Model: l.next, Blocking: true}))
}

func (l *logged) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if !l.enabled(ctx) {
		return l.next.Stream(ctx, req)
	}
	return l.wrap(ctx, req, llm.Next{Model: l.next})
}

// wrap is the logger, for both calls: one record when the call ends,
// whichever way (stopped: the caller left before the end).
func (l *logged) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		start := l.clock.Now()
		var resp *llm.Response
		var failed error
		stopped := true
		defer func() { l.record(ctx, req, !next.Blocking, start, resp, failed, stopped) }()
		for ev, err := range next.Stream(ctx, req) {
			if err != nil {
				failed, stopped = err, false
				yield(llm.Event{}, err)
				return
			}
			if ev.Type == llm.EventComplete {
				resp, stopped = ev.Response, false
			}
			if !yield(ev, nil) {
				stopped = resp == nil
				return
			}
		}
	}
}

// enabled reports whether any record could be written, so a disabled
// logger costs nothing.
func (l *logged) enabled(ctx context.Context) bool {
	return l.cfg.logger().Enabled(ctx, min(l.cfg.Level, slog.LevelWarn))
}

func (l *logged) record(ctx context.Context, req *llm.Request, stream bool, start time.Time, resp *llm.Response, err error, stopped bool) {
	level := l.cfg.Level
	if err != nil {
		level = max(level, slog.LevelWarn)
	}
	lg := l.cfg.logger()
	if !lg.Enabled(ctx, level) {
		return
	}
	info := l.next.Info()
	model := req.Model
	if model == "" {
		model = info.Name
	}
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("provider", info.Provider),
		slog.String("model", model),
		slog.Bool("stream", stream),
		slog.Duration("duration", l.clock.Now().Sub(start)),
		slog.Int("messages", len(req.Messages)),
		slog.Int("tools", len(req.Tools)),
	)
	if resp != nil {
		attrs = append(attrs,
			slog.String("finish_reason", string(resp.FinishReason)),
			slog.Int("input_tokens", resp.Usage.InputTokens),
			slog.Int("output_tokens", resp.Usage.OutputTokens),
			slog.Int("cached_input_tokens", resp.Usage.CachedInputTokens),
		)
		if resp.Model != "" && resp.Model != model {
			attrs = append(attrs, slog.String("response_model", resp.Model))
		}
	}
	if stopped {
		attrs = append(attrs, slog.Bool("stopped", true))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error_kind", llm.KindOf(err).String()), slog.String("error", err.Error()))
	}
	if l.cfg.Contents {
		if n := len(req.Messages); n > 0 {
			attrs = append(attrs, slog.String("last_message", l.cfg.content(req.Messages[n-1].Text())))
		}
		if resp != nil {
			attrs = append(attrs, slog.String("answer", l.cfg.content(resp.Message.Text())))
		}
	}
	lg.LogAttrs(ctx, level, "model call", attrs...)
}

// ToolLogging returns tool middleware that writes one record per tool call
// ("tool call"): tool, call id, duration, and on failure whether the error
// is fatal and its message; arguments and result only with Contents.
// Give it to the tool loop's invoker.
func ToolLogging(cfg LogConfig) tool.Middleware {
	clk := clock.Or(cfg.Clock)
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call tool.Call) (string, error) {
			lg := cfg.logger()
			if !lg.Enabled(ctx, min(cfg.Level, slog.LevelWarn)) {
				return next(ctx, call)
			}
			start := clk.Now()
			text, err := next(ctx, call)
			level := cfg.Level
			if err != nil {
				level = max(level, slog.LevelWarn)
			}
			if !lg.Enabled(ctx, level) {
				return text, err
			}
			attrs := make([]slog.Attr, 0, 8)
			attrs = append(attrs,
				slog.String("tool", call.Name),
				slog.String("call_id", call.ID),
				slog.Duration("duration", clk.Now().Sub(start)),
				slog.Bool("is_error", err != nil),
			)
			if err != nil {
				attrs = append(attrs, slog.Bool("fatal", tool.IsFatal(err)), slog.String("error", err.Error()))
			}
			if cfg.Contents {
				attrs = append(attrs, slog.String("arguments", cfg.content(string(call.Input))))
				if err == nil {
					attrs = append(attrs, slog.String("result", cfg.content(text)))
				}
			}
			lg.LogAttrs(ctx, level, "tool call", attrs...)
			return text, err
		}
	}
}
