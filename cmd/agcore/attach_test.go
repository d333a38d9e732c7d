package main_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tiny PNG (1x1) and the start of a PDF: what http.DetectContentType
// recognises.
var (
	pngData = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	pdfData = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
)

// TestAttachments: run -a FILE|URL|- sends images and PDFs as the
// provider's image and document parts (OpenAI Chat Completions,
// Anthropic), with the prompt after them; a provider that does not read
// them is refused in one line before any request; a file that is neither
// is refused.
func TestAttachments(t *testing.T) {
	t.Parallel()
	files := t.TempDir()
	png, pdf, txt := filepath.Join(files, "shot.png"), filepath.Join(files, "paper.pdf"), filepath.Join(files, "notes.txt")
	for p, data := range map[string][]byte{png: pngData, pdf: pdfData, txt: []byte("just text\n")} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(pngData) }))
	t.Cleanup(web.Close)
	b64png, b64pdf := base64.StdEncoding.EncodeToString(pngData), base64.StdEncoding.EncodeToString(pdfData)

	t.Run("openai", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, openaiReply(turn{text: "A chart."}), openaiReply(turn{text: "Again."}))
		c := newCLI(t).openai(srv, "sk-test")
		c.ok("run", "-a", png, "--attach", pdf, "-a", web.URL+"/pic.png", "What is this?")
		msgs := srv.messages(0)
		for _, want := range []string{`"type":"image_url"`, `"url":"data:image/png;base64,` + b64png + `"`,
			`"type":"file"`, `"file_data":"data:application/pdf;base64,` + b64pdf + `"`, `"filename":"paper.pdf"`, `"text":"What is this?"`} {
			if !strings.Contains(msgs, want) {
				t.Errorf("the request lacks %s:\n%.600s", want, msgs)
			}
		}
		if n := strings.Count(msgs, `"type":"image_url"`); n != 2 {
			t.Errorf("%d images, want the file's and the URL's", n)
		}
		// -a - reads stdin; the prompt comes from the arguments.
		r := c.run(string(pngData), "run", "-a", "-", "And this?")
		if r.code != 0 || !strings.Contains(srv.messages(1), `"text":"And this?"`) || !strings.Contains(srv.messages(1), b64png) {
			t.Errorf("-a -: exit %d %s\n%s", r.code, r.stderr, srv.messages(1))
		}
	})

	t.Run("anthropic", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, anthropicReply(turn{text: "A chart.", in: 10, out: 2}))
		c := newCLI(t)
		c.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
		c.env["ANTHROPIC_BASE_URL"] = srv.URL
		c.ok("run", "-a", png, "-a", pdf, "What is this?")
		body := string(srv.got()[0].raw)
		for _, want := range []string{`"type":"image"`, `"media_type":"image/png"`, `"data":"` + b64png + `"`,
			`"type":"document"`, `"media_type":"application/pdf"`, `"data":"` + b64pdf + `"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the request lacks %s:\n%.600s", want, body)
			}
		}
	})

	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t)
		c := newCLI(t)
		c.env["DEEPSEEK_API_KEY"] = "sk-test"
		c.env["DEEPSEEK_BASE_URL"] = srv.URL
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"run", "--provider", "deepseek", "-a", png, "hi"}, "--provider deepseek does not read images"},
			{[]string{"chat", "--provider", "deepseek", "-a", pdf}, "--provider deepseek does not read PDFs"},
			{[]string{"run", "--provider", "ollama", "-a", pdf, "hi"}, "--provider ollama does not read PDFs"},
			{[]string{"run", "--provider", "demo", "-a", txt, "hi"}, "notes.txt is text/plain, not an image (PNG, JPEG, GIF, WebP) or a PDF"},
			{[]string{"run", "--provider", "demo", "-a", filepath.Join(files, "missing.png"), "hi"}, "no such file"},
			{[]string{"chat", "--provider", "demo", "-a", "-"}, "-a - attaches stdin, which chat reads its prompts from"},
		} {
			r := c.run("", tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("%v: exit %d, want 2 and one line with %q:\n%s", tt.args, r.code, tt.want, r.stderr)
			}
		}
		if n := len(srv.got()); n != 0 {
			t.Errorf("%d requests were sent", n)
		}
	})
}
