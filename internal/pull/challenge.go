package pull

import (
	"strings"
)

// Challenge is one parsed WWW-Authenticate challenge.
type Challenge struct {
	Scheme string            // "basic" or "bearer", lower-cased
	Params map[string]string // realm, service, scope, error... (keys lower-cased)
}

// ParseChallenges parses a WWW-Authenticate header value (RFC 7235): one or
// more challenges, each a scheme followed by comma-separated auth-params whose
// values are tokens or quoted strings. It never fails: malformed parts are
// skipped, and the caller decides whether what is left is usable.
func ParseChallenges(h string) []Challenge {
	const max = 16 << 10
	if len(h) > max {
		h = h[:max]
	}
	var out []Challenge
	p := &lexer{s: h}
	for {
		p.skipSpaceAndCommas()
		if p.done() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.pos++ // not a token character: skip it
			continue
		}
		c := Challenge{Scheme: strings.ToLower(scheme), Params: map[string]string{}}
		for {
			p.skipSpace()
			save := p.pos
			key := p.token()
			p.skipSpace()
			if key == "" || p.done() || p.s[p.pos] != '=' {
				// not an auth-param: either the next challenge's scheme or
				// a token68 (Basic's credentials form); rewind and stop.
				p.pos = save
				if key != "" && !p.done() && p.s[p.pos] != ',' && c.Params != nil && len(c.Params) == 0 {
					// token68 directly after the scheme: consume it
					p.pos += len(key)
					for !p.done() && p.s[p.pos] == '=' {
						p.pos++
					}
				}
				break
			}
			p.pos++ // '='
			p.skipSpace()
			var val string
			if !p.done() && p.s[p.pos] == '"' {
				val = p.quoted()
			} else {
				val = p.token()
			}
			c.Params[strings.ToLower(key)] = val
			p.skipSpace()
			if p.done() {
				break
			}
			if p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			break
		}
		out = append(out, c)
	}
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

type lexer struct {
	s   string
	pos int
}

func (l *lexer) done() bool { return l.pos >= len(l.s) }

func (l *lexer) skipSpace() {
	for !l.done() && (l.s[l.pos] == ' ' || l.s[l.pos] == '\t') {
		l.pos++
	}
}

func (l *lexer) skipSpaceAndCommas() {
	for !l.done() && (l.s[l.pos] == ' ' || l.s[l.pos] == '\t' || l.s[l.pos] == ',') {
		l.pos++
	}
}

// token reads an RFC 7230 token (plus '/' so token68 values survive).
func (l *lexer) token() string {
	start := l.pos
	for !l.done() && isTokenChar(l.s[l.pos]) {
		l.pos++
	}
	return l.s[start:l.pos]
}

func (l *lexer) quoted() string {
	l.pos++ // opening quote
	var b strings.Builder
	for !l.done() {
		c := l.s[l.pos]
		l.pos++
		switch c {
		case '\\':
			if !l.done() {
				b.WriteByte(l.s[l.pos])
				l.pos++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String() // unterminated: take what is there
}

func isTokenChar(c byte) bool {
	if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/:", c) >= 0
}
