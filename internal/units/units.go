// Package units formats quantities for people.
package units

import (
	"fmt"
	"strings"
	"time"
)

// Bytes prints a byte count in binary units: "512 B", "771.3 KiB",
// "12.0 MiB", "1.00 GiB".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// MS is a duration in milliseconds, to the microsecond: what every report's
// *MS field holds.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// OneLine is s on one line: every run of white space (line breaks too) one
// space, none at either end. Errors and the words of a server or a file are
// quoted through it, so a message stays one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip is OneLine(s) cut to n bytes with "..." when longer: a file's or an
// API's words, quoted in a one-line message.
func Clip(s string, n int) string {
	s = OneLine(s)
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
