package openai

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

type wirePart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text,omitempty"`
	ImageURL   *wireImageURL   `json:"image_url,omitempty"`
	InputAudio *wireInputAudio `json:"input_audio,omitempty"`
	File       *wireFile       `json:"file,omitempty"`
}

type wireImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type wireInputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type wireFile struct {
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data,omitempty"`
}

// encodeRequest builds the JSON body for req (see encodeBody).
func (m *Model) encodeRequest(req *llm.Request, stream bool) ([]byte, error) {
	body, _, err := m.encodeBody(req, stream)
	return body, err
}

// encodeBody builds the JSON body for req (appendRequest,
// request_encode.go), then merges Request.Extra in. The body is written
// into a buffer from httpx's pool, returned as buf (body is *buf) for
// httpx.PostBuffer to send and put back; buf is nil when the body is
// elsewhere.
func (m *Model) encodeBody(req *llm.Request, stream bool) (body []byte, buf *[]byte, err error) {
	if req == nil {
		return nil, nil, m.invalid("nil request")
	}
	buf = httpx.GetBuffer(estimateRequestSize(req))
	if *buf, err = m.appendRequest(*buf, req, stream); err != nil {
		httpx.PutBuffer(buf)
		return nil, nil, err
	}
	body = *buf
	if len(req.Extra) > 0 {
		merged, err := httpx.MergeExtra(body, req.Extra)
		httpx.PutBuffer(buf)
		if err != nil {
			return nil, nil, m.invalid(err.Error())
		}
		return merged, nil, nil
	}
	return body, buf, nil
}

// post sends a body from encodeBody.
func (m *Model) post(ctx context.Context, body []byte, buf *[]byte, stream bool) (*http.Response, error) {
	if buf != nil {
		return m.client.PostBuffer(ctx, buf, stream)
	}
	return m.client.Post(ctx, body, stream)
}

// maxTokensParam picks the field MaxTokens is sent in (see WithMaxTokensParam).
func (m *Model) maxTokensParam(model string) string {
	if m.cfg.maxTokensParam != "" {
		return m.cfg.maxTokensParam
	}
	if isOpenAIReasoningFamily(model) {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// isOpenAIReasoningFamily reports whether model is one of OpenAI's reasoning
// families, which reject max_tokens: o1, o3, o4-mini..., gpt-5 and later.
// The id is compared in catalog.Normalize'd form, so a "vendor/" prefix
// (OpenRouter) and case are ignored.
func isOpenAIReasoningFamily(model string) bool {
	model = strings.TrimPrefix(catalog.Normalize(model), "ft:")
	if len(model) >= 2 && model[0] == 'o' && model[1] >= '1' && model[1] <= '9' {
		return true
	}
	if rest, ok := strings.CutPrefix(model, "gpt-"); ok {
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		major, err := strconv.Atoi(rest[:end])
		return err == nil && major >= 5
	}
	return false
}

func (m *Model) invalid(msg string) error {
	return &llm.Error{Kind: llm.KindInvalidRequest, Provider: m.cfg.svc.Provider, Message: msg}
}

// toolCallSpans marks the assistant messages that lie between two user
// messages (or after the last one) in a span where the model called a tool.
// A user message holding only tool results does not end a span.
func toolCallSpans(msgs []llm.Message) []bool {
	marks := make([]bool, len(msgs))
	start := 0
	flush := func(end int) {
		called := false
		for _, msg := range msgs[start:end] {
			if msg.Role == llm.RoleAssistant && msg.HasToolUse() {
				called = true
				break
			}
		}
		for j := start; j < end; j++ {
			marks[j] = called && msgs[j].Role == llm.RoleAssistant
		}
	}
	for i, msg := range msgs {
		if msg.Role == llm.RoleUser && !onlyToolResults(msg.Content) {
			flush(i)
			start = i + 1
		}
	}
	flush(len(msgs))
	return marks
}

func onlyToolResults(blocks []llm.Block) bool {
	for _, b := range blocks {
		if _, ok := b.(llm.ToolResult); !ok {
			return false
		}
	}
	return len(blocks) > 0
}

// part maps one user content block. Empty text, thinking, redacted thinking
// and extension blocks are skipped (ok false).
func (m *Model) part(b llm.Block) (p wirePart, ok bool, err error) {
	switch b := b.(type) {
	case llm.Text:
		if b.Text == "" {
			return p, false, nil
		}
		t := b.Text
		return wirePart{Type: "text", Text: &t}, true, nil
	case llm.Image:
		u := adapter.ImageURL(b)
		if u == "" {
			return p, false, m.invalid("an image block has neither data nor URL")
		}
		return wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: u, Detail: b.Detail}}, true, nil
	case llm.Audio:
		data, mt := b.Data, b.MediaType
		if len(data) == 0 {
			d, dmt, isData := adapter.ParseDataURL(b.URL)
			if !isData {
				return p, false, m.invalid("Chat Completions takes audio only inline (data or a data: URL), not by URL")
			}
			data = d
			if mt == "" {
				mt = dmt
			}
		}
		format, known := audioFormat(mt)
		if !known {
			return p, false, m.invalid(fmt.Sprintf("Chat Completions takes wav or mp3 audio, not %q", mt))
		}
		return wirePart{Type: "input_audio", InputAudio: &wireInputAudio{Data: base64.StdEncoding.EncodeToString(data), Format: format}}, true, nil
	case llm.File:
		return m.filePart(b)
	case llm.Thinking, llm.RedactedThinking, llm.Extension:
		return p, false, nil
	default:
		return p, false, m.invalid(fmt.Sprintf("a user message cannot hold a %s block in Chat Completions", b.BlockType()))
	}
}

// filePart maps a document. Chat Completions takes PDFs (inline or by an
// uploaded file id) as file parts; a text document given inline is sent as a
// text part, as OpenAI's guide advises; anything else is an error.
func (m *Model) filePart(f llm.File) (wirePart, bool, error) {
	if f.FileID != "" {
		return wirePart{Type: "file", File: &wireFile{FileID: f.FileID}}, true, nil
	}
	data, mt, base, inline := adapter.InlineFile(f)
	if !inline {
		return wirePart{}, false, m.invalid("Chat Completions does not fetch files by URL; give the file's data or an uploaded file id")
	}
	switch {
	case base == "application/pdf":
		name := f.Name
		if name == "" {
			name = "document.pdf"
		}
		return wirePart{Type: "file", File: &wireFile{Filename: name, FileData: adapter.DataURL("application/pdf", data)}}, true, nil
	case adapter.IsTextMediaType(base):
		t := string(data)
		return wirePart{Type: "text", Text: &t}, true, nil
	}
	return wirePart{}, false, m.invalid(fmt.Sprintf("Chat Completions takes PDF or text files, not %q", mt))
}

func audioFormat(mediaType string) (string, bool) {
	switch adapter.BaseMediaType(mediaType) {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return "wav", true
	case "audio/mpeg", "audio/mp3":
		return "mp3", true
	}
	return "", false
}
