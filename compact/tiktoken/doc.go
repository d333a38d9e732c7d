// Package tiktoken counts tokens exactly for OpenAI models, with the
// o200k_base and cl100k_base byte-pair encodings (their vocabularies in
// compact files of this package, checked token by token against
// github.com/tiktoken-go/tokenizer's, whose split patterns it uses) and
// OpenAI's published per-message and per-tool overheads. Its counters implement compact.TokenCounter.
//
// [For] picks the counter for a model id: [O200k] for gpt-4o, gpt-4.1,
// gpt-4.5, gpt-5 and later, the o-series, gpt-oss and codex-mini; [Cl100k]
// for gpt-4, gpt-4-turbo and gpt-3.5; for every other model it returns
// compact.CounterFor's estimator and false:
//
//	counter, _ := tiktoken.For(info.Name)
//
// The vocabularies are compiled in (no download at run time), which adds
// about 3.2 MB to a binary with the matchers; a process builds an
// encoding's tables at its first count (about 10 ms for o200k_base). That
// is why exact counting lives here and not in
// package compact, whose estimator stays within ±15% of o200k_base on
// prose, Chinese, code and JSON (the calibration test in this package
// checks it). Import this package only where the exact figure is worth the
// size; the agcore CLI does, for OpenAI models.
//
// This package imports packages llm, catalog and compact, the standard
// library, github.com/tiktoken-go/tokenizer/codec (for its compiled
// matchers) and github.com/dlclark/regexp2.
package tiktoken
