package diagnose

import (
	"net/netip"

	"github.com/pullpath/pullpath/internal/audit"
	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	azureaudit "github.com/pullpath/pullpath/internal/audit/azure"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/verdict"
)

// AWSFolder audits a folder of AWS CLI outputs (`pullpath aws collect`, or
// the CLI's own files): every node subnet, the failing nodes' first, so
// they stand beside the healthy ones.
func AWSFolder(dir string) Auditor { return audit.Folder(dir, awsaudit.FromFolder) }

// AzureFolder audits a folder of Azure CLI outputs (`pullpath azure
// collect`, or the CLI's own files): every pool, the failing nodes' first.
func AzureFolder(dir string) Auditor { return audit.Folder(dir, azureaudit.FromFolder) }

// GCPFolder audits a folder of gcloud --format=json outputs (`pullpath gcp
// collect`, or gcloud's own files): every node subnet, the failing nodes'
// first (a GKE node is found by its gce:// providerID or its name).
func GCPFolder(dir string) Auditor { return audit.Folder(dir, gcpaudit.FromFolder) }

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
