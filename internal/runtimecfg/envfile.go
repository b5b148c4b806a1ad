package runtimecfg

import (
	"fmt"
	"strings"
)

// systemd's environment files (EnvironmentFile=, k3s's and rke2's
// /etc/default/NAME, AKS's /etc/environment when a unit names it), read as
// src/basic/env-file.c parse_env_file_internal and load_env_file do, then
// cleaned as exec_context_load_environment does:
//
//   - KEY=VALUE per line; blanks around the key and before the value go;
//     a line starting with # or ; is a comment; a line without = is
//     skipped.
//   - Unquoted values lose trailing blanks; a backslash takes the next
//     character literally, and a backslash-newline joins lines.
//   - 'single quotes' keep everything; "double quotes" keep everything but
//     \" \\ \` \$ (unescaped) and backslash-newline (dropped); other
//     backslashes stay. A quote opens only where a value part starts:
//     A="x"y is xy, A=x"y" is x"y".
//   - No variable expansion ($X stays $X), no "export": a key that is not
//     a valid variable name ("export HTTPS_PROXY") is ignored by systemd,
//     though a shell that sources the file would take it.

// envFileEntry is one assignment of an environment file, or a line
// systemd ignores.
type envFileEntry struct {
	Line    int
	Name    string
	Value   string
	Ignored string // non-empty: systemd ignores it, and why
}

// The states of envParser, named after systemd's parse_env_file_internal.
const (
	envPreKey = iota
	envKey
	envPreValue
	envValue
	envValueEscape
	envSingleQuote
	envDoubleQuote
	envDoubleQuoteEscape
	envComment
	envCommentEscape
)

// envParser is parseEnvFile's state: one character at a time, as systemd.
type envParser struct {
	out              []envFileEntry
	k, v             strings.Builder
	state            int
	line, startLine  int
	lastValueBlank   int // where trailing blanks of an unquoted value start
	keyTrailingBlank int
}

// parseEnvFile reads an environment file's content as systemd does.
func parseEnvFile(content string) []envFileEntry {
	p := &envParser{state: envPreKey, line: 1, startLine: 1, lastValueBlank: -1, keyTrailingBlank: -1}
	for i := 0; i < len(content); i++ {
		p.step(content[i])
		if content[i] == '\n' {
			p.line++
		}
	}
	p.finish()
	return p.out
}

// step takes one character in the current state.
func (p *envParser) step(c byte) {
	newline := c == '\n' || c == '\r'
	switch p.state {
	case envPreKey:
		p.preKey(c)
	case envKey:
		p.key(c, newline)
	case envPreValue:
		p.preValue(c, newline)
	case envValue:
		p.value(c, newline)
	case envValueEscape:
		p.state = envValue
		if !newline {
			p.v.WriteByte(c)
		}
	case envSingleQuote:
		if c == '\'' {
			p.state = envPreValue
		} else {
			p.v.WriteByte(c)
		}
	case envDoubleQuote:
		p.doubleQuote(c)
	case envDoubleQuoteEscape:
		p.state = envDoubleQuote
		switch {
		case strings.IndexByte("\"\\`$", c) >= 0:
			p.v.WriteByte(c)
		case c != '\n':
			p.v.WriteByte('\\')
			p.v.WriteByte(c)
		}
	case envComment:
		if c == '\\' {
			p.state = envCommentEscape
		} else if newline {
			p.state = envPreKey
		}
	case envCommentEscape:
		if newline {
			p.state = envPreKey
		} else {
			p.state = envComment
		}
	}
}

func (p *envParser) preKey(c byte) {
	switch {
	case c == '#' || c == ';':
		p.state = envComment
	case !isBlank(c):
		p.state = envKey
		p.startLine = p.line
		p.keyTrailingBlank = -1
		p.k.WriteByte(c)
	}
}

func (p *envParser) key(c byte, newline bool) {
	switch {
	case newline:
		p.state = envPreKey
		p.k.Reset()
	case c == '=':
		p.state = envPreValue
		p.lastValueBlank = -1
	default:
		writeTrackingBlanks(&p.k, c, &p.keyTrailingBlank)
	}
}

func (p *envParser) preValue(c byte, newline bool) {
	switch {
	case newline:
		p.state = envPreKey
		p.push()
	case c == '\'':
		p.state = envSingleQuote
	case c == '"':
		p.state = envDoubleQuote
	case c == '\\':
		p.state = envValueEscape
	case !isBlank(c):
		p.state = envValue
		p.v.WriteByte(c)
	}
}

func (p *envParser) value(c byte, newline bool) {
	switch {
	case newline:
		p.state = envPreKey
		p.trimValue()
		p.push()
	case c == '\\':
		p.state = envValueEscape
		p.lastValueBlank = -1
	default:
		writeTrackingBlanks(&p.v, c, &p.lastValueBlank)
	}
}

func (p *envParser) doubleQuote(c byte) {
	switch c {
	case '"':
		p.state = envPreValue
	case '\\':
		p.state = envDoubleQuoteEscape
	default:
		p.v.WriteByte(c)
	}
}

// writeTrackingBlanks writes c to b, keeping in *from where the run of
// blanks that ends b starts (-1: b does not end in a blank).
func writeTrackingBlanks(b *strings.Builder, c byte, from *int) {
	if !isBlank(c) {
		*from = -1
	} else if *from < 0 {
		*from = b.Len()
	}
	b.WriteByte(c)
}

// trimValue drops an unquoted value's trailing blanks.
func (p *envParser) trimValue() {
	if p.lastValueBlank >= 0 {
		trimmed := p.v.String()[:p.lastValueBlank]
		p.v.Reset()
		p.v.WriteString(trimmed)
	}
}

// finish keeps an assignment the file ends inside.
func (p *envParser) finish() {
	switch p.state {
	case envPreValue, envValue, envValueEscape, envSingleQuote, envDoubleQuote, envDoubleQuoteEscape:
		if p.state == envValue {
			p.trimValue()
		}
		p.push()
	}
}

// push records the assignment read so far.
func (p *envParser) push() {
	name := p.k.String()
	if p.keyTrailingBlank >= 0 {
		name = name[:p.keyTrailingBlank]
	}
	e := envFileEntry{Line: p.startLine, Name: name, Value: p.v.String()}
	if !validEnvName(name) {
		e.Ignored = fmt.Sprintf("%q is not a variable name (systemd ignores the line; a shell that sources the file would not)", name)
	}
	p.out = append(p.out, e)
	p.k.Reset()
	p.v.Reset()
	p.keyTrailingBlank = -1
	p.lastValueBlank = -1
}
