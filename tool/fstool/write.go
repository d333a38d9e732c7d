package fstool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agcore/agcore/tool"
)

// writeFileArgs are the arguments of write_file; their schema is the tool's
// parameters.
type writeFileArgs struct {
	Path    string `json:"path" jsonschema:"the file to write, relative to the root directory; missing parent directories are created"`
	Content string `json:"content" jsonschema:"the complete new content of the file"`
}

func (r *root) writeFileTool() tool.Tool {
	desc := "Write a text file under the root directory, replacing its content if it exists and creating it (and its parent directories) if not. Needs the user's approval."
	return tool.MustFunc(WriteFileName, desc, r.writeFile, tool.WithApproval())
}

func (r *root) writeFile(ctx context.Context, in writeFileArgs) (string, error) {
	if in.Path == "" {
		return "", fmt.Errorf("path is empty")
	}
	if m := r.opts.MaxWriteBytes; m >= 0 && len(in.Content) > m {
		return "", fmt.Errorf("content is %d bytes, more than the %d bytes write_file accepts", len(in.Content), m)
	}
	rel, err := r.resolve(in.Path, true)
	if err != nil {
		return "", err
	}
	shown, _ := r.local(in.Path)
	rt, err := r.open()
	if err != nil {
		return "", err
	}
	defer rt.Close()
	existed := false
	if fi, err := rt.Stat(rel); err == nil {
		if fi.IsDir() {
			return "", fmt.Errorf("%q is a directory", in.Path)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%q is not a regular file", in.Path)
		}
		existed = true
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := rt.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("%q: creating its directory: %w", in.Path, unwrapPath(err))
		}
	}
	f, err := rt.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", fmt.Errorf("%q: %w", in.Path, unwrapPath(err))
	}
	_, err = f.WriteString(in.Content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%q: %w", in.Path, unwrapPath(err))
	}
	how := "created it"
	if existed {
		how = "replaced its content"
	}
	return fmt.Sprintf("wrote %d bytes to %s (%s)", len(in.Content), display(shown), how), nil
}
