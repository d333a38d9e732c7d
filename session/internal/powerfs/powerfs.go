// Package powerfs is an in-memory file system of one directory that can
// lose power. Tests run a store on it to prove what survives a power cut,
// which killing a process cannot: after SIGKILL the kernel still holds
// every write in its page cache, so a missing fsync goes unseen.
//
// Every file has a volatile content (what reads see) and a durable one
// (what the disk holds), and so does the directory's table of names.
// Writes, truncations, creations, links, renames and removals change only
// the volatile state. File.Sync makes that file's content durable (not its
// name); a Sync of the directory (opened as ".") makes the directory's
// names durable (not the files' contents). PowerLoss then reverts
// everything to the durable state; a Loss can let some unsynced work reach
// the disk anyway, the way a real disk may: a prefix of the bytes written
// to a file since its last Sync (possibly as zeros), which is how a torn
// last line comes about, and a prefix of the directory operations since
// the last directory Sync, in order, as a journaling file system keeps
// them.
//
// CutWhen stops the machine at a chosen operation: that operation and
// every later one fail with ErrPowerCut, until PowerLoss reboots it. So a
// test can cut the power between any two steps of a store's protocol, then
// reboot and reopen the store on what survived.
//
// The model is stricter than most real file systems (ext4 and XFS, for
// instance, make a new file's name durable with an fsync of the file), so
// a protocol that survives it survives them. It is a test helper: it
// knows one flat directory, no permissions and no times.
package powerfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrPowerCut is the error of every operation after the power was cut
// (see CutWhen), until PowerLoss.
var ErrPowerCut = errors.New("powerfs: the power is cut")

// OpKind names an operation that changes the file system's state.
type OpKind string

// The operations that change state; CutWhen can stop the machine at each.
// Reads, opening an existing file and Close are not among them: cutting the
// power there is the same as cutting it at the next change.
const (
	OpCreate   OpKind = "create"   // OpenFile creating a file
	OpWrite    OpKind = "write"    // Write or WriteAt
	OpTruncate OpKind = "truncate" // Truncate, or OpenFile with O_TRUNC
	OpSync     OpKind = "sync"     // File.Sync of a file
	OpSyncDir  OpKind = "syncdir"  // File.Sync of the directory
	OpLink     OpKind = "link"
	OpRename   OpKind = "rename"
	OpRemove   OpKind = "remove"
)

// Op is one state-changing operation.
type Op struct {
	N    int    // its number: how many such operations came before it
	Kind OpKind // what it does
	Name string // the file it acts on; for link and rename, the new name
}

func (o Op) String() string { return fmt.Sprintf("#%d %s %s", o.N, o.Kind, o.Name) }

// FS is the file system. Make one with New. It is safe for concurrent use.
type FS struct {
	mu      sync.Mutex
	names   map[string]*inode // the directory as reads see it
	durable map[string]*inode // the directory as the disk holds it
	journal []dirOp           // directory operations since the last directory Sync
	ops     int               // state-changing operations so far
	cutWhen func(Op) bool     // stops the machine at the first op it accepts
	cut     *Op               // where the power was cut; nil while it is on
	boot    int               // bumped by PowerLoss: older handles are dead
}

// inode is a file's content, shared by all its names.
type inode struct {
	data    []byte // volatile: what reads see
	durable []byte // what the disk holds: the content at the last Sync
}

// dirOp is a directory operation not yet made durable. Replayed in order
// on the durable directory, the journal yields the volatile one.
type dirOp struct {
	kind     OpKind // OpCreate, OpLink, OpRename or OpRemove
	name, to string // to: the new name of a link or rename
	ino      *inode
}

// New returns an empty file system with the power on.
func New() *FS {
	return &FS{names: map[string]*inode{}, durable: map[string]*inode{}}
}

// CutWhen cuts the power at the first state-changing operation, from now
// on, for which cut returns true: that operation does nothing and it and
// every operation after it fail with ErrPowerCut, until PowerLoss. A nil
// cut leaves the power on.
func (f *FS) CutWhen(cut func(Op) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutWhen = cut
}

// CutAfter lets n more state-changing operations run and cuts the power at
// the one after them.
func (f *FS) CutAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := f.ops + n
	f.cutWhen = func(op Op) bool { return op.N >= at }
}

// Ops returns how many state-changing operations have run (or been
// attempted) since New.
func (f *FS) Ops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ops
}

// Cut reports the operation at which the power was cut, if it is cut.
func (f *FS) Cut() (Op, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut == nil {
		return Op{}, false
	}
	return *f.cut, true
}

// step admits a state-changing operation, or fails it because the power is
// or now goes off. The caller holds f.mu.
func (f *FS) step(kind OpKind, name string) error {
	if f.cut != nil {
		return ErrPowerCut
	}
	op := Op{N: f.ops, Kind: kind, Name: name}
	f.ops++
	if f.cutWhen != nil && f.cutWhen(op) {
		f.cut = &op
		return ErrPowerCut
	}
	return nil
}

// on fails a read while the power is cut. The caller holds f.mu.
func (f *FS) on() error {
	if f.cut != nil {
		return ErrPowerCut
	}
	return nil
}

// A Loss says what unsynced work reaches the disk anyway when the power
// goes. The zero Loss keeps none: only what was synced survives.
type Loss struct {
	// Tear, if set, is asked about each surviving file whose content
	// differs from its durable content, with n the number of bytes after
	// the longest prefix the two share: the first Keep of those bytes
	// survive (0 ≤ Keep ≤ n). For a file only appended to since its last
	// Sync, those are the appended bytes. Keep 0 leaves the durable
	// content.
	Tear func(name string, n int) Tear
	// DirOps, if set, returns how many of the n directory operations
	// since the last directory Sync survive: the first ones, in order.
	DirOps func(n int) int
}

// Tear is what survives of a file's unsynced bytes; see Loss.
type Tear struct {
	Keep  int
	Zeros bool // the file grew by Keep bytes but they read as zeros
}

// Random returns a Loss that decides at random, reproducibly from seed:
// a file keeps none, all, or a random part of its unsynced bytes (now and
// then as zeros), and the directory a random prefix of its operations.
func Random(seed uint64) Loss {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	return Loss{
		Tear: func(_ string, n int) Tear {
			var t Tear
			switch r.IntN(4) {
			case 0: // none
			case 1:
				t.Keep = n
			default:
				t.Keep = r.IntN(n + 1)
			}
			t.Zeros = r.IntN(8) == 0
			return t
		},
		DirOps: func(n int) int { return r.IntN(n + 1) },
	}
}

// KeepAll is the Loss that lets every unsynced write and directory
// operation reach the disk: what a kill of the process leaves.
var KeepAll = Loss{
	Tear:   func(_ string, n int) Tear { return Tear{Keep: n} },
	DirOps: func(n int) int { return n },
}

// PowerLoss turns the power off and on again: the directory and every file
// revert to their durable state, except what l lets survive, and the
// result is durable. Files open before are closed (their operations fail
// with fs.ErrClosed). The power is on after, with no cut planned.
func (f *FS) PowerLoss(l Loss) {
	f.mu.Lock()
	defer f.mu.Unlock()

	keep := 0
	if l.DirOps != nil && len(f.journal) > 0 {
		keep = min(max(l.DirOps(len(f.journal)), 0), len(f.journal))
	}
	names := maps.Clone(f.durable)
	for _, op := range f.journal[:keep] {
		switch op.kind {
		case OpCreate:
			names[op.name] = op.ino
		case OpLink:
			names[op.to] = op.ino
		case OpRename:
			delete(names, op.name)
			names[op.to] = op.ino
		case OpRemove:
			delete(names, op.name)
		}
	}
	seen := map[*inode]bool{}
	for _, name := range slices.Sorted(maps.Keys(names)) { // sorted: Tear is asked in a fixed order
		ino := names[name]
		if seen[ino] {
			continue
		}
		seen[ino] = true
		survivor := ino.durable
		if l.Tear != nil && !bytes.Equal(ino.data, ino.durable) {
			p := commonPrefix(ino.data, ino.durable)
			if n := len(ino.data) - p; n > 0 {
				t := l.Tear(name, n)
				if k := min(max(t.Keep, 0), n); k > 0 {
					survivor = append([]byte(nil), ino.data[:p+k]...)
					if t.Zeros {
						clear(survivor[p:])
					}
				}
			}
		}
		ino.data = bytes.Clone(survivor)
		ino.durable = bytes.Clone(survivor)
	}
	f.names = names
	f.durable = maps.Clone(names)
	f.journal = nil
	f.cut, f.cutWhen = nil, nil
	f.boot++
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// checkName accepts a plain file name, or "." (the directory) if dot.
func checkName(op, name string, dot bool) error {
	if name == "." && dot {
		return nil
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

// OpenFile opens the file name, or the directory as ".", the way os.OpenFile
// does for the flags O_RDONLY, O_WRONLY, O_RDWR, O_CREATE, O_EXCL, O_TRUNC and
// O_APPEND. The directory can only be opened read-only, to Sync it.
func (f *FS) OpenFile(name string, flag int, _ fs.FileMode) (*File, error) {
	if err := checkName("open", name, true); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.on(); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if name == "." {
		if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a directory")}
		}
		return &File{fs: f, name: name, boot: f.boot, dir: true}, nil
	}
	ino := f.names[name]
	switch {
	case ino != nil && flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	case ino == nil && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case ino == nil:
		if err := f.step(OpCreate, name); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		ino = &inode{}
		f.names[name] = ino
		f.journal = append(f.journal, dirOp{kind: OpCreate, name: name, ino: ino})
	}
	writable := flag&(os.O_WRONLY|os.O_RDWR) != 0
	if flag&os.O_TRUNC != 0 && writable && len(ino.data) > 0 {
		if err := f.step(OpTruncate, name); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		ino.data = ino.data[:0:0]
	}
	return &File{fs: f, ino: ino, name: name, boot: f.boot,
		writable: writable, appending: flag&os.O_APPEND != 0}, nil
}

// ReadFile returns the file's content as reads see it.
func (f *FS) ReadFile(name string) ([]byte, error) {
	if err := checkName("open", name, false); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.on(); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	ino := f.names[name]
	if ino == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(ino.data), nil
}

// ReadDir lists the directory ("." only), sorted by name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.on(); err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	ents := make([]fs.DirEntry, 0, len(f.names))
	for _, n := range slices.Sorted(maps.Keys(f.names)) {
		ents = append(ents, fs.FileInfoToDirEntry(fileInfo{name: n, size: int64(len(f.names[n].data))}))
	}
	return ents, nil
}

// Lstat describes the file, or the directory as ".".
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	if err := checkName("lstat", name, true); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.on(); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	if name == "." {
		return fileInfo{name: ".", dir: true}, nil
	}
	ino := f.names[name]
	if ino == nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	return fileInfo{name: name, size: int64(len(ino.data))}, nil
}

// Remove removes the name.
func (f *FS) Remove(name string) error {
	if err := checkName("remove", name, false); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.step(OpRemove, name); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	ino := f.names[name]
	if ino == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(f.names, name)
	f.journal = append(f.journal, dirOp{kind: OpRemove, name: name, ino: ino})
	return nil
}

// Link gives the file oldname the further name newname, which must not
// exist.
func (f *FS) Link(oldname, newname string) error {
	if err := errors.Join(checkName("link", oldname, false), checkName("link", newname, false)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.step(OpLink, newname); err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	ino := f.names[oldname]
	switch {
	case ino == nil:
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: fs.ErrNotExist}
	case f.names[newname] != nil:
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: fs.ErrExist}
	}
	f.names[newname] = ino
	f.journal = append(f.journal, dirOp{kind: OpLink, name: oldname, to: newname, ino: ino})
	return nil
}

// Rename moves oldname to newname, replacing the file newname named.
func (f *FS) Rename(oldname, newname string) error {
	if err := errors.Join(checkName("rename", oldname, false), checkName("rename", newname, false)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.step(OpRename, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	ino := f.names[oldname]
	if ino == nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	if oldname == newname {
		return nil
	}
	delete(f.names, oldname)
	f.names[newname] = ino
	f.journal = append(f.journal, dirOp{kind: OpRename, name: oldname, to: newname, ino: ino})
	return nil
}

// File is an open file, or the directory opened to be synced.
type File struct {
	fs        *FS
	ino       *inode // nil for the directory
	name      string
	boot      int // the FS's boot when opened; a power loss closes it
	dir       bool
	writable  bool
	appending bool
	off       int64 // for Write
	closed    bool
}

// use checks that the file can still be used. The caller holds f.fs.mu.
func (f *File) use(op string) error {
	switch {
	case f.closed || f.boot != f.fs.boot:
		return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrClosed}
	case f.fs.cut != nil:
		return &fs.PathError{Op: op, Path: f.name, Err: ErrPowerCut}
	}
	return nil
}

func (f *File) writeCheck(op string) error {
	if err := f.use(op); err != nil {
		return err
	}
	if !f.writable || f.dir {
		return &fs.PathError{Op: op, Path: f.name, Err: errors.New("bad file descriptor")}
	}
	return nil
}

// writeAt puts b at off, filling any gap with zeros. The caller holds
// f.fs.mu and has checked the file.
func (f *File) writeAt(op string, b []byte, off int64) (int, error) {
	if err := f.fs.step(OpWrite, f.name); err != nil {
		return 0, &fs.PathError{Op: op, Path: f.name, Err: err}
	}
	end := int(off) + len(b)
	if end > len(f.ino.data) {
		f.ino.data = append(f.ino.data, make([]byte, end-len(f.ino.data))...)
	}
	copy(f.ino.data[off:], b)
	return len(b), nil
}

// Write writes b at the file's offset (at its end with O_APPEND).
func (f *File) Write(b []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.writeCheck("write"); err != nil {
		return 0, err
	}
	if f.appending {
		f.off = int64(len(f.ino.data))
	}
	n, err := f.writeAt("write", b, f.off)
	f.off += int64(n)
	return n, err
}

// WriteAt writes b at off.
func (f *File) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.writeCheck("writeat"); err != nil {
		return 0, err
	}
	if off < 0 || f.appending {
		return 0, &fs.PathError{Op: "writeat", Path: f.name, Err: fs.ErrInvalid}
	}
	return f.writeAt("writeat", b, off)
}

// Truncate changes the file's size, cutting it or extending it with zeros.
func (f *File) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.writeCheck("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fs.ErrInvalid}
	}
	if err := f.fs.step(OpTruncate, f.name); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	if int(size) <= len(f.ino.data) {
		f.ino.data = f.ino.data[:size]
	} else {
		f.ino.data = append(f.ino.data, make([]byte, int(size)-len(f.ino.data))...)
	}
	return nil
}

// Sync makes the file's content durable; for the directory, its names.
func (f *File) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.use("sync"); err != nil {
		return err
	}
	if f.dir {
		if err := f.fs.step(OpSyncDir, f.name); err != nil {
			return &fs.PathError{Op: "sync", Path: f.name, Err: err}
		}
		f.fs.durable = maps.Clone(f.fs.names)
		f.fs.journal = nil
		return nil
	}
	if err := f.fs.step(OpSync, f.name); err != nil {
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	f.ino.durable = bytes.Clone(f.ino.data)
	return nil
}

// Close closes the file. It fails while the power is cut, like every
// operation, but the file is closed all the same.
func (f *File) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	err := f.use("close")
	f.closed = true
	return err
}

// fileInfo describes a file or the directory.
type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o700
	}
	return 0o600
}
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }
