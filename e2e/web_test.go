package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// webToken is the bearer token the test server wants on /api/.
const webToken = "e2e-token"

// slowModel plays a scripted model's stream with a pause before each delta,
// so the page is seen rendering a turn as it arrives.
type slowModel struct {
	*llmtest.Model
	delay time.Duration
}

func (m slowModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for ev, err := range m.Model.Stream(ctx, req) {
			if err == nil && (ev.Type == llm.EventTextDelta || ev.Type == llm.EventThinkingDelta) {
				select {
				case <-time.After(m.delay):
				case <-ctx.Done():
					yield(llm.Event{}, ctx.Err())
					return
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// chromium returns the browser's path, or skips the test (fails it under
// CI) when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("AGCORE_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no chromium at %s (CI is set): run .ci/chromium-setup.sh or set AGCORE_CHROMIUM", path)
		}
		t.Skipf("no chromium at %s: run .ci/chromium-setup.sh or set AGCORE_CHROMIUM", path)
	}
	return path
}

// webServer serves web.New on 127.0.0.1 behind a stand-in for package
// serve's auth layer: /api/ wants the bearer token and gets the principal
// "e2e".
func webServer(t *testing.T, model llm.Model, store session.Store, tools ...tool.Tool) *httptest.Server {
	t.Helper()
	return webServerWith(t, &approval.Broker{}, model, store, tools...)
}

// webServerWith is webServer deciding through broker.
func webServerWith(t *testing.T, broker *approval.Broker, model llm.Model, store session.Store, tools ...tool.Tool) *httptest.Server {
	t.Helper()
	a, err := agent.New(model, agent.Config{Name: "helper", Tools: tools, Store: store, Approver: broker,
		Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "helper", Description: "A scripted test agent", Agent: a, Store: store, Model: "agents-current-model"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(set, broker, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			if r.Header.Get("Authorization") != "Bearer "+webToken {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"error":{"message":"a bearer token is required"}}`)
				return
			}
			r = r.WithContext(host.WithPrincipal(r.Context(), "e2e"))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// browser starts a headless Chromium with the flags this machine needs and
// returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// run runs actions with a time limit, failing the test with what it was
// doing.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// poll waits for a JavaScript predicate and returns its value. The
// predicate must not throw: an exception ends chromedp's polling.
func poll[T any](t *testing.T, ctx context.Context, what, expr string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Poll[T](expr, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("waiting for %s: %v\nthe transcript:\n%s", what, err, transcriptHTML(ctx))
	}
	return v
}

// transcriptHTML returns the page's transcript markup, for failure messages.
func transcriptHTML(ctx context.Context) string {
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	html, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById('transcript').outerHTML`))
	if err != nil {
		return err.Error()
	}
	if len(html) > 8000 {
		html = html[len(html)-8000:]
	}
	return html
}

// TestWebPage drives the page in headless Chromium: the token prompt, a
// streamed turn whose tool call needs approval, the stored transcript after
// a reload, a second session, and a deletion.
func TestWebPage(t *testing.T) {
	chromium(t)
	const (
		thinking = "The user wants notes.txt deleted; that needs approval."
		first    = "Sure, I will delete notes.txt for you. It only takes a moment."
		final    = "Done: notes.txt is **gone**, and nothing else was touched.\n\n- kept: `todo.txt`\n- kept: *drafts/*"
		shown    = "Done: notes.txt is gone, and nothing else was touched." // final's first paragraph, as rendered
		hello    = `Hello! <img src=x onerror="document.body.dataset.pwned=1"> How can I help?`
	)
	var mu sync.Mutex
	var deleted []string
	del := tool.MustFunc("delete_file", "Delete a file.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		deleted = append(deleted, in.Path)
		return "deleted " + in.Path, nil
	}, tool.WithApproval())
	model := llmtest.New(
		llmtest.Reply(llm.Thinking{Text: thinking}, llm.Text{Text: first}, llmtest.Call("call_1", "delete_file", `{"path":"notes.txt"}`)).
			WithUsage(llm.Usage{InputTokens: 1200, OutputTokens: 80}),
		llmtest.Text(final).WithUsage(llm.Usage{InputTokens: 1350, OutputTokens: 40}),
		llmtest.Text(hello).WithUsage(llm.Usage{InputTokens: 900, OutputTokens: 12}),
		llmtest.Hang(), // stopped from the page
		llmtest.Reply(llmtest.Call("call_9", "delete_file", `{"path":"other.txt"}`)), // another client's turn
		llmtest.Text("Deleted."),
	).Verify(t).WithChunkSize(6).WithInfo(llm.ModelInfo{Provider: "llmtest", Name: "scripted-1", Price: &llm.Price{Input: 3, Output: 15}})
	store := memstore.New()
	srv := webServer(t, slowModel{Model: model, delay: 40 * time.Millisecond}, store, del)
	ctx := browser(t)

	var cmu sync.Mutex
	var consoleErrors []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			s := m.String()
			if (m.IsException() || strings.Contains(strings.ToLower(s), "error")) && !strings.Contains(s, "401") {
				cmu.Lock()
				consoleErrors = append(consoleErrors, s)
				cmu.Unlock()
			}
		}
	}()

	// The API answers 401: the page asks for the token (again after a
	// wrong one), once per tab.
	run(t, ctx, "opening the page", chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("token-input")))
	run(t, ctx, "giving a wrong token", chromedp.SendKeys(chromedp.ID("token-input"), "wrong"), chromedp.Click(chromedp.ID("token-ok")))
	poll[bool](t, ctx, "the prompt again", `document.getElementById('token-dialog').open && document.getElementById('token-why').textContent.includes('refused')`)
	run(t, ctx, "giving the token", chromedp.SendKeys(chromedp.ID("token-input"), webToken), chromedp.Click(chromedp.ID("token-ok")))
	poll[bool](t, ctx, "the page to be ready", `document.body.dataset.ready === '1' && document.querySelector('#agent').value === 'helper'`)
	if tok := poll[string](t, ctx, "the stored token", `sessionStorage.getItem('agcore-token')`); tok != webToken {
		t.Fatalf("sessionStorage token %q", tok)
	}

	// A turn streams in: thinking, then text that grows.
	run(t, ctx, "sending a message", chromedp.SendKeys(chromedp.ID("message"), "Please delete notes.txt"), chromedp.Click(chromedp.ID("send")))
	poll[bool](t, ctx, "the thinking", `(document.querySelector('.msg.assistant details.thinking') || {}).textContent?.includes('needs approval') || false`)
	partial := poll[string](t, ctx, "part of the answer",
		fmt.Sprintf(`(() => { const e = document.querySelector('.msg.assistant .text'); const s = e ? e.textContent : ''; return s.length > 0 && s.length < %d ? s : false })()`, len(first)))
	if !strings.HasPrefix(first, partial) || partial == first {
		t.Fatalf("partial text %q", partial)
	}
	poll[bool](t, ctx, "the whole first answer", fmt.Sprintf(`document.querySelector('.msg.assistant .text').textContent === %q`, first))

	// The tool call needs approval: nothing runs until Approve is clicked.
	poll[bool](t, ctx, "the Approve button", `!!document.querySelector('.tool.pending .approve') && document.querySelector('.tool .tool-name').textContent === 'delete_file'`)
	if strings.Contains(poll[string](t, ctx, "the tool's arguments", `document.querySelector('.tool .tool-args pre').textContent`), `"path": "notes.txt"`) == false {
		t.Fatal("the arguments are not shown")
	}
	mu.Lock()
	ranEarly := len(deleted) > 0
	mu.Unlock()
	if ranEarly {
		t.Fatal("the tool ran before approval")
	}
	screenshot(t, ctx, "approval.png")
	run(t, ctx, "approving", chromedp.Click(chromedp.CSS(".tool.pending .approve")))
	poll[bool](t, ctx, "the tool result", `(document.querySelector('.tool .tool-result') || {}).textContent === 'deleted notes.txt'`)
	poll[bool](t, ctx, "the final answer", fmt.Sprintf(`[...document.querySelectorAll('.msg.assistant .text p')].some((e) => e.textContent === %q)`, shown))
	poll[bool](t, ctx, "the answer's Markdown", `(() => {
		const t = [...document.querySelectorAll('.msg.assistant .text')].pop();
		return t.querySelector('p strong')?.textContent === 'gone' && t.querySelectorAll('ul > li').length === 2 &&
			t.querySelector('li code')?.textContent === 'todo.txt' && t.querySelector('li em')?.textContent === 'drafts/';
	})()`)
	usage := poll[string](t, ctx, "the turn's usage", `(() => { const e = document.querySelector('.turn-usage.final'); return e ? e.textContent : false })()`)
	if !strings.Contains(usage, "2,550 in") || !strings.Contains(usage, "120 out") || !strings.Contains(usage, "$0.00945") {
		t.Fatalf("turn usage %q", usage)
	}
	mu.Lock()
	if len(deleted) != 1 || deleted[0] != "notes.txt" {
		t.Fatalf("deleted %v", deleted)
	}
	mu.Unlock()
	poll[bool](t, ctx, "the session in the list", `document.querySelectorAll('#sessions .session').length === 1 && document.querySelector('#sessions .session-title').textContent === 'Please delete notes.txt' && document.querySelector('#sessions .session-meta').textContent.includes('1 turn')`)
	screenshot(t, ctx, "turn.png")

	// The session is the principal's (host.Sessions), and the sidebar
	// labels it with its own model, not the agent's.
	page, err := store.List(context.Background(), session.ListOptions{Owner: "e2e"})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].Model != "scripted-1" {
		t.Fatalf("stored sessions %+v, %v", page, err)
	}
	sid := page.Sessions[0].ID
	poll[bool](t, ctx, "the session's own model in the list", fmt.Sprintf(`document.querySelector('#sessions .session-meta').textContent.startsWith(%q)`, page.Sessions[0].Model+" · "))

	// After a reload, the token is remembered and the open session reopens
	// with its transcript.
	run(t, ctx, "reloading", chromedp.Reload())
	poll[bool](t, ctx, "the reloaded page", `document.body.dataset.ready === '1' && !document.getElementById('token-dialog').open && document.querySelectorAll('#sessions .session').length === 1`)
	poll[bool](t, ctx, "the stored transcript", fmt.Sprintf(`(() => {
		const t = document.getElementById('transcript').textContent;
		return [%q, %q, %q, %q, 'deleted notes.txt', 'delete_file'].every((s) => t.includes(s));
	})()`, "Please delete notes.txt", thinking, first, shown))
	poll[bool](t, ctx, "the session's totals", `document.getElementById('session-bar').textContent.includes('2,670 tokens')`)

	// A second session, then the first is deleted.
	run(t, ctx, "a new chat", chromedp.Click(chromedp.ID("new-session")))
	poll[bool](t, ctx, "an empty transcript", `document.querySelectorAll('#transcript > *').length === 0`)
	run(t, ctx, "sending hello", chromedp.SendKeys(chromedp.ID("message"), "Hello"), chromedp.Click(chromedp.ID("send")))
	poll[bool](t, ctx, "the hello answer", fmt.Sprintf(`[...document.querySelectorAll('.msg.assistant .text')].some((e) => e.textContent === %q) && !!document.querySelector('.turn-usage.final')`, hello))
	// The answer's markup is shown as text, never run.
	if pwned := poll[string](t, ctx, "no injected markup", `document.querySelector('#transcript img') ? 'an img element' : (document.body.dataset.pwned ? 'ran' : 'none')`); pwned != "none" {
		t.Fatalf("the model's markup became HTML: %s", pwned)
	}
	poll[bool](t, ctx, "two sessions", `document.querySelectorAll('#sessions .session').length === 2`)
	run(t, ctx, "deleting the first session", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#sessions .session[data-id=%q] .session-delete`, sid))))
	poll[bool](t, ctx, "one session left", fmt.Sprintf(`document.querySelectorAll('#sessions .session').length === 1 && !document.querySelector('#sessions .session[data-id=%q]')`, sid))
	if _, err := store.Load(context.Background(), sid); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("the deleted session loads: %v", err)
	}

	// Stop cancels the running turn: nothing is stored.
	helloID := poll[string](t, ctx, "the open session", `document.getElementById('session-bar').title`)
	run(t, ctx, "sending a turn that hangs", chromedp.SendKeys(chromedp.ID("message"), "Take your time"), chromedp.Click(chromedp.ID("send")))
	poll[bool](t, ctx, "the Stop button", `!document.getElementById('stop').hidden`)
	for deadline := time.Now().Add(10 * time.Second); model.Calls() < 4; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hanging turn never reached the model")
		}
	}
	run(t, ctx, "stopping", chromedp.Click(chromedp.ID("stop")))
	poll[bool](t, ctx, "the stopped turn", `document.getElementById('transcript').textContent.includes('stopped; the turn was not stored') && document.getElementById('stop').hidden`)
	if s, err := store.Load(context.Background(), helloID); err != nil || s.Turns != 1 {
		t.Fatalf("after Stop, the session has %v turns (%v), want 1", s, err)
	}

	// A call of another client's turn (same principal) waits in the
	// sidebar until the page approves it.
	other := externalTurn(t, srv, "delete other.txt")
	poll[bool](t, ctx, "the other turn's call in the sidebar", `!document.getElementById('approvals-panel').hidden && document.querySelector('#approvals .tool-name').textContent === 'delete_file' && document.querySelector('#approvals pre').textContent.includes('other.txt')`)
	screenshot(t, ctx, "sidebar.png")
	run(t, ctx, "approving the other turn's call", chromedp.Click(chromedp.CSS("#approvals .approve")))
	if got := <-other; !strings.Contains(got, `"text":"deleted other.txt"`) || !strings.Contains(got, "event: finish") {
		t.Fatalf("the other client's stream:\n%s", got)
	}
	poll[bool](t, ctx, "the sidebar emptied", `document.getElementById('approvals-panel').hidden`)

	cmu.Lock()
	defer cmu.Unlock()
	if len(consoleErrors) > 0 {
		t.Fatalf("console errors:\n%s", strings.Join(consoleErrors, "\n"))
	}
}

// screenshot saves the page to AGCORE_SCREENSHOT_DIR, when set (for a
// person to look at; never committed).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("AGCORE_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// externalTurn starts a turn over the API as another client of the same
// principal would, and returns a channel that gets its whole event stream.
func externalTurn(t *testing.T, srv *httptest.Server, message string) <-chan string {
	t.Helper()
	body := fmt.Sprintf(`{"agent":"helper","message":%q}`, message)
	req, err := http.NewRequest("POST", srv.URL+"/api/chat", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+webToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(web.CSRFHeader, "1")
	out := make(chan string, 1)
	go func() {
		resp, err := srv.Client().Do(req)
		if err != nil {
			out <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- string(b)
	}()
	return out
}
