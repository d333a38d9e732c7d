package a2aserve

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMethodsAreTheSDKs: Methods lists every JSON-RPC method the SDK's
// handler dispatches, read from the SDK's source, so that an upgrade that
// adds one fails here until it is listed (and serve's route table, which
// has a row per route, covers it).
func TestMethodsAreTheSDKs(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/a2aproject/a2a-go").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "internal", "jsonrpc", "jsonrpc.go"))
	if err != nil {
		t.Fatal(err)
	}
	var sdk []string
	for _, m := range regexp.MustCompile(`(?m)^\s*Method\w+\s*=\s*"([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		sdk = append(sdk, m[1])
	}
	got := slices.Sorted(slices.Values(Methods))
	slices.Sort(sdk)
	if len(sdk) == 0 || !slices.Equal(got, sdk) {
		t.Fatalf("Methods = %v, the SDK's = %v", got, sdk)
	}
}
