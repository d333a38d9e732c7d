package fstool

import (
	"fmt"
	"io"
)

// ReadFile returns the bytes of the file name under root, text or binary,
// under the same rules as the tools: confined to root (no "..", no
// absolute path outside it, no symbolic link leading out), secret patterns
// refused (*SecretError) unless opts.AllowSecrets allows them, and a
// regular file only. A file larger than opts.MaxReadBytes (when it is
// positive) is an error rather than a cut: its reader wants it whole
// (agcore mcp serve's resources).
func ReadFile(root, name string, opts Options) ([]byte, error) {
	r, err := newRoot(root, opts)
	if err != nil {
		return nil, err
	}
	rel, err := r.resolve(name, false)
	if err != nil {
		return nil, err
	}
	rt, err := r.open()
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	f, err := openRegular(rt, rel, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := int64(r.opts.MaxReadBytes)
	if limit < 0 {
		return io.ReadAll(f)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%q is larger than %d bytes", name, limit)
	}
	return b, nil
}
