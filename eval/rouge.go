package eval

import (
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Rouge1 returns the ROUGE-1 precision, recall and F-measure of candidate
// against reference, as ADK's response_match_score computes them (Google's
// rouge-score package, rouge1 with the Porter stemmer): both texts are
// lower-cased, every run of characters other than a-z and 0-9 is a
// separator, words longer than three letters are stemmed, and the counts
// of the words both share (each word as often as the rarer side has it)
// are divided by the candidate's and the reference's word counts. As in
// ADK, stemming is off when either text is mostly of a non-Latin script;
// such letters are separators, as in rouge-score, so those texts score 0.
func Rouge1(candidate, reference string) (precision, recall, f float64) {
	stem := latin(candidate) && latin(reference)
	c := rougeTokens(candidate, stem)
	r := rougeTokens(reference, stem)
	if len(c) == 0 || len(r) == 0 {
		return 0, 0, 0
	}
	// The clipped overlap of the two multisets: both sorted, merged.
	slices.Sort(c)
	slices.Sort(r)
	overlap := 0
	for i, j := 0, 0; i < len(c) && j < len(r); {
		switch {
		case c[i] == r[j]:
			overlap++
			i++
			j++
		case c[i] < r[j]:
			i++
		default:
			j++
		}
	}
	precision = float64(overlap) / float64(len(c))
	recall = float64(overlap) / float64(len(r))
	if precision+recall > 0 {
		f = 2 * precision * recall / (precision + recall)
	}
	return
}

// rougeTokens is rouge-score's tokenizer.
func rougeTokens(s string, stem bool) []string {
	if hasUpper(s) {
		s = strings.ToLower(s)
	}
	out := make([]string, 0, len(s)/5+1)
	start := -1
	flush := func(end int) {
		if start >= 0 {
			w := s[start:end]
			if stem && len(w) > 3 {
				w = stemCached(w)
			}
			if w != "" {
				out = append(out, w)
			}
			start = -1
		}
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 'a' && b <= 'z' || b >= '0' && b <= '9' {
			if start < 0 {
				start = i
			}
		} else {
			flush(i)
		}
	}
	flush(len(s))
	return out
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b >= 'A' && b <= 'Z' || b >= 0x80 {
			return true
		}
	}
	return false
}

// latin reports whether more than half of s's letters are Latin (true
// without letters), ADK's test before stemming.
func latin(s string) bool {
	letters, lat := 0, 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if unicode.Is(unicode.Latin, r) {
				lat++
			}
		}
	}
	return letters == 0 || float64(lat)/float64(letters) > 0.5
}

// stems caches porterStem's results, up to maxStems words: answers
// repeat their words across turns, runs and cases.
var stems struct {
	sync.RWMutex
	m map[string]string
}

const maxStems = 1 << 15

func stemCached(w string) string {
	stems.RLock()
	s, ok := stems.m[w]
	stems.RUnlock()
	if ok {
		return s
	}
	s = porterStem(w)
	stems.Lock()
	if stems.m == nil || len(stems.m) >= maxStems {
		stems.m = make(map[string]string)
	}
	stems.m[strings.Clone(w)] = s
	stems.Unlock()
	return s
}
