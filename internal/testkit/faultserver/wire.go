package faultserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// frame is one server-sent event, terminator included.
type frame struct {
	data    []byte
	content bool // carries text or a tool call
	final   bool // one of the events that end the stream
}

// jstr is s as a JSON string.
func jstr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pieces splits the reply's text into its chunks, on rune boundaries.
func (r *Reply) pieces() []string {
	text := r.Text
	if text == "" && len(r.ToolCalls) == 0 {
		text = "ok"
	}
	if text == "" {
		return nil
	}
	n := max(r.Chunks, 1)
	out := make([]string, 0, n)
	start := 0
	for i := range n {
		// Piece i ends at about len*(i+1)/n, moved on to a rune start.
		end := len(text) * (i + 1) / n
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
		if end > start {
			out = append(out, text[start:end])
			start = end
		}
	}
	return out
}

func (r *Reply) usage(chunks int) (in, out int) {
	in, out = r.InputTokens, r.OutputTokens
	if in == 0 {
		in = 10
	}
	if out == 0 {
		out = max(chunks, 1)
	}
	return in, out
}

// splitArgs cuts a tool call's arguments into two fragments, as servers
// stream them.
func splitArgs(args string) []string {
	if args == "" {
		args = "{}"
	}
	h := len(args) / 2
	if h == 0 {
		return []string{args}
	}
	return []string{args[:h], args[h:]}
}

// ---- OpenAI Chat Completions ----

func openaiChunk(id, model, choice string) []byte {
	return []byte(`data: {"id":"` + id + `","object":"chat.completion.chunk","created":0,"model":` + jstr(model) +
		`,"choices":[` + choice + `]}` + "\n\n")
}

func openaiFrames(id, model string, r *Reply) []frame {
	texts := r.pieces()
	fs := []frame{{data: openaiChunk(id, model, `{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`)}}
	for _, t := range texts {
		fs = append(fs, frame{content: true, data: openaiChunk(id, model, `{"index":0,"delta":{"content":`+jstr(t)+`},"finish_reason":null}`)})
	}
	for i, tc := range r.ToolCalls {
		for j, part := range splitArgs(tc.Args) {
			call := `{"index":` + strconv.Itoa(i) + `,"function":{"arguments":` + jstr(part) + `}}`
			if j == 0 {
				call = `{"index":` + strconv.Itoa(i) + `,"id":` + jstr(tc.ID) + `,"type":"function","function":{"name":` +
					jstr(tc.Name) + `,"arguments":` + jstr(part) + `}}`
			}
			fs = append(fs, frame{content: true, data: openaiChunk(id, model, `{"index":0,"delta":{"tool_calls":[`+call+`]},"finish_reason":null}`)})
		}
	}
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	in, out := r.usage(len(texts))
	fs = append(fs,
		frame{final: true, data: openaiChunk(id, model, `{"index":0,"delta":{},"finish_reason":"`+finish+`"}`)},
		frame{final: true, data: []byte(`data: {"id":"` + id + `","object":"chat.completion.chunk","created":0,"model":` + jstr(model) +
			`,"choices":[],"usage":{"prompt_tokens":` + strconv.Itoa(in) + `,"completion_tokens":` + strconv.Itoa(out) +
			`,"total_tokens":` + strconv.Itoa(in+out) + "}}\n\n")},
		frame{final: true, data: []byte("data: [DONE]\n\n")})
	return fs
}

func openaiJSON(id, model string, r *Reply) []byte {
	texts := r.pieces()
	msg := `{"role":"assistant","content":` + jstr(strings.Join(texts, ""))
	if len(r.ToolCalls) > 0 {
		calls := make([]string, len(r.ToolCalls))
		for i, tc := range r.ToolCalls {
			args := tc.Args
			if args == "" {
				args = "{}"
			}
			calls[i] = `{"id":` + jstr(tc.ID) + `,"type":"function","function":{"name":` + jstr(tc.Name) + `,"arguments":` + jstr(args) + `}}`
		}
		msg += `,"tool_calls":[` + strings.Join(calls, ",") + `]`
	}
	msg += "}"
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	in, out := r.usage(len(texts))
	return []byte(`{"id":"` + id + `","object":"chat.completion","created":0,"model":` + jstr(model) +
		`,"choices":[{"index":0,"message":` + msg + `,"finish_reason":"` + finish + `"}],"usage":{"prompt_tokens":` +
		strconv.Itoa(in) + `,"completion_tokens":` + strconv.Itoa(out) + `,"total_tokens":` + strconv.Itoa(in+out) + "}}")
}

// ---- Anthropic Messages ----

func anthropicEvent(typ, data string) []byte {
	return []byte("event: " + typ + "\ndata: " + data + "\n\n")
}

func anthropicFrames(id, model string, r *Reply) []frame {
	texts := r.pieces()
	in, out := r.usage(len(texts))
	fs := []frame{{data: anthropicEvent("message_start", `{"type":"message_start","message":{"id":"`+id+
		`","type":"message","role":"assistant","model":`+jstr(model)+`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+
		strconv.Itoa(in)+`,"output_tokens":1}}}`)}}
	idx := 0
	if len(texts) > 0 {
		fs = append(fs, frame{data: anthropicEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)})
		for _, t := range texts {
			fs = append(fs, frame{content: true, data: anthropicEvent("content_block_delta",
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jstr(t)+`}}`)})
		}
		fs = append(fs, frame{data: anthropicEvent("content_block_stop", `{"type":"content_block_stop","index":0}`)})
		idx++
	}
	for _, tc := range r.ToolCalls {
		i := strconv.Itoa(idx)
		fs = append(fs, frame{content: true, data: anthropicEvent("content_block_start", `{"type":"content_block_start","index":`+i+
			`,"content_block":{"type":"tool_use","id":`+jstr(tc.ID)+`,"name":`+jstr(tc.Name)+`,"input":{}}}`)})
		for _, part := range splitArgs(tc.Args) {
			fs = append(fs, frame{content: true, data: anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":`+i+
				`,"delta":{"type":"input_json_delta","partial_json":`+jstr(part)+`}}`)})
		}
		fs = append(fs, frame{data: anthropicEvent("content_block_stop", `{"type":"content_block_stop","index":`+i+`}`)})
		idx++
	}
	stop := "end_turn"
	if len(r.ToolCalls) > 0 {
		stop = "tool_use"
	}
	fs = append(fs,
		frame{final: true, data: anthropicEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+
			`","stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(out)+`}}`)},
		frame{final: true, data: anthropicEvent("message_stop", `{"type":"message_stop"}`)})
	return fs
}

func anthropicJSON(id, model string, r *Reply) []byte {
	texts := r.pieces()
	var blocks []string
	if len(texts) > 0 {
		blocks = append(blocks, `{"type":"text","text":`+jstr(strings.Join(texts, ""))+`}`)
	}
	for _, tc := range r.ToolCalls {
		args := tc.Args
		if args == "" {
			args = "{}"
		}
		blocks = append(blocks, `{"type":"tool_use","id":`+jstr(tc.ID)+`,"name":`+jstr(tc.Name)+`,"input":`+args+`}`)
	}
	stop := "end_turn"
	if len(r.ToolCalls) > 0 {
		stop = "tool_use"
	}
	in, out := r.usage(len(texts))
	return []byte(`{"id":"` + id + `","type":"message","role":"assistant","model":` + jstr(model) + `,"content":[` +
		strings.Join(blocks, ",") + `],"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":` +
		strconv.Itoa(in) + `,"output_tokens":` + strconv.Itoa(out) + "}}")
}

// ---- Gemini generateContent ----

func geminiChunk(id, model, parts, finish string, in, out int) []byte {
	f := ""
	if finish != "" {
		f = `,"finishReason":"` + finish + `"`
	}
	return []byte(`data: {"candidates":[{"content":{"parts":[` + parts + `],"role":"model"}` + f + `,"index":0}],"usageMetadata":{"promptTokenCount":` +
		strconv.Itoa(in) + `,"candidatesTokenCount":` + strconv.Itoa(out) + `,"totalTokenCount":` + strconv.Itoa(in+out) +
		`},"modelVersion":` + jstr(model) + `,"responseId":"` + id + `"}` + "\r\n\r\n")
}

func geminiCall(tc ToolCall) string {
	args := tc.Args
	if args == "" {
		args = "{}"
	}
	return `{"functionCall":{"id":` + jstr(tc.ID) + `,"name":` + jstr(tc.Name) + `,"args":` + args + `}}`
}

// geminiFrames is a Gemini stream: a first chunk with an empty text part
// (no content), the text chunks, one chunk per call (Gemini sends a call
// whole), and a last chunk with the finishReason and the usage.
func geminiFrames(id, model string, r *Reply) []frame {
	texts := r.pieces()
	in, out := r.usage(len(texts))
	fs := []frame{{data: geminiChunk(id, model, `{"text":""}`, "", in, 0)}}
	for i, t := range texts {
		fs = append(fs, frame{content: true, data: geminiChunk(id, model, `{"text":`+jstr(t)+`}`, "", in, i+1)})
	}
	for _, tc := range r.ToolCalls {
		fs = append(fs, frame{content: true, data: geminiChunk(id, model, geminiCall(tc), "", in, out)})
	}
	return append(fs, frame{final: true, data: geminiChunk(id, model, `{"text":""}`, "STOP", in, out)})
}

func geminiJSON(id, model string, r *Reply) []byte {
	texts := r.pieces()
	var parts []string
	if len(texts) > 0 {
		parts = append(parts, `{"text":`+jstr(strings.Join(texts, ""))+`}`)
	}
	for _, tc := range r.ToolCalls {
		parts = append(parts, geminiCall(tc))
	}
	in, out := r.usage(len(texts))
	body := geminiChunk(id, model, strings.Join(parts, ","), "STOP", in, out)
	return bytes.TrimSuffix(bytes.TrimPrefix(body, []byte("data: ")), []byte("\r\n\r\n"))
}

// geminiStatus is the google.rpc status name Google sends with an HTTP
// status.
func geminiStatus(status int) string {
	switch {
	case status == 429:
		return "RESOURCE_EXHAUSTED"
	case status == 401:
		return "UNAUTHENTICATED"
	case status == 403:
		return "PERMISSION_DENIED"
	case status == 404:
		return "NOT_FOUND"
	case status == 503 || status == 529:
		return "UNAVAILABLE"
	case status == 504:
		return "DEADLINE_EXCEEDED"
	case status == 500:
		return "INTERNAL"
	case status >= 400 && status < 500:
		return "INVALID_ARGUMENT"
	}
	return "UNKNOWN"
}

func geminiError(status int, msg string) string {
	return `{"error":{"code":` + strconv.Itoa(status) + `,"message":` + jstr(msg) + `,"status":"` + geminiStatus(status) + `"}}`
}

// ---- faults ----

// errorBody is the format's error document for an HTTP status.
func errorBody(f Format, status int, msg string) []byte {
	typ, code := "server_error", "server_error"
	switch {
	case status == 429:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
	case status == 529:
		typ, code = "overloaded_error", "overloaded"
	case status == 503:
		typ, code = "overloaded_error", "overloaded"
	case status == 401:
		typ, code = "authentication_error", "invalid_api_key"
	case status >= 400 && status < 500:
		typ, code = "invalid_request_error", "invalid_request_error"
	case status >= 500:
		typ = "api_error"
	}
	if msg == "" {
		msg = fmt.Sprintf("fault server: HTTP %d", status)
	}
	switch f {
	case Anthropic:
		return []byte(`{"type":"error","error":{"type":"` + typ + `","message":` + jstr(msg) + `}}`)
	case Gemini:
		return []byte(geminiError(status, msg))
	}
	return []byte(`{"error":{"message":` + jstr(msg) + `,"type":"` + typ + `","param":null,"code":"` + code + `"}}`)
}

// inBand is the error event of an InBandError stream, or the error document
// of a blocking one.
func inBand(f Format, stream bool, msg string) []byte {
	if msg == "" {
		msg = "Overloaded"
	}
	m := jstr(msg)
	switch {
	case f == Anthropic && stream:
		return anthropicEvent("error", `{"type":"error","error":{"type":"overloaded_error","message":`+m+`}}`)
	case f == Anthropic:
		return []byte(`{"type":"error","error":{"type":"overloaded_error","message":` + m + `}}`)
	case f == Gemini && stream:
		return []byte("data: " + geminiError(503, msg) + "\r\n\r\n")
	case f == Gemini:
		return []byte(geminiError(503, msg))
	case stream:
		return []byte(`data: {"error":{"message":` + m + `,"type":"server_error","param":null,"code":"overloaded"}}` + "\n\n")
	}
	return []byte(`{"error":{"message":` + m + `,"type":"server_error","param":null,"code":"overloaded"}}`)
}

// malformed is an event (or body) that is not JSON.
func malformed(f Format, stream bool) []byte {
	switch {
	case f == Anthropic && stream:
		return anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut`)
	case f == Gemini && stream:
		return []byte(`data: {"candidates":[{"content":{"parts":[{"text":"cut` + "\r\n\r\n")
	case f == Gemini:
		return []byte(`{"candidates":[{"content":{"parts":[{"text":"cut`)
	case stream:
		return []byte(`data: {"id":"x","choices":[{"index":0,"delta":{"content":"cut` + "\n\n")
	}
	return []byte(`{"id":"x","choices":[{"index":0,"message":{"content":"cut`)
}

// oversized is a valid text-delta event whose data is about n bytes.
func oversized(f Format, n int) []byte {
	text := strings.Repeat("x", max(n, 1))
	switch f {
	case Anthropic:
		return anthropicEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"`+text+`"}}`)
	case Gemini:
		return []byte(`data: {"candidates":[{"content":{"parts":[{"text":"` + text + `"}],"role":"model"},"index":0}]}` + "\r\n\r\n")
	}
	return []byte(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}` + "\n\n")
}

// hugeParts returns the head and tail of a valid JSON answer whose text, of
// n bytes of 'x', goes between them.
func hugeParts(f Format, id, model string) (head, tail string) {
	switch f {
	case Anthropic:
		return `{"id":"` + id + `","type":"message","role":"assistant","model":` + jstr(model) + `,"content":[{"type":"text","text":"`,
			`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}`
	case Gemini:
		return `{"candidates":[{"content":{"parts":[{"text":"`,
			`"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":1},"modelVersion":` + jstr(model) + `,"responseId":"` + id + `"}`
	}
	return `{"id":"` + id + `","object":"chat.completion","created":0,"model":` + jstr(model) +
			`,"choices":[{"index":0,"message":{"role":"assistant","content":"`,
		`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`
}
