package a2aserve

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// MetadataKey is the metadata key under which the completed task, its
// status update and its answer artifact carry the turn's facts: "usage"
// (input_tokens, output_tokens, and the cache and reasoning counts when
// not zero), "cost_usd" (when the price is known), "model", "session_id",
// "run_id", "finish_reason", and "session_turn": the number of the turn
// in its session (1 for the first; absent when it could not be told),
// where a new context from the task forks.
const MetadataKey = "agcore"

// SessionID returns the agcore session id an A2A context name maps to: the
// name itself when session.ValidateID accepts it (the UUIDs the SDK makes
// are accepted), else "a2a-" and 32 hex digits of its SHA-256. A task's
// context name is its context id in the namespace of the request's
// principal, host.SessionName(ctx, contextID): the context id itself on a
// server without tokens, "PRINCIPAL.contextID" with them.
func SessionID(contextID string) string {
	if session.ValidateID(contextID) == nil {
		return contextID
	}
	sum := sha256.Sum256([]byte(contextID))
	return "a2a-" + hex.EncodeToString(sum[:16])
}

// toLLM returns the user message msg makes: text parts as text, data parts
// as their JSON text, file parts as images (image/* types) or files.
func toLLM(msg *a2a.Message) ([]llm.Message, error) {
	if msg == nil {
		return nil, errors.New("no message")
	}
	var blocks []llm.Block
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			if p.Text != "" {
				blocks = append(blocks, llm.Text{Text: p.Text})
			}
		case a2a.DataPart:
			b, err := json.Marshal(p.Data)
			if err != nil {
				return nil, fmt.Errorf("a data part: %w", err)
			}
			blocks = append(blocks, llm.Text{Text: string(b)})
		case a2a.FilePart:
			b, err := fileBlock(p)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		}
	}
	if len(blocks) == 0 {
		return nil, errors.New("the message has no text, data or file part")
	}
	return []llm.Message{{Role: llm.RoleUser, Content: blocks}}, nil
}

func fileBlock(p a2a.FilePart) (llm.Block, error) {
	var meta a2a.FileMeta
	var data []byte
	var uri string
	switch f := p.File.(type) {
	case a2a.FileBytes:
		meta = f.FileMeta
		var err error
		if data, err = base64.StdEncoding.DecodeString(f.Bytes); err != nil {
			return nil, fmt.Errorf("file part %q: bytes are not base64: %w", f.Name, err)
		}
	case a2a.FileURI:
		meta, uri = f.FileMeta, f.URI
	default:
		return nil, errors.New("a file part with neither bytes nor a URI")
	}
	if strings.HasPrefix(meta.MimeType, "image/") {
		return llm.Image{Data: data, URL: uri, MediaType: meta.MimeType}, nil
	}
	return llm.File{Data: data, URL: uri, MediaType: meta.MimeType, Name: meta.Name}, nil
}

// decision is one answer of a follow-up message; id "" answers every call
// the task waits for.
type decision struct {
	id       string
	approved bool
	reason   string
}

// parseDecisions reads the decisions of a follow-up message: data parts
// {"approval_id": ..., "approved": true|false, "reason": ...} (without
// approval_id: every waiting call), or a text part whose first word is
// approve/approved/yes/y/ok or deny/denied/reject/no/n, the rest of the
// text being the reason. When it finds none it says why.
func parseDecisions(msg *a2a.Message) ([]decision, string) {
	if msg == nil {
		return nil, "no message"
	}
	var out []decision
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case a2a.DataPart:
			approved, ok := p.Data["approved"].(bool)
			if !ok {
				continue
			}
			d := decision{approved: approved}
			d.id, _ = p.Data["approval_id"].(string)
			d.reason, _ = p.Data["reason"].(string)
			out = append(out, d)
		case a2a.TextPart:
			word, rest, _ := strings.Cut(strings.TrimSpace(p.Text), " ")
			word = strings.ToLower(strings.TrimRight(word, ".,:;!"))
			rest = strings.TrimSpace(strings.TrimLeft(rest, ":-,"))
			switch word {
			case "approve", "approved", "yes", "y", "ok":
				out = append(out, decision{approved: true, reason: rest})
			case "deny", "denied", "reject", "no", "n":
				out = append(out, decision{reason: rest})
			}
		}
	}
	if len(out) == 0 {
		return nil, `the message holds no decision: answer "approve" or "deny <reason>", or a data part {"approval_id": ..., "approved": true|false, "reason": ...}`
	}
	return out, ""
}

// approvalMessage is the input-required message listing the calls waiting
// for approval: a text for people and a data part {"approvals": [{
// "approval_id", "tool", "call_id", "arguments" (the JSON text)}]}.
func approvalMessage(rc a2a.TaskInfoProvider, pending []approval.Request, problem string) *a2a.Message {
	var b strings.Builder
	if problem != "" {
		b.WriteString(problem)
		b.WriteString("\n")
	}
	list := make([]any, 0, len(pending))
	for _, p := range pending {
		fmt.Fprintf(&b, "The agent wants to call %s(%s) [approval id %s].\n", p.Tool, p.Input, p.ID)
		list = append(list, map[string]any{"approval_id": p.ID, "tool": p.Tool, "call_id": p.CallID, "arguments": string(p.Input)})
	}
	b.WriteString(`Reply "approve" or "deny <reason>", or send a data part {"approval_id": ..., "approved": true|false, "reason": ...}.`)
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, rc,
		a2a.TextPart{Text: b.String()},
		a2a.DataPart{Data: map[string]any{"approvals": list}})
}

// responseMeta returns the MetadataKey value of a finished turn.
func responseMeta(resp *agent.Response) map[string]any {
	u := map[string]any{"input_tokens": resp.Usage.InputTokens, "output_tokens": resp.Usage.OutputTokens}
	for k, v := range map[string]int{
		"cached_input_tokens":   resp.Usage.CachedInputTokens,
		"cache_creation_tokens": resp.Usage.CacheCreationTokens,
		"reasoning_tokens":      resp.Usage.ReasoningTokens,
	} {
		if v != 0 {
			u[k] = v
		}
	}
	m := map[string]any{
		"usage":         u,
		"model":         resp.Model,
		"run_id":        resp.RunID,
		"finish_reason": string(resp.FinishReason),
	}
	if resp.SessionID != "" {
		m["session_id"] = resp.SessionID
	}
	if resp.CostKnown {
		m["cost_usd"] = resp.CostUSD
	}
	return m
}
