package adapter

import (
	"encoding/base64"
	"strings"
)

// DataURL is a base64 data: URL holding data.
func DataURL(mediaType string, data []byte) string {
	var sb strings.Builder
	sb.Grow(len("data:;base64,") + len(mediaType) + base64.StdEncoding.EncodedLen(len(data)))
	sb.WriteString("data:")
	sb.WriteString(mediaType)
	sb.WriteString(";base64,")
	enc := base64.NewEncoder(base64.StdEncoding, &sb)
	enc.Write(data)
	enc.Close()
	return sb.String()
}

// ParseDataURL decodes a base64 data: URL; ok is false for any other
// URL.
func ParseDataURL(u string) (data []byte, mediaType string, ok bool) {
	rest, isData := strings.CutPrefix(u, "data:")
	if !isData {
		return nil, "", false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return nil, "", false
	}
	d, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, "", false
	}
	return d, strings.TrimSuffix(meta, ";base64"), true
}
