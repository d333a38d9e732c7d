package fstool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agcore/agcore/tool"
)

const secret = "TOPSECRET"

// tree is a root directory beside an "outside" directory holding a secret,
// with links inside the root that lead out of it, and links that stay in.
type tree struct {
	base, root, outside string
	tools               map[string]tool.Tool
}

func newTree(t *testing.T, opts Options) *tree {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	base := t.TempDir()
	tr := &tree{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	files := map[string]string{
		"root/a.txt":          "alpha\nbeta\ngamma\n",
		"root/dir/b.go":       "package b\n\nfunc Hello() string { return \"hello\" }\n",
		"root/dir/sub/c.md":   "# Hello\n",
		"root/.git/config":    "hello from git\n",
		"root/bin.dat":        "\x00\x01hello\x02",
		"root/empty/.keep":    "",
		"outside/secret.txt":  secret + "\nhello\n",
		"outside/sub/x.txt":   secret + "\n",
		"root/crlf.txt":       "one\r\ntwo\r\n",
		"root/noeol.txt":      "first\nlast",
		"root/dir/sub/d.txt":  "hello hello\n",
		"root/unicode.txt":    "héllo wörld\n",
		"root/dir/.hidden.go": "package hidden // hello\n",
	}
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	must(t, os.Remove(filepath.Join(tr.root, "empty/.keep")))
	links := map[string]string{
		"inlink":    "dir",                                   // a directory inside
		"abslink":   filepath.Join(tr.root, "a.txt"),         // absolute, inside
		"out.txt":   filepath.Join(tr.outside, "secret.txt"), // a file outside
		"outdir":    tr.outside,                              // a directory outside
		"up":        "..",                                    // the root's parent
		"relout":    "../outside/secret.txt",                 // relative, outside
		"dangling":  filepath.Join(tr.outside, "new.txt"),    // would create outside
		"dir/chain": "../out.txt",                            // a link to a link outside
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(tr.root, filepath.FromSlash(name))))
	}
	ts, err := New(tr.root, opts)
	must(t, err)
	tr.tools = map[string]tool.Tool{}
	for _, x := range ts {
		tr.tools[x.Name()] = x
	}
	return tr
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// call invokes the tool name with args given as a Go value.
func (tr *tree) call(t *testing.T, name string, args any) (string, error) {
	t.Helper()
	b, err := json.Marshal(args)
	must(t, err)
	return tr.tools[name].Invoke(context.Background(), b)
}

// snapshot lists every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	must(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		m[p] = string(b)
		return nil
	}))
	return m
}

func TestPathsOutsideTheRootAreRefused(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	abs := filepath.Join(tr.outside, "secret.txt")
	type args = map[string]any
	tests := []struct {
		rule string
		tool string
		args args
		want error
	}{
		{"read: .. climbs out", ReadFileName, args{"path": "../outside/secret.txt"}, ErrOutsideRoot},
		{"read: .. after a directory climbs out", ReadFileName, args{"path": "dir/../../outside/secret.txt"}, ErrOutsideRoot},
		{"read: a/../../x climbs out", ReadFileName, args{"path": "a/../../x"}, ErrOutsideRoot},
		{"read: an absolute system path", ReadFileName, args{"path": "/etc/passwd"}, ErrOutsideRoot},
		{"read: an absolute path outside the root", ReadFileName, args{"path": abs}, ErrOutsideRoot},
		{"read: a link to a file outside", ReadFileName, args{"path": "out.txt"}, ErrOutsideRoot},
		{"read: a relative link outside", ReadFileName, args{"path": "relout"}, ErrOutsideRoot},
		{"read: a chain of links outside", ReadFileName, args{"path": "dir/chain"}, ErrOutsideRoot},
		{"read: through a linked directory outside", ReadFileName, args{"path": "outdir/secret.txt"}, ErrOutsideRoot},
		{"read: through a link to the parent", ReadFileName, args{"path": "up/outside/secret.txt"}, ErrOutsideRoot},
		{"read: a NUL byte", ReadFileName, args{"path": "a.txt\x00../../outside/secret.txt"}, ErrInvalidPath},
		{"list: .. climbs out", ListDirName, args{"path": ".."}, ErrOutsideRoot},
		{"list: an absolute path outside", ListDirName, args{"path": tr.outside}, ErrOutsideRoot},
		{"list: a linked directory outside", ListDirName, args{"path": "outdir"}, ErrOutsideRoot},
		{"list: a link to the parent", ListDirName, args{"path": "up"}, ErrOutsideRoot},
		{"list: a NUL byte", ListDirName, args{"path": "dir\x00"}, ErrInvalidPath},
		{"grep: .. climbs out", GrepName, args{"pattern": secret, "path": "../outside"}, ErrOutsideRoot},
		{"grep: an absolute path outside", GrepName, args{"pattern": secret, "path": abs}, ErrOutsideRoot},
		{"grep: a link to a file outside", GrepName, args{"pattern": secret, "path": "out.txt"}, ErrOutsideRoot},
		{"grep: a linked directory outside", GrepName, args{"pattern": secret, "path": "outdir"}, ErrOutsideRoot},
		{"grep: a NUL byte", GrepName, args{"pattern": secret, "path": "\x00"}, ErrInvalidPath},
		{"write: .. climbs out", WriteFileName, args{"path": "../outside/new.txt", "content": "x"}, ErrOutsideRoot},
		{"write: a/../../x climbs out", WriteFileName, args{"path": "a/../../x", "content": "x"}, ErrOutsideRoot},
		{"write: an absolute path outside", WriteFileName, args{"path": filepath.Join(tr.outside, "new.txt"), "content": "x"}, ErrOutsideRoot},
		{"write: over a link to a file outside", WriteFileName, args{"path": "out.txt", "content": "x"}, ErrOutsideRoot},
		{"write: into a linked directory outside", WriteFileName, args{"path": "outdir/new.txt", "content": "x"}, ErrOutsideRoot},
		{"write: a new directory under a linked directory outside", WriteFileName, args{"path": "outdir/a/b/new.txt", "content": "x"}, ErrOutsideRoot},
		{"write: a dangling link that would create a file outside", WriteFileName, args{"path": "dangling", "content": "x"}, ErrOutsideRoot},
		{"write: through a link to the parent", WriteFileName, args{"path": "up/outside/secret.txt", "content": "x"}, ErrOutsideRoot},
		{"write: a NUL byte", WriteFileName, args{"path": "new\x00.txt", "content": "x"}, ErrInvalidPath},
	}
	before := snapshot(t, tr.base)
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := tr.call(t, tt.tool, tt.args)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %q, %v; want an error matching %v", out, err, tt.want)
			}
			given, _ := json.Marshal(tt.args)
			if strings.Contains(out+err.Error(), secret) || (strings.Contains(err.Error(), tr.outside) && !strings.Contains(string(given), tr.outside)) {
				t.Errorf("the result shows what is outside: %q %v", out, err)
			}
		})
	}
	after := snapshot(t, tr.base)
	if len(after) != len(before) {
		t.Errorf("files created: %d before, %d after", len(before), len(after))
	}
	for p, c := range before {
		if after[p] != c {
			t.Errorf("%s changed", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(tr.outside, "new.txt")); err == nil {
		t.Error("a file was created outside the root")
	}
	if _, err := os.Stat(filepath.Join(tr.outside, "a")); err == nil {
		t.Error("a directory was created outside the root")
	}
}

func TestWalkingDoesNotFollowLinksOutOfTheRoot(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	tests := []struct {
		rule string
		tool string
		args map[string]any
		want string // a substring of the result
	}{
		{"grep over the root skips links", GrepName, map[string]any{"pattern": secret + "|hello"}, "dir/b.go:3:"},
		{"list shows a link outside as a plain entry", ListDirName, map[string]any{}, "outdir\n"},
		{"list shows a link to a directory inside with a slash", ListDirName, map[string]any{}, "inlink/\n"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := tr.call(t, tt.tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out, secret) || !strings.Contains(out, tt.want) {
				t.Errorf("result %q: want %q and no secret", out, tt.want)
			}
		})
	}
}

func TestPathsInsideTheRootAreAccepted(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	tests := []struct {
		rule string
		path string
		want string
	}{
		{"a relative path", "a.txt", "alpha\n"},
		{"a path with a harmless ..", "dir/../a.txt", "alpha\n"},
		{"an absolute path inside the root", filepath.Join(tr.root, "a.txt"), "alpha\n"},
		{"an absolute link to a file inside", "abslink", "alpha\n"},
		{"a path through a link to a directory inside", "inlink/b.go", "package b\n"},
		{"a slash-separated path", "dir/sub/c.md", "# Hello\n"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := tr.call(t, ReadFileName, map[string]any{"path": tt.path})
			if err != nil || !strings.HasPrefix(out, tt.want) {
				t.Errorf("got %q, %v; want it to start with %q", out, err, tt.want)
			}
		})
	}
}

func TestTheRootMustBeADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	must(t, os.WriteFile(file, nil, 0o644))
	for _, root := range []string{file, filepath.Join(dir, "missing"), "a\x00b"} {
		if _, err := New(root, Options{}); err == nil {
			t.Errorf("New(%q) accepted", root)
		}
	}
}

func TestALinkSwappedInAfterTheCheckIsNotFollowedOut(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	r, err := newRoot(tr.root, Options{})
	must(t, err)
	// The check passes; then, before the open, the file and a directory
	// become links to the outside. The open goes through os.Root.
	file, err := r.resolve("dir/b.go", false)
	must(t, err)
	dir, err := r.resolve("dir/sub/new.txt", true)
	must(t, err)
	must(t, os.Remove(filepath.Join(tr.root, "dir/b.go")))
	must(t, os.Symlink(filepath.Join(tr.outside, "secret.txt"), filepath.Join(tr.root, "dir/b.go")))
	must(t, os.RemoveAll(filepath.Join(tr.root, "dir/sub")))
	must(t, os.Symlink(tr.outside, filepath.Join(tr.root, "dir/sub")))

	rt, err := r.open()
	must(t, err)
	defer rt.Close()
	if f, err := openRegular(rt, file, "dir/b.go"); err == nil {
		f.Close()
		t.Error("read: the swapped-in link was followed out of the root")
	}
	if f, err := rt.OpenFile(dir, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
		f.Close()
		t.Error("write: the swapped-in link was followed out of the root")
	}
	if _, err := os.Stat(filepath.Join(tr.outside, "new.txt")); err == nil {
		t.Error("a file was created outside the root")
	}
}
