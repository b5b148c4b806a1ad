package azure

import (
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/authorization/armauthorization/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns"

	"github.com/pullpath/pullpath/internal/report"
)

// Model is one AKS cluster's pull path as the Azure APIs describe it, in the
// Azure SDK for Go's own model types. It is loaded once, from CLI JSON files
// or from the live API (both go through the same files), and every check
// reads it; no check calls an API.
type Model struct {
	Cluster *armcontainerservice.ManagedCluster
	VNet    *armnetwork.VirtualNetwork // nil when network-vnet-show.json is missing

	Subnets     map[string]*armnetwork.Subnet        // by idKey
	RouteTables map[string]*armnetwork.RouteTable    // by idKey
	NSGs        map[string]*armnetwork.SecurityGroup // by idKey

	Peerings      []*armnetwork.VirtualNetworkPeering
	PeeringsKnown bool

	Zones        []*armprivatedns.PrivateZone
	ZonesKnown   bool
	Links        []*armprivatedns.VirtualNetworkLink // of privatelink.azurecr.io
	LinksKnown   bool
	Records      []*armprivatedns.RecordSet // A records of privatelink.azurecr.io
	RecordsKnown bool

	Registry *armcontainerregistry.Registry
	// RoleAssignmentMode is the registry's "Role assignment permissions
	// mode" (AbacRepositoryPermissions | LegacyRegistryPermissions), read
	// from the JSON because the SDK version in use predates it.
	RoleAssignmentMode string
	// EndpointProtocol is the registry's endpoint protocol (IPv4 |
	// IPv4AndIPv6, the dual-stack public endpoints), read from the JSON for
	// the same reason.
	EndpointProtocol string

	PrivateEndpoints map[string]*armnetwork.PrivateEndpoint // by idKey

	Roles      []RoleAssignment
	RolesKnown bool

	// Routes holds the effective routes of one node NIC per pool, by
	// lower-cased NIC name.
	Routes map[string][]*armnetwork.EffectiveRoute

	Warnings []report.AuditWarning
	// ManagedSubnet is the node subnet of an AKS-managed VNet, found in the
	// node resource group's VNets (the pools name none).
	ManagedSubnet string

	// the artifact cache (cache.go)
	cacheModel

	// given and cmds are, by file name, whether the loader read the file
	// and the command that writes it (audit.Given).
	given map[string]bool
	cmds  map[string]string
}

// RoleAssignment is an SDK role assignment and the role's name where the
// CLI printed it (roleDefinitionName).
type RoleAssignment struct {
	*armauthorization.RoleAssignment
	DefinitionName string
}

// Pool is one agent pool.
type Pool struct {
	Name     string
	SubnetID string
	Count    int32
	Mode     string
}

// Pools are the cluster's agent pools in the order aks show lists them.
func (m *Model) Pools() []Pool {
	var out []Pool
	if m.Cluster == nil || m.Cluster.Properties == nil {
		return nil
	}
	for _, p := range m.Cluster.Properties.AgentPoolProfiles {
		if p == nil {
			continue
		}
		pl := Pool{Name: str(p.Name), SubnetID: str(p.VnetSubnetID)}
		if p.Count != nil {
			pl.Count = *p.Count
		}
		if p.Mode != nil {
			pl.Mode = string(*p.Mode)
		}
		out = append(out, pl)
	}
	return out
}

// NodeSubnets are the distinct agentPoolProfiles[].vnetSubnetId, in pool order.
func (m *Model) NodeSubnets() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range m.Pools() {
		if p.SubnetID == "" || seen[idKey(p.SubnetID)] {
			continue
		}
		seen[idKey(p.SubnetID)] = true
		out = append(out, p.SubnetID)
	}
	return out
}

// PoolsIn are the names of the pools whose nodes sit in subnet id.
func (m *Model) PoolsIn(id string) []string {
	var out []string
	for _, p := range m.Pools() {
		if sameID(p.SubnetID, id) {
			out = append(out, p.Name)
		}
	}
	return out
}

// KubeletObjectID is identityProfile.kubeletidentity.objectId.
func (m *Model) KubeletObjectID() string {
	if m.Cluster == nil || m.Cluster.Properties == nil {
		return ""
	}
	for k, v := range m.Cluster.Properties.IdentityProfile {
		if strings.EqualFold(k, "kubeletidentity") && v != nil {
			return str(v.ObjectID)
		}
	}
	return ""
}

// KubeletResourceID is identityProfile.kubeletidentity.resourceId.
func (m *Model) KubeletResourceID() string {
	if m.Cluster == nil || m.Cluster.Properties == nil {
		return ""
	}
	for k, v := range m.Cluster.Properties.IdentityProfile {
		if strings.EqualFold(k, "kubeletidentity") && v != nil {
			return str(v.ResourceID)
		}
	}
	return ""
}

func (m *Model) RegistryID() string {
	if m.Registry == nil {
		return ""
	}
	return str(m.Registry.ID)
}

func (m *Model) RegistryName() string {
	if m.Registry == nil {
		return ""
	}
	return str(m.Registry.Name)
}

func (m *Model) LoginServer() string {
	if m.Registry == nil || m.Registry.Properties == nil {
		return ""
	}
	if s := str(m.Registry.Properties.LoginServer); s != "" {
		return strings.ToLower(s)
	}
	return strings.ToLower(m.RegistryName()) + ".azurecr.io"
}

// Zone is the privatelink.azurecr.io zone the links and records belong to:
// the one named by the link and record ids, else the only one listed.
func (m *Model) Zone() *armprivatedns.PrivateZone {
	var want string
	for _, l := range m.Links {
		want = parentID(str(l.ID))
		break
	}
	if want == "" {
		for _, r := range m.Records {
			want = parentID(str(r.ID))
			break
		}
	}
	var named []*armprivatedns.PrivateZone
	for _, z := range m.Zones {
		if want != "" && sameID(str(z.ID), want) {
			return z
		}
		if strings.EqualFold(str(z.Name), ACRZone) {
			named = append(named, z)
		}
	}
	if len(named) > 0 {
		return named[0]
	}
	return nil
}

// ZoneID is the zone's ARM id, known from the zone list or from a link or
// record id.
func (m *Model) ZoneID() string {
	if z := m.Zone(); z != nil {
		return str(z.ID)
	}
	for _, l := range m.Links {
		return parentID(str(l.ID))
	}
	for _, r := range m.Records {
		return parentID(str(r.ID))
	}
	return ""
}

func (m *Model) warn(msg, file, cmd string) {
	m.Warnings = append(m.Warnings, report.AuditWarning{Message: msg, File: file, Command: cmd})
}

func sortedKeys[V any](mp map[string]V) []string {
	out := make([]string, 0, len(mp))
	for k := range mp {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
