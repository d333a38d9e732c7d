package fstool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/agcore/agcore/tool"
)

const (
	// grepLineKeep is how much of a line grep matches against; the rest of
	// a longer line (minified code, say) is not searched.
	grepLineKeep = 256 << 10
	// grepShowLine is how much of a matching line grep shows.
	grepShowLine = 300
)

// grepArgs are the arguments of grep; their schema is the tool's parameters.
type grepArgs struct {
	Pattern string `json:"pattern" jsonschema:"a regular expression in RE2 syntax, matched against each line"`
	Path    string `json:"path,omitempty" jsonschema:"a file or directory to search, relative to the root directory (default \".\"); directories are searched recursively"`
}

func (r *root) grepTool() tool.Tool {
	desc := `Search text files under the root directory for lines matching a regular expression (RE2 syntax). Directories are searched recursively, skipping .git, binary files and files matching a secret pattern (keys, credentials, .env files). Each match is a line "file:line: text".`
	if r.opts.MaxMatches > 0 {
		desc += fmt.Sprintf(" At most %d matches are reported.", r.opts.MaxMatches)
	}
	return tool.MustFunc(GrepName, desc, r.grep)
}

// errGrepFull stops the walk once a cap is reached.
var errGrepFull = errors.New("grep: cap reached")

func (r *root) grep(ctx context.Context, in grepArgs) (string, error) {
	re, err := regexp.Compile(in.Pattern)
	if err != nil {
		return "", fmt.Errorf("invalid pattern: %v", err)
	}
	name := in.Path
	if name == "" {
		name = "."
	}
	rel, err := r.resolve(name, false)
	if err != nil {
		return "", err
	}
	shown, _ := r.local(name)
	rt, err := r.open()
	if err != nil {
		return "", err
	}
	defer rt.Close()
	fi, err := rt.Stat(rel)
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
	}

	g := &grepper{ctx: ctx, re: re, out: capped{max: r.opts.MaxOutputBytes}, maxMatches: r.opts.MaxMatches, hint: r.opts.AllowHint}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%q is not a regular file", name)
		}
		binary, err := g.file(rt, rel, display(shown))
		if binary {
			return "", fmt.Errorf("%q is a binary file; grep searches text files only", name)
		}
		return g.result(err)
	}
	start := filepath.ToSlash(rel)
	err = fs.WalkDir(rt.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == start {
				return err
			}
			return nil // an unreadable entry is skipped
		}
		if d.IsDir() {
			if p == start {
				return nil
			}
			if pat := r.secrets.match(p); pat != "" {
				g.skip(pat)
				return fs.SkipDir
			}
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // links met on the walk are not followed
		}
		if pat := r.secrets.match(p); pat != "" {
			g.skip(pat)
			return nil
		}
		sub := p
		if start != "." {
			sub = strings.TrimPrefix(p, start+"/")
		}
		_, err = g.file(rt, filepath.FromSlash(p), path.Join(display(shown), sub))
		return err
	})
	return g.result(err)
}

// grepper searches files and gathers the matching lines under the caps.
type grepper struct {
	ctx        context.Context
	re         *regexp.Regexp
	out        capped
	maxMatches int
	matches    int
	marker     string
	// skipped counts the files and directories left out as secrets, and
	// patterns lists the secret patterns they matched.
	skipped  int
	patterns []string
	hint     string
}

// skip counts a path left out because it matches the secret pattern pat.
func (g *grepper) skip(pat string) {
	g.skipped++
	if !slices.Contains(g.patterns, pat) {
		g.patterns = append(g.patterns, pat)
	}
}

// skipNote says what was left out as secrets, or "".
func (g *grepper) skipNote() string {
	if g.skipped == 0 {
		return ""
	}
	what := "1 path"
	if g.skipped > 1 {
		what = fmt.Sprintf("%d paths", g.skipped)
	}
	return fmt.Sprintf("[%s not searched: secret patterns %s; %s]", what, strings.Join(g.patterns, ", "), allowAny(g.hint, g.patterns))
}

// file searches the file at rel (relative to the real root), reporting its
// lines under the name shown. A binary file is skipped and reported; a file
// that cannot be opened is skipped. It returns errGrepFull at a cap.
func (g *grepper) file(rt *os.Root, rel, shown string) (binary bool, err error) {
	f, err := rt.Open(rel)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if isBinary(br) {
		return true, nil
	}
	lr := lineReader{br: br}
	var buf []byte
	for n := 1; ; n++ {
		if n%1024 == 0 {
			if err := g.ctx.Err(); err != nil {
				return false, err
			}
		}
		var err error
		buf, _, err = lr.next(buf[:0], grepLineKeep)
		if err != nil {
			return false, nil // the end, or a read error: the file is done
		}
		if !g.re.Match(buf) {
			continue
		}
		if g.maxMatches >= 0 && g.matches >= g.maxMatches {
			g.marker = fmt.Sprintf("[stopped at the %d-match cap; narrow the pattern or the path]", g.maxMatches)
			return false, errGrepFull
		}
		text := strings.TrimRight(string(buf), "\r\n")
		if len(text) > grepShowLine {
			text = string(trimPartialRune([]byte(text[:grepShowLine]))) + "…"
		}
		if !g.out.add(fmt.Sprintf("%s:%d: %s\n", shown, n, text)) {
			g.marker = fmt.Sprintf("[stopped at the %d-byte cap after %d matches; narrow the pattern or the path]", g.out.max, g.matches)
			return false, errGrepFull
		}
		g.matches++
	}
}

// result is the text of a finished search: the matches and the marker of a
// cap, or the error that stopped it.
func (g *grepper) result(err error) (string, error) {
	note := g.skipNote()
	switch {
	case errors.Is(err, errGrepFull):
		if note != "" {
			g.marker += "\n" + note
		}
		return g.out.finish(g.marker), nil
	case err != nil:
		return "", unwrapPath(err)
	case g.matches == 0:
		if note != "" {
			return "[no matches]\n" + note, nil
		}
		return "[no matches]", nil
	}
	return g.out.finish(note), nil
}
