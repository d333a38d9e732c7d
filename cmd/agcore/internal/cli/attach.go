package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/llm"
)

// maxAttachment is the largest attachment -a reads (the providers' own
// limits are near it: Anthropic takes 32 MB requests, OpenAI 50 MB files).
const maxAttachment = 20 << 20

// attachFetchTimeout bounds the download of an -a URL.
const attachFetchTimeout = time.Minute

// addAttachFlag adds -a/--attach to run and chat.
func addAttachFlag(fs *pflag.FlagSet) {
	fs.StringArrayP("attach", "a", nil, "attach an image (PNG, JPEG, GIF, WebP) or a PDF to the prompt: a `FILE`, an http(s) URL (downloaded), or - for stdin; repeatable (the providers that read them: "+strings.Join(attachReaders(), ", ")+")")
}

// attachCaps says what a provider (as --provider names it) reads: images,
// PDFs. Each wire's adapter maps llm.Image and llm.File blocks (OpenAI
// Chat Completions and Responses, Anthropic, Gemini); the servers behind
// the OpenAI-compatible presets differ: DeepSeek reads neither, most take
// images (with a vision model) and only OpenRouter takes PDFs as file
// parts.
func attachCaps(provider string) (images, pdfs bool) {
	switch provider {
	case "openai", "openai-responses", "anthropic", "gemini", "openrouter":
		return true, true
	case "ollama", "vllm", "groq", "xai", "qwen", "moonshot", "compatible":
		return true, false
	}
	return false, false // deepseek, demo, and adapters agcore does not know
}

// attachReaders lists the providers that read attachments, for the help.
func attachReaders() []string {
	return []string{"openai", "openai-responses", "anthropic", "gemini", "openrouter; images only: ollama, vllm, groq, xai, qwen, moonshot, compatible"}
}

// attachments reads the -a arguments as content blocks, checked against
// what s's provider reads. stdinTaken reports whether one of them was
// stdin (the prompt then comes from the arguments only).
func (a *app) attachments(ctx context.Context, cmd *cobra.Command, s *config.Settings) (blocks []llm.Block, stdinTaken bool, err error) {
	args, _ := cmd.Flags().GetStringArray("attach")
	if len(args) == 0 {
		return nil, false, nil
	}
	images, pdfs := attachCaps(s.Provider)
	for _, arg := range args {
		var (
			data []byte
			name string
		)
		switch {
		case arg == "-":
			if stdinTaken {
				return nil, false, exit(ExitUsage, "-a -: stdin can be attached once")
			}
			stdinTaken = true
			data, err = readLimited(a.env.Stdin, "stdin")
			name = "stdin"
		case strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://"):
			data, err = fetchAttachment(ctx, arg)
			name = path.Base(strings.SplitN(arg, "?", 2)[0])
		default:
			var f *os.File
			if f, err = os.Open(arg); err == nil {
				data, err = readLimited(f, arg)
				f.Close()
			}
			name = filepath.Base(arg)
		}
		if err != nil {
			return nil, false, exit(ExitUsage, "-a %s: %v", arg, err)
		}
		mt := http.DetectContentType(data)
		switch mt {
		case "image/png", "image/jpeg", "image/gif", "image/webp":
			if !images {
				return nil, false, exit(ExitUsage, "-a %s: --provider %s does not read images (the providers that do: %s)", arg, s.Provider, strings.Join(attachReaders(), ", "))
			}
			blocks = append(blocks, llm.Image{Data: data, MediaType: mt})
		case "application/pdf":
			if !pdfs {
				return nil, false, exit(ExitUsage, "-a %s: --provider %s does not read PDFs (the providers that do: openai, openai-responses, anthropic, gemini, openrouter)", arg, s.Provider)
			}
			blocks = append(blocks, llm.File{Data: data, MediaType: mt, Name: name})
		default:
			return nil, false, exit(ExitUsage, "-a %s: %s is %s, not an image (PNG, JPEG, GIF, WebP) or a PDF", arg, name, strings.TrimSuffix(mt, "; charset=utf-8"))
		}
	}
	return blocks, stdinTaken, nil
}

// readLimited reads r whole, refusing more than maxAttachment bytes.
func readLimited(r io.Reader, what string) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%s: nothing to read", what)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxAttachment+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxAttachment {
		return nil, fmt.Errorf("larger than %s", render.Size(maxAttachment))
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%s is empty", what)
	}
	return data, nil
}

// fetchAttachment downloads an -a URL (so every provider gets the bytes,
// whether or not it fetches URLs itself).
func fetchAttachment(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, attachFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the download answered HTTP %d", resp.StatusCode)
	}
	return readLimited(resp.Body, "the download")
}

// userMessage is the user's prompt with its attachments (before the text,
// as Anthropic advises for images).
func userMessage(prompt string, attach []llm.Block) llm.Message {
	if len(attach) == 0 {
		return llm.UserText(prompt)
	}
	content := append(append([]llm.Block(nil), attach...), llm.Text{Text: prompt})
	return llm.Message{Role: llm.RoleUser, Content: content}
}
