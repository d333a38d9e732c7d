package compact

import (
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/compact/internal/tokens"
	"github.com/agcore/agcore/llm"
)

// Estimator is a fast token estimate for models whose tokenizer agcore does
// not embed (Anthropic, DeepSeek, Qwen, Llama, Mistral, ...). It needs no
// vocabulary: it splits text the way byte-pair-encoding tokenizers pre-split
// it (words, number groups, punctuation runs, whitespace, CJK runs) and
// charges each piece a cost fitted against the o200k_base vocabulary, so it
// tracks the exact count on English prose, Chinese text, source code and
// JSON alike (the calibration test holds it within 15% on each).
//
// Non-text blocks get fixed estimates (see [ImageTokens], [AudioTokens],
// [FileTokens]). Message and tool overheads follow OpenAI's documented
// format, which is close to what other chat templates add.
//
// The zero value is ready to use and safe for concurrent use.
type Estimator struct {
	// Scale multiplies every estimate; 0 means 1. Use it for a model whose
	// tokenizer is known to be less efficient than o200k_base.
	Scale float64
}

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
	ImageTokens = tokens.ImageTokens
	// ImageLowTokens is an OpenAI image sent with detail "low".
	ImageLowTokens = tokens.ImageLowTokens
	// AudioTokens is charged for an audio block given by URL. Inline audio
	// is charged by size at [AudioBytesPerToken].
	AudioTokens = tokens.AudioTokens
	// AudioBytesPerToken converts inline audio bytes to tokens: 16 kHz
	// 16-bit mono PCM is 32,000 bytes a second, and audio models bill about
	// 10 tokens a second, so ~3,200 bytes a token (compressed formats carry
	// more seconds per byte; their estimate is low by the compression
	// ratio).
	AudioBytesPerToken = tokens.AudioBytesPerToken
	// FileTokens is charged for a document given by URL or file id, or
	// inline in a binary format (PDF): about one page of text plus the
	// page's image as providers render PDFs. Inline text documents
	// (text/*, JSON, XML, ...) are counted as text instead.
	FileTokens = tokens.FileTokens
)

// Overheads added around content, following OpenAI's published counting
// recipe for chat models (3 tokens per message, 3 to prime the reply).
const (
	perMessageTokens  = tokens.PerMessage
	replyPrimeTokens  = tokens.ReplyPrime
	perToolCallTokens = tokens.PerToolCall
	perToolDefTokens  = tokens.PerToolDef
	toolsEndTokens    = tokens.ToolsEnd
)

func (e Estimator) scale() float64 {
	if e.Scale <= 0 {
		return 1
	}
	return e.Scale
}

// CountText returns the estimated tokens of s alone.
func (e Estimator) CountText(s string) int {
	return ceilScaled(estimateCached(s), e.scale())
}

// The estimates of long texts are remembered (in a bounded cache shared by
// all Estimators): agents count the same history again before every
// request, and a map lookup is far cheaper than a scan.
var estimates = struct {
	sync.Mutex
	m     map[string]float64
	bytes int
}{m: map[string]float64{}}

// estimateCacheMinLen is the shortest text worth a lookup: the scan is
// fast, so only long texts gain. The cache holds at most
// estimateCacheMaxBytes of text and is emptied when full.
const (
	estimateCacheMinLen   = 256
	estimateCacheMaxBytes = 16 << 20
)

func estimateCached(s string) float64 {
	if len(s) < estimateCacheMinLen {
		return estimateText(s)
	}
	estimates.Lock()
	v, ok := estimates.m[s]
	estimates.Unlock()
	if ok {
		return v
	}
	v = estimateText(s)
	estimates.Lock()
	if estimates.bytes+len(s) > estimateCacheMaxBytes {
		clear(estimates.m)
		estimates.bytes = 0
	}
	estimates.m[s] = v
	estimates.bytes += len(s)
	estimates.Unlock()
	return v
}

// CountMessages implements [TokenCounter]. The count is additive: the count
// of a slice equals the count of an empty slice plus the count of each
// message alone minus that base.
func (e Estimator) CountMessages(msgs []llm.Message) int {
	n := replyPrimeTokens
	for i := range msgs {
		n += e.countMessage(&msgs[i])
	}
	return n
}

// CountMessage implements [AdditiveCounter]: what m adds to a count of
// messages.
func (e Estimator) CountMessage(m *llm.Message) int { return e.countMessage(m) }

func (e Estimator) countMessage(m *llm.Message) int {
	n := perMessageTokens
	if m.Role == llm.RoleTool {
		n += e.CountText(m.ToolCallID) / 2 // ids are not shown verbatim by every template
	}
	for _, b := range m.Content {
		n += e.countBlock(b)
	}
	return n
}

// countBlock counts one block (see tokens.Block).
func (e Estimator) countBlock(b llm.Block) int { return tokens.Block(estimated{e}, b, false) }

// estimated adapts an Estimator to tokens.TextCounter.
type estimated struct{ e Estimator }

func (t estimated) Text(s string) int { return t.e.CountText(s) }

// CountTools implements [TokenCounter]: the name, description and JSON
// schema of each tool plus a fixed wrapper.
func (e Estimator) CountTools(tools []llm.ToolDefinition) int {
	if len(tools) == 0 {
		return 0
	}
	n := toolsEndTokens
	for _, t := range tools {
		n += perToolDefTokens + e.CountText(t.Name) + e.CountText(t.Description) + e.CountText(string(t.ParametersOrEmpty()))
	}
	return n
}

func ceilScaled(x, scale float64) int {
	if x <= 0 {
		return 0
	}
	return int(math.Ceil(x * scale))
}

// Piece costs, fitted against o200k_base on the calibration corpus (see
// calibration_test.go). A "word" is what the pre-tokenizer keeps together: an
// optional leading space or punctuation mark, a run of upper-case letters and
// a run of lower-case letters.
const (
	costWordShort   = 1.0  // a word of up to wordShortLen letters
	wordShortLen    = 7    // most such words are one token
	lettersPerExtra = 3.2  // letters per extra token beyond wordShortLen
	lettersInBlob   = 1.6  // letters per token in letter-digit mixes (hashes, ids)
	costDigits      = 1.0  // per group of up to three digits
	costPunctRun    = 1.0  // a punctuation run of up to punctRunLen bytes
	punctRunLen     = 2.6  // bytes per token in longer punctuation runs
	costNewline     = 1.0  // a run of line breaks
	costSpaces      = 1.0  // a run of spaces or tabs not attached to a word
	costCJK         = 0.86 // per Han, kana or Hangul character
	costCJKPunct    = 0.86 // per full-width punctuation mark
	costOtherRune   = 0.5  // per letter of other non-Latin scripts (Cyrillic, Greek, ...)
	costSymbolRune  = 1.5  // per emoji or other symbol outside the BMP letters
)

// Byte classes of the scanner.
const (
	clsPunct   uint8 = iota // ASCII punctuation and control characters
	clsUpper                // A-Z
	clsLower                // a-z
	clsDigit                // 0-9
	clsSpace                // space, tab
	clsNewline              // \n, \r
	clsHigh                 // the first byte of a multi-byte character
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = clsUpper
		case c >= 'a' && c <= 'z':
			t[c] = clsLower
		case c >= '0' && c <= '9':
			t[c] = clsDigit
		case c == ' ' || c == '\t':
			t[c] = clsSpace
		case c == '\n' || c == '\r':
			t[c] = clsNewline
		case c >= utf8.RuneSelf:
			t[c] = clsHigh
		default:
			t[c] = clsPunct
		}
	}
	return t
}()

// estimateText scans s once. It never allocates.
func estimateText(s string) float64 {
	var tokens float64
	n := len(s)
	for i := 0; i < n; {
		switch byteClass[s[i]] {
		case clsUpper, clsLower:
			j := i
			for j < n && byteClass[s[j]] == clsUpper {
				j++
			}
			for j < n && byteClass[s[j]] == clsLower {
				j++
			}
			if j == i { // an upper-case run ended the piece already
				j++
			}
			if (i > 0 && byteClass[s[i-1]] == clsDigit) || (j < n && byteClass[s[j]] == clsDigit) {
				// Letters glued to digits are hashes, ids or base64,
				// which no vocabulary covers: they split into short
				// tokens.
				tokens += float64(j-i) / lettersInBlob
			} else {
				tokens += wordCost(j - i)
			}
			i = j
		case clsDigit:
			j := i + 1
			for j < n && byteClass[s[j]] == clsDigit {
				j++
			}
			tokens += costDigits * float64((j-i+2)/3)
			i = j
		case clsNewline:
			j := i + 1
			for j < n && byteClass[s[j]] == clsNewline {
				j++
			}
			tokens += costNewline
			i = j
		case clsSpace:
			j := i + 1
			for j < n && byteClass[s[j]] == clsSpace {
				j++
			}
			// A single space (or the last one of a run) belongs to the
			// word or punctuation that follows; the rest is one token.
			// Digits take no leading space, so a space before them is a
			// token of its own.
			if j-i > 1 || j == n || byteClass[s[j]] == clsNewline || byteClass[s[j]] == clsDigit {
				tokens += costSpaces
			}
			i = j
		case clsPunct:
			j := i + 1
			for j < n && byteClass[s[j]] == clsPunct {
				j++
			}
			switch run := float64(j - i); {
			case run == 1 && j < n && isLetterClass(byteClass[s[j]]) && (i == 0 || byteClass[s[i-1]] != clsSpace):
				// A lone mark before a word is the word's leading
				// character: ".Err" is one piece (but ` "Err` is ` "` +
				// "Err": the space already claimed the mark).
			case run <= punctRunLen:
				tokens += costPunctRun
			default:
				tokens += math.Ceil(run / punctRunLen)
			}
			// Line breaks (and slashes) right after punctuation join it:
			// ")\n" and "}\n\n//" are single pieces.
			for j < n && (byteClass[s[j]] == clsNewline || s[j] == '/') {
				j++
			}
			i = j
		default: // clsHigh
			r, size := utf8.DecodeRuneInString(s[i:])
			tokens += runeCost(r)
			i += size
		}
	}
	return tokens
}

func isLetterClass(c uint8) bool { return c == clsUpper || c == clsLower }

func wordCost(letters int) float64 {
	if letters <= wordShortLen {
		return costWordShort
	}
	return costWordShort + float64(letters-wordShortLen)/lettersPerExtra
}

func runeCost(r rune) float64 {
	switch {
	case r == utf8.RuneError:
		return 1
	case isCJK(r):
		return costCJK
	case r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFFEF:
		return costCJKPunct // CJK symbols and full-width forms
	case unicode.IsLetter(r), unicode.IsMark(r), unicode.IsDigit(r):
		return costOtherRune
	case unicode.IsSpace(r):
		return 0.5
	case r > 0xFFFF:
		return costSymbolRune
	default:
		return 1
	}
}

func isCJK(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, // CJK unified ideographs
		r >= 0x3040 && r <= 0x30FF, // hiragana, katakana
		r >= 0xAC00 && r <= 0xD7AF, // Hangul syllables
		r >= 0x3400 && r <= 0x4DBF: // extension A
		return true
	case r < 0x1100:
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}
