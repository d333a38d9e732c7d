package tiktoken

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/compact/internal/tokens"
	"github.com/agcore/agcore/llm"
)

// Encoding names an OpenAI byte-pair encoding.
type Encoding string

// The encodings of OpenAI's current chat models.
const (
	// O200kBase is the encoding of gpt-4o, gpt-4.1, gpt-5 and the o-series.
	O200kBase Encoding = "o200k_base"
	// Cl100kBase is the encoding of gpt-4, gpt-4-turbo and gpt-3.5-turbo.
	Cl100kBase Encoding = "cl100k_base"
)

// Counter counts tokens exactly as OpenAI's tokenizer does, with the
// per-message and per-tool overheads from OpenAI's published counting recipe
// ("How to count tokens with tiktoken"): 3 tokens per message, 3 to prime
// the reply, and the function-definition format for tools. Parts the recipe
// does not cover (tool calls and results in history, images, files) are
// counted as their text plus a small wrapper, or by the fixed estimates the
// compact.Estimator uses; the error there is a few tokens per message.
//
// The vocabularies are compiled into the binary (no download at run time);
// the first use of an encoding builds its tables, which takes a moment. A
// counter remembers the counts of long texts it has seen (bounded), because
// strategies and agents count the same history again on every turn.
//
// An Counter is safe for concurrent use.
type Counter struct {
	enc   Encoding
	codec interface{ Count(string) (int, error) }
	// funcInit is the per-function overhead of the tools format, 7 for
	// o200k models and 10 for cl100k models in OpenAI's recipe.
	funcInit int

	mu         sync.Mutex
	cache      map[string]int
	cacheBytes int
}

// Text at least this long is cached (the tokenizer's matcher is slow even
// on short text); the cache holds at most cacheMaxBytes of text and is
// emptied when full.
const (
	cacheMinLen   = 8
	cacheMaxBytes = 16 << 20
)

var (
	o200kOnce  = sync.OnceValues(func() (*Counter, error) { return New(O200kBase) })
	cl100kOnce = sync.OnceValues(func() (*Counter, error) { return New(Cl100kBase) })
)

// O200k returns the shared o200k_base counter.
func O200k() *Counter {
	c, err := o200kOnce()
	if err != nil {
		panic(err) // the encoding is compiled in; this cannot fail
	}
	return c
}

// Cl100k returns the shared cl100k_base counter.
func Cl100k() *Counter {
	c, err := cl100kOnce()
	if err != nil {
		panic(err)
	}
	return c
}

// New returns a counter for enc, which must be [O200kBase] or
// [Cl100kBase]. Most callers want the shared [O200k] or [Cl100k] instead.
func New(enc Encoding) (*Counter, error) {
	var (
		data     []byte
		pattern  string
		funcInit int
	)
	switch enc {
	case O200kBase:
		data, pattern, funcInit = o200kData, o200kPattern, 7
	case Cl100kBase:
		data, pattern, funcInit = cl100kData, cl100kPattern, 10
	default:
		return nil, fmt.Errorf("tiktoken: unsupported encoding %q", enc)
	}
	c, err := loadBPE(data, pattern)
	if err != nil {
		return nil, fmt.Errorf("tiktoken: encoding %s: %w", enc, err)
	}
	return &Counter{enc: enc, codec: c, funcInit: funcInit, cache: make(map[string]int)}, nil
}

// For returns the exact counter for a model id: o200k_base for gpt-4o,
// gpt-4.1, gpt-4.5, gpt-5 and later, the o-series, gpt-oss and codex-mini;
// cl100k_base for gpt-4, gpt-4-turbo and gpt-3.5. For every other model it
// returns [compact.CounterFor]'s estimator and false. Model ids are
// compared in [catalog.Normalize]d form, so routing prefixes ("openai/")
// and fine-tune ids ("ft:gpt-4o-mini:...") are recognized. The returned
// counters are shared and safe for concurrent use.
func For(model string) (compact.TokenCounter, bool) {
	switch {
	case catalog.InFamily(model, "gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "gpt-oss", "codex-mini"):
		return O200k(), true
	case catalog.InFamily(model, "gpt-4", "gpt-3.5", "gpt-35"):
		return Cl100k(), true
	}
	return compact.CounterFor(llm.ModelInfo{Name: model}), false
}

// Encoding returns the counter's encoding.
func (c *Counter) Encoding() Encoding { return c.enc }

// CountText returns the exact number of tokens of s, without any overhead
// and without consulting the cache.
func (c *Counter) CountText(s string) int {
	if s == "" {
		return 0
	}
	n, err := c.codec.Count(s)
	if err != nil {
		// The codec fails only on a matcher error; fall back to the
		// estimate rather than reporting an impossible zero.
		return compact.Estimator{}.CountText(s)
	}
	return n
}

// text counts s through the cache.
func (c *Counter) text(s string) int {
	if len(s) < cacheMinLen {
		return c.CountText(s)
	}
	c.mu.Lock()
	n, ok := c.cache[s]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.CountText(s)
	c.mu.Lock()
	if c.cacheBytes+len(s) > cacheMaxBytes {
		clear(c.cache)
		c.cacheBytes = 0
	}
	c.cache[s] = n
	c.cacheBytes += len(s)
	c.mu.Unlock()
	return n
}

// CountMessages implements compact.TokenCounter. Like the estimator, the count
// is additive over messages.
func (c *Counter) CountMessages(msgs []llm.Message) int {
	n := tokens.ReplyPrime
	for i := range msgs {
		n += c.countMessage(&msgs[i])
	}
	return n
}

// CountMessage implements compact.AdditiveCounter: what m adds to a count
// of messages.
func (c *Counter) CountMessage(m *llm.Message) int { return c.countMessage(m) }

func (c *Counter) countMessage(m *llm.Message) int {
	n := tokens.PerMessage + 1 // the role name
	for _, b := range m.Content {
		n += c.countBlock(b)
	}
	return n
}

// countBlock counts one block, text through the cache.
func (c *Counter) countBlock(b llm.Block) int { return tokens.Block(cached{c}, b, true) }

// cached counts text through the Counter's cache.
type cached struct{ c *Counter }

func (t cached) Text(s string) int { return t.c.text(s) }

// CountTools implements compact.TokenCounter with OpenAI's recipe for function
// definitions: per function 7 tokens (10 for cl100k), the tokens of
// "name:description", then per property 3 tokens plus "key:type:description"
// and 3 per enum value plus the value, and 12 at the end. Nested schemas,
// which the recipe does not cover, add the tokens of their compact JSON.
func (c *Counter) CountTools(tools []llm.ToolDefinition) int {
	if len(tools) == 0 {
		return 0
	}
	n := tokens.ToolsEnd
	for _, t := range tools {
		n += c.funcInit
		n += c.text(t.Name + ":" + strings.TrimSuffix(t.Description, "."))
		n += c.countSchema(t.ParametersOrEmpty())
	}
	return n
}

type schemaProp struct {
	Type        json.RawMessage `json:"type"`
	Description string          `json:"description"`
	Enum        []any           `json:"enum"`
	Properties  json.RawMessage `json:"properties"`
	Items       json.RawMessage `json:"items"`
}

func (c *Counter) countSchema(params json.RawMessage) int {
	var schema struct {
		Properties map[string]schemaProp `json:"properties"`
	}
	if err := json.Unmarshal(params, &schema); err != nil {
		// Not an object schema: count it as text.
		return c.text(string(params))
	}
	if len(schema.Properties) == 0 {
		return 0
	}
	n := 3 // start of the properties
	for key, p := range schema.Properties {
		n += 3
		if len(p.Enum) > 0 {
			n -= 3
			for _, v := range p.Enum {
				n += 3 + c.text(fmt.Sprint(v))
			}
		}
		n += c.text(key + ":" + schemaType(p.Type) + ":" + strings.TrimSuffix(p.Description, "."))
		if len(p.Properties) > 0 {
			n += c.text(compactJSON(p.Properties))
		}
		if len(p.Items) > 0 {
			n += c.text(compactJSON(p.Items))
		}
	}
	return n
}

func schemaType(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, "|")
	}
	return ""
}

func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}
