package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

// TestWebPageFork drives the page's branches in headless Chromium: after
// two turns, Regenerate on the second message answers it again in a new
// session holding the first turn (the original kept), and Edit on the
// first message, changed in the composer and sent, starts a new chat
// with it. Each answer names the user messages its model call saw.
func TestWebPageFork(t *testing.T) {
	chromium(t)
	var calls atomic.Int32
	seen := llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		n := calls.Add(1)
		var users []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser {
				users = append(users, m.Text())
			}
		}
		return &llm.Response{Message: llm.AssistantText(fmt.Sprintf("%d saw %s", n, strings.Join(users, " + "))), FinishReason: llm.FinishStop}, nil
	})
	model := llmtest.New(seen, seen, seen, seen).Verify(t).WithInfo(llm.ModelInfo{Provider: "llmtest", Name: "scripted-1"})
	store := memstore.New()
	srv := webServer(t, model, store)
	ctx := browser(t)

	run(t, ctx, "opening the page", chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("token-input")))
	run(t, ctx, "giving the token", chromedp.SendKeys(chromedp.ID("token-input"), webToken), chromedp.Click(chromedp.ID("token-ok")))
	poll[bool](t, ctx, "the page to be ready", `document.body.dataset.ready === '1'`)
	answers := func(want ...string) string {
		return fmt.Sprintf(`(() => {
			const a = [...document.querySelectorAll('.msg.assistant .text')].map((e) => e.textContent.trim());
			return JSON.stringify(a) === %q && document.getElementById('stop').hidden;
		})()`, jsonList(want))
	}
	run(t, ctx, "sending the first message", chromedp.SendKeys(chromedp.ID("message"), "one"), chromedp.Click(chromedp.ID("send")))
	poll[bool](t, ctx, "the first answer", answers("1 saw one"))
	run(t, ctx, "sending the second message", chromedp.SendKeys(chromedp.ID("message"), "two"), chromedp.Click(chromedp.ID("send")))
	poll[bool](t, ctx, "the second answer", answers("1 saw one", "2 saw one + two"))

	run(t, ctx, "regenerating the second answer", chromedp.Click(chromedp.CSS(`.msg.user button.regenerate[data-turn="2"]`)))
	poll[bool](t, ctx, "the regenerated answer, on a branch", answers("1 saw one", "3 saw one + two"))
	poll[bool](t, ctx, "two sessions in the sidebar", `document.querySelectorAll('#sessions .session').length === 2`)

	run(t, ctx, "editing the first message", chromedp.Click(chromedp.CSS(`.msg.user button.edit[data-turn="1"]`)))
	poll[bool](t, ctx, "the message in the composer", `document.getElementById('message').value === 'one'`)
	run(t, ctx, "changing and sending it", chromedp.SendKeys(chromedp.ID("message"), " (edited)"), chromedp.Click(chromedp.ID("send")))
	poll[bool](t, ctx, "the edited message's answer, in a new chat", answers("4 saw one (edited)"))
	poll[bool](t, ctx, "three sessions in the sidebar", `document.querySelectorAll('#sessions .session').length === 3`)

	// The store: the original and its branch, each of two turns, and the
	// edited chat of one.
	var got []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		page, err := store.List(context.Background(), session.ListOptions{Owner: "e2e"})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, info := range page.Sessions {
			s, err := store.Load(context.Background(), info.ID)
			if err != nil {
				t.Fatal(err)
			}
			var users []string
			for _, m := range s.Messages {
				if m.Role == llm.RoleUser {
					users = append(users, m.Text())
				}
			}
			got = append(got, fmt.Sprintf("%d:%s", s.Turns, strings.Join(users, "+")))
		}
		sort.Strings(got)
		if strings.Join(got, " ") == "1:one (edited) 2:one+two 2:one+two" || time.Now().After(deadline) {
			break
		}
	}
	if strings.Join(got, " ") != "1:one (edited) 2:one+two 2:one+two" {
		t.Fatalf("the stored sessions: %q", got)
	}
}

// jsonList is the JSON array of strings, as JSON.stringify writes it.
func jsonList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(q, ",") + "]"
}
