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

// parseEnvFile reads an environment file's content as systemd does.
func parseEnvFile(content string) []envFileEntry {
	const (
		preKey = iota
		key
		preValue
		value
		valueEscape
		singleQuote
		doubleQuote
		doubleQuoteEscape
		comment
		commentEscape
	)
	var out []envFileEntry
	var k, v strings.Builder
	state := preKey
	line, startLine := 1, 1
	lastValueBlank := -1 // where trailing blanks of an unquoted value start
	keyTrailingBlank := -1
	push := func() {
		name := k.String()
		if keyTrailingBlank >= 0 {
			name = name[:keyTrailingBlank]
		}
		val := v.String()
		e := envFileEntry{Line: startLine, Name: name, Value: val}
		if !validEnvName(name) {
			e.Ignored = fmt.Sprintf("%q is not a variable name (systemd ignores the line; a shell that sources the file would not)", name)
		}
		out = append(out, e)
		k.Reset()
		v.Reset()
		keyTrailingBlank = -1
		lastValueBlank = -1
	}
	for i := 0; i < len(content); i++ {
		c := content[i]
		newline := c == '\n' || c == '\r'
		switch state {
		case preKey:
			switch {
			case c == '#' || c == ';':
				state = comment
			case !isBlank(c):
				state = key
				startLine = line
				keyTrailingBlank = -1
				k.WriteByte(c)
			}
		case key:
			switch {
			case newline:
				state = preKey
				k.Reset()
			case c == '=':
				state = preValue
				lastValueBlank = -1
			default:
				if !isBlank(c) {
					keyTrailingBlank = -1
				} else if keyTrailingBlank < 0 {
					keyTrailingBlank = k.Len()
				}
				k.WriteByte(c)
			}
		case preValue:
			switch {
			case newline:
				state = preKey
				push()
			case c == '\'':
				state = singleQuote
			case c == '"':
				state = doubleQuote
			case c == '\\':
				state = valueEscape
			case !isBlank(c):
				state = value
				v.WriteByte(c)
			}
		case value:
			switch {
			case newline:
				state = preKey
				if lastValueBlank >= 0 {
					trimmed := v.String()[:lastValueBlank]
					v.Reset()
					v.WriteString(trimmed)
				}
				push()
			case c == '\\':
				state = valueEscape
				lastValueBlank = -1
			default:
				if !isBlank(c) {
					lastValueBlank = -1
				} else if lastValueBlank < 0 {
					lastValueBlank = v.Len()
				}
				v.WriteByte(c)
			}
		case valueEscape:
			state = value
			if !newline {
				v.WriteByte(c)
			}
		case singleQuote:
			if c == '\'' {
				state = preValue
			} else {
				v.WriteByte(c)
			}
		case doubleQuote:
			switch c {
			case '"':
				state = preValue
			case '\\':
				state = doubleQuoteEscape
			default:
				v.WriteByte(c)
			}
		case doubleQuoteEscape:
			state = doubleQuote
			switch {
			case strings.IndexByte("\"\\`$", c) >= 0:
				v.WriteByte(c)
			case c != '\n':
				v.WriteByte('\\')
				v.WriteByte(c)
			}
		case comment:
			if c == '\\' {
				state = commentEscape
			} else if newline {
				state = preKey
			}
		case commentEscape:
			if newline {
				state = preKey
			} else {
				state = comment
			}
		}
		if c == '\n' {
			line++
		}
	}
	switch state {
	case preValue, value, valueEscape, singleQuote, doubleQuote, doubleQuoteEscape:
		if state == value && lastValueBlank >= 0 {
			trimmed := v.String()[:lastValueBlank]
			v.Reset()
			v.WriteString(trimmed)
		}
		push()
	}
	return out
}
