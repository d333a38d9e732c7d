package fstool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/agcore/agcore/tool"
)

// sniffLen is how much of a file is looked at to tell binary from text, as
// git and grep do: a NUL byte in it makes the file binary.
const sniffLen = 8 << 10

// markerReserve is the room kept under a cap for the marker of a cut result.
const markerReserve = 160

// readFileArgs are the arguments of read_file; their schema is the
// tool's parameters.
type readFileArgs struct {
	Path   string `json:"path" jsonschema:"the file to read, relative to the root directory"`
	Offset int    `json:"offset,omitempty" jsonschema:"the first line to read, 1-based (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the number of lines to read (default: up to the end of the file or the size cap)"`
}

func (r *root) readFileTool() tool.Tool {
	desc := "Read a text file under the root directory. Select lines with offset (first line, 1-based) and limit (number of lines)."
	if r.opts.MaxReadBytes > 0 {
		desc += fmt.Sprintf(" The result is capped at %d bytes; a cut result ends with a marker giving the offset to read on from.", r.opts.MaxReadBytes)
	}
	return tool.MustFunc(ReadFileName, desc, r.readFile)
}

func (r *root) readFile(ctx context.Context, in readFileArgs) (string, error) {
	if in.Offset < 0 || in.Limit < 0 {
		return "", fmt.Errorf("offset and limit must not be negative (got offset=%d, limit=%d)", in.Offset, in.Limit)
	}
	rel, err := r.resolve(in.Path, false)
	if err != nil {
		return "", err
	}
	rt, err := r.open()
	if err != nil {
		return "", err
	}
	defer rt.Close()
	f, err := openRegular(rt, rel, in.Path)
	if err != nil {
		return "", err
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, 64<<10)
	if isBinary(br) {
		size := int64(-1)
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
		}
		return "", fmt.Errorf("%q is a binary file (%d bytes); read_file reads text files only", in.Path, size)
	}

	maxBytes := r.opts.MaxReadBytes
	budget := -1
	if maxBytes >= 0 {
		budget = max(maxBytes-markerReserve, maxBytes/2)
	}
	start := max(in.Offset, 1)
	lr := lineReader{br: br}
	var out []byte
	marker := ""
	for line := 1; ; line++ {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if line < start {
			if _, _, err := lr.next(nil, 0); err != nil {
				if err == io.EOF {
					return "", fmt.Errorf("offset %d is past the end of %q, which has %d lines", in.Offset, in.Path, line-1)
				}
				return "", unwrapPath(err)
			}
			continue
		}
		if in.Limit > 0 && line >= start+in.Limit {
			break
		}
		room := -1
		if budget >= 0 {
			room = budget - len(out)
		}
		before := len(out)
		var full int
		out, full, err = lr.next(out, room)
		if err == io.EOF {
			if line == start && start > 1 {
				return "", fmt.Errorf("offset %d is past the end of %q, which has %d lines", in.Offset, in.Path, line-1)
			}
			break
		}
		if err != nil {
			return "", unwrapPath(err)
		}
		if kept := len(out) - before; kept < full {
			if before > 0 {
				out = out[:before]
				marker = fmt.Sprintf("[cut at the %d-byte cap after line %d; call read_file with offset=%d to read on]", maxBytes, line-1, line)
			} else {
				out = trimPartialRune(out)
				marker = fmt.Sprintf("[cut at the %d-byte cap inside line %d, which is %d bytes long; call read_file with offset=%d to read on]", maxBytes, line, full, line+1)
			}
			break
		}
	}
	if marker == "" {
		return string(out), nil
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		marker = "\n" + marker
	}
	if maxBytes >= 0 && len(out)+len(marker) > maxBytes {
		out = cutUTF8(out, max(maxBytes-len(marker), 0))
	}
	return string(out) + marker, nil
}

// openRegular opens rel (free of links, relative to the root) for reading
// and checks it is a regular file before opening it, so a FIFO cannot block
// the call. name is the path as the model gave it.
func openRegular(rt *os.Root, rel, name string) (*os.File, error) {
	fi, err := rt.Stat(rel)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name, unwrapPath(err))
	}
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%q is a directory; use list_dir to see what it holds", name)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%q is not a regular file", name)
	}
	f, err := rt.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name, unwrapPath(err))
	}
	return f, nil
}

// lineReader reads lines of any length without holding a whole long line.
type lineReader struct{ br *bufio.Reader }

// next appends the next line (with its "\n", if it has one) to dst, keeping
// at most keep bytes of it (all of it when keep is negative). It returns dst,
// the line's full length, and io.EOF once no line is left.
func (l *lineReader) next(dst []byte, keep int) ([]byte, int, error) {
	n := 0
	for {
		chunk, err := l.br.ReadSlice('\n')
		n += len(chunk)
		switch {
		case keep < 0:
			dst = append(dst, chunk...)
		case keep > 0:
			k := min(keep, len(chunk))
			dst = append(dst, chunk[:k]...)
			keep -= k
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && n > 0:
			return dst, n, nil
		}
		return dst, n, err
	}
}

// cutUTF8 returns b cut to at most n bytes without splitting a character.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

// trimPartialRune drops an incomplete character from the end of b.
func trimPartialRune(b []byte) []byte {
	i := len(b) - 1
	for i > 0 && i > len(b)-utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	if i >= 0 && !utf8.FullRune(b[i:]) {
		return b[:i]
	}
	return b
}

// isBinary reports whether the start of a file holds a NUL byte.
func isBinary(br *bufio.Reader) bool {
	head, _ := br.Peek(sniffLen)
	return bytes.IndexByte(head, 0) >= 0
}
