// Package usage prices token usage and keeps running totals.
//
// Prices live with the models, in llm.ModelInfo.Price (package catalog
// holds the current ones, per provider); this package has no price table.
// [CostOf] prices one call's llm.Usage with a model's info. Remember that
// llm.Usage.InputTokens includes the cached and cache-creation tokens: the
// uncached input is InputTokens − CachedInputTokens − CacheCreationTokens,
// and each part has its own price (see llm.Price.Cost). A model without a
// price has an unknown cost (known == false), never a cost of zero: a model
// served by a local or OpenAI-compatible server is unpriced unless its
// catalog entry for that server says what it costs.
//
// A [Tracker] sums usage and cost per turn, per session, per model and
// overall, and says whether the total is complete or a lower bound because
// some turns were unpriced. It records the cost it is given
// ([Tracker.Add]) or prices a turn with a model's info ([Tracker.Record]).
//
// This package imports only package llm and the standard library.
package usage
