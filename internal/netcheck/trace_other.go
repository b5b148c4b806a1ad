//go:build !linux

package netcheck

import (
	"context"
	"net/netip"
	"time"

	"github.com/pullpath/pullpath/internal/report"
)

func traceProbe(context.Context, netip.AddrPort, int, time.Duration) report.TraceHop {
	return report.TraceHop{Result: report.HopError}
}

// traceSupported says why Trace cannot run here.
func traceSupported() string {
	return "the trace needs Linux (TCP SYNs with IP_TTL and the socket error queue, IP_RECVERR)"
}
