package lab

import (
	"context"
	"fmt"

	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// Firewall replaces a host's firewall rules while the lab runs (the break,
// or the heal: no rules), in one nft transaction: the host's table is
// created if missing, deleted and written again, so no packet ever sees half
// the rules. Only the lab's own table (inet pullpath) changes; others in
// the namespace (a node's kube-proxy's) stay.
func (n *Network) Firewall(ctx context.Context, host string, rules []scenario.Rule) error {
	ns, ok := n.NS[host]
	if !ok {
		return fmt.Errorf("firewall: no such host %q", host)
	}
	for i, r := range rules {
		if err := scenario.ValidateRule(r); err != nil {
			return fmt.Errorf("firewall of %s: rule %d: %v", host, i, err)
		}
	}
	script := fmt.Sprintf("add table inet %s\ndelete table inet %s\n", nftTable, nftTable) + nftRuleset(rules)
	if _, err := run(ctx, script, "ip", "netns", "exec", ns, "nft", "-f", "-"); err != nil {
		return fmt.Errorf("firewall of %s: %v", host, err)
	}
	return nil
}
