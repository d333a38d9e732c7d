package fstool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agcore/agcore/tool"
)

// secretTree is a root holding secrets and ordinary files, with its tools.
func secretTree(t *testing.T, opts Options) (string, map[string]tool.Tool) {
	t.Helper()
	root := t.TempDir()
	files := []string{
		".ssh/id_ed25519", ".ssh/config", "deep/nested/.ssh/known_hosts",
		".env", ".env.local", "app/.env.production", ".envrc",
		"certs/server.pem", "tls.key", "id_rsa", "id_rsa.pub", "keys/id_ecdsa_sk",
		".netrc", ".pgpass", ".git-credentials",
		".aws/credentials", "home/.config/gcloud/application_default_credentials.json",
		".gnupg/secring.gpg",
		// Ordinary files, some close to the patterns.
		"README.md", "session/id.go", "session/id_test.go", "environment.txt",
		"docs/keys.md", "monkey.txt", ".config/other/settings.json", "pem.txt", "aws/notes.txt",
	}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("CONTENT-OF "+f+"\n"), 0o644))
	}
	if runtime.GOOS != "windows" {
		must(t, os.Symlink(".env", filepath.Join(root, "notes.txt")))       // a link to a secret file
		must(t, os.Symlink(".ssh", filepath.Join(root, "sshdir")))          // a link to a secret directory
		must(t, os.Symlink("README.md", filepath.Join(root, "readme.key"))) // a secret name for an ordinary file
	}
	ts, err := New(root, opts)
	must(t, err)
	m := map[string]tool.Tool{}
	for _, x := range ts {
		m[x.Name()] = x
	}
	return root, m
}

func invoke(t *testing.T, tools map[string]tool.Tool, name string, args any) (string, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	return tools[name].Invoke(context.Background(), b)
}

func TestSecretPatterns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path    string
		pattern string // "" when the path is not a secret
	}{
		{".ssh/id_ed25519", ".ssh/"},
		{".ssh/config", ".ssh/"},
		{"deep/nested/.ssh/known_hosts", ".ssh/"},
		{"./.ssh/../.ssh/config", ".ssh/"},
		{".env", ".env*"},
		{".env.local", ".env*"},
		{"app/.env.production", ".env*"},
		{".envrc", ".env*"},
		{"certs/server.pem", "*.pem"},
		{"tls.key", "*.key"},
		{"id_rsa", "id_*"},
		{"id_rsa.pub", "id_*"},
		{"keys/id_ecdsa_sk", "id_*"},
		{".netrc", ".netrc"},
		{".pgpass", ".pgpass"},
		{".git-credentials", ".git-credentials"},
		{".aws/credentials", ".aws/"},
		{"home/.config/gcloud/application_default_credentials.json", ".config/gcloud/"},
		{".gnupg/secring.gpg", ".gnupg/"},
		{"notes.txt", ".env*"},     // a link to .env
		{"sshdir/config", ".ssh/"}, // through a link to .ssh
		{"readme.key", "*.key"},    // the name as given counts too
		{"README.md", ""},          //
		{"session/id.go", ""},      // not id_*
		{"session/id_test.go", ""}, // id_* with a source extension is no key
		{"environment.txt", ""},    // not .env*
		{"docs/keys.md", ""},       // not *.key
		{"monkey.txt", ""},         //
		{".config/other/settings.json", ""},
		{"pem.txt", ""},
		{"aws/notes.txt", ""},
	}
	_, tools := secretTree(t, Options{AllowHint: "--allow-secret"})
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if runtime.GOOS == "windows" && (tt.path == "notes.txt" || strings.HasPrefix(tt.path, "sshdir") || tt.path == "readme.key") {
				t.Skip("no symbolic links")
			}
			out, err := invoke(t, tools, ReadFileName, args{"path": tt.path})
			if tt.pattern == "" {
				if err != nil || !strings.HasPrefix(out, "CONTENT-OF ") {
					t.Fatalf("read_file %s: %q, %v; want its content", tt.path, out, err)
				}
				return
			}
			var se *SecretError
			if !errors.As(err, &se) || !errors.Is(err, ErrSecret) || se.Pattern != tt.pattern {
				t.Fatalf("read_file %s: %q, %v; want a refusal naming the pattern %s", tt.path, out, err, tt.pattern)
			}
			want := "the user can allow it with --allow-secret '" + tt.pattern + "'"
			if !strings.HasPrefix(err.Error(), "refused: "+tt.path) || !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q does not name the path and say %q", err, want)
			}
			if strings.Contains(out+err.Error(), "CONTENT-OF") {
				t.Error("the refusal carries the content")
			}
			// write_file refuses the same paths, leaving them as they were.
			if _, err := invoke(t, tools, WriteFileName, args{"path": tt.path, "content": "x"}); !errors.Is(err, ErrSecret) {
				t.Errorf("write_file %s: %v; want a refusal", tt.path, err)
			}
		})
	}
}

func TestSecretsOfANewFileAreRefused(t *testing.T) {
	t.Parallel()
	root, tools := secretTree(t, Options{})
	for _, p := range []string{".ssh/authorized_keys", "new/.env", "new.pem"} {
		if _, err := invoke(t, tools, WriteFileName, args{"path": p, "content": "x"}); !errors.Is(err, ErrSecret) {
			t.Errorf("write_file %s: %v; want a refusal", p, err)
		}
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

func TestAllowSecrets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		allow   []string
		allowed []string // readable
		refused []string // still refused
	}{
		{[]string{".env*"}, []string{".env", ".env.local", "app/.env.production", "notes.txt"}, []string{"tls.key", ".ssh/config"}},
		{[]string{".env.local"}, []string{".env.local"}, []string{".env", "app/.env.production"}},
		{[]string{"app/.env.production"}, []string{"app/.env.production"}, []string{".env"}},
		{[]string{".ssh/"}, []string{".ssh/config", "deep/nested/.ssh/known_hosts", "sshdir/config"}, []string{"id_rsa"}},
		{[]string{".ssh"}, []string{".ssh/config"}, []string{".aws/credentials"}},
		{[]string{".config/gcloud/"}, []string{"home/.config/gcloud/application_default_credentials.json"}, []string{".aws/credentials"}},
		{[]string{"*.pem", "*.key"}, []string{"certs/server.pem", "tls.key"}, []string{"id_rsa"}},
		{[]string{"*"}, []string{".env", ".ssh/id_ed25519", "home/.config/gcloud/application_default_credentials.json", "id_rsa"}, nil},
		// An allow entry lifts a pattern it equals, never one it is a
		// prefix of: an empty --allow-secret '' allows nothing.
		{[]string{""}, nil, []string{".env", ".env.local", ".ssh/config", "tls.key", "certs/server.pem", "id_rsa"}},
		{[]string{" "}, nil, []string{".env", "tls.key", "id_rsa"}},
		{[]string{".e", "*.k", ".s", "id_"}, nil, []string{".env", ".env.local", "tls.key", ".ssh/config", "id_rsa"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.allow), func(t *testing.T) {
			_, tools := secretTree(t, Options{AllowSecrets: tt.allow})
			for _, p := range tt.allowed {
				if runtime.GOOS == "windows" && strings.HasPrefix(p, "sshdir") || p == "notes.txt" && runtime.GOOS == "windows" {
					continue
				}
				if out, err := invoke(t, tools, ReadFileName, args{"path": p}); err != nil || !strings.HasPrefix(out, "CONTENT-OF ") {
					t.Errorf("read_file %s: %q, %v; want it allowed", p, out, err)
				}
			}
			for _, p := range tt.refused {
				if _, err := invoke(t, tools, ReadFileName, args{"path": p}); !errors.Is(err, ErrSecret) {
					t.Errorf("read_file %s: %v; want it still refused", p, err)
				}
			}
		})
	}
}

func TestSecretPatternsOption(t *testing.T) {
	t.Parallel()
	_, none := secretTree(t, Options{SecretPatterns: []string{}})
	if _, err := invoke(t, none, ReadFileName, args{"path": ".env"}); err != nil {
		t.Errorf("with no secret patterns: %v", err)
	}
	_, own := secretTree(t, Options{SecretPatterns: []string{"*.md"}})
	if _, err := invoke(t, own, ReadFileName, args{"path": "README.md"}); !errors.Is(err, ErrSecret) {
		t.Errorf("README.md with the pattern *.md: %v; want a refusal", err)
	}
	if _, err := invoke(t, own, ReadFileName, args{"path": ".env"}); err != nil {
		t.Errorf(".env with only *.md refused: %v", err)
	}
}

func TestGrepSkipsSecrets(t *testing.T) {
	t.Parallel()
	_, tools := secretTree(t, Options{AllowHint: "--allow-secret"})
	out, err := invoke(t, tools, GrepName, args{"pattern": "CONTENT-OF"})
	must(t, err)
	matches := out[:strings.LastIndex(out, "\n[")]
	if strings.Contains(matches, "CONTENT-OF .e") || strings.Contains(matches, "CONTENT-OF .s") || strings.Contains(matches, ".pem") || strings.Contains(matches, "id_rsa") || strings.Contains(matches, "credentials") {
		t.Errorf("grep shows a secret:\n%s", out)
	}
	for _, want := range []string{"README.md:1:", "session/id_test.go:1:", "environment.txt:1:"} {
		if !strings.Contains(out, want) {
			t.Errorf("grep does not show %s:\n%s", want, out)
		}
	}
	// Skipped: .aws, .env, .env.local, .envrc, .git-credentials, .gnupg,
	// .netrc, .pgpass, .ssh, app/.env.production, certs/server.pem,
	// deep/nested/.ssh, home/.config/gcloud, id_rsa, id_rsa.pub,
	// keys/id_ecdsa_sk, tls.key (links are not followed).
	if !strings.Contains(out, "[17 paths not searched: secret patterns ") || !strings.Contains(out, "the user can allow one with --allow-secret PATTERN]") {
		t.Errorf("grep does not say what it skipped:\n%s", out)
	}
	if _, err := invoke(t, tools, GrepName, args{"pattern": "x", "path": ".ssh"}); !errors.Is(err, ErrSecret) {
		t.Errorf("grep in .ssh: %v; want a refusal", err)
	}
	if _, err := invoke(t, tools, GrepName, args{"pattern": "x", "path": ".env"}); !errors.Is(err, ErrSecret) {
		t.Errorf("grep of .env: %v; want a refusal", err)
	}
	out, err = invoke(t, tools, GrepName, args{"pattern": "nothing-matches-this"})
	if err != nil || !strings.HasPrefix(out, "[no matches]\n[17 paths not searched") {
		t.Errorf("grep with no match: %q, %v", out, err)
	}
}

func TestListDirHidesSecrets(t *testing.T) {
	t.Parallel()
	_, tools := secretTree(t, Options{AllowHint: "--allow-secret"})
	out, err := invoke(t, tools, ListDirName, args{})
	must(t, err)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	note := lines[len(lines)-1]
	shown := "\n" + strings.Join(lines[:len(lines)-1], "\n") + "\n"
	for _, secret := range []string{".ssh/", ".env", ".env.local", ".envrc", "tls.key", "id_rsa", ".netrc", ".aws/", ".gnupg/", "notes.txt", "sshdir/", "readme.key"} {
		if runtime.GOOS == "windows" && (secret == "notes.txt" || secret == "sshdir/" || secret == "readme.key") {
			continue
		}
		if strings.Contains(shown, "\n"+secret+"\n") {
			t.Errorf("list_dir shows %s:\n%s", secret, out)
		}
	}
	for _, plain := range []string{"README.md", "app/", "home/", "session/", "environment.txt"} {
		if !strings.Contains(shown, "\n"+plain+"\n") {
			t.Errorf("list_dir does not show %s:\n%s", plain, out)
		}
	}
	if !strings.HasPrefix(note, "[") || !strings.Contains(note, "[15 entries not shown: secret patterns .aws/, .env*, ") || !strings.Contains(note, "--allow-secret PATTERN]") {
		t.Errorf("list_dir's last line does not say what it hid: %q", note)
	}
	if _, err := invoke(t, tools, ListDirName, args{"path": ".ssh"}); !errors.Is(err, ErrSecret) {
		t.Errorf("list_dir .ssh: %v; want a refusal", err)
	}
	_, allowed := secretTree(t, Options{AllowSecrets: []string{"*"}})
	if out, _ := invoke(t, allowed, ListDirName, args{}); !strings.Contains(out, "\n.env\n") || strings.Contains(out, "not shown") {
		t.Errorf("list_dir with every secret allowed:\n%s", out)
	}
}

func TestARootInsideASecretDirectory(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, ".aws")
	must(t, os.MkdirAll(root, 0o700))
	must(t, os.WriteFile(filepath.Join(root, "credentials"), []byte("KEY\n"), 0o600))
	ts, err := ByName(root, []string{ReadFileName}, Options{})
	must(t, err)
	if _, err := ts[0].Invoke(context.Background(), []byte(`{"path":"credentials"}`)); !errors.Is(err, ErrSecret) {
		t.Errorf("credentials in a root inside .aws: %v; want a refusal", err)
	}
	ts, err = ByName(root, []string{ReadFileName}, Options{AllowSecrets: []string{".aws/"}})
	must(t, err)
	if out, err := ts[0].Invoke(context.Background(), []byte(`{"path":"credentials"}`)); err != nil || out != "KEY\n" {
		t.Errorf("with .aws/ allowed: %q, %v", out, err)
	}
}
