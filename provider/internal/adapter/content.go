package adapter

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/agcore/agcore/llm"
)

// What the OpenAI dialects (provider/openai, provider/openai/responses)
// map alike: an image as a URL, a file's inline content, token counts.

// ImageURL is the URL an image is sent by: a data: URL of its data (its
// media type sniffed when it names none), else its URL; "" when it has
// neither.
func ImageURL(img llm.Image) string {
	if len(img.Data) == 0 {
		return img.URL
	}
	mt := img.MediaType
	if mt == "" {
		mt = http.DetectContentType(img.Data)
	}
	return DataURL(mt, img.Data)
}

// InlineFile is a file's content given inline: its data, or the data of
// its data: URL, with its media type (the file's, the URL's, or sniffed)
// and that type's base (lower case, without parameters); ok is false when
// the file holds neither.
func InlineFile(f llm.File) (data []byte, mediaType, base string, ok bool) {
	data, mediaType = f.Data, f.MediaType
	if len(data) == 0 {
		d, dmt, isData := ParseDataURL(f.URL)
		if !isData {
			return nil, "", "", false
		}
		data = d
		if mediaType == "" {
			mediaType = dmt
		}
	}
	if mediaType == "" {
		mediaType = http.DetectContentType(data)
	}
	return data, mediaType, BaseMediaType(mediaType), true
}

// BaseMediaType is a media type in lower case without its parameters.
func BaseMediaType(mt string) string {
	return strings.TrimSpace(strings.ToLower(strings.SplitN(mt, ";", 2)[0]))
}

// IsTextMediaType reports whether a base media type is text a model reads
// as is: text/*, JSON, XML.
func IsTextMediaType(base string) bool {
	return strings.HasPrefix(base, "text/") || base == "application/json" || base == "application/xml"
}

// TokenCount is a token count that tolerates what servers send for it:
// an integer, a number with a fraction part, or null.
type TokenCount int

// UnmarshalJSON implements json.Unmarshaler.
func (t *TokenCount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	if f > 0 && f < 1<<62 {
		*t = TokenCount(f)
	}
	return nil
}
