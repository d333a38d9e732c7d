package fstool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agcore/agcore/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type args = map[string]any

func TestReadFile(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	tests := []struct {
		rule    string
		args    args
		want    string // the whole result
		wantErr string // a substring of the error
	}{
		{"the whole file by default", args{"path": "a.txt"}, "alpha\nbeta\ngamma\n", ""},
		{"offset is the first line, 1-based", args{"path": "a.txt", "offset": 2}, "beta\ngamma\n", ""},
		{"limit is the number of lines", args{"path": "a.txt", "offset": 2, "limit": 1}, "beta\n", ""},
		{"limit alone starts at the first line", args{"path": "a.txt", "limit": 2}, "alpha\nbeta\n", ""},
		{"a limit past the end stops at the end", args{"path": "a.txt", "offset": 3, "limit": 10}, "gamma\n", ""},
		{"line endings are kept", args{"path": "crlf.txt", "offset": 2}, "two\r\n", ""},
		{"a last line without newline is a line", args{"path": "noeol.txt", "offset": 2}, "last", ""},
		{"an offset just past the end is an error", args{"path": "a.txt", "offset": 4}, "", "offset 4 is past the end of \"a.txt\", which has 3 lines"},
		{"a negative offset is an error", args{"path": "a.txt", "offset": -1}, "", "must not be negative"},
		{"a missing file is an error", args{"path": "nope.txt"}, "", "file does not exist"},
		{"a directory is an error pointing to list_dir", args{"path": "dir"}, "", "is a directory; use list_dir"},
		{"a binary file is refused", args{"path": "bin.dat"}, "", `"bin.dat" is a binary file (8 bytes); read_file reads text files only`},
		{"a missing path is an argument error", args{}, "", "path"},
		{"an unknown argument is an argument error", args{"path": "a.txt", "lines": 3}, "", "lines"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := tr.call(t, ReadFileName, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", out, err, tt.wantErr)
				}
				return
			}
			if err != nil || out != tt.want {
				t.Errorf("got %q, %v; want %q", out, err, tt.want)
			}
		})
	}
	if _, err := tr.call(t, ReadFileName, args{"path": "nope.txt"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v does not match fs.ErrNotExist", err)
	}
}

func TestReadFileIsCappedWithAMarkerToReadOn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var lines []string
	for i := 1; i <= 200; i++ {
		lines = append(lines, fmt.Sprintf("line %03d", i)) // 9 bytes with "\n"
	}
	must(t, os.WriteFile(filepath.Join(dir, "long.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "wide.txt"), []byte(strings.Repeat("é", 600)+"\nnext\n"), 0o644))
	const maxBytes = 500
	ts, err := ByName(dir, []string{ReadFileName}, Options{MaxReadBytes: maxBytes})
	must(t, err)
	read := func(a args) string {
		t.Helper()
		b, _ := json.Marshal(a)
		out, err := ts[0].Invoke(context.Background(), b)
		must(t, err)
		if len(out) > maxBytes {
			t.Errorf("result is %d bytes, over the %d-byte cap", len(out), maxBytes)
		}
		return out
	}

	t.Run("whole lines up to the cap, then the offset to read on", func(t *testing.T) {
		out := read(args{"path": "long.txt"})
		// 500-160 = 340 bytes of room: 37 lines of 9 bytes.
		want := strings.Join(lines[:37], "\n") + "\n[cut at the 500-byte cap after line 37; call read_file with offset=38 to read on]"
		if out != want {
			t.Fatalf("got %q\nwant %q", out, want)
		}
		if next := read(args{"path": "long.txt", "offset": 38}); !strings.HasPrefix(next, "line 038\n") {
			t.Errorf("reading on from the marker's offset: %q", next)
		}
	})
	t.Run("a line longer than the cap is cut on a character boundary", func(t *testing.T) {
		out := read(args{"path": "wide.txt"})
		body, marker, ok := strings.Cut(out, "\n[")
		if !ok || !strings.HasPrefix(marker, "cut at the 500-byte cap inside line 1, which is 1201 bytes long; call read_file with offset=2") {
			t.Fatalf("marker: %q", out)
		}
		if body != strings.Repeat("é", 170) {
			t.Errorf("body is %d bytes: %q", len(body), body)
		}
	})
	t.Run("a result under the cap has no marker", func(t *testing.T) {
		if out := read(args{"path": "long.txt", "offset": 199}); out != "line 199\nline 200\n" {
			t.Errorf("got %q", out)
		}
	})
}

func TestListDir(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	tests := []struct {
		rule    string
		args    args
		want    string
		wantErr string
	}{
		{"the root by default, sorted, directories with a slash, links to directories inside too",
			args{}, ".git/\na.txt\nabslink\nbin.dat\ncrlf.txt\ndangling\ndir/\nempty/\ninlink/\nnoeol.txt\nout.txt\noutdir\nrelout\nunicode.txt\nup\n", ""},
		{"a subdirectory", args{"path": "dir"}, ".hidden.go\nb.go\nchain\nsub/\n", ""},
		{"a directory through a link inside", args{"path": "inlink/sub"}, "c.md\nd.txt\n", ""},
		{"an empty directory says so", args{"path": "empty"}, "[empty directory]", ""},
		{"a file is an error pointing to read_file", args{"path": "a.txt"}, "", "is a file, not a directory; use read_file"},
		{"a missing directory is an error", args{"path": "nope"}, "", "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := tr.call(t, ListDirName, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", out, err, tt.wantErr)
				}
				return
			}
			if err != nil || out != tt.want {
				t.Errorf("got %q, %v\nwant %q", out, err, tt.want)
			}
		})
	}
}

func TestListDirIsCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 100 {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.txt", i)), nil, 0o644))
	}
	ts, err := ByName(dir, []string{ListDirName}, Options{MaxOutputBytes: 400})
	must(t, err)
	out, err := ts[0].Invoke(context.Background(), nil)
	must(t, err)
	// 400-160 = 240 bytes of room: 20 entries of 12 bytes.
	want := "file019.txt\n[80 more entries not shown: cut at the 400-byte cap]"
	if !strings.HasPrefix(out, "file000.txt\n") || !strings.HasSuffix(out, want) || len(out) > 400 {
		t.Errorf("got %q", out)
	}
}

func TestGrep(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	tests := []struct {
		rule    string
		args    args
		want    string
		wantErr string
	}{
		{"matches are file:line: text, walking recursively in order, skipping .git, binary files and links",
			args{"pattern": "(?i)hello"}, "dir/.hidden.go:1: package hidden // hello\ndir/b.go:3: func Hello() string { return \"hello\" }\ndir/sub/c.md:1: # Hello\ndir/sub/d.txt:1: hello hello\n", ""},
		{"a directory limits the search", args{"pattern": "Hello", "path": "dir/sub"}, "dir/sub/c.md:1: # Hello\n", ""},
		{"a directory through a link is shown under the link's name", args{"pattern": "Hello", "path": "inlink/sub"}, "inlink/sub/c.md:1: # Hello\n", ""},
		{"a single file", args{"pattern": "^g", "path": "a.txt"}, "a.txt:3: gamma\n", ""},
		{"the line ending is not shown", args{"pattern": "two", "path": "crlf.txt"}, "crlf.txt:2: two\n", ""},
		{"an explicit .git directory is searched", args{"pattern": "hello", "path": ".git"}, ".git/config:1: hello from git\n", ""},
		{"no match says so", args{"pattern": "zebra"}, "[no matches]", ""},
		{"an invalid pattern is an error", args{"pattern": "a("}, "", "invalid pattern"},
		{"a binary file named alone is an error", args{"pattern": "hello", "path": "bin.dat"}, "", "is a binary file"},
		{"a missing path is an error", args{"pattern": "x", "path": "nope"}, "", "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := tr.call(t, GrepName, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", out, err, tt.wantErr)
				}
				return
			}
			if err != nil || out != tt.want {
				t.Errorf("got %q, %v\nwant %q", out, err, tt.want)
			}
		})
	}
}

func TestGrepIsCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "match %02d\n", i)
	}
	b.WriteString(strings.Repeat("x", 1000) + " match\n")
	must(t, os.WriteFile(filepath.Join(dir, "m.txt"), []byte(b.String()), 0o644))
	tests := []struct {
		rule     string
		opts     Options
		pattern  string
		lines    int
		marker   string
		maxBytes int
	}{
		{"at most MaxMatches lines", Options{MaxMatches: 5}, "match", 5, "[stopped at the 5-match cap; narrow the pattern or the path]", DefaultMaxOutputBytes},
		{"at most MaxOutputBytes bytes", Options{MaxOutputBytes: 300}, "match", 8, "[stopped at the 300-byte cap after 8 matches; narrow the pattern or the path]", 300},
		{"exactly MaxMatches matches need no marker", Options{MaxMatches: 2}, "match 0[01]", 2, "", DefaultMaxOutputBytes},
		{"a long line is shown cut", Options{}, "x match", 1, "", DefaultMaxOutputBytes},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			ts, err := ByName(dir, []string{GrepName}, tt.opts)
			must(t, err)
			out, err := ts[0].Invoke(context.Background(), json.RawMessage(fmt.Sprintf(`{"pattern":%q}`, tt.pattern)))
			must(t, err)
			body := out
			if tt.marker != "" {
				var ok bool
				if body, ok = strings.CutSuffix(out, tt.marker); !ok {
					t.Fatalf("no marker %q in %q", tt.marker, out)
				}
			}
			if n := strings.Count(body, "\n"); n != tt.lines || len(out) > tt.maxBytes {
				t.Errorf("%d lines, %d bytes: %q", n, len(out), out)
			}
			if strings.Contains(out, "xxx") && !strings.HasSuffix(body, "x…\n") {
				t.Errorf("a long line is not cut: %q", out)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{MaxWriteBytes: 10})
	tests := []struct {
		rule    string
		args    args
		want    string
		wantErr string
		file    string // the file that must hold the content afterwards
	}{
		{"a new file is created", args{"path": "new.txt", "content": "hi"}, "wrote 2 bytes to new.txt (created it)", "", "new.txt"},
		{"missing parent directories are created", args{"path": "x/y/z.txt", "content": "deep"}, "wrote 4 bytes to x/y/z.txt (created it)", "", "x/y/z.txt"},
		{"an existing file is replaced", args{"path": "a.txt", "content": "new"}, "wrote 3 bytes to a.txt (replaced its content)", "", "a.txt"},
		{"a file through a link inside is written", args{"path": "inlink/w.txt", "content": "via"}, "wrote 3 bytes to inlink/w.txt (created it)", "", "dir/w.txt"},
		{"an absolute path inside is written", args{"path": filepath.Join(tr.root, "abs.txt"), "content": "abs"}, "wrote 3 bytes to abs.txt (created it)", "", "abs.txt"},
		{"empty content is written", args{"path": "empty.txt", "content": ""}, "wrote 0 bytes to empty.txt (created it)", "", "empty.txt"},
		{"a directory cannot be written", args{"path": "dir", "content": "x"}, "", "is a directory", ""},
		{"content over the cap is refused", args{"path": "big.txt", "content": "12345678901"}, "", "more than the 10 bytes", ""},
		{"content is required", args{"path": "c.txt"}, "", "content", ""},
		{"an empty path is refused", args{"path": "", "content": "x"}, "", "path is empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := tr.call(t, WriteFileName, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", out, err, tt.wantErr)
				}
				return
			}
			if err != nil || out != tt.want {
				t.Fatalf("got %q, %v; want %q", out, err, tt.want)
			}
			b, err := os.ReadFile(filepath.Join(tr.root, filepath.FromSlash(tt.file)))
			if err != nil || string(b) != tt.args["content"] {
				t.Errorf("file %s holds %q, %v", tt.file, b, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(tr.root, "big.txt")); err == nil {
		t.Error("refused content was written")
	}
}

func TestOnlyWriteFileNeedsApproval(t *testing.T) {
	t.Parallel()
	ts, err := New(t.TempDir(), Options{})
	must(t, err)
	for _, x := range ts {
		if got, want := tool.NeedsApproval(x), x.Name() == WriteFileName; got != want {
			t.Errorf("%s: NeedsApproval = %v", x.Name(), got)
		}
	}
}

func TestParametersFollowTheCLIContract(t *testing.T) {
	t.Parallel()
	ts, err := New(t.TempDir(), Options{})
	must(t, err)
	type prop struct {
		Type string `json:"type"`
	}
	want := map[string]struct {
		props    map[string]string
		required []string
	}{
		ReadFileName:  {map[string]string{"path": "string", "offset": "integer", "limit": "integer"}, []string{"path"}},
		ListDirName:   {map[string]string{"path": "string"}, nil},
		GrepName:      {map[string]string{"pattern": "string", "path": "string"}, []string{"pattern"}},
		WriteFileName: {map[string]string{"path": "string", "content": "string"}, []string{"path", "content"}},
	}
	var names []string
	for _, x := range ts {
		names = append(names, x.Name())
		var s struct {
			Type       string          `json:"type"`
			Properties map[string]prop `json:"properties"`
			Required   []string        `json:"required"`
		}
		must(t, json.Unmarshal(x.Parameters(), &s))
		w := want[x.Name()]
		got := map[string]string{}
		for k, v := range s.Properties {
			got[k] = v.Type
		}
		if s.Type != "object" || !maps(got, w.props) || !slices.Equal(s.Required, w.required) {
			t.Errorf("%s: schema %s", x.Name(), x.Parameters())
		}
		if x.Description() == "" {
			t.Errorf("%s has no description", x.Name())
		}
	}
	if !slices.Equal(names, Names) {
		t.Errorf("New returned %v, want %v", names, Names)
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestByName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		rule    string
		names   []string
		want    []string
		wantErr string
	}{
		{"the named tools in the given order", []string{"grep", "read_file"}, []string{"grep", "read_file"}, ""},
		{"names from a comma list are trimmed", []string{" list_dir", "write_file "}, []string{"list_dir", "write_file"}, ""},
		{"empty names are skipped", []string{"", "grep", " "}, []string{"grep"}, ""},
		{"the defaults are the read-only tools", DefaultNames, []string{"read_file", "list_dir", "grep"}, ""},
		{"an unknown name lists the known ones", []string{"read_file", "rm"}, nil, `unknown tool "rm" (known: read_file, list_dir, grep, write_file)`},
		{"a repeated name is refused", []string{"grep", "grep"}, nil, `"grep" named twice`},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			ts, err := ByName(dir, tt.names, Options{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want %q", err, tt.wantErr)
				}
				return
			}
			must(t, err)
			var got []string
			for _, x := range ts {
				got = append(got, x.Name())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestACancelledContextStopsGrep(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.tools[GrepName].Invoke(ctx, json.RawMessage(`{"pattern":"hello"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v; want context.Canceled", err)
	}
}
