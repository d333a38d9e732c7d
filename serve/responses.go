package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

// responsesRequest is the part of a Responses request the server reads.
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       string            `json:"instructions"`
	PreviousResponseID string            `json:"previous_response_id"`
	Conversation       json.RawMessage   `json:"conversation"`
	Store              *bool             `json:"store"`
	Stream             bool              `json:"stream"`
	Background         bool              `json:"background"`
	Temperature        *float64          `json:"temperature"`
	MaxOutputTokens    int               `json:"max_output_tokens"`
	Tools              []responsesTool   `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Metadata           map[string]string `json:"metadata"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// inputItem is one item of a Responses input list.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// responses serves POST /v1/responses for principal.
func (h *Handler) responses(w http.ResponseWriter, r *http.Request, principal string) {
	var req responsesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, decodeError(err))
		return
	}
	a, apiErr := h.agent(req.Model)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	msgs, instr, apiErr := inputMessages(req.Input)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	if req.Instructions != "" {
		instr = strings.TrimSpace(req.Instructions + "\n\n" + instr)
	}
	opts := &agent.RunOptions{Instructions: instr, Temperature: req.Temperature, MaxTokens: req.MaxOutputTokens}
	for i, t := range req.Tools {
		if t.Type != "function" || t.Name == "" {
			writeError(w, invalid("tools["+itoa(i)+"]", "only function tools with a name are supported"))
			return
		}
		opts.Declared = append(opts.Declared, llm.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	if opts.ToolChoice, apiErr = toolChoice(req.ToolChoice); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	if req.Background {
		if req.Store != nil && !*req.Store {
			writeError(w, invalid("background", "a background response must be stored (store: true)"))
			return
		}
		if _, ok := session.RecordsOf(a.Store); !ok || a.Store == nil {
			writeError(w, invalid("background", "the agent %q keeps no responses: background responses need a store with records", a.Name))
			return
		}
		h.background(w, r, principal, a, &req, msgs, opts)
		return
	}
	ctx, end, ok := h.beginTurn(w, r)
	if !ok {
		writeError(w, draining())
		return
	}
	defer end()
	conv, pos, unlock, apiErr := h.place(ctx, principal, a, &req, opts)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	defer unlock()
	released := false
	if pos.slot != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		pos.slot.keep(cancel)
		defer func() { // before unlock: the next turn here finds the id done
			if !released {
				if err := pos.slot.release(nil, principal); err != nil {
					h.log.LogAttrs(ctx, slog.LevelWarn, "freeing a response id", slog.String("id", pos.responseID()), slog.String("error", err.Error()))
				}
			}
		}()
	}

	obj := h.newResponse(a, &req, conv, pos)
	s := &respSink{obj: obj, open: -1}
	if req.Stream {
		s.sse = newSSE(w, h.flushEvery)
		defer s.sse.close()
		// The response as it begins, encoded once for both events.
		body, err := json.Marshal(obj)
		if err != nil || s.emitResponse("response.created", body) != nil || s.emitResponse("response.in_progress", body) != nil {
			return
		}
	}
	resp, err := runTurnAs(ctx, principal, a, msgs, opts, strings.TrimPrefix(obj.ID, "resp_"), s)
	var stopped error // the spending limit that ended a stored turn
	if resp != nil && errors.Is(err, llm.ErrBudgetExceeded) {
		stopped, err = err, nil
	}
	if err == nil {
		err = resp.PersistErr()
	}
	if err != nil {
		e := turnError(ctx, err)
		var pe *agent.PersistError
		if errors.As(err, &pe) {
			e = &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "persist_failed", Message: "the turn could not be stored"}
		}
		if r.Context().Err() == nil {
			h.log.LogAttrs(ctx, slog.LevelError, "turn failed", attrs(a.Name, obj.ID, err)...)
		}
		if s.sse != nil {
			obj.Status = "failed"
			obj.Error = &responseError{Code: e.Code, Message: e.Message}
			if body, err := json.Marshal(obj); err == nil {
				_ = s.emitResponse("response.failed", body)
			}
			return
		}
		writeError(w, e)
		return
	}
	if s.close() != nil {
		return
	}
	completeResponse(ctx, obj, resp, stopped)
	switch {
	case pos.slot != nil:
		released = true
		if err := pos.slot.release(obj, principal); err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "storing a response", slog.String("id", obj.ID), slog.String("error", err.Error()))
		}
	case pos.stored:
		h.recent.put(obj.ID, principal, obj)
	}
	if s.sse != nil {
		event := "response.completed"
		if obj.Status == "incomplete" {
			event = "response.incomplete"
		}
		if body, err := json.Marshal(obj); err == nil {
			_ = s.emitResponse(event, body)
		}
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

// newResponse returns the response object of a turn that begins.
func (h *Handler) newResponse(a host.Agent, req *responsesRequest, conv string, pos position) *responseObject {
	obj := &responseObject{Object: "response", CreatedAt: h.now().Unix(), Status: "in_progress", Model: a.Name,
		Output: []*outputItem{}, Store: pos.stored, ParallelToolCalls: true, ToolChoice: "auto", Tools: []any{},
		Metadata: req.Metadata, Temperature: req.Temperature}
	obj.ID = pos.responseID()
	if req.Instructions != "" {
		obj.Instructions = &req.Instructions
	}
	if req.PreviousResponseID != "" {
		obj.PreviousResponseID = &req.PreviousResponseID
	}
	if conv != "" {
		obj.Conversation = &conversationRef{ID: conv}
	}
	if obj.Metadata == nil {
		obj.Metadata = map[string]string{}
	}
	obj.Text.Format.Type = "text"
	return obj
}

// background serves a Responses request with "background": true: the
// turn is placed (its id claimed) as any stored turn, then started by the
// Runner; the answer is the response in progress, or with "stream": true
// its events as they come (the client may leave; the turn goes on).
func (h *Handler) background(w http.ResponseWriter, r *http.Request, principal string, a host.Agent, req *responsesRequest, msgs []llm.Message, opts *agent.RunOptions) {
	ctx := r.Context()
	conv, pos, unlock, apiErr := h.place(ctx, principal, a, req, opts)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	if pos.slot == nil { // place gives a stored turn with records a claim
		unlock()
		writeError(w, invalid("background", "a background response must be stored"))
		return
	}
	obj := h.newResponse(a, req, conv, pos)
	var attached *attachedClient
	if req.Stream {
		attached = &attachedClient{done: make(chan struct{}), out: newSSE(w, h.flushEvery)}
	}
	body, apiErr := h.startBackground(r, a, msgs, opts, obj, pos, unlock, attached)
	if apiErr != nil {
		if err := pos.slot.release(nil, principal); err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "freeing a response id", slog.String("id", obj.ID), slog.String("error", err.Error()))
		}
		unlock()
		writeError(w, apiErr)
		return
	}
	if !req.Stream {
		// The object as it was when the turn began.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return
	}
	// The turn writes to this client while it stays; when it leaves, the
	// turn goes on (its events in the log, for GET ?stream=true).
	select {
	case <-attached.done:
	case <-ctx.Done():
	}
	attached.detach()
}

// position is where a Responses turn goes: the session and the number the
// turn will have in it.
type position struct {
	stored  bool
	session string
	turn    int
	slot    *slot // the id's claim in the store; nil without records
}

// responseID encodes the session and the turn number: resp_SESSION_N. A
// response not stored gets a random id.
func (p position) responseID() string {
	if !p.stored {
		return newID("resp_")
	}
	return "resp_" + p.session + "_" + strconv.Itoa(p.turn)
}

// parseResponseID returns the session and turn of a stored response's id.
func parseResponseID(id string) (sess string, turn int, ok bool) {
	rest, ok := strings.CutPrefix(id, "resp_")
	i := strings.LastIndexByte(rest, '_')
	if !ok || i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 1 || session.ValidateID(rest[:i]) != nil {
		return "", 0, false
	}
	return rest[:i], n, true
}

// place decides principal's turn's session from previous_response_id,
// conversation and store, locks it for the turn, and sets opts. It returns
// the conversation id to echo.
func (h *Handler) place(ctx context.Context, principal string, a host.Agent, req *responsesRequest, opts *agent.RunOptions) (conv string, pos position, unlock func(), apiErr *apiError) {
	unlock = func() {}
	store := req.Store == nil || *req.Store
	if len(bytes.TrimSpace(req.Conversation)) > 0 && string(bytes.TrimSpace(req.Conversation)) != "null" {
		var ref conversationRef
		if json.Unmarshal(req.Conversation, &conv) != nil {
			if err := json.Unmarshal(req.Conversation, &ref); err != nil {
				return "", pos, unlock, invalid("conversation", "conversation must be an id or {\"id\": ...}")
			}
			conv = ref.ID
		}
		if err := session.ValidateID(host.SessionNameOf(principal, conv)); err != nil {
			return "", pos, unlock, invalid("conversation", "%v", err)
		}
		if req.PreviousResponseID != "" {
			return "", pos, unlock, invalid("previous_response_id", "give previous_response_id or conversation, not both")
		}
	}
	if a.Store == nil {
		if req.PreviousResponseID != "" || conv != "" {
			return "", pos, unlock, invalid("previous_response_id", "the agent %q keeps no conversations", a.Name)
		}
		return "", position{}, unlock, nil
	}
	sid, want := "", 0
	switch {
	case req.PreviousResponseID != "":
		var ok bool
		sid, want, ok = parseResponseID(req.PreviousResponseID)
		if !ok {
			return "", pos, unlock, previousNotFound(req.PreviousResponseID)
		}
	case conv != "":
		sid = host.SessionNameOf(principal, conv)
	default:
		if !store {
			return conv, position{}, unlock, nil
		}
		sid = session.NewID()
	}
	// The principal's view of the store: another's session is not found.
	sessions := host.SessionsOf(principal, a.Store)
	unlock, err := h.locks.lock(ctx, sid)
	if err != nil {
		return "", pos, func() {}, turnError(ctx, err)
	}
	recs, shared := session.RecordsOf(a.Store)
	var stale *errStale // a completed record at the number the last load gave
	for {
		// The view is enough (the turn count, and the history a turn
		// without store sends): a long conversation is not read whole,
		// nor held whole in the store's message cache, on every turn.
		sess, err := sessions.LoadView(ctx, sid)
		switch {
		case errors.Is(err, session.ErrNotFound):
			sess = &session.Session{ID: sid}
		case err != nil:
			unlock()
			h.log.LogAttrs(ctx, slog.LevelError, "loading a session", slog.String("session", sid), slog.String("error", err.Error()))
			return "", pos, func() {}, storeError()
		}
		if req.PreviousResponseID != "" && want != sess.Turns {
			unlock()
			if want > sess.Turns {
				return "", pos, func() {}, previousNotFound(req.PreviousResponseID)
			}
			// An earlier response: the conversation branches there, as
			// OpenAI's does ("regenerate", "edit an earlier message"): a new
			// session with the first want turns, the principal's.
			branch := session.NewID()
			if _, err := session.Fork(ctx, sessions, sid, branch, want); err != nil {
				if errors.Is(err, session.ErrNoTurn) {
					latest := position{stored: true, session: sid, turn: sess.Turns}.responseID()
					return "", pos, func() {}, &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Param: "previous_response_id", Code: "previous_response_not_latest",
						Message: fmt.Sprintf("%s cannot be branched from (its conversation's turns do not each begin with a user message); continue from the latest, %s", req.PreviousResponseID, latest)}
				}
				h.log.LogAttrs(ctx, slog.LevelError, "forking a session", slog.String("session", sid), slog.String("error", err.Error()))
				return "", pos, func() {}, storeError()
			}
			sid = branch
			if unlock, err = h.locks.lock(ctx, sid); err != nil {
				return "", pos, func() {}, turnError(ctx, err)
			}
			continue
		}
		if !store {
			// The history, without keeping the turn: an in-memory copy with no id.
			c := sess.Clone()
			c.ID = ""
			opts.Session = c
			return conv, position{}, unlock, nil
		}
		opts.SessionID, opts.Store = sid, sessions
		pos = position{stored: true, session: sid, turn: sess.Turns + 1}
		if !shared {
			return conv, pos, unlock, nil
		}
		// Claim the id in the store, so no other process gives it to a
		// turn (see slots.go).
		var sl *slot
		if stale != nil && stale.rec.Key == pos.responseID() {
			sl, err = takeOver(ctx, recs, stale.rec, principal)
		} else {
			sl, err = claim(ctx, recs, pos.responseID(), principal)
		}
		stale = nil
		var st errStale
		switch {
		case err == nil:
			pos.slot = sl
			return conv, pos, unlock, nil
		case errors.As(err, &st):
			stale = &st // read the session again: taken over if it still lacks the turn
			continue
		case errors.Is(err, errBusy):
			// Another process's turn of this session: wait for its end.
			t := time.NewTimer(slotPoll)
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				unlock()
				return "", pos, func() {}, turnError(ctx, context.Cause(ctx))
			}
		default:
			unlock()
			h.log.LogAttrs(ctx, slog.LevelError, "claiming a response id", slog.String("session", sid), slog.String("error", err.Error()))
			return "", pos, func() {}, storeError()
		}
	}
}

func storeError() *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "store_error", Message: "the conversation could not be loaded"}
}

func previousNotFound(id string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Param: "previous_response_id", Code: "previous_response_not_found",
		Message: fmt.Sprintf("previous response %q not found", id)}
}

// getResponse serves GET /v1/responses/{id}, to the principal that made
// the response: from the store, for an agent whose store has records
// (any process's responses, kept across restarts), else from the
// responses this process completed recently (a bounded cache).
func (h *Handler) getResponse(w http.ResponseWriter, r *http.Request, principal string) {
	if v := r.URL.Query().Get("stream"); v == "true" || v == "1" || streamBody(r) {
		h.streamStored(w, r)
		return
	}
	id := r.PathValue("id")
	body, ok, err := h.storedResponse(r.Context(), id, principal)
	if err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelError, "reading a response", slog.String("id", id), slog.String("error", err.Error()))
		writeError(w, &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "store_error", Message: "the response could not be read"})
		return
	}
	if ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return
	}
	obj, ok := h.recent.get(id, principal)
	if ok {
		ok = h.visible(r.Context(), principal, obj)
	}
	if !ok {
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "response_not_found",
			Message: "no such response (or it is still in progress)"})
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

// streamBody reports whether a GET carries the JSON body {"stream": true},
// as OpenAI's Go SDK sends it (GetStreaming) instead of the query's
// stream=true.
func streamBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	var body struct {
		Stream bool `json:"stream"`
	}
	return json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body) == nil && body.Stream
}

// visible reports whether the session of a stored response is the
// request's principal's (host.Sessions), so that a response is read as its
// session is.
func (h *Handler) visible(ctx context.Context, principal string, obj *responseObject) bool {
	a, ok := h.opts.Agents.Get(obj.Model)
	sid, _, idOK := parseResponseID(obj.ID)
	if !ok || !idOK || a.Store == nil {
		return false
	}
	_, err := host.SessionsOf(principal, a.Store).LoadView(ctx, sid)
	return err == nil
}

// inputMessages converts the input: a string (one user message) or a list
// of items (messages, function calls and their outputs; reasoning items
// are skipped). The text of system and developer messages is returned as
// instructions.
func inputMessages(raw json.RawMessage) ([]llm.Message, string, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "", invalid("input", "input is required")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, "", invalid("input", "%v", err)
		}
		return []llm.Message{llm.UserText(s)}, "", nil
	}
	var items []inputItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, "", invalid("input", "input must be a string or a list of items")
	}
	var out []llm.Message
	var instr []string
	for i, it := range items {
		param := "input[" + itoa(i) + "]"
		switch it.Type {
		case "", "message":
			blocks, err := contentBlocks(it.Content)
			if err != nil {
				return nil, "", invalid(param+".content", "%v", err)
			}
			switch it.Role {
			case "system", "developer":
				instr = append(instr, llm.Message{Content: blocks}.Text())
			case "user":
				out = append(out, llm.Message{Role: llm.RoleUser, Content: blocks})
			case "assistant":
				out = append(out, llm.Message{Role: llm.RoleAssistant, Content: blocks})
			default:
				return nil, "", invalid(param+".role", "unknown role %q", it.Role)
			}
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, "", invalid(param, "a function_call needs call_id and name")
			}
			call := toolUse(it.CallID, it.Name, it.Arguments)
			if n := len(out); n > 0 && out[n-1].Role == llm.RoleAssistant {
				out[n-1].Content = append(out[n-1].Content, call)
			} else {
				out = append(out, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{call}})
			}
		case "function_call_output":
			if it.CallID == "" {
				return nil, "", invalid(param, "a function_call_output needs call_id")
			}
			blocks, err := contentBlocks(it.Output)
			if err != nil {
				return nil, "", invalid(param+".output", "%v", err)
			}
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: it.CallID, Content: blocks})
		case "reasoning":
		default:
			return nil, "", invalid(param+".type", "unsupported input item type %q", it.Type)
		}
	}
	if len(out) == 0 {
		return nil, "", invalid("input", "input holds no message")
	}
	return out, strings.Join(instr, "\n\n"), nil
}
