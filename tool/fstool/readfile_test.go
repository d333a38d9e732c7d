package fstool_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/tool/fstool"
)

func TestReadFileKeepsTheToolsRules(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.bin": "\x00\x01binary", ".env": "KEY=x", "big.txt": strings.Repeat("x", 100)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		opts fstool.Options
		want string
		err  error
	}{
		{"a.bin", fstool.Options{}, "\x00\x01binary", nil},
		{".env", fstool.Options{}, "", fstool.ErrSecret},
		{".env", fstool.Options{AllowSecrets: []string{".env*"}}, "KEY=x", nil},
		{"../outside", fstool.Options{}, "", fstool.ErrOutsideRoot},
		{"missing", fstool.Options{}, "", fs.ErrNotExist},
		{"big.txt", fstool.Options{MaxReadBytes: 10}, "", nil},
		{"big.txt", fstool.Options{MaxReadBytes: -1}, strings.Repeat("x", 100), nil},
	} {
		b, err := fstool.ReadFile(dir, tc.name, tc.opts)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
		case tc.err == nil && tc.want == "" && (err == nil || !strings.Contains(err.Error(), "larger than 10 bytes")):
			t.Errorf("%s: err = %v, want the size refused", tc.name, err)
		case tc.want != "" && (err != nil || string(b) != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, b, err, tc.want)
		}
	}
}
