package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// echoProvider is an OpenAI-compatible model server that streams "echo: "
// and the last user message, as often as it is asked.
func echoProvider(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		last := ""
		for _, m := range req.Messages {
			if s, ok := m.Content.(string); ok && m.Role == "user" {
				last = s
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"echo: "}}]}`,
			fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q},"finish_reason":"stop"}]}`, last),
			`{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// startServe runs the built CLI's agcore serve against the provider and
// returns its base URL; the server is stopped with an interrupt at the
// end of the test, which must exit 0.
func startServe(t *testing.T, provider string) string {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, cli, "serve", "--addr", "127.0.0.1:0", "--store", "memory:", "--tools", "")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "AGCORE_HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"AGCORE_PROVIDER=compatible", "OPENAI_BASE_URL=" + provider + "/v1", "AGCORE_MODEL=local", "AGCORE_RETRIES=0",
		"AGCORE_SERVE_TOKENS=go=go-secret"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		defer cancel()
		cmd.Process.Signal(os.Interrupt)
		for range lines {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("agcore serve exited with %v", err)
		}
	})
	re := regexp.MustCompile(`listening on (http://\S+)`)
	for line := range lines {
		if m := re.FindStringSubmatch(line); m != nil {
			go func() {
				for range lines {
				}
			}()
			return m[1]
		}
		t.Logf("stderr: %s", line)
	}
	t.Fatal("agcore serve never said where it listens")
	return ""
}

// TestOpenAIGoAgainstServe drives the built CLI's agcore serve with
// OpenAI's official Go SDK: models, Chat Completions (plain and streamed,
// with usage), Responses (plain, continued with previous_response_id,
// streamed) and the SDK's error type.
func TestOpenAIGoAgainstServe(t *testing.T) {
	base := startServe(t, echoProvider(t).URL)
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("go-secret"), option.WithMaxRetries(0))
	ctx := context.Background()

	models, err := client.Models.List(ctx)
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "agcore" || models.Data[0].OwnedBy != "agcore" {
		t.Fatalf("models %+v, %v", models, err)
	}

	chat, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "agcore",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("hello")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if chat.Choices[0].Message.Content != "echo: hello" || chat.Choices[0].FinishReason != "stop" || chat.Usage.TotalTokens != 13 || chat.Object != "chat.completion" {
		t.Fatalf("chat %s", chat.RawJSON())
	}

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "agcore",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("streamed")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Choices[0].Message.Content != "echo: streamed" || acc.Choices[0].FinishReason != "stop" || acc.Usage.TotalTokens != 13 {
		t.Fatalf("accumulated %+v", acc.ChatCompletion)
	}

	r1, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "agcore", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("one")}})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "agcore", PreviousResponseID: openai.String(r1.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("two")}})
	if err != nil {
		t.Fatal(err)
	}
	if r1.OutputText() != "echo: one" || r2.OutputText() != "echo: two" || r2.PreviousResponseID != r1.ID || r2.Status != "completed" || r2.Usage.TotalTokens != 13 {
		t.Fatalf("responses %s\n%s", r1.RawJSON(), r2.RawJSON())
	}

	rs := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "agcore", PreviousResponseID: openai.String(r2.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("three")}})
	var text strings.Builder
	var completed *responses.Response
	seq := int64(0)
	for rs.Next() {
		ev := rs.Current()
		if ev.SequenceNumber != seq {
			t.Fatalf("event %s has sequence number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			r := ev.Response
			completed = &r
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "echo: three" || completed == nil || completed.OutputText() != "echo: three" || completed.PreviousResponseID != r2.ID {
		t.Fatalf("streamed %q, completed %+v", text.String(), completed)
	}

	// An earlier response than the latest: the conversation branches there.
	branch, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "agcore", PreviousResponseID: openai.String(r1.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}})
	if err != nil || branch.OutputText() != "echo: x" || branch.PreviousResponseID != r1.ID || branch.ID == r2.ID || !strings.HasSuffix(branch.ID, "_2") {
		t.Fatalf("a branch from the first response: %+v, %v", branch, err)
	}

	// Errors come back as the SDK's *openai.Error with the code.
	var apiErr *openai.Error
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "nope", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" {
		t.Fatalf("unknown model: %v", err)
	}
	bad := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("wrong"), option.WithMaxRetries(0))
	_, err = bad.Models.List(ctx)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" {
		t.Fatalf("a wrong token: %v", err)
	}
}

// TestOpenAIGoBackground drives background responses of the built CLI's
// agcore serve with OpenAI's Go SDK: created in the background and polled
// to its end; streamed in the background, left after its first events and
// resumed with GetStreaming and StartingAfter to response.completed, the
// sequence numbers following on; cancelling a response that ended
// returns it; a response not made in the background cannot be cancelled.
func TestOpenAIGoBackground(t *testing.T) {
	base := startServe(t, echoProvider(t).URL)
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("go-secret"), option.WithMaxRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "agcore", Background: openai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("polled")}})
	if err != nil || !r.Background || (r.Status != "in_progress" && r.Status != "queued" && r.Status != "completed") {
		t.Fatalf("created in the background: %+v, %v", r, err)
	}
	for r.Status != "completed" {
		if r, err = client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil {
			t.Fatal(err)
		}
		if r.Status == "failed" || r.Status == "cancelled" {
			t.Fatalf("polled: %+v", r)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r.OutputText() != "echo: polled" {
		t.Fatalf("polled to its end: %q", r.OutputText())
	}

	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "agcore", Background: openai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("resumed")}})
	var id string
	var last int64 = -1
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != last+1 {
			t.Fatalf("event %d after %d", ev.SequenceNumber, last)
		}
		last = ev.SequenceNumber
		if ev.Type == "response.created" {
			id = ev.Response.ID
		}
		if last == 2 {
			break // leave after three events
		}
	}
	stream.Close()
	if id == "" {
		t.Fatalf("no response.created: %v", stream.Err())
	}
	resumed := client.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{StartingAfter: openai.Int(last)})
	var text strings.Builder
	var final string
	for resumed.Next() {
		ev := resumed.Current()
		if ev.SequenceNumber != last+1 {
			t.Fatalf("resumed event %d after %d", ev.SequenceNumber, last)
		}
		last = ev.SequenceNumber
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
		final = ev.Type
	}
	if err := resumed.Err(); err != nil || final != "response.completed" {
		t.Fatalf("resumed to %q: %v", final, err)
	}
	if done, err := client.Responses.Get(ctx, id, responses.ResponseGetParams{}); err != nil || done.OutputText() != "echo: resumed" {
		t.Fatalf("the resumed response: %+v %v", done, err)
	}

	if c, err := client.Responses.Cancel(ctx, id); err != nil || c.Status != "completed" {
		t.Fatalf("cancelling a response that ended: %+v %v", c, err)
	}
	fg, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "agcore", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("fg")}})
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *openai.Error
	if _, err := client.Responses.Cancel(ctx, fg.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Fatalf("cancelling a foreground response: %v", err)
	}
}
