package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/agcore/agcore/llm"
)

// Append returns a recorder that adds to the record in the file at path:
// a new record, with header h, when the file does not exist or is empty;
// else the record goes on after its last line (its header is kept and h
// ignored; turns and calls are numbered on from its last). A last line
// cut short (its writer died while writing it) is dropped. Close closes
// the file.
func Append(path string, h Header) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	r, err := appendTo(f, h)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.closer = f
	return r, nil
}

// appendTo reads the record in f, if any, and returns a recorder writing
// after it.
func appendTo(f *os.File, h Header) (*Recorder, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return NewRecorder(f, h)
	}
	r := &Recorder{seen: map[string]bool{}}
	br := bufio.NewReaderSize(f, 64<<10)
	var good int64 // the end of the last whole line
	lineNo := 0
	newline := false // the last line is whole but lacks its newline
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			// What is left, if anything, is a line cut short, unless it is
			// a whole JSON value (a file edited by hand).
			if t := bytes.TrimSpace(line); len(t) == 0 || !json.Valid(t) {
				break
			}
			newline = true
		} else if err != nil {
			return nil, err
		}
		good += int64(len(line))
		lineNo++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if lineNo == 1 {
			if err := json.Unmarshal(line, &r.header); err != nil || r.header.Version <= 0 {
				return nil, fmt.Errorf("%w: line 1 is not a record header", ErrFormat)
			}
			if r.header.Version > Version {
				return nil, fmt.Errorf("%w: record version %d is newer than this writer's %d", ErrFormat, r.header.Version, Version)
			}
			continue
		}
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &kind); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrFormat, lineNo, err)
		}
		var l struct {
			N       int    `json:"n"`
			Session string `json:"session"`
		}
		if kind.Type == "turn" || kind.Type == "call" {
			if err := json.Unmarshal(line, &l); err != nil {
				return nil, fmt.Errorf("%w: line %d: %s: %v", ErrFormat, lineNo, kind.Type, err)
			}
		}
		switch kind.Type {
		case "turn":
			r.turns = max(r.turns, l.N)
			r.marked = true
			if l.Session != "" {
				r.seen[l.Session] = true
			}
		case "call":
			r.calls = max(r.calls, l.N)
		}
		if newline {
			break
		}
	}
	if lineNo == 0 {
		return nil, fmt.Errorf("%w: no header line", ErrFormat)
	}
	if good < st.Size() {
		if err := f.Truncate(good); err != nil {
			return nil, err
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		return nil, err
	}
	if newline {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return nil, err
		}
	}
	r.enc = newEncoder(f)
	r.turn = r.turns
	r.written = r.calls
	return r, nil
}

// DefaultMaxOpen is Dir.MaxOpen's default.
const DefaultMaxOpen = 64

// ErrDirClosed is returned by Dir.Begin once the Dir is closed.
var ErrDirClosed = errors.New("replay: the record directory is closed")

// Dir keeps records in a directory, one file per key (a server's
// session: [Dir.Begin]), each appended to turn after turn ([Append]), so
// that the runs of many sessions at once are each recorded where their
// session's are. The runs of one key are serialized; those of different
// keys run side by side. A key never names a file directly: the file's
// name is made of the key's letters, digits, '_' and '-' and a hash of
// the whole key ([Dir.File]), so no key reaches outside the directory or
// shares another key's file. One process writes a directory at a time.
// A Dir is safe for concurrent use.
type Dir struct {
	// MaxOpen is how many records are kept open between their turns (the
	// others are closed and reopened at their next turn); 0 means
	// DefaultMaxOpen.
	MaxOpen int

	path string

	mu     sync.Mutex
	files  map[string]*dirFile
	seq    uint64 // orders the files' last use
	closed bool
}

// dirFile is one key's record.
type dirFile struct {
	lock chan struct{} // one slot: full while a run records into it
	refs int           // runs holding or waiting for lock
	rec  *Recorder     // open, or nil
	used uint64        // Dir.seq at its last release
}

// OpenDir returns the Dir at path, made (mode 0700) when missing.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, err
	}
	return &Dir{path: path, files: map[string]*dirFile{}}, nil
}

// Path returns the directory.
func (d *Dir) Path() string { return d.path }

// File returns the path of key's record: the directory, then up to 64 of
// the key's characters (letters, digits, '_' and '-' kept, any other
// byte written '_'), '-', 16 hex digits of the key's SHA-256 and
// ".jsonl".
func (d *Dir) File(key string) string {
	return filepath.Join(d.path, fileName(key))
}

func fileName(key string) string {
	b := make([]byte, 0, 64+1+16+6)
	for i := 0; i < len(key) && len(b) < 64; i++ {
		c := key[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b = append(b, c)
		default:
			b = append(b, '_')
		}
	}
	sum := sha256.Sum256([]byte(key))
	b = append(b, '-')
	b = hex.AppendEncode(b, sum[:8])
	return string(append(b, ".jsonl"...))
}

// Begin starts a run recorded in key's record: it waits for the runs of
// key before it to end (or for ctx to), opens the record ([Append]; h is
// the header of a new one) and returns ctx carrying it for the run
// ([WithTurn]: its turn is input on session, marked at its first model
// call) and the function to call once the run is over, which lets the
// next run of key begin. The agent that runs it must have
// [ContextMiddleware] and [ContextToolMiddleware].
func (d *Dir) Begin(ctx context.Context, key string, h Header, session string, input []llm.Message) (context.Context, func(), error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ctx, nil, ErrDirClosed
	}
	e := d.files[key]
	if e == nil {
		e = &dirFile{lock: make(chan struct{}, 1)}
		d.files[key] = e
	}
	e.refs++
	d.mu.Unlock()
	select {
	case e.lock <- struct{}{}:
	case <-ctx.Done():
		d.release(key, e, false)
		return ctx, nil, context.Cause(ctx)
	}
	// The run holds key: no one else opens its record, and a record in
	// use is never closed (release), but others read e.rec under d.mu.
	d.mu.Lock()
	rec := e.rec
	d.mu.Unlock()
	if rec == nil {
		var err error
		if rec, err = Append(d.File(key), h); err != nil {
			d.release(key, e, true)
			return ctx, nil, err
		}
		d.mu.Lock()
		e.rec = rec
		d.mu.Unlock()
	}
	var once sync.Once
	end := func() { once.Do(func() { d.release(key, e, true) }) }
	return WithTurn(ctx, rec, session, input), end, nil
}

// release ends a run's hold on e (held: it had the lock), closing
// records over MaxOpen, least recently used first, and forgetting the
// keys with no run and no open record.
func (d *Dir) release(key string, e *dirFile, held bool) {
	if held {
		<-e.lock
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e.refs--
	d.seq++
	e.used = d.seq
	if d.closed && e.refs == 0 && e.rec != nil {
		_ = e.rec.Close()
		e.rec = nil
	}
	limit := d.MaxOpen
	if limit <= 0 {
		limit = DefaultMaxOpen
	}
	for {
		open, oldest := 0, ""
		for k, f := range d.files {
			if f.rec == nil || f.refs > 0 {
				continue
			}
			open++
			if oldest == "" || f.used < d.files[oldest].used {
				oldest = k
			}
		}
		if open <= limit {
			break
		}
		f := d.files[oldest]
		_ = f.rec.Close()
		f.rec = nil
		delete(d.files, oldest)
	}
	if e.refs == 0 && e.rec == nil {
		delete(d.files, key)
	}
}

// Close closes the records not in use, and each of the others when its
// run ends; Begin fails after it. It returns the first error a record
// closed now reports (Recorder.Close).
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	var errs []error
	for k, f := range d.files {
		if f.refs == 0 && f.rec != nil {
			errs = append(errs, f.rec.Close())
			f.rec = nil
			delete(d.files, k)
		}
	}
	return errors.Join(errs...)
}
