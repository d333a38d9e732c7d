package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Size formats a byte count: "512 B", "1.2 KB", "3.4 MB".
func Size(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " B"
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// Thousands formats n with comma separators: 1234567 → "1,234,567".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Clip cuts s to at most n runes, ending in "…" when cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// ShortArgs renders a tool call's JSON arguments compactly for a tool line,
// keeping the keys in the model's order: path="README.md" limit=40. Each
// value is clipped, and the whole to about n runes.
func ShortArgs(input json.RawMessage, n int) string {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Clip(string(input), n)
	}
	var parts []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return Clip(string(input), n)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return Clip(string(input), n)
		}
		val := string(v)
		var str string
		if json.Unmarshal(v, &str) == nil {
			val = strconv.Quote(Clip(str, 40))
		} else {
			val = Clip(val, 40)
		}
		parts = append(parts, fmt.Sprint(k)+"="+val)
	}
	return Clip(strings.Join(parts, " "), n)
}

// USD formats a cost: "$0", "$0.000123" below a cent, "$1.2345" above.
func USD(v float64) string {
	switch {
	case v == 0:
		return "$0"
	case v < 0.01:
		return fmt.Sprintf("$%.6f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}

// Duration formats a turn's duration: "850ms", "2.3s", "1m4s".
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
