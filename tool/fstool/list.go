package fstool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agcore/agcore/tool"
)

// listDirArgs are the arguments of list_dir; their schema is the tool's
// parameters.
type listDirArgs struct {
	Path string `json:"path,omitempty" jsonschema:"the directory to list, relative to the root directory (default \".\", the root itself)"`
}

func (r *root) listDirTool() tool.Tool {
	desc := `List a directory under the root directory: one entry a line, sorted by name, directories ending in "/". Entries matching a secret pattern (keys, credentials, .env files) are not shown; a last line in brackets counts them.`
	return tool.MustFunc(ListDirName, desc, r.listDir)
}

func (r *root) listDir(ctx context.Context, in listDirArgs) (string, error) {
	name := in.Path
	if name == "" {
		name = "."
	}
	rel, err := r.resolve(name, false)
	if err != nil {
		return "", err
	}
	rt, err := r.open()
	if err != nil {
		return "", err
	}
	defer rt.Close()
	fi, err := rt.Stat(rel)
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%q is a file, not a directory; use read_file to read it", name)
	}
	dir, err := rt.Open(rel)
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
	}
	entries, err := dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
	}
	if len(entries) == 0 {
		return "[empty directory]", nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	// Secrets are left out, and counted: the model learns they are there
	// and that asking for them is pointless.
	var patterns []string
	n := len(entries)
	entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		pat := r.secretEntry(filepath.Join(rel, e.Name()), e)
		if pat != "" && !slices.Contains(patterns, pat) {
			patterns = append(patterns, pat)
		}
		return pat != ""
	})
	note := ""
	if hidden := n - len(entries); hidden > 0 {
		what := "1 entry"
		if hidden > 1 {
			what = fmt.Sprintf("%d entries", hidden)
		}
		note = fmt.Sprintf("[%s not shown: secret patterns %s; %s]", what, strings.Join(patterns, ", "), allowAny(r.opts.AllowHint, patterns))
		if len(entries) == 0 {
			return note, nil
		}
	}

	out := capped{max: r.opts.MaxOutputBytes}
	for i, e := range entries {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		line := e.Name()
		if e.IsDir() || (e.Type()&fs.ModeSymlink != 0 && r.isDirInside(rt, filepath.Join(rel, e.Name()))) {
			line += "/"
		}
		if !out.add(line + "\n") {
			return out.finish(fmt.Sprintf("[%d more entries not shown: cut at the %d-byte cap]", len(entries)-i, r.opts.MaxOutputBytes)), nil
		}
	}
	return out.finish(note), nil
}

// secretEntry returns the secret pattern the entry at rel (relative to the
// real root) matches, itself or, for a link, its target; "" for none.
func (r *root) secretEntry(rel string, e fs.DirEntry) string {
	if pat := r.secrets.match(rel); pat != "" {
		return pat
	}
	if e.Type()&fs.ModeSymlink != 0 {
		var se *SecretError
		if _, err := r.resolve(rel, false); errors.As(err, &se) {
			return se.Pattern
		}
	}
	return ""
}

// isDirInside reports whether the link at rel (relative to the real root)
// leads to a directory inside the root.
func (r *root) isDirInside(rt *os.Root, rel string) bool {
	target, err := r.resolve(rel, false)
	if err != nil {
		return false
	}
	fi, err := rt.Stat(target)
	return err == nil && fi.IsDir()
}

// capped gathers a result under a byte cap that its final marker must fit
// under too.
type capped struct {
	max int // negative: no cap
	b   strings.Builder
}

// add appends s if it fits, keeping room for a marker, and reports whether
// it did.
func (c *capped) add(s string) bool {
	if c.max >= 0 && c.b.Len()+len(s) > max(c.max-markerReserve, c.max/2) {
		return false
	}
	c.b.WriteString(s)
	return true
}

// finish returns the result with marker (if any) as its last line.
func (c *capped) finish(marker string) string {
	if marker == "" {
		return c.b.String()
	}
	s := c.b.String()
	if c.max >= 0 && len(s)+len(marker) > c.max {
		s = string(cutUTF8([]byte(s), max(c.max-len(marker), 0)))
	}
	return s + marker
}
