package filestore

import (
	"io/fs"
	"os"
)

// fsys is everything the store does with its directory. Names are plain
// file names in that directory; "." is the directory itself, which is
// opened only to be fsync'd. In production it is rootFS; the tests put a
// file system that can lose power (package session/internal/powerfs) in
// its place, to prove the durability protocol described in the package
// doc.
type fsys interface {
	OpenFile(name string, flag int, perm fs.FileMode) (file, error)
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Lstat(name string) (fs.FileInfo, error)
	Remove(name string) error
	Link(oldname, newname string) error
	Rename(oldname, newname string) error
	Close() error
}

// file is what the store does with an open file (or, for Sync, with the
// directory).
type file interface {
	Write(b []byte) (int, error)
	WriteAt(b []byte, off int64) (int, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// rootFS is the directory through an *os.Root, so that no access can
// leave it.
type rootFS struct{ r *os.Root }

func (f rootFS) OpenFile(name string, flag int, perm fs.FileMode) (file, error) {
	o, err := f.r.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return o, nil
}

func (f rootFS) ReadFile(name string) ([]byte, error)       { return f.r.ReadFile(name) }
func (f rootFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(f.r.FS(), name) }
func (f rootFS) Lstat(name string) (fs.FileInfo, error)     { return f.r.Lstat(name) }
func (f rootFS) Remove(name string) error                   { return f.r.Remove(name) }
func (f rootFS) Link(oldname, newname string) error         { return f.r.Link(oldname, newname) }
func (f rootFS) Rename(oldname, newname string) error       { return f.r.Rename(oldname, newname) }
func (f rootFS) Close() error                               { return f.r.Close() }
