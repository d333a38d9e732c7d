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

	// Errors come back as the SDK's *openai.Error with the code.
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "agcore", PreviousResponseID: openai.String(r1.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || apiErr.Code != "previous_response_not_latest" {
		t.Fatalf("continuing an older response: %v", err)
	}
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
