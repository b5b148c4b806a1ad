package pull

import (
	"net/http"
	"sort"
	"strings"
)

// Challenge is one parsed WWW-Authenticate challenge.
type Challenge struct {
	Scheme string            // "basic", "digest" or "bearer", lower-cased
	Params map[string]string // realm, service, scope, error... (keys lower-cased)
}

// maxChallenge bounds the bytes of one header value the parser reads.
const maxChallenge = 16 << 10

// ParseAuthHeader parses the WWW-Authenticate values of h exactly as
// containerd does (core/remotes/docker/auth/parse.go, ParseAuthHeader):
// one challenge per header value, its scheme then comma-separated
// token=token-or-quoted-string params, parsing stopping at the first byte
// that does not fit; schemes other than basic, digest and bearer dropped;
// bearer first, then digest, then basic. An unterminated quoted string is
// an empty value, so a realm without its closing quote is no realm.
func ParseAuthHeader(h http.Header) []Challenge {
	out := []Challenge{}
	for _, v := range h.Values("WWW-Authenticate") {
		if c, ok := ParseChallenge(v); ok {
			out = append(out, c)
		}
	}
	rank := map[string]int{"bearer": 0, "digest": 1, "basic": 2}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Scheme] < rank[out[j].Scheme] })
	return out
}

// ParseChallenge parses one WWW-Authenticate value (containerd's
// parseValueAndParams); ok is false for a scheme containerd ignores.
func ParseChallenge(v string) (Challenge, bool) {
	if len(v) > maxChallenge {
		v = v[:maxChallenge]
	}
	scheme, params := parseValueAndParams(v)
	switch scheme {
	case "basic", "digest", "bearer":
		return Challenge{Scheme: scheme, Params: params}, true
	}
	return Challenge{}, false
}

// Find returns the first challenge of scheme (lower case).
func Find(cs []Challenge, scheme string) (Challenge, bool) {
	for _, c := range cs {
		if c.Scheme == scheme {
			return c, true
		}
	}
	return Challenge{}, false
}

func parseValueAndParams(header string) (string, map[string]string) {
	params := map[string]string{}
	value, s := expectToken(header)
	if value == "" {
		return "", params
	}
	value = strings.ToLower(value)
	for {
		var key string
		key, s = expectToken(skipSpace(s))
		if key == "" || !strings.HasPrefix(s, "=") {
			return value, params
		}
		var val string
		val, s = expectTokenOrQuoted(s[1:])
		params[strings.ToLower(key)] = val
		s = skipSpace(s)
		if !strings.HasPrefix(s, ",") {
			return value, params
		}
		s = s[1:]
	}
}

func skipSpace(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return s[i:]
}

// isTokenChar is RFC 2616's token: any CHAR except CTLs and separators.
func isTokenChar(c byte) bool {
	return c > 31 && c < 127 && !strings.ContainsRune(" \t\"(),/:;<=>?@[]\\{}", rune(c))
}

func expectToken(s string) (string, string) {
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func expectTokenOrQuoted(s string) (string, string) {
	if !strings.HasPrefix(s, `"`) {
		return expectToken(s)
	}
	s = s[1:]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			return b.String(), s[i+1:]
		case '\\':
			i++
			if i < len(s) {
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "" // unterminated: containerd gives an empty value and stops
}
