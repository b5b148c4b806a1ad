package runtimecfg

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// systemd's quoting of an Environment= (and DefaultEnvironment=) value, as
// src/core/load-fragment.c config_parse_environ reads it: the value is cut
// into words by extract_first_word(EXTRACT_CUNESCAPE|EXTRACT_UNQUOTE)
// (src/basic/extract-word.c), each word has its specifiers resolved
// (unit_env_printf, src/core/unit-printf.c) and must then be NAME=VALUE.
//
//   - Words are separated by runs of blanks (space, tab, CR, LF).
//   - A single or double quote anywhere in a word opens a quoted part that
//     runs to the same quote; blanks inside it do not separate. An
//     unterminated quote is invalid.
//   - A backslash, inside quotes or not, starts a C escape (cunescape_one,
//     src/basic/escape.c): \a \b \f \n \r \t \v \\ \" \' \s (a space),
//     \xHH, \uHHHH, \UHHHHHHHH, \OOO (three octal digits); anything else,
//     a NUL, or a backslash at the end is invalid.
//   - An invalid word makes systemd ignore the rest of the line ("Invalid
//     syntax, ignoring"); words before it stay assigned.

// errEnvSyntax is an Environment= value systemd refuses from that word on.
var errEnvSyntax = errors.New("invalid syntax")

// systemdWords cuts value into words as systemd does. On invalid syntax
// it returns the words before the bad one and errEnvSyntax.
func systemdWords(value string) ([]string, error) {
	var words []string
	p := value
	for {
		w, rest, ok, err := extractWord(p)
		if err != nil {
			return words, err
		}
		if !ok {
			return words, nil
		}
		words = append(words, w)
		p = rest
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// extractWord is extract_first_word with EXTRACT_CUNESCAPE|EXTRACT_UNQUOTE
// and blanks as separators.
func extractWord(p string) (word, rest string, ok bool, err error) {
	i := 0
	for i < len(p) && isBlank(p[i]) {
		i++
	}
	if i == len(p) {
		return "", "", false, nil
	}
	var b strings.Builder
	var quote byte
	for i < len(p) {
		c := p[i]
		switch {
		case c == '\\':
			n, s, ok := cunescapeOne(p[i+1:])
			if !ok {
				return "", "", false, errEnvSyntax
			}
			b.WriteString(s)
			i += 1 + n
		case quote != 0 && c == quote:
			quote = 0
			i++
		case quote != 0:
			b.WriteByte(c)
			i++
		case c == '\'' || c == '"':
			quote = c
			i++
		case isBlank(c):
			for i < len(p) && isBlank(p[i]) {
				i++
			}
			return b.String(), p[i:], true, nil
		default:
			b.WriteByte(c)
			i++
		}
	}
	if quote != 0 {
		return "", "", false, errEnvSyntax
	}
	return b.String(), "", true, nil
}

// cunescapeOne reads one C escape after a backslash: how many bytes it
// took and what it stands for. ok is false for an invalid escape.
func cunescapeOne(p string) (n int, s string, ok bool) {
	if p == "" {
		return 0, "", false
	}
	simple := map[byte]string{'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v", '\\': `\`, '"': `"`, '\'': `'`, 's': " "}
	if v, found := simple[p[0]]; found {
		return 1, v, true
	}
	hex := func(s string) (uint32, bool) {
		var v uint32
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | uint32(c-'0')
			case c >= 'a' && c <= 'f':
				v = v<<4 | uint32(c-'a'+10)
			case c >= 'A' && c <= 'F':
				v = v<<4 | uint32(c-'A'+10)
			default:
				return 0, false
			}
		}
		return v, true
	}
	switch c := p[0]; {
	case c == 'x':
		if len(p) < 3 {
			return 0, "", false
		}
		v, good := hex(p[1:3])
		if !good || v == 0 {
			return 0, "", false
		}
		return 3, string([]byte{byte(v)}), true // one byte, as systemd copies it
	case c == 'u' || c == 'U':
		digits := 4
		if c == 'U' {
			digits = 8
		}
		if len(p) < 1+digits {
			return 0, "", false
		}
		v, good := hex(p[1 : 1+digits])
		if !good || v == 0 || (c == 'U' && !utf8.ValidRune(rune(v))) {
			return 0, "", false
		}
		return 1 + digits, string(rune(v)), true
	case c >= '0' && c <= '7':
		if len(p) < 3 {
			return 0, "", false
		}
		var v uint32
		for i := 0; i < 3; i++ {
			d := p[i]
			if d < '0' || d > '7' {
				return 0, "", false
			}
			v = v<<3 | uint32(d-'0')
		}
		if v == 0 || v > 255 {
			return 0, "", false
		}
		return 3, string([]byte{byte(v)}), true
	}
	return 0, "", false
}

// Specifiers unit_env_printf knows (src/core/unit-printf.c
// unit_full_printf_full, src/shared/specifier.h COMMON_SYSTEM_SPECIFIERS,
// COMMON_CREDS_SPECIFIERS, COMMON_TMP_SPECIFIERS). Their values are the
// machine's and the unit's, which systemd fills in; an alphanumeric
// character after % that is not one of them makes systemd drop the whole
// assignment ("Failed to resolve specifiers").
const unitSpecifiers = "iIjJnNpPfyYcrRCdDELStTVhsaAbBHlqmMovwWgGUu"

// errUnknownSpecifier is an assignment systemd drops for an unknown %x.
type errUnknownSpecifier struct{ spec string }

func (e errUnknownSpecifier) Error() string {
	return fmt.Sprintf("unknown specifier %s (a literal %% is written %%%%)", e.spec)
}

// resolveSpecifiers applies specifier_printf to a word: %% is %, a known
// specifier is left for systemd (its value is the machine's; known
// returns them), a % before a character that cannot be a specifier stays
// as written, and an unknown alphanumeric specifier is an error.
func resolveSpecifiers(word string) (out string, known []string, err error) {
	if !strings.Contains(word, "%") {
		return word, nil, nil
	}
	var b strings.Builder
	for i := 0; i < len(word); i++ {
		c := word[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(word) {
			b.WriteByte('%') // a stray % at the end stays
			break
		}
		i++
		n := word[i]
		switch {
		case n == '%':
			b.WriteByte('%')
		case strings.IndexByte(unitSpecifiers, n) >= 0:
			known = append(known, "%"+string(n))
			b.WriteByte('%')
			b.WriteByte(n)
		case isAlnum(n):
			return "", nil, errUnknownSpecifier{spec: "%" + string(n)}
		default:
			b.WriteByte('%')
			b.WriteByte(n)
		}
	}
	return b.String(), known, nil
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// validEnvName is systemd's env_name_is_valid: letters, digits and
// underscores, not starting with a digit.
func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

// envAssignment is one NAME=VALUE a unit line makes, or why systemd
// ignores a word of it.
type envAssignment struct {
	Name, Value string
	Specifiers  []string // known specifiers left in Value (systemd fills them in)
	Ignored     string   // non-empty: systemd ignores this word, and why
}

// parseEnvironmentValue is config_parse_environ on one Environment= or
// DefaultEnvironment= value. An empty value resets the list (reset true).
func parseEnvironmentValue(value string) (as []envAssignment, reset bool) {
	if strings.TrimSpace(value) == "" {
		return nil, true
	}
	words, err := systemdWords(value)
	for _, w := range words {
		resolved, known, serr := resolveSpecifiers(w)
		if serr != nil {
			as = append(as, envAssignment{Ignored: fmt.Sprintf("%q: %v", redactAssignment(w), serr)})
			continue
		}
		name, val, found := strings.Cut(resolved, "=")
		if !found || !validEnvName(name) {
			as = append(as, envAssignment{Ignored: fmt.Sprintf("%q is not NAME=VALUE", redactAssignment(resolved))})
			continue
		}
		as = append(as, envAssignment{Name: name, Value: val, Specifiers: known})
	}
	if err != nil {
		as = append(as, envAssignment{Ignored: fmt.Sprintf("invalid syntax (an unterminated quote or a bad \\ escape): systemd ignores the rest of %q", redactAssignment(value))})
	}
	return as, false
}

// redactAssignment masks the password of any URL in an assignment shown
// in a message.
func redactAssignment(s string) string { return RedactProxyValue(s) }
