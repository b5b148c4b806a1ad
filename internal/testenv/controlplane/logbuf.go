package controlplane

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// maxLogBytes bounds what one process's log buffer keeps. A benchmark that
// loads tens of thousands of objects must not grow it without end, and a
// failed test only needs the tail.
const maxLogBytes = 4 << 20

// logBuffer is a goroutine-safe buffer that keeps the last maxLogBytes
// written to it and copies every write to an optional tee.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	tee io.Writer
}

// Write implements io.Writer.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - maxLogBytes; over > 0 {
		b.buf.Next(over)
	}
	if b.tee != nil {
		_, _ = b.tee.Write(p) // a failing tee must not stop the process's logging
	}
	return len(p), nil
}

// String returns everything kept so far.
func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns the last n lines kept so far.
func (b *logBuffer) tail(n int) string {
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
