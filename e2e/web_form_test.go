package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWebPageAnswersAForm drives the page in headless Chromium through an
// MCP server's request for input (mcp.AskApprover, as agcore serve's
// elicitor asks it): the form is shown with its fields, sending it with
// the required name left empty shows the server's one-line reason and
// keeps the form, and the filled-in answer reaches the tool, default
// included.
func TestWebPageAnswersAForm(t *testing.T) {
	chromium(t)
	const schema = `{"type":"object","properties":{"name":{"type":"string","title":"Name"},"seats":{"type":"integer","default":2},"class":{"type":"string","enum":["economy","business"],"default":"economy"}},"required":["name","seats"]}`
	broker := &approval.Broker{}
	got := make(chan string, 1)
	book := tool.MustFunc("book", "Book a trip.", func(ctx context.Context, _ struct{}) (string, error) {
		res, err := mcp.AskApprover(ctx, broker, "elicitation-1", "travel", &sdk.ElicitParams{Message: "Who travels?", RequestedSchema: json.RawMessage(schema)})
		if err != nil {
			return "", err
		}
		s := fmt.Sprintf("%s %v %v %v", res.Action, res.Content["name"], res.Content["seats"], res.Content["class"])
		got <- s
		return s, nil
	})
	model := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "book", `{}`)), llmtest.Text("Booked.")).Verify(t)
	srv := webServerWith(t, broker, model, memstore.New(), book)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("token-input")))
	run(t, ctx, "giving the token", chromedp.SendKeys(chromedp.ID("token-input"), webToken), chromedp.Click(chromedp.ID("token-ok")))
	poll[bool](t, ctx, "the page to be ready", `document.body.dataset.ready === '1'`)
	run(t, ctx, "sending a message", chromedp.SendKeys(chromedp.ID("message"), "Book me a trip"), chromedp.Click(chromedp.ID("send")))

	poll[bool](t, ctx, "the form", `!!document.querySelector('.tool.pending .form input[name=name]') && document.querySelector('.tool.pending .form-question').textContent === 'Who travels?'`)
	if v := poll[string](t, ctx, "the default seats", `document.querySelector('.tool.pending .form input[name=seats]').value`); v != "2" {
		t.Fatalf("seats shows %q, want its default 2", v)
	}
	screenshot(t, ctx, "form.png")
	run(t, ctx, "sending the form without a name", chromedp.Click(chromedp.CSS(".tool.pending .approve")))
	poll[bool](t, ctx, "the reason", `(document.querySelector('.tool.pending .approval .error') || {}).textContent?.includes('"name" is required') || false`)
	run(t, ctx, "filling in the name", chromedp.SendKeys(chromedp.CSS(".tool.pending .form input[name=name]"), "Ada"),
		chromedp.Click(chromedp.CSS(".tool.pending .approve")))
	poll[bool](t, ctx, "the form answered", `!document.querySelector('.tool.pending') && [...document.querySelectorAll('.tool .tool-state')].some((e) => e.textContent === 'answered')`)
	select {
	case s := <-got:
		if s != "accept Ada 2 economy" {
			t.Fatalf("the server got %q", s)
		}
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	poll[bool](t, ctx, "the final answer", `[...document.querySelectorAll('.msg.assistant .text')].some((e) => e.textContent.includes('Booked.'))`)
}
