package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// highlight colours the tokens of a code block: comments, strings,
// numbers, keywords, called names and punctuation. One small scanner
// serves every language (the block's language only picks the comment
// syntax and whether keywords ignore case); it is a reading aid, not a
// parser.
func highlight(lang, src string) string {
	lang = strings.ToLower(strings.TrimSpace(lang))
	hash, dash, slash := false, false, true
	switch lang {
	case "python", "py", "sh", "bash", "shell", "zsh", "console", "ruby", "rb", "yaml", "yml", "toml", "perl", "r", "make", "makefile", "dockerfile", "ini", "conf", "nix", "elixir", "powershell", "ps1":
		hash, slash = true, false
	case "sql", "lua", "haskell", "hs":
		dash, slash = true, false
	}
	fold := lang == "sql"
	var b strings.Builder
	emit := func(sgr, tok string) {
		// A token is styled line by line, so every line of the block
		// starts unstyled.
		for i, part := range strings.Split(tok, "\n") {
			if i > 0 {
				b.WriteByte('\n')
			}
			if part == "" {
				continue
			}
			if sgr == "" {
				b.WriteString(part)
			} else {
				b.WriteString("\x1b[" + sgr + "m" + part + "\x1b[0m")
			}
		}
	}
	for i := 0; i < len(src); {
		rest := src[i:]
		c := src[i]
		switch {
		case hash && c == '#', dash && strings.HasPrefix(rest, "--"), slash && strings.HasPrefix(rest, "//"):
			end := strings.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			emit(sgrComment, rest[:end])
			i += end
		case slash && strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				end = len(rest)
			} else {
				end += 4
			}
			emit(sgrComment, rest[:end])
			i += end
		case c == '"' || c == '\'' || c == '`':
			end := 1
			for end < len(rest) && rest[end] != c {
				if c != '`' && rest[end] == '\n' {
					break // an unclosed quote ends with its line
				}
				if c != '`' && rest[end] == '\\' && end+1 < len(rest) {
					end++
				}
				end++
			}
			if end < len(rest) && rest[end] == c {
				end++
			}
			emit(sgrString, rest[:end])
			i += end
		case c >= '0' && c <= '9':
			end := 1
			for end < len(rest) && (isWord(rest[end]) || rest[end] == '.') {
				end++
			}
			emit(sgrNumber, rest[:end])
			i += end
		case isWord(c) || c >= utf8.RuneSelf:
			end := 0
			for end < len(rest) {
				r, n := utf8.DecodeRuneInString(rest[end:])
				if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
					break
				}
				end += n
			}
			if end == 0 { // a rune that is not part of a word
				_, end = utf8.DecodeRuneInString(rest)
				emit("", rest[:end])
				i += end
				continue
			}
			word := rest[:end]
			key := word
			if fold {
				key = strings.ToLower(word)
			}
			switch {
			case keywords[key]:
				emit(sgrKeyword, word)
			case end < len(rest) && rest[end] == '(':
				emit(sgrFunc, word)
			default:
				emit(sgrPlainTok, word)
			}
			i += end
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			end := 1
			for end < len(rest) && (rest[end] == ' ' || rest[end] == '\t' || rest[end] == '\n' || rest[end] == '\r') {
				end++
			}
			b.WriteString(rest[:end])
			i += end
		default:
			emit(sgrPunct, rest[:1])
			i++
		}
	}
	return b.String()
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// keywords are the reserved words (and a few constants) of the languages
// answers show most: Go, Python, JavaScript/TypeScript, Rust, Java, C, C++,
// shell and SQL (lower case; SQL's are matched ignoring case).
var keywords = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(`
		break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var
		nil true false iota
		and as assert async await class def del elif except finally from global in is lambda nonlocal not or pass raise try while with yield None True False self
		function let new this typeof instanceof void delete do throw catch extends super export static enum implements private protected public readonly declare namespace abstract undefined null
		fn impl mut pub use mod crate trait where loop match move ref unsafe dyn Self
		int long short char float double bool boolean byte string unsigned signed sizeof typedef extern volatile register auto inline final throws native synchronized transient
		then fi esac done local echo exit
		select insert update from where join left right inner outer on group order by having limit offset values into create table alter drop index primary key foreign references not null default unique view begin commit rollback union all distinct set`) {
		m[w] = true
	}
	return m
}()
