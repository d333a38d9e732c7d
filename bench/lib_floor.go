package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// The floor is the least a Go client can do: one net/http request, the
// response body split into lines, and (floor-json) each data payload decoded
// with encoding/json into a struct holding only what a caller needs.

type floorOpenAIRequest struct {
	Model    string         `json:"model"`
	Messages []floorMessage `json:"messages"`
	Stream   bool           `json:"stream"`
}

type floorAnthropicRequest struct {
	Model     string         `json:"model"`
	MaxTokens int            `json:"max_tokens"`
	Messages  []floorMessage `json:"messages"`
	Stream    bool           `json:"stream"`
}

type floorResponsesRequest struct {
	Model  string         `json:"model"`
	Input  []floorMessage `json:"input"`
	Stream bool           `json:"stream"`
}

type floorGeminiRequest struct {
	Contents []floorContent `json:"contents"`
}

type floorContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text string `json:"text"`
	} `json:"parts"`
}

type floorMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// floorOpenAIChunk is the minimal decoding of an OpenAI stream chunk.
type floorOpenAIChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
}

// floorAnthropicEvent is the minimal decoding of an Anthropic stream event.
type floorAnthropicEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
}

// floorResponsesEvent is the minimal decoding of a Responses API stream
// event.
type floorResponsesEvent struct {
	Type  string `json:"type"`
	Delta string `json:"delta"`
}

// floorGeminiChunk is the minimal decoding of a Gemini stream chunk.
type floorGeminiChunk struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
	} `json:"candidates"`
}

// openAIExtraDataLines is how many data lines of an OpenAI stream carry no
// text (the role chunk, the finish chunk and the usage chunk; [DONE] is not
// counted).
const openAIExtraDataLines = 3

func floorNew(wire Wire, decode bool) func(context.Context, Env) (StreamFunc, error) {
	return func(_ context.Context, env Env) (StreamFunc, error) {
		return func(ctx context.Context, model string) (int, int, error) {
			return floorStream(ctx, env, wire, decode, model)
		}, nil
	}
}

func floorStream(ctx context.Context, env Env, wire Wire, decode bool, model string) (chunks, textLen int, err error) {
	var body []byte
	url := env.BaseURL
	msgs := []floorMessage{{Role: "user", Content: Prompt}}
	switch wire {
	case WireAnthropic:
		url += "/v1/messages"
		body, err = json.Marshal(floorAnthropicRequest{Model: model, MaxTokens: 1024, Messages: msgs, Stream: true})
	case WireResponses:
		url += "/v1/responses"
		body, err = json.Marshal(floorResponsesRequest{Model: model, Input: msgs, Stream: true})
	case WireGemini:
		// The model is in the path; the key goes in x-goog-api-key.
		url += "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
		c := floorContent{Role: "user"}
		c.Parts = append(c.Parts, struct {
			Text string `json:"text"`
		}{Prompt})
		body, err = json.Marshal(floorGeminiRequest{Contents: []floorContent{c}})
	default:
		url += "/v1/chat/completions"
		body, err = json.Marshal(floorOpenAIRequest{Model: model, Messages: msgs, Stream: true})
	}
	if err != nil {
		return 0, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	switch wire {
	case WireAnthropic:
		req.Header.Set("X-Api-Key", APIKey)
		req.Header.Set("Anthropic-Version", "2023-06-01")
	case WireGemini:
		req.Header.Set("X-Goog-Api-Key", APIKey)
	default:
		req.Header.Set("Authorization", "Bearer "+APIKey)
	}
	resp, err := env.HTTP.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return 0, 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	}

	if !decode {
		textLen = -1
	}
	dataLines := 0
	r := bufio.NewReaderSize(resp.Body, 4096)
	var long []byte // a line longer than the reader's buffer
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = long[:0]
		}
		if err != nil {
			if wire == WireGemini && err == io.EOF && len(line) == 0 {
				// A Gemini stream just ends after its last chunk, the one
				// with the finishReason, which carries no text here.
				if !decode {
					chunks = dataLines - 1
				}
				return chunks, textLen, nil
			}
			if err == io.EOF && len(line) == 0 {
				return 0, 0, errors.New("stream ended before its final event")
			}
			if err == io.EOF {
				err = errors.New("stream ended in the middle of a line")
			}
			return 0, 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if (wire == WireAnthropic || wire == WireResponses) && !decode {
			// Count text events by their event line alone.
			if ev, ok := bytes.CutPrefix(line, []byte("event:")); ok {
				ev = bytes.TrimSpace(ev)
				switch string(ev) {
				case "content_block_delta", "response.output_text.delta":
					chunks++
				case "message_stop", "response.completed":
					return chunks, textLen, nil
				}
			}
			continue
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		if len(data) > 0 && data[0] == ' ' {
			data = data[1:]
		}
		switch {
		case wire == WireOpenAI && string(data) == "[DONE]":
			if !decode {
				chunks = dataLines - openAIExtraDataLines
			}
			return chunks, textLen, nil
		case !decode:
			dataLines++
		case wire == WireGemini:
			var c floorGeminiChunk
			if err := json.Unmarshal(data, &c); err != nil {
				return 0, 0, err
			}
			for _, cand := range c.Candidates {
				for _, p := range cand.Content.Parts {
					if p.Text != "" {
						chunks++
						textLen += len(p.Text)
					}
				}
			}
		case wire == WireOpenAI:
			var c floorOpenAIChunk
			if err := json.Unmarshal(data, &c); err != nil {
				return 0, 0, err
			}
			if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
				chunks++
				textLen += len(c.Choices[0].Delta.Content)
			}
		case wire == WireResponses:
			var ev floorResponsesEvent
			if err := json.Unmarshal(data, &ev); err != nil {
				return 0, 0, err
			}
			switch ev.Type {
			case "response.output_text.delta":
				chunks++
				textLen += len(ev.Delta)
			case "response.completed":
				return chunks, textLen, nil
			}
		default:
			var ev floorAnthropicEvent
			if err := json.Unmarshal(data, &ev); err != nil {
				return 0, 0, err
			}
			switch ev.Type {
			case "content_block_delta":
				if ev.Delta.Type == "text_delta" {
					chunks++
					textLen += len(ev.Delta.Text)
				}
			case "message_stop":
				return chunks, textLen, nil
			}
		}
	}
}
