package filestore

import (
	"io/fs"

	"github.com/agcore/agcore/session/internal/powerfs"
)

// OpenPower opens a store on the power-losing file system p, as Open does
// on a directory. Closing the store leaves p as it is, so that a test can
// cut the power, reboot p and open a store on what survived.
func OpenPower(p *powerfs.FS, opts ...Option) (*Store, error) {
	return open("powerfs", powerFS{p}, opts)
}

// powerFS is a powerfs.FS as the store's fsys.
type powerFS struct{ *powerfs.FS }

func (p powerFS) OpenFile(name string, flag int, perm fs.FileMode) (file, error) {
	f, err := p.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (powerFS) Close() error { return nil }
