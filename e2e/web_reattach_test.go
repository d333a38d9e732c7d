package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

// TestWebPageReattach drives the page in headless Chromium through turns
// that outlive the page's connection: a page reloaded mid-turn reopens the
// session and follows the running turn to its end (its text, then its
// totals), the turn stored whole; and a second tab sees a turn another tab
// started as running in the sidebar, opens it, and follows it to its end.
func TestWebPageReattach(t *testing.T) {
	chromium(t)
	story := strings.Repeat("Once upon a time a turn outlived its page. ", 6)
	second := strings.Repeat("And another tab followed it to the end. ", 20)
	model := llmtest.New(
		llmtest.Text(story).WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 60}),
		llmtest.Text(second).WithUsage(llm.Usage{InputTokens: 180, OutputTokens: 60}),
	).Verify(t).WithChunkSize(6).WithInfo(llm.ModelInfo{Provider: "llmtest", Name: "scripted-1"})
	store := memstore.New()
	srv := webServer(t, slowModel{Model: model, delay: 30 * time.Millisecond}, store)
	ctx := browser(t)

	run(t, ctx, "opening the page", chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("token-input")))
	run(t, ctx, "giving the token", chromedp.SendKeys(chromedp.ID("token-input"), webToken), chromedp.Click(chromedp.ID("token-ok")))
	poll[bool](t, ctx, "the page to be ready", `document.body.dataset.ready === '1'`)

	// A reload mid-turn: the turn goes on on the server, and the page
	// follows it again from its first event.
	run(t, ctx, "sending a message", chromedp.SendKeys(chromedp.ID("message"), "Tell me a story"), chromedp.Click(chromedp.ID("send")))
	poll[bool](t, ctx, "part of the story", fmt.Sprintf(`(() => { const e = document.querySelector('.msg.assistant .text'); const s = e ? e.textContent : ''; return s.length > 0 && s.length < %d })()`, len(story)/2))
	run(t, ctx, "reloading mid-turn", chromedp.Reload())
	poll[bool](t, ctx, "the reloaded page", `document.body.dataset.ready === '1'`)
	poll[bool](t, ctx, "the running turn in the sidebar, or already over", `!!document.querySelector('#sessions .session')`)
	poll[bool](t, ctx, "the whole story after the reload", fmt.Sprintf(`(() => {
		const t = document.getElementById('transcript').textContent;
		const a = document.querySelector('.msg.assistant .text');
		return t.includes('Tell me a story') && !!a && a.textContent.trim() === %q && document.getElementById('stop').hidden;
	})()`, strings.TrimSpace(story)))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		page, err := store.List(context.Background(), session.ListOptions{Owner: "e2e"})
		if err == nil && len(page.Sessions) == 1 && page.Sessions[0].Turns == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn the reload left was not stored: %+v %v", page, err)
		}
	}

	// A second tab: a turn the first tab starts shows as running in its
	// sidebar; opened, it streams there to its end.
	// (A second browser: a tab of its own, which keeps its own token.)
	tab2 := browser(t)
	run(t, tab2, "opening a second tab", chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("token-input")))
	run(t, tab2, "giving the token in the second tab", chromedp.SendKeys(chromedp.ID("token-input"), webToken), chromedp.Click(chromedp.ID("token-ok")))
	poll[bool](t, tab2, "the second tab to be ready", `document.body.dataset.ready === '1' && document.querySelectorAll('#sessions .session').length === 1`)
	run(t, ctx, "sending a second message in the first tab", chromedp.SendKeys(chromedp.ID("message"), "Go on"), chromedp.Click(chromedp.ID("send")))
	poll[bool](t, ctx, "the first tab streams", `document.querySelectorAll('.msg.assistant .text').length === 2`)
	var running bool
	for deadline := time.Now().Add(20 * time.Second); !running; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second tab never showed the running turn")
		}
		// The sidebar is listed again when the page loads.
		run(t, tab2, "loading the second tab again", chromedp.Reload())
		poll[bool](t, tab2, "the sidebar", `document.body.dataset.ready === '1' && document.querySelectorAll('#sessions .session').length === 1`)
		running = poll[string](t, tab2, "the badge", `document.querySelector('#sessions .session-running') ? 'yes' : 'no'`) == "yes"
	}
	run(t, tab2, "opening the running session", chromedp.Click(chromedp.CSS("#sessions .session.running .session-open")))
	poll[bool](t, tab2, "the second answer in the second tab", fmt.Sprintf(`(() => {
		const a = [...document.querySelectorAll('.msg.assistant .text')].map((e) => e.textContent.trim());
		return a.includes(%q) && a.includes(%q) && document.getElementById('transcript').textContent.includes('Go on') && document.getElementById('stop').hidden;
	})()`, strings.TrimSpace(story), strings.TrimSpace(second)))
	poll[bool](t, ctx, "the second answer in the first tab", fmt.Sprintf(`[...document.querySelectorAll('.msg.assistant .text')].some((e) => e.textContent.trim() === %q)`, strings.TrimSpace(second)))
	poll[bool](t, tab2, "no running badge once it ended", `!document.querySelector('#sessions .session-running')`)
}
