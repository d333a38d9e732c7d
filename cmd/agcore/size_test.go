package main_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// maxBinaryBytes is the most the agcore command may weigh, built as
// TestMain builds it (go build's defaults: symbols and DWARF kept). It was
// 76.8 MB before issue 23 and 40.4 MB after its first part; 41.8 MB with
// issues 24 and 25 and the uncompressed tokenizer vocabularies (Go 1.26,
// linux/amd64).
const maxBinaryBytes = 45_000_000

// TestBinarySize: the command stays under 45 MB, and the two things that
// doubled it stay out. A module that runs text/template (html/template too)
// from a reachable function makes the linker keep every exported method of
// every type (reflect's MethodByName): about 20 MB here; grpc does, through
// golang.org/x/net/trace, and so did glamour. `go build -ldflags=-dumpdep`
// shows what reaches "<ReflectMethod>".
func TestBinarySize(t *testing.T) {
	fi, err := os.Stat(binary)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("agcore: %d bytes (%.1f MB)", fi.Size(), float64(fi.Size())/1e6)
	if fi.Size() > maxBinaryBytes {
		t.Errorf("agcore is %d bytes, over %d: see what grew with go tool nm -size -sort size, and whether the linker keeps every method (go build -ldflags=-dumpdep | grep ReflectMethod)", fi.Size(), maxBinaryBytes)
	}
	out, err := exec.Command("go", "version", "-m", binary).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	for _, mod := range []string{"google.golang.org/grpc", "github.com/charmbracelet/glamour", "golang.org/x/net"} {
		if strings.Contains(string(out), "\t"+mod+"\t") {
			t.Errorf("agcore links %s again", mod)
		}
	}
}
