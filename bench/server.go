package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Wire is the streaming protocol a client speaks.
type Wire int

const (
	// WireOpenAI is OpenAI Chat Completions streaming
	// (POST {base}/chat/completions, "data: {chunk}" lines, "data: [DONE]").
	WireOpenAI Wire = iota
	// WireAnthropic is Anthropic Messages streaming (POST /v1/messages,
	// named events from message_start to message_stop).
	WireAnthropic
	// WireResponses is OpenAI Responses API streaming (POST
	// {base}/responses, named events from response.created to
	// response.completed).
	WireResponses
	// WireGemini is Gemini API streaming (POST
	// /v1beta/models/{model}:streamGenerateContent?alt=sse, one
	// GenerateContentResponse per "data:" line, CRLF-separated, the last
	// with a finishReason; the body then ends).
	WireGemini
)

// String returns "openai", "anthropic", "responses" or "gemini".
func (w Wire) String() string {
	switch w {
	case WireAnthropic:
		return "anthropic"
	case WireResponses:
		return "responses"
	case WireGemini:
		return "gemini"
	}
	return "openai"
}

// DefaultChunks is the stream length the server uses when the model name
// does not say.
const DefaultChunks = 100

// MaxChunks bounds the stream length one request may ask for.
const MaxChunks = 1_000_000

// ModelName returns the model name that asks the server for a stream of n
// text chunks, pace apart (0: as fast as the connection takes them).
func ModelName(n int, pace time.Duration) string {
	if pace <= 0 {
		return "bench-n" + strconv.Itoa(n)
	}
	return "bench-n" + strconv.Itoa(n) + "-p" + strconv.FormatInt(pace.Milliseconds(), 10)
}

// ParseModelName reads a name made by [ModelName]. Any other name gives
// [DefaultChunks] chunks with no pacing.
func ParseModelName(name string) (n int, pace time.Duration) {
	n = DefaultChunks
	rest, ok := strings.CutPrefix(name, "bench-n")
	if !ok {
		return n, 0
	}
	num, ms, paced := strings.Cut(rest, "-p")
	v, err := strconv.Atoi(num)
	if err != nil || v < 0 || v > MaxChunks {
		return DefaultChunks, 0
	}
	n = v
	if paced {
		if p, err := strconv.Atoi(ms); err == nil && p > 0 && p <= 60_000 {
			pace = time.Duration(p) * time.Millisecond
		}
	}
	return n, pace
}

// words are the chunks' texts, used in turn: short, like real tokens, one
// with a newline so decoders meet an escape.
var words = [...]string{"The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog.\n", " And"}

// ChunkText returns the text of chunk i (0-based) of every stream.
func ChunkText(i int) string { return words[i%len(words)] }

// ExpectedText returns the whole text of an n-chunk stream.
func ExpectedText(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(ChunkText(i))
	}
	return b.String()
}

// wireStream is one stream's bytes: a prologue, one event per text chunk,
// and an epilogue.
type wireStream struct {
	prologue []byte
	chunks   [][]byte
	epilogue []byte
	whole    []byte // prologue + chunks + epilogue, for unpaced streams
}

// The server keeps rendered streams so that serving one costs the server
// almost nothing per chunk: the benchmark is about the client.
type streamCache struct {
	mu sync.Mutex
	m  map[cacheKey]*wireStream
}

type cacheKey struct {
	wire Wire
	n    int
}

// cacheLimit bounds the cache; a request for a length not cached when it is
// full is rendered for that request alone.
const cacheLimit = 64

func (c *streamCache) get(w Wire, n int) *wireStream {
	k := cacheKey{w, n}
	c.mu.Lock()
	s, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return s
	}
	s = render(w, n)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[cacheKey]*wireStream{}
	}
	if len(c.m) < cacheLimit {
		c.m[k] = s
	}
	c.mu.Unlock()
	return s
}

func render(w Wire, n int) *wireStream {
	s := &wireStream{chunks: make([][]byte, n)}
	if w == WireGemini {
		// Shaped like Google's own chunks: every one repeats the
		// cumulative usageMetadata, the modelVersion and the responseId.
		const tail = `],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"candidatesTokenCount": %d,"totalTokenCount": %d,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 12}]},"modelVersion": "gemini-bench","responseId": "BenchBenchBenchBenchBen"}` + "\r\n\r\n"
		for i := range n {
			s.chunks[i] = fmt.Appendf(nil, `data: {"candidates": [{"content": {"parts": [{"text": %s}`+tail, quote(ChunkText(i)), i+1, i+13)
		}
		s.epilogue = fmt.Appendf(nil, `data: {"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 12,"candidatesTokenCount": %d,"totalTokenCount": %d,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 12}]},"modelVersion": "gemini-bench","responseId": "BenchBenchBenchBenchBen"}`+"\r\n\r\n", n, n+12)
	} else if w == WireAnthropic {
		s.prologue = []byte("event: message_start\n" +
			`data: {"type":"message_start","message":{"model":"claude-bench","id":"msg_01BenchBenchBenchBench","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}}}` + "\n\n" +
			"event: content_block_start\n" +
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
			"event: ping\n" + `data: {"type": "ping"}` + "\n\n")
		for i := range n {
			s.chunks[i] = fmt.Appendf(nil, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}\n\n", quote(ChunkText(i)))
		}
		s.epilogue = fmt.Appendf(nil, "event: content_block_stop\n"+
			`data: {"type":"content_block_stop","index":0}`+"\n\n"+
			"event: message_delta\n"+
			`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`+"\n\n"+
			"event: message_stop\n"+`data: {"type":"message_stop"}`+"\n\n", n)
	} else if w == WireResponses {
		renderResponses(s, n)
	} else {
		// Shaped like OpenAI's own chunks, fields it sends as null included.
		const head = `data: {"id":"chatcmpl-BenchBenchBenchBenchBenchBench","object":"chat.completion.chunk","created":1764500000,"model":"gpt-bench-2025-01-01","service_tier":"default","system_fingerprint":"fp_0123456789","choices":[`
		s.prologue = []byte(head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"aBcDeFgHiJkLmN"}` + "\n\n")
		for i := range n {
			s.chunks[i] = fmt.Appendf(nil, head+`{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"%s"}`+"\n\n", quote(ChunkText(i)), obfuscation(i))
		}
		s.epilogue = fmt.Appendf(nil, head+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null,"obfuscation":"xYz"}`+"\n\n"+
			`data: {"id":"chatcmpl-BenchBenchBenchBenchBenchBench","object":"chat.completion.chunk","created":1764500000,"model":"gpt-bench-2025-01-01","service_tier":"default","system_fingerprint":"fp_0123456789","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"QrStUv"}`+"\n\n"+
			"data: [DONE]\n\n", n, n+12)
	}
	size := len(s.prologue) + len(s.epilogue)
	for _, c := range s.chunks {
		size += len(c)
	}
	s.whole = make([]byte, 0, size)
	s.whole = append(s.whole, s.prologue...)
	for _, c := range s.chunks {
		s.whole = append(s.whole, c...)
	}
	s.whole = append(s.whole, s.epilogue...)
	return s
}

// renderResponses renders a Responses API stream shaped like OpenAI's:
// every event named and numbered, the text deltas with their item id,
// logprobs and obfuscation pad, and the closing events repeating the whole
// text, as OpenAI's do.
func renderResponses(s *wireStream, n int) {
	const item = "msg_0aBenchBenchBenchBenchBenchBenchBenchBenchBenchBench"
	response := func(status, output, usage string) string {
		return `{"id":"resp_0aBenchBenchBenchBenchBenchBenchBenchBench","object":"response","created_at":1764500000,"status":"` + status +
			`","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"gpt-bench-2025-01-01","output":[` + output +
			`],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"service_tier":"default","store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":` + usage + `,"user":null,"metadata":{}}`
	}
	event := func(seq int, typ, fields string) []byte {
		return fmt.Appendf(nil, "event: %s\ndata: {\"type\":%q,%s,\"sequence_number\":%d}\n\n", typ, typ, fields, seq)
	}
	var pro []byte
	pro = append(pro, event(0, "response.created", `"response":`+response("in_progress", "", "null"))...)
	pro = append(pro, event(1, "response.in_progress", `"response":`+response("in_progress", "", "null"))...)
	pro = append(pro, event(2, "response.output_item.added", `"item":{"id":"`+item+`","type":"message","status":"in_progress","content":[],"role":"assistant"},"output_index":0`)...)
	pro = append(pro, event(3, "response.content_part.added", `"content_index":0,"item_id":"`+item+`","output_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`)...)
	s.prologue = pro
	for i := range n {
		s.chunks[i] = event(4+i, "response.output_text.delta", `"content_index":0,"delta":`+quote(ChunkText(i))+`,"item_id":"`+item+`","logprobs":[],"obfuscation":"`+obfuscation(i)+`","output_index":0`)
	}
	text := quote(ExpectedText(n))
	part := `{"type":"output_text","annotations":[],"logprobs":[],"text":` + text + `}`
	msg := `{"id":"` + item + `","type":"message","status":"completed","content":[` + part + `],"role":"assistant"}`
	seq := 4 + n
	var epi []byte
	epi = append(epi, event(seq, "response.output_text.done", `"content_index":0,"item_id":"`+item+`","logprobs":[],"output_index":0,"text":`+text)...)
	epi = append(epi, event(seq+1, "response.content_part.done", `"content_index":0,"item_id":"`+item+`","output_index":0,"part":`+part)...)
	epi = append(epi, event(seq+2, "response.output_item.done", `"item":`+msg+`,"output_index":0`)...)
	epi = append(epi, event(seq+3, "response.completed", `"response":`+response("completed", msg, fmt.Sprintf(`{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}`, n, n+12)))...)
	s.epilogue = epi
}

// obfuscation pads a chunk as OpenAI does, to a length that varies with
// the text's.
func obfuscation(i int) string {
	const pad = "Zq8xR2vLm0TnWc4Ya"
	return pad[:len(pad)-len(ChunkText(i))]
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Handler returns the stream server: POST /v1/chat/completions (also
// /chat/completions) answers an OpenAI Chat Completions stream, POST
// /v1/messages an Anthropic Messages stream, POST /v1/responses an OpenAI
// Responses API stream and POST /v1beta/models/{model}:streamGenerateContent
// a Gemini stream, each of as many text chunks as the request's model name
// (in the body, or Gemini's in the path) asks (see [ModelName]). Every
// request is answered with a stream, whatever its "stream" field says. GET
// /healthz answers "ok".
func Handler() http.Handler {
	c := &streamCache{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { serve(c, WireOpenAI, w, r) })
	mux.HandleFunc("POST /chat/completions", func(w http.ResponseWriter, r *http.Request) { serve(c, WireOpenAI, w, r) })
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) { serve(c, WireAnthropic, w, r) })
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) { serve(c, WireResponses, w, r) })
	mux.HandleFunc("POST /v1beta/models/{model}", func(w http.ResponseWriter, r *http.Request) { serve(c, WireGemini, w, r) })
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

// maxRequestBody bounds what the server reads of a request.
const maxRequestBody = 1 << 20

func serve(c *streamCache, wire Wire, w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "reading request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "decoding request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if wire == WireGemini {
		model, ok := strings.CutSuffix(r.PathValue("model"), ":streamGenerateContent")
		if !ok {
			http.Error(w, "only :streamGenerateContent is served", http.StatusNotFound)
			return
		}
		req.Model = model
	}
	n, pace := ParseModelName(req.Model)
	s := c.get(wire, n)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	switch wire {
	case WireAnthropic:
		h.Set("Request-Id", "req_bench")
	case WireGemini: // Google sends no request id header
	default:
		h.Set("X-Request-Id", "req_bench")
	}
	w.WriteHeader(http.StatusOK)
	if pace <= 0 {
		w.Write(s.whole)
		return
	}
	flusher, _ := w.(http.Flusher)
	flush := func() bool {
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	if _, err := w.Write(s.prologue); err != nil || !flush() {
		return
	}
	t := time.NewTicker(pace)
	defer t.Stop()
	for _, chunk := range s.chunks {
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		if _, err := w.Write(chunk); err != nil || !flush() {
			return
		}
	}
	w.Write(s.epilogue)
}
