package cli

import (
	"maps"
	"strings"
	"testing"
)

func TestServeTokens(t *testing.T) {
	file := map[string]string{"ci": "from-file"}
	tests := []struct {
		name string
		env  string // "" unset
		want map[string]string
		err  string
	}{
		{"the file's when the variable is unset", "", file, ""},
		{"pairs", "alice=a1, bob=b2", map[string]string{"alice": "a1", "bob": "b2"}, ""},
		{"a bare secret is named default", "s3cret", map[string]string{"default": "s3cret"}, ""},
		{"a secret may hold =", "x=a=b", map[string]string{"x": "a=b"}, ""},
		{"an empty secret", "alice=", nil, "name=secret"},
		{"a name twice", "a=1,a=2", nil, "given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) (string, bool) {
				if k == "AGCORE_SERVE_TOKENS" && tt.env != "" {
					return tt.env, true
				}
				return "", false
			}
			got, err := serveTokens(getenv, file)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "a=1") {
					t.Error("the error shows a secret")
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
