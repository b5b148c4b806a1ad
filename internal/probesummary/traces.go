package probesummary

import "github.com/pullpath/pullpath/internal/report"

// maxTraces bounds the traces a Summary carries.
const maxTraces = 3

// traces compacts traces for a Summary: at most three, the
// hops as addresses ("*": silent, "!": could not be sent).
func traces(trs []*report.Trace) []report.TraceSummary {
	var out []report.TraceSummary
	for _, tr := range trs {
		if tr == nil || tr.Skipped != "" || len(out) == maxTraces {
			continue
		}
		s := report.TraceSummary{Destination: tr.Destination, Reached: tr.Reached}
		for _, h := range tr.Hops {
			switch {
			case h.Address != "":
				s.Hops = append(s.Hops, h.Address)
			case h.Result == report.HopError:
				s.Hops = append(s.Hops, "!")
			default:
				s.Hops = append(s.Hops, "*")
			}
		}
		out = append(out, s)
	}
	return out
}
