// Package e2e holds end-to-end tests that need dependencies agcore itself
// must not carry: a real OpenTelemetry Collector receiver for the CLI's
// OTLP export; OpenAI's official Go SDK (openai-go), driving the built
// agcore serve through its OpenAI-compatible endpoints (openai_go_test.go);
// and chromedp, which drives headless Chromium through the web page of
// package serve/web (web_test.go; skipped with a hint when there is no
// browser, failed when CI is set). It is a module of its own (like bench/),
// so none of them enters agcore's go.mod.
package e2e
