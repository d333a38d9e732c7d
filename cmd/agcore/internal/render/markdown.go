package render

import (
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/muesli/termenv"
)

// Markdown renders an answer's Markdown for a terminal (headings, emphasis,
// lists, tables, code blocks highlighted) with glamour.
type Markdown struct {
	r *glamour.TermRenderer
}

// NewMarkdown returns a renderer for a terminal of width columns; plain
// keeps the layout but uses no colours (NO_COLOR).
func NewMarkdown(width int, plain bool) (*Markdown, error) {
	if width <= 0 {
		width = 80
	}
	opts := []glamour.TermRendererOption{glamour.WithStandardStyle("dark"), glamour.WithWordWrap(min(width, 120))}
	if plain {
		opts = append(opts, glamour.WithColorProfile(termenv.Ascii))
	}
	r, err := glamour.NewTermRenderer(opts...)
	if err != nil {
		return nil, err
	}
	return &Markdown{r: r}, nil
}

// Render renders md; on failure md is returned as it is.
func (m *Markdown) Render(md string) string {
	out, err := m.r.Render(md)
	if err != nil {
		return md
	}
	return strings.Trim(out, "\n") + "\n"
}

// mdStream holds the streamed text of an answer until it makes whole
// blocks: text up to a blank line outside a fenced code block can be
// rendered on its own, so an answer appears a paragraph at a time.
type mdStream struct {
	pending strings.Builder
}

// add appends a delta and returns the whole blocks now complete ("" if
// none).
func (s *mdStream) add(delta string) string {
	s.pending.WriteString(delta)
	text := s.pending.String()
	cut := lastBlockEnd(text)
	if cut <= 0 {
		return ""
	}
	s.pending.Reset()
	s.pending.WriteString(text[cut:])
	return text[:cut]
}

// flush returns what is left.
func (s *mdStream) flush() string {
	text := s.pending.String()
	s.pending.Reset()
	return text
}

// lastBlockEnd is the end of the last blank line of text that is not
// inside a fenced code block, or 0.
func lastBlockEnd(text string) int {
	end, inFence, pos := 0, false, 0
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		pos += len(line)
		if !strings.HasSuffix(line, "\n") {
			break // the line is not complete yet
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if !inFence && t == "" && i > 0 {
			end = pos
		}
	}
	return end
}
