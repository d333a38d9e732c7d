//go:build unix

package fstool

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSpecialFilesAreRefusedWithoutBlocking(t *testing.T) {
	t.Parallel()
	tr := newTree(t, Options{})
	must(t, syscall.Mkfifo(filepath.Join(tr.root, "dir", "fifo"), 0o644))
	tests := []struct {
		rule    string
		tool    string
		args    args
		want    string // a substring of the result
		wantErr string
	}{
		{"read_file refuses a FIFO", ReadFileName, args{"path": "dir/fifo"}, "", "not a regular file"},
		{"grep refuses a FIFO named alone", GrepName, args{"pattern": "x", "path": "dir/fifo"}, "", "not a regular file"},
		{"grep skips a FIFO met on the walk", GrepName, args{"pattern": "Hello", "path": "dir"}, "dir/b.go:3:", ""},
		{"write_file refuses a FIFO", WriteFileName, args{"path": "dir/fifo", "content": "x"}, "", "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := tr.call(t, tt.tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", out, err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out, tt.want) {
				t.Errorf("got %q, %v; want %q", out, err, tt.want)
			}
		})
	}
}
