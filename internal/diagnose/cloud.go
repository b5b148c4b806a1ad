package diagnose

import (
	"net/netip"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/verdict"
)

// auditFocus is what the audit looks at first: the failing nodes (by
// providerID, address, pool and, when a label names it, subnet) and the
// failing host, its role and code.
func auditFocus(failing []NodeRef, host, role, code string) audit.Focus {
	f := audit.Focus{Host: audit.HostOf(host), Role: verdict.Role(role), Code: verdict.Code(code)}
	for _, n := range failing {
		an := audit.Node{Name: n.Name, ProviderID: n.ProviderID, Pool: n.Pool}
		if a, err := netip.ParseAddr(n.InternalIP); err == nil {
			an.Addresses = []netip.Addr{a}
		}
		if _, err := netip.ParsePrefix(n.Subnet); err != nil {
			an.Subnet = n.Subnet // a /24 guessed from the address is no subnet id
		}
		f.Nodes = append(f.Nodes, an)
	}
	return f
}
