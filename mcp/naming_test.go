package mcp

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var validToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestServerNames(t *testing.T) {
	tests := []struct {
		rule string
		s    Server
		want string
	}{
		{"an explicit name is kept, case and all", Server{Name: "GitHub", Command: "x"}, "GitHub"},
		{"an explicit name is sanitized", Server{Name: "my server.v2", Command: "x"}, "my_server_v2"},
		{"an explicit name loses runs of underscores, so __ only separates", Server{Name: "a__b___c", Command: "x"}, "a_b_c"},
		{"an explicit name loses leading and trailing _ and -", Server{Name: "-_x_-", Command: "x"}, "x"},
		{"an explicit name is cut to 24 characters", Server{Name: strings.Repeat("abcdefghij", 4), Command: "x"}, "abcdefghijabcdefghijabcd"},
		{"a name of nothing valid is mcp", Server{Name: "..."}, "mcp"},
		{"npx runs a scoped package, minus server-", Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}, "everything"},
		{"a package version is dropped", Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem@2026.1.1", "/tmp"}}, "filesystem"},
		{"an unscoped package version is dropped", Server{Command: "npx", Args: []string{"mcp-remote@0.1.0", "https://x"}}, "remote"},
		{"uvx runs a package, minus mcp-server-", Server{Command: "uvx", Args: []string{"mcp-server-fetch"}}, "fetch"},
		{"python -m runs a module, minus mcp_server_", Server{Command: "python3", Args: []string{"-m", "mcp_server_git"}}, "git"},
		{"docker run names an image, minus tag and repository", Server{Command: "docker", Args: []string{"run", "-i", "--rm", "mcp/github:latest"}}, "github"},
		{"options with values are skipped", Server{Command: "npx", Args: []string{"--registry=https://r", "weather-mcp"}}, "weather"},
		{"node runs dist/index.js: the package directory names it", Server{Command: "node", Args: []string{"/x/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}}, "everything"},
		{"a plain command is its base name", Server{Command: "/usr/local/bin/mcp-server-sqlite"}, "sqlite"},
		{"a command's extension is dropped", Server{Command: "C:/tools/kubernetes-mcp-server.exe"}, "kubernetes"},
		{"derived names are lower-cased", Server{Command: "/opt/MyServer"}, "myserver"},
		{"a launcher with nothing to run is its own name", Server{Command: "npx"}, "npx"},
		{"a URL is its host's telling label", Server{URL: "https://mcp.linear.app/sse"}, "linear"},
		{"a URL's www and api labels are skipped", Server{URL: "https://api.githubcopilot.com/mcp/"}, "githubcopilot"},
		{"localhost is localhost", Server{URL: "http://localhost:3001/mcp"}, "localhost"},
		{"an IP address is http", Server{URL: "http://127.0.0.1:3001/mcp"}, "http"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if got := shortName(&tt.s); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClashingServerNamesAreNumbered(t *testing.T) {
	long := strings.Repeat("x", 30)
	got := uniqueNames([]Server{
		{Command: "npx", Args: []string{"@a/server-files"}},
		{Name: "files"},
		{Name: "other"},
		{Name: "files"},
		{Name: long},
		{Name: long},
	})
	want := []string{"files", "files_2", "other", "files_3", long[:24], long[:22] + "_2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestToolNames(t *testing.T) {
	long := strings.Repeat("long_tool_name_", 6)
	tests := []struct {
		rule   string
		server string
		tools  []string
		want   []string
	}{
		{"a valid name is prefixed", "fs", []string{"read_file", "get-sum"}, []string{"mcp__fs__read_file", "mcp__fs__get-sum"}},
		{"invalid characters become _", "fs", []string{"files.read/v2", "héllo wörld"}, []string{"mcp__fs__files_read_v2", "mcp__fs__h_llo_w_rld"}},
		{"a name that clashes after sanitizing gets a hash", "fs", []string{"a.b", "a/b"}, []string{"mcp__fs__a_b", "mcp__fs__a_b_c14cddc0"}},
		{"a long name is cut to 64 characters with a hash", "fs", []string{long}, []string{"mcp__fs__" + long[:46] + "_2bcd5afc"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			taken := map[string]bool{}
			var got []string
			for _, n := range tt.tools {
				name := toolName(tt.server, n, taken)
				taken[name] = true
				got = append(got, name)
				if !validToolName.MatchString(name) {
					t.Errorf("%q is not a valid provider tool name", name)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
	// The same tools are named the same way every time (prompt caches).
	if a, b := toolName("fs", long, map[string]bool{}), toolName("fs", long, map[string]bool{}); a != b {
		t.Errorf("names differ between runs: %q %q", a, b)
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		rule    string
		line    string
		command string
		args    []string
		env     []string
		wantErr string
	}{
		{"words are split on blanks", "  npx  -y\t@scope/pkg ", "npx", []string{"-y", "@scope/pkg"}, nil, ""},
		{"single quotes keep everything", `srv 'a b' 'c\d'`, "srv", []string{"a b", `c\d`}, nil, ""},
		{"double quotes keep blanks and honour \\\" and \\\\", `srv "a \"b\" \\ \n"`, "srv", []string{`a "b" \ \n`}, nil, ""},
		{"a backslash outside quotes keeps the next character", `srv a\ b`, "srv", []string{"a b"}, nil, ""},
		{"an empty quoted word is a word", `srv ''`, "srv", []string{""}, nil, ""},
		{"quotes join with the rest of a word", `srv --dir="/my docs"`, "srv", []string{"--dir=/my docs"}, nil, ""},
		{"leading assignments are the environment", "TOKEN=abc DEBUG=1 node server.js", "node", []string{"server.js"}, []string{"TOKEN=abc", "DEBUG=1"}, ""},
		{"nothing is expanded", "srv $HOME ~ *", "srv", []string{"$HOME", "~", "*"}, nil, ""},
		{"an unclosed quote is an error", `srv "a`, "", nil, nil, "unclosed"},
		{"a trailing backslash is an error", `srv a\`, "", nil, nil, "backslash"},
		{"no command is an error", "  ", "", nil, nil, "no command"},
		{"only assignments is an error", "A=1", "", nil, nil, "no command"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			s, err := ParseCommand(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want an error containing %q", s, err, tt.wantErr)
				}
				return
			}
			if err != nil || s.Command != tt.command || !slices.Equal(s.Args, tt.args) || !slices.Equal(s.Env, tt.env) {
				t.Errorf("got %q %q env %q, %v", s.Command, s.Args, s.Env, err)
			}
		})
	}
}
