package demo

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// listingInfo is what a list_dir result says.
type listingInfo struct {
	dirs, files []string
	more        string // the result's marker line when it was cut
	empty       bool
}

func (l listingInfo) count() string {
	n := len(l.dirs) + len(l.files)
	return fmt.Sprintf("%s (%s and %s)", plural(n, "entry", "entries"), plural(len(l.dirs), "directory", "directories"), plural(len(l.files), "file", "files"))
}

// parseListing reads list_dir's "one entry a line, directories ending in
// /" format.
func parseListing(s string) listingInfo {
	var l listingInfo
	for _, line := range strings.Split(s, "\n") {
		switch {
		case line == "":
		case line == "[empty directory]":
			l.empty = true
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			l.more = line
		case strings.HasSuffix(line, "/"):
			l.dirs = append(l.dirs, line)
		default:
			l.files = append(l.files, line)
		}
	}
	return l
}

// preferred are the files that best say what a directory is, best first.
var preferred = []string{"readme.md", "readme", "readme.txt", "readme.rst", "go.mod", "package.json", "cargo.toml",
	"pyproject.toml", "architecture.md", "makefile", "main.go", "main.py", "index.js"}

// textExts are the extensions of files worth reading when no preferred
// file is there.
var textExts = []string{".md", ".txt", ".go", ".py", ".js", ".ts", ".rs", ".java", ".c", ".h", ".toml", ".yaml", ".yml", ".json", ".sh", ".rst"}

// pickFiles chooses up to n files to read: the preferred ones present, then
// other text files by name; hidden files are skipped.
func pickFiles(files []string, n int) []string {
	var out []string
	for _, want := range preferred {
		for _, f := range files {
			if strings.EqualFold(f, want) && len(out) < n {
				out = append(out, f)
			}
		}
	}
	for _, f := range files {
		if len(out) >= n {
			break
		}
		if !strings.HasPrefix(f, ".") && slices.Contains(textExts, strings.ToLower(path.Ext(f))) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// summarize writes the final answer from the listing and the files read.
func summarize(l listingInfo, reads []*call) string {
	var b strings.Builder
	switch {
	case l.empty:
		b.WriteString("The working directory is empty, so there is nothing to summarize.\n")
	case len(l.dirs)+len(l.files) == 0:
		b.WriteString("I could not list the working directory.\n")
	default:
		fmt.Fprintf(&b, "Here is what I found in the working directory: %s.\n\n", l.count())
		if len(l.dirs) > 0 {
			shown := l.dirs[:min(len(l.dirs), 10)]
			more := ""
			if len(l.dirs) > len(shown) {
				more = fmt.Sprintf(", and %d more", len(l.dirs)-len(shown))
			}
			fmt.Fprintf(&b, "- Directories: %s%s\n", strings.Join(shown, ", "), more)
		}
		if len(reads) == 0 && len(l.files) > 0 {
			fmt.Fprintf(&b, "- Files: %s (none of them looked like text worth reading)\n", strings.Join(l.files[:min(len(l.files), 10)], ", "))
		}
	}
	for _, c := range reads {
		var args struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(c.use.Input, &args)
		fmt.Fprintf(&b, "- %s — %s\n", args.Path, describe(args.Path, c))
	}
	b.WriteString("\n(Written by agcore's scripted demo model from the tool results above. With a real provider, `agcore run` and `agcore chat` put a language model in its place.)\n")
	return b.String()
}

// describe says in one line what a file read shows.
func describe(name string, c *call) string {
	if !c.done {
		return "no result came back"
	}
	if c.isErr {
		return "could not be read: " + firstLine(c.result)
	}
	text := c.result
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	if strings.TrimSpace(text) == "" {
		return "empty"
	}
	read := fmt.Sprintf(" (%s read)", plural(lines, "line", "lines"))
	lower := strings.ToLower(name)
	switch {
	case lower == "go.mod":
		module, goVersion := field(text, "module "), field(text, "go ")
		if module != "" {
			s := "the Go module " + module
			if goVersion != "" {
				s += ", Go " + goVersion
			}
			return s + read
		}
	case lower == "package.json":
		var p struct{ Name, Description string }
		if json.Unmarshal([]byte(text), &p) == nil && p.Name != "" {
			s := "the npm package " + p.Name
			if p.Description != "" {
				s += ": " + clip(p.Description, 120)
			}
			return s + read
		}
	case lower == "cargo.toml" || lower == "pyproject.toml":
		if n := strings.Trim(field(text, "name = "), `"`); n != "" {
			s := "the package " + n
			if d := strings.Trim(field(text, "description = "), `"`); d != "" {
				s += ": " + clip(d, 120)
			}
			return s + read
		}
	case strings.HasSuffix(lower, ".md") || strings.HasPrefix(lower, "readme"):
		title, para := markdown(text)
		switch {
		case title != "" && para != "":
			return fmt.Sprintf("“%s”: %s%s", title, sentences(para, 160), read)
		case title != "":
			return fmt.Sprintf("“%s”%s", title, read)
		case para != "":
			return sentences(para, 160) + read
		}
	}
	return "starts with “" + clip(firstLine(text), 100) + "”" + read
}

// markdown returns a document's first heading and the first paragraph of
// prose, its lines joined.
func markdown(text string) (title, para string) {
	fence := false
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		switch {
		case fence:
		case line == "":
			if len(lines) > 0 {
				return title, strings.Join(lines, " ")
			}
		case strings.HasPrefix(line, "#"):
			if len(lines) > 0 {
				return title, strings.Join(lines, " ")
			}
			if title == "" {
				title = strings.TrimSpace(strings.TrimLeft(line, "#"))
			}
		case strings.HasPrefix(line, "<"), strings.HasPrefix(line, "!["), strings.HasPrefix(line, "[!"), strings.HasPrefix(line, "|"):
		default:
			lines = append(lines, line)
		}
	}
	return title, strings.Join(lines, " ")
}

// sentences returns the leading whole sentences of s that fit in n runes,
// or s clipped when even the first does not.
func sentences(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	cut := -1
	for i := 0; i < len(s) && len([]rune(s[:i])) < n; i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			cut = i + 1
		}
	}
	if cut > n/3 {
		return s[:cut]
	}
	return clip(s, n)
}

// field returns the rest of the first line starting with prefix.
func field(text, prefix string) string {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
