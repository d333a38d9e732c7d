// Package usage prices token usage and keeps running totals.
//
// [Cost] prices one call's llm.Usage for a model from a table of current
// OpenAI, Anthropic and DeepSeek prices (USD per million tokens for input,
// output, cache reads and cache writes, taken on [PricesAsOf]). Remember
// that llm.Usage.InputTokens includes the cached and cache-creation tokens:
// the uncached input is InputTokens − CachedInputTokens −
// CacheCreationTokens, and each part has its own price. A model the table
// does not know has an unknown cost (known == false), never a cost of zero;
// add its price with [PriceTable.Set].
//
// A [Tracker] sums usage and cost per turn, per session, per model and
// overall, and says whether the total is complete or a lower bound because
// some turns were unpriced.
//
// Prices change; the table is a snapshot. Long-context surcharges are
// modelled where the provider publishes them for the listed models (Claude
// Sonnet 4 and 4.5 above 200k input tokens); batch discounts, priority
// tiers and DeepSeek's off-peak discount are not (its peak price is used,
// an upper bound).
//
// This package imports only package llm and the standard library.
package usage
