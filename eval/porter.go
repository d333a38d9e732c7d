package eval

import "strings"

// porterStem is the Porter stemmer in the variant rouge-score uses
// (NLTK's PorterStemmer in its default mode: Martin Porter's algorithm
// with NLTK's extensions), for lower-case ASCII words.

var porterPool = map[string]string{
	"sky": "sky", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
	"news": "news", "innings": "inning", "inning": "inning", "outings": "outing",
	"outing": "outing", "cannings": "canning", "canning": "canning", "howe": "howe",
	"proceed": "proceed", "exceed": "exceed", "succeed": "succeed",
}

func porterStem(w string) string {
	if s, ok := porterPool[w]; ok {
		return s
	}
	if len(w) <= 2 {
		return w
	}
	w = step1a(w)
	w = step1b(w)
	w = step1c(w)
	w = step2(w)
	w = step3(w)
	w = step4(w)
	w = step5a(w)
	w = step5b(w)
	return w
}

func consonant(w string, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		if i == 0 {
			return true
		}
		return !consonant(w, i-1)
	}
	return true
}

// measure is m in [C](VC){m}[V].
func measure(s string) int {
	m := 0
	prevVowel := false
	for i := range len(s) {
		c := consonant(s, i)
		if c && prevVowel {
			m++
		}
		prevVowel = !c
	}
	return m
}

func hasVowel(s string) bool {
	for i := range len(s) {
		if !consonant(s, i) {
			return true
		}
	}
	return false
}

func endsDouble(w string) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && consonant(w, n-1)
}

func endsCVC(w string) bool {
	n := len(w)
	if n >= 3 && consonant(w, n-3) && !consonant(w, n-2) && consonant(w, n-1) && !strings.ContainsRune("wxy", rune(w[n-1])) {
		return true
	}
	return n == 2 && !consonant(w, 0) && consonant(w, 1)
}

type rule struct {
	suffix, repl string
	cond         func(stem string) bool
}

// apply applies the first rule whose suffix w has; when its condition
// fails, no later rule is tried.
func apply(w string, rules []rule) string {
	for _, r := range rules {
		if r.suffix == "*d" {
			if endsDouble(w) {
				stem := w[:len(w)-2]
				if r.cond == nil || r.cond(stem) {
					return stem + r.repl
				}
				return w
			}
			continue
		}
		if strings.HasSuffix(w, r.suffix) {
			stem := w[:len(w)-len(r.suffix)]
			if r.cond == nil || r.cond(stem) {
				return stem + r.repl
			}
			return w
		}
	}
	return w
}

func positive(s string) bool { return measure(s) > 0 }
func gt1(s string) bool      { return measure(s) > 1 }

var step1aRules = []rule{{"sses", "ss", nil}, {"ies", "i", nil}, {"ss", "ss", nil}, {"s", "", nil}}

func step1a(w string) string {
	if strings.HasSuffix(w, "ies") && len(w) == 4 {
		return w[:len(w)-3] + "ie"
	}
	if !strings.HasSuffix(w, "s") {
		return w
	}
	return apply(w, step1aRules)
}

func step1b(w string) string {
	if strings.HasSuffix(w, "ied") {
		if len(w) == 4 {
			return w[:len(w)-3] + "ie"
		}
		return w[:len(w)-3] + "i"
	}
	if strings.HasSuffix(w, "eed") {
		stem := w[:len(w)-3]
		if measure(stem) > 0 {
			return stem + "ee"
		}
		return w
	}
	var stem string
	ok := false
	for _, suf := range []string{"ed", "ing"} {
		if strings.HasSuffix(w, suf) {
			stem = w[:len(w)-len(suf)]
			if hasVowel(stem) {
				ok = true
				break
			}
		}
	}
	if !ok {
		return w
	}
	last := stem[len(stem)-1:]
	return apply(stem, []rule{
		{"at", "ate", nil}, {"bl", "ble", nil}, {"iz", "ize", nil},
		{"*d", last, func(string) bool { return last != "l" && last != "s" && last != "z" }},
		{"", "e", func(s string) bool { return measure(s) == 1 && endsCVC(s) }},
	})
}

var step1cRules = []rule{{"y", "i", func(s string) bool { return len(s) > 1 && consonant(s, len(s)-1) }}}

func step1c(w string) string {
	if !strings.HasSuffix(w, "y") {
		return w
	}
	return apply(w, step1cRules)
}

func step2(w string) string {
	if strings.HasSuffix(w, "alli") && positive(w[:len(w)-4]) {
		return step2(w[:len(w)-4] + "al")
	}
	if strings.HasSuffix(w, "logi") {
		// NLTK's rule measures the word less "ogi", not the stem.
		for _, r := range step2Rules {
			if r.suffix != "logi" && strings.HasSuffix(w, r.suffix) {
				return apply(w, step2Rules)
			}
		}
		if positive(w[:len(w)-3]) {
			return w[:len(w)-4] + "log"
		}
		return w
	}
	return apply(w, step2Rules)
}

var step2Rules = []rule{
	{"ational", "ate", positive}, {"tional", "tion", positive}, {"enci", "ence", positive},
	{"anci", "ance", positive}, {"izer", "ize", positive}, {"bli", "ble", positive},
	{"alli", "al", positive}, {"entli", "ent", positive}, {"eli", "e", positive},
	{"ousli", "ous", positive}, {"ization", "ize", positive}, {"ation", "ate", positive},
	{"ator", "ate", positive}, {"alism", "al", positive}, {"iveness", "ive", positive},
	{"fulness", "ful", positive}, {"ousness", "ous", positive}, {"aliti", "al", positive},
	{"iviti", "ive", positive}, {"biliti", "ble", positive}, {"fulli", "ful", positive},
	{"logi", "log", positive},
}

var step3Rules = []rule{
	{"icate", "ic", positive}, {"ative", "", positive}, {"alize", "al", positive},
	{"iciti", "ic", positive}, {"ical", "ic", positive}, {"ful", "", positive}, {"ness", "", positive},
}

func step3(w string) string { return apply(w, step3Rules) }

var step4Rules = []rule{
	{"al", "", gt1}, {"ance", "", gt1}, {"ence", "", gt1}, {"er", "", gt1}, {"ic", "", gt1},
	{"able", "", gt1}, {"ible", "", gt1}, {"ant", "", gt1}, {"ement", "", gt1}, {"ment", "", gt1},
	{"ent", "", gt1}, {"ion", "", func(s string) bool { return gt1(s) && (strings.HasSuffix(s, "s") || strings.HasSuffix(s, "t")) }},
	{"ou", "", gt1}, {"ism", "", gt1}, {"ate", "", gt1}, {"iti", "", gt1}, {"ous", "", gt1},
	{"ive", "", gt1}, {"ize", "", gt1},
}

func step4(w string) string { return apply(w, step4Rules) }

func step5a(w string) string {
	if strings.HasSuffix(w, "e") {
		stem := w[:len(w)-1]
		if m := measure(stem); m > 1 || (m == 1 && !endsCVC(stem)) {
			return stem
		}
	}
	return w
}

func step5b(w string) string {
	if strings.HasSuffix(w, "ll") && measure(w[:len(w)-1]) > 1 {
		return w[:len(w)-1]
	}
	return w
}
