package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
)

// Config shapes what a conversation gives back as context.
type Config struct {
	// MaxMessages is the most recent messages Recent returns; 0 means all.
	// The window always starts at a user message, so a tool result is
	// never separated from its call and the window starts where every
	// provider accepts it.
	MaxMessages int
	// Strategy and Counter, with Budget > 0, compress the window when it
	// is over Budget tokens; a failing strategy leaves it as it is.
	Strategy compact.Strategy
	Counter  compact.TokenCounter
	Budget   int
}

// Conversation is one session's messages in a Store. Load it with Open. It is
// not safe for concurrent use, and two Conversations on one session must not
// add at once.
type Conversation struct {
	store     Store
	sessionID string
	cfg       Config
	messages  []llm.Message
	ids       []string // each message's key
	next      int      // sequence number of the next message
}

// seqDigits zero-pads sequence numbers so keys sort in order.
const seqDigits = 12

// keyPrefix returns the key prefix of a session's messages: "conv:{session}:".
func keyPrefix(sessionID string) string { return "conv:" + sessionID + ":" }

// Open loads the conversation of sessionID from store (an empty one when
// nothing is stored).
func Open(ctx context.Context, store Store, sessionID string, cfg Config) (*Conversation, error) {
	if sessionID == "" || strings.Contains(sessionID, ":") {
		return nil, fmt.Errorf("memory: invalid session id %q (empty or containing ':')", sessionID)
	}
	c := &Conversation{store: store, sessionID: sessionID, cfg: cfg}
	prefix := keyPrefix(sessionID)
	items, err := store.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("memory: loading %s: %w", prefix, err)
	}
	c.messages = make([]llm.Message, 0, len(items))
	c.ids = make([]string, 0, len(items))
	for _, it := range items {
		seq, err := strconv.Atoi(strings.TrimPrefix(it.Key, prefix))
		if err != nil {
			continue // not one of ours
		}
		var m llm.Message
		if err := json.Unmarshal(it.Value, &m); err != nil {
			return nil, fmt.Errorf("memory: decoding %s: %w", it.Key, err)
		}
		c.messages = append(c.messages, m)
		c.ids = append(c.ids, it.Key)
		c.next = max(c.next, seq+1)
	}
	return c, nil
}

// SessionID returns the conversation's session id.
func (c *Conversation) SessionID() string { return c.sessionID }

// Messages returns every stored message, oldest first. Do not change it.
func (c *Conversation) Messages() []llm.Message { return slices.Clip(c.messages) }

// Add stores msgs after the conversation's messages. Each message is one
// Put; if one fails, the messages before it are stored and the error is
// returned.
func (c *Conversation) Add(ctx context.Context, msgs ...llm.Message) error {
	prefix := keyPrefix(c.sessionID)
	for _, m := range msgs {
		data, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("memory: encoding a message: %w", err)
		}
		key := prefix + fmt.Sprintf("%0*d", seqDigits, c.next)
		if err := c.store.Put(ctx, key, data); err != nil {
			return fmt.Errorf("memory: storing %s: %w", key, err)
		}
		c.messages = append(c.messages, m)
		c.ids = append(c.ids, key)
		c.next++
	}
	return nil
}

// Clear deletes every stored message of the conversation.
func (c *Conversation) Clear(ctx context.Context) error {
	for i, key := range c.ids {
		if err := c.store.Delete(ctx, key); err != nil {
			c.messages, c.ids = c.messages[i:], c.ids[i:]
			return fmt.Errorf("memory: deleting %s: %w", key, err)
		}
	}
	c.messages, c.ids = nil, nil
	return nil
}

// Recent returns the messages to give a model as context: the last
// MaxMessages (starting at a user message), compressed when configured and
// over the budget.
func (c *Conversation) Recent(ctx context.Context) []llm.Message {
	msgs := c.messages
	if n := c.cfg.MaxMessages; n > 0 && len(msgs) > n {
		start := len(msgs) - n
		for start < len(msgs) && msgs[start].Role != llm.RoleUser {
			start++
		}
		msgs = msgs[start:]
	}
	msgs = slices.Clip(msgs)
	cfg := c.cfg
	if cfg.Strategy == nil || cfg.Counter == nil || cfg.Budget <= 0 || cfg.Counter.CountMessages(msgs) <= cfg.Budget {
		return msgs
	}
	out, err := cfg.Strategy.Compress(ctx, msgs, cfg.Budget, cfg.Counter)
	if err != nil {
		return msgs
	}
	return out
}
