package fstool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/tool"
)

// The tool names, as the model sees them.
const (
	ReadFileName  = "read_file"
	ListDirName   = "list_dir"
	GrepName      = "grep"
	WriteFileName = "write_file"
)

// Names lists every tool of the package in the order [New] returns them.
var Names = []string{ReadFileName, ListDirName, GrepName, WriteFileName}

// DefaultNames are the tools offered when the user names none: the
// read-only ones.
var DefaultNames = []string{ReadFileName, ListDirName, GrepName}

// Defaults for the zero fields of [Options].
const (
	DefaultMaxReadBytes   = 64 << 10
	DefaultMaxOutputBytes = 32 << 10
	DefaultMaxMatches     = 200
	DefaultMaxWriteBytes  = 1 << 20
)

// ErrOutsideRoot is matched (errors.Is) by the error of a path that leads
// outside the root: by "..", by being absolute, or through a symbolic link.
var ErrOutsideRoot = errors.New("path is outside the root directory")

// ErrInvalidPath is matched by the error of a path that cannot name a file
// at all, such as one containing a NUL byte.
var ErrInvalidPath = errors.New("invalid path")

// Options sets the limits of the tools. The zero value uses the defaults;
// a negative value means no limit.
type Options struct {
	// MaxReadBytes caps a read_file result (DefaultMaxReadBytes).
	MaxReadBytes int
	// MaxOutputBytes caps a list_dir or grep result (DefaultMaxOutputBytes).
	MaxOutputBytes int
	// MaxMatches caps the lines grep reports (DefaultMaxMatches).
	MaxMatches int
	// MaxWriteBytes is the largest content write_file accepts
	// (DefaultMaxWriteBytes).
	MaxWriteBytes int

	// SecretPatterns are the paths refused as secrets (see
	// [DefaultSecretPatterns] for the syntax); nil means
	// DefaultSecretPatterns, an empty non-nil slice refuses none.
	SecretPatterns []string
	// AllowSecrets lifts secret patterns: an entry equal to one of
	// SecretPatterns turns that pattern off (".env*"), "*" turns all of
	// them off, and any other entry is a glob (path.Match) allowing the
	// names it matches (".env.example") or the path from the root it
	// matches ("config/dev.pem").
	AllowSecrets []string
	// AllowHint says how the user allows a pattern, as a refusal tells the
	// model ("--allow-secret" gives "the user can allow it with
	// --allow-secret '.env*'"); empty for a generic sentence.
	AllowHint string
}

func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}

func (o Options) withDefaults() Options {
	return Options{
		MaxReadBytes:   limit(o.MaxReadBytes, DefaultMaxReadBytes),
		MaxOutputBytes: limit(o.MaxOutputBytes, DefaultMaxOutputBytes),
		MaxMatches:     limit(o.MaxMatches, DefaultMaxMatches),
		MaxWriteBytes:  limit(o.MaxWriteBytes, DefaultMaxWriteBytes),
		SecretPatterns: o.SecretPatterns,
		AllowSecrets:   o.AllowSecrets,
		AllowHint:      o.AllowHint,
	}
}

// New returns all four tools (in the order of [Names]) confined to the
// directory root. It fails if root is not an existing directory.
func New(root string, opts Options) ([]tool.Tool, error) {
	return ByName(root, Names, opts)
}

// ByName returns the tools called names, in that order, confined to the
// directory root — the form a --tools list takes (names are trimmed, empty
// ones skipped). It fails on an unknown or repeated name (listing the known
// ones) and if root is not an existing directory.
func ByName(root string, names []string, opts Options) ([]tool.Tool, error) {
	r, err := newRoot(root, opts)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(names))
	tools := make([]tool.Tool, 0, len(names))
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue // "read_file,,grep" and a trailing comma name nothing
		}
		if seen[name] {
			return nil, fmt.Errorf("fstool: tool %q named twice", name)
		}
		seen[name] = true
		var t tool.Tool
		switch name {
		case ReadFileName:
			t = r.readFileTool()
		case ListDirName:
			t = r.listDirTool()
		case GrepName:
			t = r.grepTool()
		case WriteFileName:
			t = r.writeFileTool()
		default:
			return nil, fmt.Errorf("fstool: unknown tool %q (known: %s)", name, strings.Join(Names, ", "))
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// root is the directory the tools are confined to.
type root struct {
	dir     string // absolute and clean, as given
	real    string // dir with every symbolic link resolved
	opts    Options
	secrets *secrets
}

func newRoot(dir string, opts Options) (*root, error) {
	if strings.IndexByte(dir, 0) >= 0 {
		return nil, fmt.Errorf("fstool: root: %w (it contains a NUL byte)", ErrInvalidPath)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("fstool: root: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("fstool: root: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("fstool: root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("fstool: root %s is not a directory", dir)
	}
	opts = opts.withDefaults()
	return &root{dir: abs, real: real, opts: opts, secrets: newSecrets(real, opts)}, nil
}

// open opens the root for one call. Opening per call keeps the tools free
// of a Close and follows the root if it is replaced.
func (r *root) open() (*os.Root, error) {
	rt, err := os.OpenRoot(r.real)
	if err != nil {
		return nil, fmt.Errorf("the root directory cannot be opened: %w", unwrapPath(err))
	}
	return rt, nil
}

// local checks name and returns it cleaned, relative to the root, using the
// OS separator, without following any link. An empty name is ".".
func (r *root) local(name string) (string, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return "", fmt.Errorf("%q: %w (it contains a NUL byte)", name, ErrInvalidPath)
	}
	if name == "" {
		return ".", nil
	}
	p := filepath.Clean(filepath.FromSlash(name))
	if filepath.IsAbs(p) {
		for _, base := range []string{r.dir, r.real} {
			if rel, ok := within(base, p); ok {
				return rel, nil
			}
		}
		return "", fmt.Errorf("%q: %w (use a path relative to the root)", name, ErrOutsideRoot)
	}
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("%q: %w", name, ErrOutsideRoot)
	}
	return p, nil
}

// within returns p relative to base if p is base or below it.
func within(base, p string) (string, bool) {
	rel, err := filepath.Rel(base, p)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return rel, true
}

// resolve checks name and follows its symbolic links, returning the path
// of its target relative to the real root, free of links. A path that
// matches a secret pattern, as given or once its links are followed, is
// refused with a *SecretError. With missingOK
// (write_file) the path may name something that does not exist yet; its
// deepest existing ancestor is resolved instead and the rest appended.
func (r *root) resolve(name string, missingOK bool) (string, error) {
	rel, err := r.local(name)
	if err != nil {
		return "", err
	}
	full := filepath.Join(r.real, rel)
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
		}
		if !missingOK {
			return "", fmt.Errorf("%q: %w", name, fs.ErrNotExist)
		}
		if real, err = resolveMissing(full); err != nil {
			return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
		}
	}
	out, ok := within(r.real, real)
	if !ok {
		return "", fmt.Errorf("%q: %w (a symbolic link leads out of it)", name, ErrOutsideRoot)
	}
	if err := r.secrets.check(name, rel, out); err != nil {
		return "", err
	}
	return out, nil
}

// maxLinks bounds the dangling links resolveMissing follows (as the kernel
// bounds symbolic link chains).
const maxLinks = 40

// resolveMissing resolves a path that does not exist: its deepest existing
// ancestor has its links followed, and a dangling link on the way is
// followed to the target it would create.
func resolveMissing(p string) (string, error) {
	var rest []string
	for hops := 0; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if hops++; hops > maxLinks {
				return "", fmt.Errorf("too many symbolic links")
			}
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				dir, err := filepath.EvalSymlinks(filepath.Dir(p))
				if err != nil {
					return "", err
				}
				target = filepath.Join(dir, target)
			}
			p = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// unwrapPath drops the *fs.PathError around err, whose path is the real
// one on the host and tells the model nothing useful.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// display is the name under which a result shows the path rel (relative to
// the root): slash-separated, as the model writes paths.
func display(rel string) string { return filepath.ToSlash(rel) }
