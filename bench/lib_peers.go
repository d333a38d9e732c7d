package bench

import (
	"context"
	"errors"
	"io"
	"sync"

	"charm.land/fantasy"
	fantasyanthropic "charm.land/fantasy/providers/anthropic"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	einoopenai "github.com/cloudwego/eino-ext/components/model/openai"
	einomodel "github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
	oairesponses "github.com/openai/openai-go/v3/responses"
	"github.com/tmc/langchaingo/llms"
	lcopenai "github.com/tmc/langchaingo/llms/openai"
	"google.golang.org/genai"
)

// Each peer is used the way its documentation streams text, reading only
// the text deltas, with retries off and our HTTP client.

func peerLibraries() []Library {
	return []Library{
		{Name: "openai-go", Wire: WireOpenAI, Note: "github.com/openai/openai-go/v3 Chat.Completions.NewStreaming, Next/Current", New: newOpenAIGo},
		{Name: "openai-go (responses)", Wire: WireResponses, Note: "github.com/openai/openai-go/v3 Responses.NewStreaming, Next/Current", New: newOpenAIGoResponses},
		{Name: "anthropic-sdk-go", Wire: WireAnthropic, Note: "github.com/anthropics/anthropic-sdk-go/v2 Messages.NewStreaming, Next/Current", New: newAnthropicSDK},
		{Name: "langchaingo", Wire: WireOpenAI, Note: "github.com/tmc/langchaingo llms/openai GenerateContent with WithStreamingFunc", New: newLangchaingo},
		{Name: "fantasy", Wire: WireOpenAI, Note: "charm.land/fantasy v0.41.2 providers/openai LanguageModel.Stream, in its own module and process (it needs openai-go v3.50.0)", Remote: "peers/fantasyopenai"},
		{Name: "fantasy (anthropic)", Wire: WireAnthropic, Note: "charm.land/fantasy providers/anthropic LanguageModel.Stream", New: newFantasy},
		{Name: "genai", Wire: WireGemini, Note: "google.golang.org/genai Models.GenerateContentStream, Text of each response", New: newGenai},
		{Name: "eino", Wire: WireOpenAI, Note: "github.com/cloudwego/eino-ext model/openai ChatModel.Stream, Recv", New: newEino},
	}
}

func newOpenAIGo(_ context.Context, env Env) (StreamFunc, error) {
	client := openai.NewClient(
		openaioption.WithBaseURL(env.BaseURL+"/v1"),
		openaioption.WithAPIKey(APIKey),
		openaioption.WithHTTPClient(env.HTTP),
		openaioption.WithMaxRetries(0),
	)
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:    model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(Prompt)},
		})
		defer stream.Close()
		for stream.Next() {
			c := stream.Current()
			if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
				chunks++
				textLen += len(c.Choices[0].Delta.Content)
			}
		}
		return chunks, textLen, stream.Err()
	}, nil
}

func newOpenAIGoResponses(_ context.Context, env Env) (StreamFunc, error) {
	client := openai.NewClient(
		openaioption.WithBaseURL(env.BaseURL+"/v1"),
		openaioption.WithAPIKey(APIKey),
		openaioption.WithHTTPClient(env.HTTP),
		openaioption.WithMaxRetries(0),
	)
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		stream := client.Responses.NewStreaming(ctx, oairesponses.ResponseNewParams{
			Model: model,
			Input: oairesponses.ResponseNewParamsInputUnion{OfString: openai.String(Prompt)},
		})
		defer stream.Close()
		for stream.Next() {
			// The union's fields are read directly, as for the other SDKs.
			if ev := stream.Current(); ev.Type == "response.output_text.delta" && ev.Delta != "" {
				chunks++
				textLen += len(ev.Delta)
			}
		}
		return chunks, textLen, stream.Err()
	}, nil
}

func newAnthropicSDK(_ context.Context, env Env) (StreamFunc, error) {
	client := anthropic.NewClient(
		anthropicoption.WithBaseURL(env.BaseURL),
		anthropicoption.WithAPIKey(APIKey),
		anthropicoption.WithHTTPClient(env.HTTP),
		anthropicoption.WithMaxRetries(0),
	)
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model:     model,
			MaxTokens: 1024,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(Prompt))},
		})
		defer stream.Close()
		for stream.Next() {
			ev := stream.Current()
			// The union's fields are read directly: the documented AsAny
			// switch decodes each event a second time.
			if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
				chunks++
				textLen += len(ev.Delta.Text)
			}
		}
		return chunks, textLen, stream.Err()
	}, nil
}

func newLangchaingo(_ context.Context, env Env) (StreamFunc, error) {
	llm, err := lcopenai.New(
		lcopenai.WithBaseURL(env.BaseURL+"/v1"),
		lcopenai.WithToken(APIKey),
		lcopenai.WithModel("bench"),
		lcopenai.WithHTTPClient(env.HTTP),
	)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, Prompt)}
		_, err = llm.GenerateContent(ctx, msgs,
			llms.WithModel(model),
			llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
				if len(chunk) > 0 {
					chunks++
					textLen += len(chunk)
				}
				return nil
			}))
		return chunks, textLen, err
	}, nil
}

func newFantasy(ctx context.Context, env Env) (StreamFunc, error) {
	provider, err := fantasyanthropic.New(
		fantasyanthropic.WithBaseURL(env.BaseURL),
		fantasyanthropic.WithAPIKey(APIKey),
		fantasyanthropic.WithHTTPClient(env.HTTP),
	)
	if err != nil {
		return nil, err
	}
	// A fantasy model is bound to its model name: keep one per name.
	var models sync.Map
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		lm, ok := models.Load(model)
		if !ok {
			m, err := provider.LanguageModel(ctx, model)
			if err != nil {
				return 0, 0, err
			}
			lm, _ = models.LoadOrStore(model, m)
		}
		stream, err := lm.(fantasy.LanguageModel).Stream(ctx, fantasy.Call{
			Prompt: fantasy.Prompt{fantasy.NewUserMessage(Prompt)},
		})
		if err != nil {
			return 0, 0, err
		}
		for part := range stream {
			switch part.Type {
			case fantasy.StreamPartTypeTextDelta:
				if part.Delta != "" {
					chunks++
					textLen += len(part.Delta)
				}
			case fantasy.StreamPartTypeError:
				err = part.Error
			}
		}
		return chunks, textLen, err
	}, nil
}

func newEino(ctx context.Context, env Env) (StreamFunc, error) {
	cm, err := einoopenai.NewChatModel(ctx, &einoopenai.ChatModelConfig{
		BaseURL:    env.BaseURL + "/v1",
		APIKey:     APIKey,
		Model:      "bench",
		HTTPClient: env.HTTP,
	})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		sr, err := cm.Stream(ctx, []*schema.Message{schema.UserMessage(Prompt)}, einomodel.WithModel(model))
		if err != nil {
			return 0, 0, err
		}
		defer sr.Close()
		for {
			msg, err := sr.Recv()
			if errors.Is(err, io.EOF) {
				return chunks, textLen, nil
			}
			if err != nil {
				return chunks, textLen, err
			}
			if msg.Content != "" {
				chunks++
				textLen += len(msg.Content)
			}
		}
	}, nil
}

func newGenai(ctx context.Context, env Env) (StreamFunc, error) {
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  env.HTTP,
		HTTPOptions: genai.HTTPOptions{BaseURL: env.BaseURL},
	})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		for resp, err := range client.Models.GenerateContentStream(ctx, model, genai.Text(Prompt), nil) {
			if err != nil {
				return chunks, textLen, err
			}
			if t := resp.Text(); t != "" {
				chunks++
				textLen += len(t)
			}
		}
		return chunks, textLen, nil
	}, nil
}
