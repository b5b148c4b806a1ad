package explain

import (
	"strings"
)

// The fast paths of the extractors. Every pattern of extract.go starts with
// a fixed phrase of the runtime, so a cheap strings.Contains on the
// lower-cased message tells whether the pattern can match at all, and for
// the patterns that run on every failure (the image, the request), a
// strings.Index scan reads the same captures the regexp would, without the
// regexp. Each function here returns exactly what its regexp returns (the
// reference regexps are kept in extract.go, and equivalence_test.go holds
// them to it, by table and by fuzzing).
//
// Case-insensitive patterns are matched on the lower-cased text. That is
// exact for ASCII text. Unicode case folding adds two runes that match an
// ASCII letter under (?i) without lowering to it: U+017F (long s) folds to
// s, U+212A (Kelvin) to k; ToLower turns Kelvin into k but leaves long s,
// so a message with a long s skips the literal gates, and a message that
// is not ASCII (where lower-case byte offsets may differ) takes the
// regexps.

// textView is a normalized message with what the fast paths need.
type textView struct {
	msg   string
	lower string // strings.ToLower(msg)
	ascii bool   // msg is ASCII: lower has msg's byte offsets
	gates bool   // literal gates on lower are exact (no U+017F in msg)
}

func newTextView(msg, lower string) textView {
	v := textView{msg: msg, lower: lower, ascii: true}
	for i := 0; i < len(msg); i++ {
		if msg[i] >= 0x80 {
			v.ascii = false
			break
		}
	}
	v.gates = v.ascii || !strings.ContainsRune(msg, 'ſ')
	return v
}

// may reports whether one of the lower-case phrases occurs (always true
// when gates are not exact for this message).
func (v textView) may(phrases ...string) bool {
	if !v.gates {
		return true
	}
	for _, p := range phrases {
		if strings.Contains(v.lower, p) {
			return true
		}
	}
	return false
}

// isReSpace is RE2's \s: [\t\n\f\r ].
func isReSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// run is the length of the run at s[i:] of bytes that are not RE2 spaces
// and not in stop, counted up to max+1 (longer runs report max+1).
func run(s string, i int, stop string, max int) int {
	n := 0
	for i+n < len(s) && n <= max {
		b := s[i+n]
		if isReSpace(b) || strings.IndexByte(stop, b) >= 0 {
			break
		}
		n++
	}
	return n
}

// quoted finds the leftmost `LIT"X"TRAILER` in an ASCII message, where LIT
// (lower case, ending in `"`) is matched case-insensitively, X is 1 to 512
// bytes of [^"\s] and TRAILER (lower case, may be "") follows the closing
// quote: the capture of (?i)LIT([^"\s]{1,512})"TRAILER. X stops at the
// closing quote, so that is unquoted with the quote in front of TRAILER.
func (v textView) quoted(lit, trailer string) (string, bool) {
	return v.unquoted(lit, `"`+trailer)
}

// unquoted finds the leftmost `LIT X TRAILER` in an ASCII message, where
// LIT (lower case) is matched case-insensitively, X is 1 to 512 bytes of
// [^"\s] and TRAILER (lower case) follows it: the capture of
// (?i)LIT([^"\s]{1,512})TRAILER.
func (v textView) unquoted(lit, trailer string) (string, bool) {
	for from := 0; ; {
		i := strings.Index(v.lower[from:], lit)
		if i < 0 {
			return "", false
		}
		start := from + i + len(lit)
		n := run(v.msg, start, `"`, 512)
		if n >= 1 && n <= 512 && strings.HasPrefix(v.lower[start+n:], trailer) {
			return v.msg[start : start+n], true
		}
		from += i + 1
	}
}

// extractImage returns the image named in msg, or "": the first of
// reImage's patterns that matches, read by hand on ASCII text.
func extractImage(v textView) string {
	if !v.ascii {
		return extractImageRE(v.msg)
	}
	found := func(s string, ok bool) (string, bool) { return strings.TrimSuffix(s, ":"), ok }
	if !v.may("image ", "failed to resolve ", "docker://", "pull access denied for ", "reading manifest ") {
		return ""
	}
	for _, p := range []struct{ lit, trailer string }{
		{`failed to pull and unpack image "`, ""},
		{`failed to pull image "`, ""},
		{`back-off pulling image "`, ""},
		{`container image "`, ` is not present`},
		{`failed to apply default image tag "`, ""},
		{`failed to inspect image "`, ""},
	} {
		if s, ok := found(v.quoted(p.lit, p.trailer)); ok {
			return s
		}
	}
	if s, ok := found(v.resolveImage()); ok {
		return s
	}
	if s, ok := found(v.dockerSource()); ok {
		return s
	}
	if s, ok := found(v.quoted(`pullimage "`, "")); ok {
		return s
	}
	if s, ok := found(v.unquoted("cancel pulling image ", " because")); ok {
		return s
	}
	for _, p := range []struct{ lit, trailer string }{
		{`pulling image "`, ""},
		{`successfully pulled image "`, ""},
		{`image "`, ` already present`},
	} {
		if s, ok := found(v.quoted(p.lit, p.trailer)); ok {
			return s
		}
	}
	if s, ok := found(v.accessDenied()); ok {
		return s
	}
	if tag, repo, ok := v.readingManifest(); ok {
		return strings.TrimSuffix(repo, ":") + ":" + tag
	}
	return ""
}

// resolveImage: (?i)failed to resolve (?:reference|image) "([^"\s]{1,512})".
func (v textView) resolveImage() (string, bool) {
	const lit = "failed to resolve "
	for from := 0; ; {
		i := strings.Index(v.lower[from:], lit)
		if i < 0 {
			return "", false
		}
		at := from + i + len(lit)
		for _, alt := range []string{`reference "`, `image "`} {
			if !strings.HasPrefix(v.lower[at:], alt) {
				continue
			}
			start := at + len(alt)
			n := run(v.msg, start, `"`, 512)
			end := start + n
			if n >= 1 && n <= 512 && end < len(v.msg) && v.msg[end] == '"' {
				return v.msg[start:end], true
			}
		}
		from += i + 1
	}
}

// dockerSource: (?i)initializing source
// docker://([^\s:"]{1,256}(?::[^\s:"@]{1,128})?(?:@sha256:[0-9a-f]{64})?).
// Every part after the first is optional and greedy, so the capture is the
// longest first part, then each optional part when it is there.
func (v textView) dockerSource() (string, bool) {
	const lit = "initializing source docker://"
	for from := 0; ; {
		i := strings.Index(v.lower[from:], lit)
		if i < 0 {
			return "", false
		}
		start := from + i + len(lit)
		a := min(run(v.msg, start, `:"`, 256), 256)
		if a < 1 {
			from += i + 1
			continue
		}
		j := start + a
		if j < len(v.msg) && v.msg[j] == ':' {
			if b := min(run(v.msg, j+1, `:"@`, 128), 128); b >= 1 {
				j += 1 + b
			}
		}
		if strings.HasPrefix(v.lower[j:], "@sha256:") && len(v.lower) >= j+8+64 {
			hex := true
			for _, c := range []byte(v.lower[j+8 : j+8+64]) {
				if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
					hex = false
					break
				}
			}
			if hex {
				j += 8 + 64
			}
		}
		return v.msg[start:j], true
	}
}

// accessDenied: (?i)pull access denied for ([^\s,"]{1,512}).
func (v textView) accessDenied() (string, bool) {
	const lit = "pull access denied for "
	for from := 0; ; {
		i := strings.Index(v.lower[from:], lit)
		if i < 0 {
			return "", false
		}
		start := from + i + len(lit)
		if n := min(run(v.msg, start, `,"`, 512), 512); n >= 1 {
			return v.msg[start : start+n], true
		}
		from += i + 1
	}
}

// readingManifest: (?i)(?:error )?reading manifest ([^\s]{1,128}) in
// ([^\s:]{1,512}). The first capture is a whole run of non-spaces (a
// shorter one is not followed by a space).
func (v textView) readingManifest() (tag, repo string, ok bool) {
	const lit = "reading manifest "
	for from := 0; ; {
		i := strings.Index(v.lower[from:], lit)
		if i < 0 {
			return "", "", false
		}
		start := from + i + len(lit)
		n := run(v.msg, start, "", 128)
		end := start + n
		if n >= 1 && n <= 128 && strings.HasPrefix(v.lower[end:], " in ") {
			if m := min(run(v.msg, end+4, ":", 512), 512); m >= 1 {
				return v.msg[start:end], v.msg[end+4 : end+4+m], true
			}
		}
		from += i + 1
	}
}

// methods are reRequest's alternatives.
var methods = []string{"Head", "Get", "Post", "Put", "HEAD", "GET", "POST", "PUT"}

// findRequests is reRequest.FindAllStringSubmatchIndex(msg, max):
// `\b(Head|Get|...|PUT) "?(https?://[^\s"]+)"?:?`, read from each URL back
// to its method. Matches do not overlap: the next starts at or after the
// end of the last. It works on bytes, so on any UTF-8 text.
func findRequests(msg string, max int) [][]int {
	var out [][]int
	pos := 0 // where the next match may start
	for from := pos; len(out) < max; {
		i := strings.Index(msg[from:], "http")
		if i < 0 {
			break
		}
		u := from + i
		from = u + 1
		rest := msg[u+4:]
		var scheme int
		switch {
		case strings.HasPrefix(rest, "://"):
			scheme = 7
		case strings.HasPrefix(rest, "s://"):
			scheme = 8
		default:
			continue
		}
		// The URL: at least one [^\s"] after the scheme.
		n := run(msg, u+scheme, `"`, len(msg))
		if n < 1 {
			continue
		}
		urlEnd := u + scheme + n
		// Before it: an optional quote, one space, the method at a word
		// boundary.
		q := u
		if q > 0 && msg[q-1] == '"' {
			q--
		}
		if q < 1 || msg[q-1] != ' ' {
			continue
		}
		s := -1
		for _, m := range methods {
			if strings.HasSuffix(msg[:q-1], m) {
				s = q - 1 - len(m)
				break
			}
		}
		if s < pos || s > 0 && isWordByte(msg[s-1]) {
			continue
		}
		end := urlEnd
		if end < len(msg) && msg[end] == '"' {
			end++
		}
		if end < len(msg) && msg[end] == ':' {
			end++
		}
		out = append(out, []int{s, end, s, q - 1, u, urlEnd})
		pos = end
		from = end
	}
	return out
}
