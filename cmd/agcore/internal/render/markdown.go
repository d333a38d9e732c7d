package render

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Markdown renders an answer's Markdown for a terminal: headings, emphasis,
// lists, quotes, tables, links and code blocks with their tokens
// highlighted. The Markdown is parsed by goldmark (CommonMark and GitHub's
// tables, strikethrough, task lists and autolinks) and written here.
//
// glamour did this before; it executes text/template, whose reflection
// makes the linker keep every exported method of every type in the
// command (about 20 MB), and its highlighter registers some 250 lexers.
type Markdown struct {
	width int
	plain bool
	md    goldmark.Markdown
}

// NewMarkdown returns a renderer for a terminal of width columns; plain
// keeps the layout but uses no colours (NO_COLOR).
func NewMarkdown(width int, plain bool) (*Markdown, error) {
	if width <= 0 {
		width = 80
	}
	return &Markdown{width: min(width, 120), plain: plain, md: goldmark.New(goldmark.WithExtensions(extension.GFM))}, nil
}

// The styles: SGR parameters.
const (
	sgrHeading  = "1;38;5;39"
	sgrH1       = "1;38;5;228;48;5;63"
	sgrBold     = "1"
	sgrItalic   = "3"
	sgrStrike   = "9"
	sgrCodeSpan = "38;5;203;48;5;236"
	sgrLink     = "4;38;5;30"
	sgrURL      = "38;5;244"
	sgrQuote    = "38;5;244"
	sgrRule     = "38;5;240"
	sgrKeyword  = "38;5;204"
	sgrString   = "38;5;186"
	sgrNumber   = "38;5;141"
	sgrComment  = "38;5;243"
	sgrFunc     = "38;5;81"
	sgrPunct    = "38;5;252"
	sgrPlainTok = "38;5;253"
)

// margin is the left margin of the whole answer.
const margin = "  "

// Render renders md.
func (m *Markdown) Render(md string) string { return m.render(md, false) }

// render renders md; with lines, a soft line break is kept as a line
// break (a streamed block's lines stay as they were written).
func (m *Markdown) render(md string, lines bool) string {
	src := []byte(md)
	doc := m.md.Parser().Parse(text.NewReader(src))
	r := &mdRenderer{m: m, src: src, hard: lines}
	r.blocks(doc, margin, margin)
	return strings.Trim(r.out.String(), "\n") + "\n"
}

type mdRenderer struct {
	m    *Markdown
	src  []byte
	hard bool // soft line breaks are line breaks
	out  strings.Builder
}

// style wraps s in an SGR sequence (nothing when plain).
func (r *mdRenderer) style(sgr, s string) string {
	if r.m.plain || sgr == "" || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

// blocks renders the block children of n, separated by empty lines
// unless tight (the items of a tight list); first is the prefix of their
// first line, rest of the others (list markers, quote bars).
func (r *mdRenderer) blocks(n ast.Node, first, rest string) {
	r.children(n, first, rest, false)
}

func (r *mdRenderer) children(n ast.Node, first, rest string, tight bool) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c != n.FirstChild() && !tight {
			r.blank(rest)
		}
		r.block(c, first, rest)
		first = rest
	}
}

// blank ends a block with an empty line (a quote keeps its bar).
func (r *mdRenderer) blank(prefix string) {
	r.out.WriteString(strings.TrimRight(prefix, " ") + "\n")
}

func (r *mdRenderer) block(n ast.Node, first, rest string) {
	switch n := n.(type) {
	case *ast.Heading:
		sgr := sgrHeading
		if n.Level == 1 {
			sgr = sgrH1
		}
		spans := r.inlines(n, sgr)
		if n.Level == 1 && !r.m.plain {
			spans = append([]span{{" ", sgr}}, append(spans, span{" ", sgr})...)
		}
		r.wrap(spans, first, rest)
	case *ast.Paragraph, *ast.TextBlock:
		r.wrap(r.inlines(n, ""), first, rest)
	case *ast.ThematicBreak:
		r.out.WriteString(first + r.style(sgrRule, strings.Repeat("─", max(r.m.width-utf8.RuneCountInString(first)-2, 3))) + "\n")
	case *ast.Blockquote:
		bar := r.style(sgrQuote, "│ ")
		r.blocks(n, first+bar, rest+bar)
	case *ast.List:
		num := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			if item != n.FirstChild() && !n.IsTight {
				r.blank(rest)
			}
			marker := "• "
			if n.IsOrdered() {
				marker = strconv.Itoa(num) + ". "
				num++
			}
			r.children(item, first+marker, rest+strings.Repeat(" ", utf8.RuneCountInString(marker)), n.IsTight)
			first = rest
		}
	case *ast.FencedCodeBlock:
		r.code(string(n.Language(r.src)), n.Lines(), first, rest)
	case *ast.CodeBlock:
		r.code("", n.Lines(), first, rest)
	case *ast.HTMLBlock:
		r.lines(n.Lines(), first, rest, "")
	case *east.Table:
		r.table(n, first, rest)
	default:
		if n.Type() == ast.TypeBlock && n.HasChildren() {
			r.blocks(n, first, rest)
		}
	}
}

// lines writes the raw lines of a block.
func (r *mdRenderer) lines(lines *text.Segments, first, rest, sgr string) {
	for i := range lines.Len() {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(r.src)), "\n")
		r.out.WriteString(first + r.style(sgr, line) + "\n")
		first = rest
	}
}

// span is inline text and its style.
type span struct{ text, sgr string }

// inlines flattens the inline children of n into styled spans; a newline
// span is a hard line break.
func (r *mdRenderer) inlines(n ast.Node, sgr string) []span {
	var out []span
	join := func(a, b string) string {
		if a == "" {
			return b
		}
		if b == "" {
			return a
		}
		return a + ";" + b
	}
	var walk func(n ast.Node, sgr string)
	walk = func(n ast.Node, sgr string) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				out = append(out, span{string(c.Segment.Value(r.src)), sgr})
				if c.HardLineBreak() || (c.SoftLineBreak() && r.hard) {
					out = append(out, span{"\n", ""})
				} else if c.SoftLineBreak() {
					out = append(out, span{" ", sgr})
				}
			case *ast.String:
				out = append(out, span{string(c.Value), sgr})
			case *ast.CodeSpan:
				var b strings.Builder
				for t := c.FirstChild(); t != nil; t = t.NextSibling() {
					if tt, ok := t.(*ast.Text); ok {
						b.Write(tt.Segment.Value(r.src))
					} else if s, ok := t.(*ast.String); ok {
						b.Write(s.Value)
					}
				}
				code := b.String()
				if !r.m.plain {
					code = " " + code + " "
				}
				out = append(out, span{code, sgrCodeSpan})
			case *ast.Emphasis:
				if c.Level >= 2 {
					walk(c, join(sgr, sgrBold))
				} else {
					walk(c, join(sgr, sgrItalic))
				}
			case *east.Strikethrough:
				walk(c, join(sgr, sgrStrike))
			case *ast.Link:
				before := len(out)
				walk(c, join(sgr, sgrLink))
				var label strings.Builder
				for _, s := range out[before:] {
					label.WriteString(s.text)
				}
				if dest := string(c.Destination); dest != "" && dest != label.String() {
					out = append(out, span{" ", sgr}, span{dest, sgrURL})
				}
			case *ast.AutoLink:
				out = append(out, span{string(c.URL(r.src)), join(sgr, sgrLink)})
			case *ast.Image:
				before := len(out)
				walk(c, sgr)
				alt := ""
				for _, s := range out[before:] {
					alt += s.text
				}
				out = append(out[:before], span{"Image: " + alt, sgr}, span{" → ", sgr}, span{string(c.Destination), sgrURL})
			case *ast.RawHTML:
				for i := range c.Segments.Len() {
					seg := c.Segments.At(i)
					out = append(out, span{string(seg.Value(r.src)), sgr})
				}
			case *east.TaskCheckBox:
				box := "[ ] "
				if c.IsChecked {
					box = "[✓] "
				}
				out = append(out, span{box, sgr})
			default:
				walk(c, sgr)
			}
		}
	}
	walk(n, sgr)
	return out
}

// wrap writes spans word-wrapped to the renderer's width, each line after
// the first starting with rest.
func (r *mdRenderer) wrap(spans []span, first, rest string) {
	width := max(r.m.width-visibleLen(rest), 20)
	line, col := first, 0
	pendingSpace := false
	flush := func() {
		r.out.WriteString(strings.TrimRight(line, " ") + "\n")
		line, col = rest, 0
	}
	for _, s := range spans {
		if s.text == "\n" {
			flush()
			pendingSpace = false
			continue
		}
		words := strings.Fields(s.text)
		lead := s.text != "" && isSpace(s.text[0])
		trail := s.text != "" && isSpace(s.text[len(s.text)-1])
		if s.sgr == sgrCodeSpan && !r.m.plain {
			// A code span's padding is part of it.
			words, lead, trail = []string{s.text}, false, false
		}
		if len(words) == 0 {
			if s.text != "" {
				pendingSpace = col > 0
			}
			continue
		}
		for i, w := range words {
			space := col > 0 && (i > 0 || lead || pendingSpace)
			n := utf8.RuneCountInString(w)
			if space {
				n++
			}
			if col > 0 && col+n > width {
				flush()
				space, n = false, utf8.RuneCountInString(w)
			}
			if space {
				line += " "
			}
			line += r.style(s.sgr, w)
			col += n
		}
		pendingSpace = trail
	}
	if col > 0 || line != rest {
		flush()
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' }

// visibleLen is the number of runes of s outside escape sequences.
func visibleLen(s string) int {
	n, esc := 0, false
	for _, c := range s {
		switch {
		case esc:
			if c == 'm' {
				esc = false
			}
		case c == '\x1b':
			esc = true
		default:
			n++
		}
	}
	return n
}

// table writes a table with columns as wide as their widest cell.
func (r *mdRenderer) table(t *east.Table, first, rest string) {
	var rows [][]string
	var aligns []east.Alignment
	header := -1
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			var b strings.Builder
			for _, s := range r.inlines(cell, "") {
				b.WriteString(r.style(s.sgr, strings.ReplaceAll(s.text, "\n", " ")))
			}
			cells = append(cells, b.String())
			if c, ok := cell.(*east.TableCell); ok && len(rows) == 0 {
				aligns = append(aligns, c.Alignment)
			}
		}
		if _, ok := row.(*east.TableHeader); ok {
			header = len(rows)
		}
		rows = append(rows, cells)
	}
	var widths []int
	for _, cells := range rows {
		for i, c := range cells {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], visibleLen(c))
		}
	}
	sep := r.style(sgrRule, " │ ")
	for ri, cells := range rows {
		var b strings.Builder
		for i := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			if i > 0 {
				b.WriteString(sep)
			}
			pad := widths[i] - visibleLen(c)
			if ri == header {
				c = r.style(sgrBold, c)
			}
			switch {
			case i < len(aligns) && aligns[i] == east.AlignRight:
				b.WriteString(strings.Repeat(" ", pad) + c)
			case i < len(aligns) && aligns[i] == east.AlignCenter:
				b.WriteString(strings.Repeat(" ", pad/2) + c + strings.Repeat(" ", pad-pad/2))
			default:
				b.WriteString(c + strings.Repeat(" ", pad))
			}
		}
		r.out.WriteString(first + strings.TrimRight(b.String(), " ") + "\n")
		first = rest
		if ri == header {
			var rule []string
			for _, w := range widths {
				rule = append(rule, strings.Repeat("─", w))
			}
			r.out.WriteString(rest + r.style(sgrRule, strings.Join(rule, "─┼─")) + "\n")
		}
	}
}

// code writes a code block, indented, its tokens highlighted.
func (r *mdRenderer) code(lang string, lines *text.Segments, first, rest string) {
	var b strings.Builder
	for i := range lines.Len() {
		seg := lines.At(i)
		b.Write(seg.Value(r.src))
	}
	src := strings.TrimRight(b.String(), "\n")
	hl := src
	if !r.m.plain {
		hl = highlight(lang, src)
	}
	for i, line := range strings.Split(hl, "\n") {
		prefix := rest
		if i == 0 {
			prefix = first
		}
		r.out.WriteString(prefix + "  " + line + "\n")
	}
}
