package probesummary

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
)

// Marshal encodes the summary in at most MaxTerminationMessage-96 bytes,
// shortening the summary text, then dropping passing hops, then any hop
// but the failing one, and says so in Cut.
func (s Summary) Marshal() []byte {
	const limit = MaxTerminationMessage - 96
	b, _ := json.Marshal(s)
	if len(b) <= limit {
		return b
	}
	s.Cut = true
	if len(s.Summary) > 240 {
		s.Summary = s.Summary[:240] + "..."
	}
	if b, _ = json.Marshal(s); len(b) <= limit {
		return b
	}
	if len(s.Traces) > 1 {
		s.Traces = s.Traces[:1] // the failing address's, or the first host's
	}
	var keep []report.SweepHop
	for _, h := range s.Hops {
		if h.Status != report.StepPass {
			keep = append(keep, h)
		}
	}
	s.Hops = keep
	if b, _ = json.Marshal(s); len(b) <= limit {
		return b
	}
	keep = nil
	for _, h := range s.Hops {
		if h.Host == s.Endpoint {
			keep = append(keep, h)
			break
		}
	}
	s.Hops = keep
	s.Summary = ""
	if len(s.Credentials) > 2 {
		s.Credentials = s.Credentials[:2]
	}
	b, _ = json.Marshal(s)
	return b
}

// Parse reads a termination message written by `probe --verdict-file`;
// anything else is a one-line error that quotes the start, redacted.
func Parse(msg string) (Summary, error) {
	var s Summary
	b := bytes.TrimSpace([]byte(msg))
	if len(b) == 0 {
		return s, fmt.Errorf("termination message is empty, want the probe's verdict JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil || s.V != Version || s.Status == "" {
		return s, fmt.Errorf("termination message is not the probe's verdict JSON (v%d): %q", Version, quote(string(b), 80))
	}
	return s, nil
}

// quote is s redacted and cut to n bytes on a rune boundary, "..." when cut.
func quote(s string, n int) string {
	s = redact.String(s)
	if len(s) <= n {
		return s
	}
	return cutString(s, n) + "..."
}
