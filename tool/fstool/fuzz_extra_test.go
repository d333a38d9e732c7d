package fstool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzPathsStayInTheRoot feeds arbitrary paths to the path checks and to
// read_file and list_dir, in a root holding links that lead out of it: a
// path that resolves is always inside the root, and no output ever shows
// what lies outside.
func FuzzPathsStayInTheRoot(f *testing.F) {
	if runtime.GOOS == "windows" {
		f.Skip("symbolic links need privileges on Windows")
	}
	const outsideSecret = "OUTSIDE-SECRET-7f3a"
	base := f.TempDir()
	rootDir, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for name, content := range map[string]string{
		"root/a.txt": "alpha\n", "root/dir/b.txt": "beta\n", "outside/secret.txt": outsideSecret + "\n",
	} {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"in": "dir", "up": "..", "out.txt": filepath.Join(outside, "secret.txt"), "outdir": outside,
		"dir/rel": "../../outside", "dangling": filepath.Join(outside, "new.txt"), "loop": "loop",
	} {
		if err := os.Symlink(target, filepath.Join(rootDir, filepath.FromSlash(name))); err != nil {
			f.Fatal(err)
		}
	}
	r, err := newRoot(rootDir, Options{})
	if err != nil {
		f.Fatal(err)
	}
	tools, err := ByName(rootDir, []string{ReadFileName, ListDirName}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a.txt", "../outside/secret.txt", "up/outside/secret.txt", "outdir/secret.txt", "dir/rel/secret.txt",
		"out.txt", "/etc/passwd", filepath.Join(outside, "secret.txt"), filepath.Join(rootDir, "a.txt"), "a.txt\x00../x",
		"in/../../outside", "dangling", "loop", "", ".", "dir/./../a.txt", "//", "in/b.txt"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, name string, missingOK bool) {
		if rel, err := r.resolve(name, missingOK); err == nil {
			if rel != "." && !filepath.IsLocal(rel) {
				t.Fatalf("resolve(%q) = %q, not local to the root", name, rel)
			}
			if real, err := filepath.EvalSymlinks(filepath.Join(r.real, rel)); err == nil {
				if _, ok := within(r.real, real); !ok {
					t.Fatalf("resolve(%q) = %q, which leads to %s outside the root", name, rel, real)
				}
			}
		}
		args, _ := json.Marshal(map[string]string{"path": name})
		for _, tl := range tools {
			out, err := tl.Invoke(context.Background(), args)
			if strings.Contains(out, outsideSecret) || err != nil && strings.Contains(err.Error(), outsideSecret) {
				t.Fatalf("%s(%q) shows a file outside the root: %q %v", tl.Name(), name, out, err)
			}
		}
	})
}
