package faultserver

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// responder writes the response of one request.
type responder struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	req  *Request
	step *Step
}

func (rs *responder) respond() {
	id := "fault-" + strconv.Itoa(rs.req.N)
	model := rs.req.Model
	if model == "" {
		model = "fault-model"
	}
	switch rs.step.Fault {
	case Status:
		rs.status()
	case StallHeaders:
		rs.s.block(rs.r)
	case Stall:
		rs.w.Header().Set("Content-Type", rs.contentType())
		rs.w.WriteHeader(http.StatusOK)
		rs.flush()
		rs.s.block(rs.r)
	case HugeBody:
		rs.huge(id, model, rs.step.Bytes)
	default:
		if rs.req.Stream {
			rs.stream(id, model)
		} else {
			rs.blocking(id, model)
		}
	}
}

func (rs *responder) contentType() string {
	if rs.req.Stream {
		return "text/event-stream"
	}
	return "application/json"
}

func (rs *responder) flush() { _ = http.NewResponseController(rs.w).Flush() }

func (rs *responder) status() {
	st := rs.step
	code := st.Status
	if code == 0 {
		code = http.StatusInternalServerError
	}
	h := rs.w.Header()
	h.Set("Content-Type", "application/json")
	if st.RetryAfter > 0 {
		secs := int64((st.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	h.Set("X-Request-Id", "req-fault-"+strconv.Itoa(rs.req.N))
	h.Set("Request-Id", "req-fault-"+strconv.Itoa(rs.req.N))
	msg := st.Message
	if st.Bytes > 0 {
		msg += strings.Repeat("x", st.Bytes)
	}
	rs.w.WriteHeader(code)
	rs.w.Write(errorBody(rs.req.Format, code, msg))
}

func (rs *responder) stream(id, model string) {
	f, st := rs.req.Format, rs.step
	var fs []frame
	switch f {
	case Anthropic:
		fs = anthropicFrames(id, model, &st.Reply)
	case Gemini:
		fs = geminiFrames(id, model, &st.Reply)
	default:
		fs = openaiFrames(id, model, &st.Reply)
	}
	cut := faultPoint(fs, st.At)
	switch st.Fault {
	case InBandError:
		fs = append(fs[:cut:cut], frame{data: inBand(f, true, st.Message)})
	case Malformed:
		fs = append(fs[:cut:cut], frame{data: malformed(f, true)})
	case Oversized:
		fs = append(fs[:cut:cut], frame{data: oversized(f, st.Bytes)})
	case Truncate:
		kept := fs[:0:0]
		for _, fr := range fs {
			if !fr.final {
				kept = append(kept, fr)
			}
		}
		fs = kept
	case Reset:
		var all bytes.Buffer
		for _, fr := range fs {
			all.Write(fr.data)
		}
		rs.raw("text/event-stream", all.Bytes(), st.Bytes, false, true)
		return
	}
	rs.w.Header().Set("Content-Type", "text/event-stream")
	rs.w.Header().Set("Cache-Control", "no-cache")
	rs.w.WriteHeader(http.StatusOK)
	rs.flush()
	sent := false // a content event went out: pause before the next
	for _, fr := range fs {
		if fr.content {
			if sent && !rs.s.wait(rs.r, st.Reply.Interval) {
				return
			}
			sent = true
		}
		if _, err := rs.w.Write(fr.data); err != nil {
			return
		}
		rs.flush()
	}
}

// faultPoint is the index of the frame an in-stream fault replaces: after
// the first frame and after `at` content frames.
func faultPoint(fs []frame, at int) int {
	i := 1
	for seen := 0; i < len(fs) && seen < at; i++ {
		if fs[i].content {
			seen++
		}
	}
	return min(i, len(fs))
}

func (rs *responder) blocking(id, model string) {
	f, st := rs.req.Format, rs.step
	var body []byte
	switch f {
	case Anthropic:
		body = anthropicJSON(id, model, &st.Reply)
	case Gemini:
		body = geminiJSON(id, model, &st.Reply)
	default:
		body = openaiJSON(id, model, &st.Reply)
	}
	switch st.Fault {
	case InBandError:
		body = inBand(f, false, st.Message)
	case Malformed:
		body = malformed(f, false)
	case Oversized:
		rs.huge(id, model, st.Bytes)
		return
	case Truncate:
		rs.raw("application/json", body, len(body)/2, true, false)
		return
	case Reset:
		rs.raw("application/json", body, st.Bytes, true, true)
		return
	}
	h := rs.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	rs.w.WriteHeader(http.StatusOK)
	rs.w.Write(body)
}

// raw takes the connection over and writes an HTTP 200 response with the
// first k bytes of body, then closes the connection: with a TCP reset when
// rst is set, else cleanly. announce sends body's whole length as
// Content-Length.
func (rs *responder) raw(contentType string, body []byte, k int, announce, rst bool) {
	conn, buf, err := http.NewResponseController(rs.w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	head := "HTTP/1.1 200 OK\r\nContent-Type: " + contentType + "\r\n"
	if announce {
		head += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n"
	}
	head += "Connection: close\r\n\r\n"
	buf.WriteString(head)
	buf.Write(body[:min(max(k, 0), len(body))])
	if buf.Flush() != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok && rst {
		tc.SetLinger(0)
	}
}

// huge writes a valid non-streamed answer whose text is n bytes of 'x'.
func (rs *responder) huge(id, model string, n int) {
	head, tail := hugeParts(rs.req.Format, id, model)
	h := rs.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(head)+n+len(tail)))
	rs.w.WriteHeader(http.StatusOK)
	if _, err := rs.w.Write([]byte(head)); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte{'x'}, 64<<10)
	for left := n; left > 0; left -= len(chunk) {
		if _, err := rs.w.Write(chunk[:min(left, len(chunk))]); err != nil {
			return
		}
	}
	rs.w.Write([]byte(tail))
}
