package netcheck

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// Where the packets stop: TCP SYNs to the failing address and port with a
// rising TTL (hop limit), every TTL at once, and the ICMP time-exceeded
// answers of the routers on the way. The last hop that answered and the
// first that did not name where a timeout happens; a hop that stays
// silent from this node but answers from a healthy one (sweep) points at
// its route back.

// TraceOptions bound a trace.
type TraceOptions struct {
	MaxHops int           // default 12
	Wait    time.Duration // for each round of probes (default 2s)
}

// Trace traces the path to dst. Every TTL from 1 to MaxHops is probed at
// once; TTLs that stayed silent below the highest that answered are asked
// once more (routers rate-limit their ICMP). Hops past the destination
// are dropped.
func Trace(ctx context.Context, dst netip.AddrPort, o TraceOptions) *report.Trace {
	if o.MaxHops <= 0 {
		o.MaxHops = 12
	}
	if o.Wait <= 0 {
		o.Wait = 2 * time.Second
	}
	t := &report.Trace{Destination: dst.String(), Method: "tcp-syn", MaxHops: o.MaxHops}
	if why := traceSupported(); why != "" {
		t.Skipped = why
		return t
	}
	start := time.Now()
	hops := make([]report.TraceHop, o.MaxHops)
	ttls := make([]int, o.MaxHops)
	for i := range ttls {
		ttls[i] = i + 1
	}
	probeAll(ctx, dst, ttls, o.Wait, hops)
	// once more for the silent hops below the highest that answered
	var again []int
	high := highestAnswer(hops)
	for i := 0; i < high; i++ {
		if hops[i].Result == report.HopSilent {
			again = append(again, i+1)
		}
	}
	if len(again) > 0 && ctx.Err() == nil {
		probeAll(ctx, dst, again, o.Wait, hops)
	}
	// the destination ends the path
	for i, h := range hops {
		if h.Result == report.HopReached || h.Result == report.HopRefused {
			hops = hops[:i+1]
			t.Reached = true
			break
		}
	}
	t.Hops = hops
	for _, h := range hops {
		if h.Result == report.HopTimeExceeded || h.Result == report.HopUnreachable && h.Address != "" {
			t.LastAnswered = h.TTL
			t.LastAddress = h.Address
		}
	}
	if !t.Reached {
		for _, h := range hops {
			if h.TTL > t.LastAnswered && h.Result == report.HopSilent {
				t.FirstSilent = h.TTL
				break
			}
		}
	}
	t.DurationMS = units.MS(time.Since(start))
	return t
}

// probeAll probes the given TTLs at once into hops (by TTL).
func probeAll(ctx context.Context, dst netip.AddrPort, ttls []int, wait time.Duration, hops []report.TraceHop) {
	var wg sync.WaitGroup
	for _, ttl := range ttls {
		wg.Go(func() { hops[ttl-1] = traceProbe(ctx, dst, ttl, wait) })
	}
	wg.Wait()
}

// highestAnswer is the highest TTL with any answer (0: none).
func highestAnswer(hops []report.TraceHop) int {
	high := 0
	for _, h := range hops {
		if h.Result != report.HopSilent && h.Result != report.HopError {
			high = h.TTL
		}
	}
	return high
}
