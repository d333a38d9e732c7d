package config

import "testing"

func TestExpandHeaders(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "ghp_abc", "EMPTY": ""}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		name    string
		headers map[string]string
		want    map[string]string
		err     string
	}{
		{"a variable is replaced", map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}, map[string]string{"Authorization": "Bearer ghp_abc"}, ""},
		{"text without a variable stays", map[string]string{"X-Team": "core $5 {x}"}, map[string]string{"X-Team": "core $5 {x}"}, ""},
		{"a variable set empty is empty", map[string]string{"X": "a${EMPTY}b"}, map[string]string{"X": "ab"}, ""},
		{"an unset variable is named", map[string]string{"Authorization": "Bearer ${NOPE}"}, nil, "header Authorization uses $NOPE, which is not set"},
		{"no headers", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MCPServer{Headers: tt.headers}.ExpandHeaders(getenv)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// FuzzExpandHeaders: any header value expands without panicking, a value
// with no ${NAME} comes back unchanged, and with every variable set nothing
// fails.
func FuzzExpandHeaders(f *testing.F) {
	for _, s := range []string{"Bearer ${TOKEN}", "${A}${B}", "$", "${", "${}", "${1X}", "plain", "${TOKEN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		getenv := func(k string) (string, bool) { return "value", true }
		got, err := MCPServer{Headers: map[string]string{"H": v}}.ExpandHeaders(getenv)
		if err != nil {
			t.Fatalf("every variable is set, yet: %v", err)
		}
		if !headerVar.MatchString(v) && got["H"] != v {
			t.Errorf("%q changed to %q", v, got["H"])
		}
	})
}
