// Package tokens holds what package compact's counters share: the fixed
// estimates for media, the message and tool overheads of OpenAI's counting
// recipe, and the image, audio and file costs. The estimator (package
// compact) and the exact counters (package compact/tiktoken) both use it,
// so they agree on everything but text. Package compact documents the
// constants it re-exports.
package tokens

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/agcore/agcore/llm"
)

// Fixed estimates for content whose size in tokens the text cannot tell.
const (
	// ImageTokens is charged for an image whose dimensions are unknown (a
	// URL, or bytes that are not PNG, JPEG or GIF): about the most
	// Anthropic charges for one image after its resizing (≈1.15 megapixels
	// at 750 pixels a token), and more than OpenAI's 765 for a high-detail
	// 1024×1024 image, to stay on the safe side. Images with known
	// dimensions are priced by the providers' formulas (OpenAI: 85 + 170 per
	// 512-pixel tile after scaling; Anthropic: width×height/750), taking the
	// larger.
	ImageTokens = 1600
	// ImageLowTokens is an OpenAI image sent with detail "low".
	ImageLowTokens = 85
	// AudioTokens is charged for an audio block given by URL. Inline audio
	// is charged by size at AudioBytesPerToken.
	AudioTokens = 1500
	// AudioBytesPerToken converts inline audio bytes to tokens: 16 kHz
	// 16-bit mono PCM is 32,000 bytes a second, and audio models bill about
	// 10 tokens a second, so ~3,200 bytes a token (compressed formats carry
	// more seconds per byte; their estimate is low by the compression
	// ratio).
	AudioBytesPerToken = 3200
	// FileTokens is charged for a document given by URL or file id, or
	// inline in a binary format (PDF): about one page of text plus the
	// page's image as providers render PDFs. Inline text documents
	// (text/*, JSON, XML, ...) are counted as text instead.
	FileTokens = 3000
)

// Overheads added around content, following OpenAI's published counting
// recipe for chat models (3 tokens per message, 3 to prime the reply).
const (
	PerMessage  = 3
	ReplyPrime  = 3
	PerToolCall = 4 // wrapper of one tool call in an assistant message
	PerToolDef  = 8 // wrapper of one tool definition
	ToolsEnd    = 12
)

// ImageCost estimates an image's tokens. With openAIOnly it applies OpenAI's
// published formula alone (the exact counter); otherwise it takes the larger
// of OpenAI's and Anthropic's, so the estimate is safe for either family.
// Only the image header is decoded.
func ImageCost(img llm.Image, openAIOnly bool) int {
	w, h, ok := imageSize(img)
	switch {
	case openAIOnly && ok:
		return openAIImageTokens(w, h, img.Detail)
	case openAIOnly && strings.EqualFold(img.Detail, "low"):
		return ImageLowTokens
	case !ok:
		return ImageTokens
	}
	// Anthropic ignores the detail setting, so the larger cost applies.
	return max(openAIImageTokens(w, h, img.Detail), anthropicImageTokens(w, h))
}

func imageSize(img llm.Image) (w, h int, ok bool) {
	w, h, ok = ImageSize(img.Data)
	return w, h, ok && w > 0 && h > 0
}

// ImageSize reads the width and height of a PNG, GIF or JPEG image from its
// header, as image.DecodeConfig would, without linking the decoders: only
// the size matters for counting. ok is false for anything else.
func ImageSize(data []byte) (w, h int, ok bool) {
	switch {
	case len(data) >= 24 && bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) && string(data[12:16]) == "IHDR":
		return int(binary.BigEndian.Uint32(data[16:20])), int(binary.BigEndian.Uint32(data[20:24])), true
	case len(data) >= 10 && (bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a"))):
		return int(binary.LittleEndian.Uint16(data[6:8])), int(binary.LittleEndian.Uint16(data[8:10])), true
	case len(data) >= 4 && data[0] == 0xff && data[1] == 0xd8:
		return jpegSize(data[2:])
	}
	return 0, 0, false
}

// jpegSize walks the JPEG segments after the SOI marker to the first
// start-of-frame segment, which holds the size.
func jpegSize(b []byte) (w, h int, ok bool) {
	for len(b) >= 4 {
		if b[0] != 0xff {
			return 0, 0, false
		}
		marker := b[1]
		switch {
		case marker == 0xff: // fill byte
			b = b[1:]
			continue
		case marker == 0xd8 || marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7):
			b = b[2:] // markers without a length
			continue
		case marker == 0xd9 || marker == 0xda: // end of image, start of scan
			return 0, 0, false
		}
		n := int(binary.BigEndian.Uint16(b[2:4]))
		if n < 2 || len(b) < 2+n {
			return 0, 0, false
		}
		// SOF0..SOF15, except DHT (c4), JPG (c8) and DAC (cc).
		if marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc {
			if n < 7 {
				return 0, 0, false
			}
			return int(binary.BigEndian.Uint16(b[7:9])), int(binary.BigEndian.Uint16(b[5:7])), true
		}
		b = b[2+n:]
	}
	return 0, 0, false
}

// openAIImageTokens follows OpenAI's vision pricing: a low-detail image is
// 85 tokens; otherwise the image is fitted within 2048×2048, then its
// shorter side is brought down to 768, and each 512-pixel tile costs 170 on
// top of a base of 85.
func openAIImageTokens(w, h int, detail string) int {
	if strings.EqualFold(detail, "low") {
		return ImageLowTokens
	}
	fw, fh := float64(w), float64(h)
	if m := max(fw, fh); m > 2048 {
		fw, fh = fw*2048/m, fh*2048/m
	}
	if s := min(fw, fh); s > 768 {
		fw, fh = fw*768/s, fh*768/s
	}
	tiles := ceilDiv(int(fw+0.999), 512) * ceilDiv(int(fh+0.999), 512)
	return ImageLowTokens + 170*tiles
}

// anthropicImageTokens follows Anthropic's vision documentation: an image
// whose long edge exceeds 1568 pixels is scaled down to it, then costs
// width×height/750 tokens.
func anthropicImageTokens(w, h int) int {
	fw, fh := float64(w), float64(h)
	if m := max(fw, fh); m > 1568 {
		fw, fh = fw*1568/m, fh*1568/m
	}
	return int(fw*fh/750) + 1
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// AudioCost estimates an audio block's tokens: by size when inline, else
// the fixed AudioTokens.
func AudioCost(a llm.Audio) int {
	if len(a.Data) == 0 {
		return AudioTokens
	}
	return max(1, len(a.Data)/AudioBytesPerToken)
}

// FileText returns an inline document's bytes as text when its media type
// says it is text.
func FileText(f llm.File) (string, bool) {
	if len(f.Data) == 0 {
		return "", false
	}
	mt := strings.ToLower(f.MediaType)
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml", mt == "application/yaml",
		mt == "application/x-yaml", mt == "application/javascript", mt == "application/x-ndjson",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return string(f.Data), true
	}
	return "", false
}

// TextCounter counts the tokens of a text.
type TextCounter interface{ Text(s string) int }

// Block returns the tokens of one content block: its text through c, and
// the fixed costs above for the rest. openAIImages prices images with
// OpenAI's recipe alone (the exact counters); otherwise an image costs the
// larger of OpenAI's and Anthropic's (see ImageCost). It is exhaustive over the
// closed set of block kinds (no default case): a new kind must be priced
// here deliberately. Generic so that each counter's call is direct, with
// no allocation on the counting path.
func Block[C TextCounter](c C, b llm.Block, openAIImages bool) int {
	switch b := b.(type) {
	case llm.Text:
		return c.Text(b.Text)
	case llm.Thinking:
		// Not every provider takes reasoning back as text, but some do;
		// counting it keeps the budget safe.
		return c.Text(b.Text)
	case llm.RedactedThinking:
		// Opaque base64-like data: about 4 bytes a token.
		return (len(b.Data) + 3) / 4
	case llm.ToolUse:
		return PerToolCall + c.Text(b.Name) + c.Text(string(b.InputOrEmpty()))
	case llm.ToolResult:
		n := PerMessage
		for _, inner := range b.Content {
			n += Block(c, inner, openAIImages)
		}
		return n
	case llm.Image:
		return ImageCost(b, openAIImages)
	case llm.Audio:
		return AudioCost(b)
	case llm.File:
		if text, ok := FileText(b); ok {
			return c.Text(b.Name) + c.Text(text)
		}
		return FileTokens
	case llm.Extension:
		return c.Text(b.Kind) + c.Text(string(b.Data))
	}
	// Unreachable for the closed set; a nil Block costs nothing.
	return 0
}
