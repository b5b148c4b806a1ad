//go:build !linux

package netcheck

import (
	"net/netip"

	"github.com/pullpath/pullpath/internal/report"
)

// RouteTo needs Linux's netlink: elsewhere it says so.
func RouteTo(dst netip.Addr) *report.RouteFacts {
	return &report.RouteFacts{Destination: dst.String(), Error: "route facts need Linux (netlink)"}
}
