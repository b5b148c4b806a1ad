package lab

import (
	"context"
	"fmt"

	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// Route changes one route of a host's table while the lab runs (the
// repair, or the break): action is add, del or replace, as `ip route`.
func (n *Network) Route(ctx context.Context, host, action string, r scenario.Route) error {
	ns, ok := n.NS[host]
	if !ok {
		return fmt.Errorf("route: no such host %q", host)
	}
	switch action {
	case "add", "del", "replace":
	default:
		return fmt.Errorf("route: action %q, want add, del or replace", action)
	}
	dests, err := scenario.ParseDest(r.To)
	if err != nil {
		return fmt.Errorf("route to %q: %v", r.To, err)
	}
	var lines []string
	for _, d := range dests {
		switch {
		case r.Type != "":
			lines = append(lines, fmt.Sprintf("route %s %s %s", action, r.Type, d))
		case r.Via != "":
			lines = append(lines, fmt.Sprintf("route %s %s via %s", action, d, r.Via))
		default:
			lines = append(lines, fmt.Sprintf("route %s %s", action, d))
		}
	}
	return ipBatch(ctx, ns, lines)
}
