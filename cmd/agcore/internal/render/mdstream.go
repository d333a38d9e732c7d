package render

import "strings"

// mdStream renders a streamed answer a line at a time: each line is
// rendered as soon as it is complete (its newline arrived), so an answer
// appears on a terminal as fast as the model writes its lines, not a
// paragraph at a time. The text of the current block (up to a blank line
// outside a fenced code block) is rendered again with each new line and
// only the rendered lines not written yet are written; inside a block, a
// soft line break is kept as a line break so that what was written never
// has to change (a paragraph's lines are not joined and re-wrapped).
//
// The trade-offs, which --raw avoids: a table is held until its block
// ends (its columns are as wide as its widest cell, known only then); a
// line that a later line turns into something else (a setext heading's
// text before its underline, emphasis opened on one line and closed on the
// next) stays as it was first written; the incomplete last line is shown
// only once it ends (or the answer does).
type mdStream struct {
	m         *Markdown
	partial   strings.Builder // the line not complete yet
	block     []string        // the complete lines of the current block
	emitted   int             // rendered lines of the block already written
	rendered  int             // lines of block those rendered lines cover
	winStart  int             // a long block's window: its first line in block
	winLines  int             // the rendered lines of block[winStart:rendered]
	inFence   bool            // the block is inside a fenced code block
	fenceLine int             // the index in block of the open fence's first line
	hold      bool            // the block has a table: written when it ends
	wrote     bool            // a block was written since the last flush
	work      int             // bytes of source rendered so far (the cost the window bounds)
}

// streamWindow is how many of a long block's last lines (at least, at
// most twice as many) are rendered again for each new line: beyond it a
// block is rendered from a window of its last lines (and the fence line
// of an open code block), so that a long paragraph or code block costs
// linear time, not quadratic. What the window cuts off can only change
// how a token spanning more lines than it is highlighted, or a lazy
// continuation's indent.
const streamWindow = 24

// add appends a delta and returns the rendered lines it completed ("" if
// none).
func (s *mdStream) add(delta string) string {
	var out strings.Builder
	for delta != "" {
		i := strings.IndexByte(delta, '\n')
		if i < 0 {
			s.partial.WriteString(delta)
			break
		}
		s.partial.WriteString(delta[:i+1])
		delta = delta[i+1:]
		line := s.partial.String()
		s.partial.Reset()
		out.WriteString(s.line(line))
	}
	return out.String()
}

// line takes one complete line and returns what it lets be written.
func (s *mdStream) line(line string) string {
	t := strings.TrimSpace(line)
	fence := strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
	if fence {
		s.inFence = !s.inFence
		if s.inFence {
			s.fenceLine = len(s.block)
		}
	}
	if !fence && !s.inFence && t == "" {
		out := s.render(true)
		s.reset()
		return out
	}
	s.block = append(s.block, line)
	if !s.inFence && strings.HasPrefix(t, "|") {
		s.hold = true
	}
	if s.hold {
		return ""
	}
	return s.render(false)
}

// reset starts a new block.
func (s *mdStream) reset() {
	s.block = s.block[:0]
	s.emitted, s.rendered, s.winStart, s.winLines = 0, 0, 0, 0
	s.hold, s.inFence, s.fenceLine = false, false, 0
}

// lines renders src, a block or part of one, to its lines; unless final,
// without its empty last lines (an open code block's fence with no code
// yet, an empty code line: the margin of what the next line brings).
func (s *mdStream) lines(src string, final bool) []string {
	if strings.TrimSpace(src) == "" {
		return nil
	}
	s.work += len(src)
	lines := strings.SplitAfter(s.m.render(src, true), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	for !final && len(lines) > 0 && visibleLen(strings.TrimSpace(lines[len(lines)-1])) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// render renders the current block and returns its lines not written
// yet; final says the block has ended.
func (s *mdStream) render(final bool) string {
	if len(s.block) == 0 || (s.hold && !final) {
		return ""
	}
	var fresh []string
	if n := len(s.block); n <= streamWindow || s.hold || s.emitted == 0 {
		all := s.lines(strings.Join(s.block, ""), final)
		if s.emitted < len(all) {
			fresh = all[s.emitted:]
		}
		s.winStart, s.winLines = 0, 0 // no window yet
	} else {
		// A long block: what the new lines add to a window of the lines
		// before them, the window moved on every streamWindow lines.
		if s.winStart == 0 || s.rendered-s.winStart > 2*streamWindow {
			s.winStart = s.rendered - streamWindow
			for i := s.winStart; i < s.rendered; i++ {
				if c := s.block[i]; c != "" && c[0] != ' ' && c[0] != '\t' {
					s.winStart = i // a line at the margin: no list or quote context lost
					break
				}
			}
			s.winLines = len(s.lines(s.window(s.rendered), false))
		}
		after := s.lines(s.window(n), final)
		if s.winLines < len(after) {
			fresh = after[s.winLines:]
		}
		s.winLines = max(s.winLines, len(after))
	}
	s.rendered = len(s.block)
	if len(fresh) == 0 {
		return ""
	}
	var out strings.Builder
	if s.emitted == 0 && s.wrote {
		out.WriteString("\n") // the empty line between blocks
	}
	for _, l := range fresh {
		out.WriteString(l)
	}
	s.emitted += len(fresh)
	s.wrote = true
	return out.String()
}

// window returns the source of the window block[winStart:end], after the
// fence line of a code block open at its start (for its language).
func (s *mdStream) window(end int) string {
	head := ""
	if s.fenceLine < s.winStart && fenceOpen(s.block[s.fenceLine:s.winStart]) {
		head = s.block[s.fenceLine]
	}
	return head + strings.Join(s.block[s.winStart:end], "")
}

// fenceOpen reports whether lines, starting with a fence line, leave a
// fenced code block open.
func fenceOpen(lines []string) bool {
	open := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			open = !open
		}
	}
	return open
}

// flush returns the rest rendered: the incomplete last line and the
// block held back. The next block starts afresh (no empty line before
// it), as after a tool call.
func (s *mdStream) flush() string {
	if s.partial.Len() > 0 {
		s.block = append(s.block, s.partial.String())
		s.partial.Reset()
	}
	out := s.render(true)
	s.reset()
	s.wrote = false
	return out
}
