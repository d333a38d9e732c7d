package gemini

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agcore/agcore/llm"
)

// generatedPrefix starts the ids this adapter makes up for function calls
// Gemini sent without one; such ids are never sent back to Gemini.
const generatedPrefix = "gcall_"

// groundingKind is the Kind of the extension block that keeps a
// candidate's whole groundingMetadata (search queries, the search entry
// point Google asks apps to show); it is never sent back.
const groundingKind = "gemini.grounding_metadata"

type blockKind uint8

const (
	blockNone blockKind = iota
	blockText
	blockThinking
)

// turn maps the chunks of one answer to llm events and assembles the
// Response. Generate feeds it the one response it gets, Stream each chunk,
// so both map alike.
type turn struct {
	asm     llm.Assembler
	model   string // the requested model, for an answer that names none
	started bool   // MessageStart was yielded

	next     int       // index of the next block
	open     int       // index of the open text or thinking block
	openKind blockKind // blockNone when no block is open
	texts    []int     // the indexes of the answer's text blocks, in order
	// pendingSig is the signature of an empty text part not yet yielded:
	// its signature-only thinking block follows the open text block, which
	// stays open until the next part or the end of the answer, so that the
	// citations of the last chunk's grounding are yielded inside it.
	pendingSig string

	calls     int      // function calls so far (for generated ids)
	ids       []string // their ids, to keep them unique
	idBase    string
	usage     llm.Usage
	finish    string
	finished  bool
	grounding json.RawMessage
}

func (t *turn) init(model string) {
	t.model = model
	t.open = -1
}

// emit records ev and yields it.
func (t *turn) emit(ev llm.Event, yield func(llm.Event, error) bool) (bool, error) {
	if err := t.asm.Add(ev); err != nil {
		return false, malformed("%v", err)
	}
	return yield(ev, nil), nil
}

// feed maps one chunk. It returns false when the consumer stopped.
func (t *turn) feed(c *chunk, yield func(llm.Event, error) bool) (bool, error) {
	if c.err != nil {
		e := statusError(c.err, llm.KindServer)
		e.Provider = providerName
		return false, e
	}
	if c.block != nil && !c.candidate {
		return false, promptBlocked(c.block.BlockReason, c.block.BlockReasonMessage)
	}
	if !t.started {
		// The response's id and model are the first chunk's (Gemini
		// repeats them in every chunk); MessageStart carries them.
		t.started = true
		model := string(c.model)
		if model == "" {
			model = t.model
		}
		ev := llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{ID: string(c.id), Model: model}}
		if more, err := t.emit(ev, yield); !more || err != nil {
			return more, err
		}
	}
	if t.idBase == "" && len(c.id) > 0 {
		t.idBase = string(c.id)
	}
	for i := range c.parts {
		if more, err := t.part(&c.parts[i], yield); !more || err != nil {
			return more, err
		}
	}
	if c.hasUsage {
		t.usage = usageOf(&c.usage)
	}
	if c.finish != "" {
		t.finish, t.finished = c.finish, true
	}
	if !isEmptyObject(c.grounding) {
		t.grounding = c.grounding
	}
	return true, nil
}

// part maps one part: text and thought parts extend the open block of
// their kind; a signature on a text part becomes a signature-only
// thinking block before it; a signed thought closes its block; calls and
// other parts are whole blocks of their own.
func (t *turn) part(p *part, yield func(llm.Event, error) bool) (bool, error) {
	if more, err := t.flushSig(yield); !more || err != nil {
		return more, err
	}
	switch p.kind {
	case partText:
		if p.sig != "" && len(p.text) == 0 {
			t.pendingSig = p.sig
			return true, nil
		}
		if p.sig != "" {
			if more, err := t.signatureBlock(p.sig, yield); !more || err != nil {
				return more, err
			}
		}
		if len(p.text) == 0 {
			return true, nil
		}
		return t.appendText(blockText, string(p.text), yield)
	case partThought:
		if len(p.text) > 0 || p.sig != "" {
			if more, err := t.appendText(blockThinking, string(p.text), yield); !more || err != nil {
				return more, err
			}
		}
		if p.sig == "" {
			return true, nil
		}
		ev := llm.Event{Type: llm.EventSignatureDelta, Index: t.open, Delta: p.sig}
		if more, err := t.emit(ev, yield); !more || err != nil {
			return more, err
		}
		return t.closeOpen(yield)
	case partCall:
		return t.call(p, yield)
	}
	return t.whole(p.ext, yield)
}

// appendText adds text to the open block of kind, opening one first.
func (t *turn) appendText(kind blockKind, text string, yield func(llm.Event, error) bool) (bool, error) {
	if t.openKind != kind {
		if more, err := t.closeOpen(yield); !more || err != nil {
			return more, err
		}
		var b llm.Block = llm.Text{}
		if kind == blockThinking {
			b = llm.Thinking{Provider: providerName}
		} else {
			t.texts = append(t.texts, t.next)
		}
		if more, err := t.start(b, yield); !more || err != nil {
			return more, err
		}
		t.open, t.openKind = t.next-1, kind
	}
	if text == "" {
		return true, nil
	}
	typ := llm.EventTextDelta
	if kind == blockThinking {
		typ = llm.EventThinkingDelta
	}
	return t.emit(llm.Event{Type: typ, Index: t.open, Delta: text}, yield)
}

func (t *turn) start(b llm.Block, yield func(llm.Event, error) bool) (bool, error) {
	i := t.next
	t.next++
	return t.emit(llm.Event{Type: llm.EventBlockStart, Index: i, Block: b}, yield)
}

func (t *turn) stop(i int, yield func(llm.Event, error) bool) (bool, error) {
	b, err := t.asm.Built(i)
	if err != nil {
		return false, malformed("%v", err)
	}
	return t.emit(llm.Event{Type: llm.EventBlockStop, Index: i, Block: b}, yield)
}

// closeOpen stops the open text or thinking block, if any.
func (t *turn) closeOpen(yield func(llm.Event, error) bool) (bool, error) {
	if t.openKind == blockNone {
		return true, nil
	}
	i := t.open
	t.open, t.openKind = -1, blockNone
	return t.stop(i, yield)
}

// signatureBlock yields a thinking block holding only sig: the signature
// Gemini put on a text part (or on an empty part), sent back on the next
// text part.
func (t *turn) signatureBlock(sig string, yield func(llm.Event, error) bool) (bool, error) {
	if more, err := t.closeOpen(yield); !more || err != nil {
		return more, err
	}
	i := t.next
	if more, err := t.start(llm.Thinking{Provider: providerName}, yield); !more || err != nil {
		return more, err
	}
	if more, err := t.emit(llm.Event{Type: llm.EventSignatureDelta, Index: i, Delta: sig}, yield); !more || err != nil {
		return more, err
	}
	return t.stop(i, yield)
}

// flushSig yields the signature-only block of an empty signed text part
// held back by part.
func (t *turn) flushSig(yield func(llm.Event, error) bool) (bool, error) {
	if t.pendingSig == "" {
		return true, nil
	}
	sig := t.pendingSig
	t.pendingSig = ""
	return t.signatureBlock(sig, yield)
}

// call yields a function call as a whole tool-use block.
func (t *turn) call(p *part, yield func(llm.Event, error) bool) (bool, error) {
	if more, err := t.closeOpen(yield); !more || err != nil {
		return more, err
	}
	id := t.callID(p.call.ID)
	i := t.next
	tu := llm.ToolUse{ID: id, Name: p.call.Name, Signature: p.sig, Provider: providerName}
	if more, err := t.start(tu, yield); !more || err != nil {
		return more, err
	}
	args := compact(p.call.Args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if more, err := t.emit(llm.Event{Type: llm.EventToolInputDelta, Index: i, Delta: string(args)}, yield); !more || err != nil {
		return more, err
	}
	return t.stop(i, yield)
}

// callID returns the id of a call: Gemini's own when it gave one not used
// yet in this answer, else a generated one that is unique: the response
// id (or a random one) and the call's number.
func (t *turn) callID(given string) string {
	n := t.calls
	t.calls++
	id := given
	if id == "" || strings.HasPrefix(id, generatedPrefix) || contains(t.ids, id) {
		if t.idBase == "" {
			var b [8]byte
			rand.Read(b[:])
			t.idBase = hex.EncodeToString(b[:])
		}
		id = generatedPrefix + t.idBase + "_" + strconv.Itoa(n)
	}
	t.ids = append(t.ids, id)
	return id
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// whole yields a block that arrives complete (an extension).
func (t *turn) whole(b llm.Block, yield func(llm.Event, error) bool) (bool, error) {
	if more, err := t.closeOpen(yield); !more || err != nil {
		return more, err
	}
	i := t.next
	if more, err := t.start(b, yield); !more || err != nil {
		return more, err
	}
	return t.emit(llm.Event{Type: llm.EventBlockStop, Index: i, Block: b}, yield)
}

// complete yields the citations of the answer's text blocks, closes the
// open block, yields a held-back signature block, the grounding metadata
// block, the usage and the final event.
func (t *turn) complete(yield func(llm.Event, error) bool) error {
	if !t.started {
		// An answer with no chunk at all (an empty body).
		t.started = true
		ev := llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{Model: t.model}}
		if more, err := t.emit(ev, yield); !more || err != nil {
			return err
		}
	}
	if t.grounding != nil {
		if more, err := t.citations(yield); !more || err != nil {
			return err
		}
	}
	if more, err := t.closeOpen(yield); !more || err != nil {
		return err
	}
	if more, err := t.flushSig(yield); !more || err != nil {
		return err
	}
	if t.grounding != nil {
		ext := llm.Extension{Kind: groundingKind, Data: compact(t.grounding)}
		if more, err := t.whole(ext, yield); !more || err != nil {
			return err
		}
	}
	u := t.usage
	if more, err := t.emit(llm.Event{Type: llm.EventUsage, Usage: &u}, yield); !more || err != nil {
		return err
	}
	t.asm.SetFinishReason(finishReason(t.finish))
	resp, err := t.asm.Finish()
	if err != nil {
		return malformed("%v", err)
	}
	yield(llm.Event{Type: llm.EventComplete, Response: resp}, nil)
	return nil
}

// usageOf maps usageMetadata. promptTokenCount includes the cached
// tokens; toolUsePromptTokenCount (search results, code execution) is
// further input; candidatesTokenCount does not include the thoughts, so
// output is candidates + thoughts, of which thoughts are the reasoning.
func usageOf(u *wireUsage) llm.Usage {
	return llm.Usage{
		InputTokens:       u.PromptTokenCount + u.ToolUsePromptTokenCount,
		OutputTokens:      u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CachedInputTokens: u.CachedContentTokenCount,
		ReasoningTokens:   u.ThoughtsTokenCount,
	}
}

// finishReason maps a candidate's finishReason. STOP maps to "" so the
// assembler says FinishToolUse for an answer with function calls (Gemini
// says STOP for those too) and FinishStop for the rest.
func finishReason(r string) llm.FinishReason {
	switch r {
	case "STOP", "":
		return ""
	case "MAX_TOKENS":
		return llm.FinishLength
	}
	if blockedByPolicy(r) {
		return llm.FinishContentFilter
	}
	// LANGUAGE, OTHER, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL,
	// TOO_MANY_TOOL_CALLS, NO_IMAGE, IMAGE_OTHER, MISSING_THOUGHT_SIGNATURE
	// and reasons added later.
	return llm.FinishUnknown
}

// blockedByPolicy reports whether a finishReason says a policy withheld
// the answer: Gemini's safety, recitation, blocklist, prohibited-content
// and SPII filters (and their image variants), Vertex AI's Model Armor
// ("the model response was blocked by Model Armor"), and JAILBREAK, a
// prompt block reason, should a candidate ever carry it.
func blockedByPolicy(r string) bool {
	switch r {
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"MODEL_ARMOR", "JAILBREAK",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return true
	}
	return false
}

// malformed is the error for data that does not parse or breaks the
// protocol.
func malformed(format string, args ...any) *llm.Error {
	e := invalid(format, args...)
	e.Kind = llm.KindMalformed
	return e
}
