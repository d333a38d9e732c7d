package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// FuzzConfigFile feeds arbitrary bytes as the config file: LoadFile never
// panics, an error never quotes a key written into the file (the token @K@
// becomes one), and a file it accepts survives an encode/decode round trip.
func FuzzConfigFile(f *testing.F) {
	const secret = "sk-fuzz-config-SECRET-42"
	for _, s := range []string{
		`{"provider":"anthropic","providers":{"vllm":{"type":"compatible","base_url":"http://gpu:8000/v1","model":"qwen3","api_key_env":"VLLM_KEY"}}}`,
		`{"tools":["read_file"],"mcp":[{"command":"npx x"},{"url":"http://localhost:3001/mcp","approval":true}],"retries":0}`,
		`{"providers":{"x":{"api_key":"@K@"}}}`, `{"API_KEY":"@K@"}`, `{"api\u005fkey":"@K@"}`, `{"providers":{"x":{"model":@K@}}}`,
		`{"max_steps":"@K@"}`, `{"store":"@K@"`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), FileName)
	asName := regexp.MustCompile(regexp.QuoteMeta(secret) + `[^"]*"\s*:`)
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.ReplaceAll(data, []byte("@K@"), []byte(secret))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		file, found, err := LoadFile(path)
		if !found {
			t.Fatal("an existing file was not found")
		}
		if err != nil {
			// A field name may be quoted (unknown field "..."): only a key
			// written as a value must never be.
			if strings.Contains(err.Error(), secret) && !asName.Match(data) {
				t.Fatalf("the error quotes a key from the file: %v", err)
			}
			return
		}
		b, err := json.Marshal(file)
		if err != nil {
			t.Fatalf("an accepted file does not encode: %v", err)
		}
		var back File
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("an accepted file does not decode again: %v", err)
		}
	})
}
