package azure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/authorization/armauthorization/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns"

	"github.com/pullpath/pullpath/internal/units"
)

// maxFile bounds one input file; the largest real output (a zone of many
// thousand records) is a few MiB.
const maxFile = 256 << 20

// Resource types each file must hold, as ARM spells them (compared
// case-insensitively).
const (
	typeAKS     = "Microsoft.ContainerService/managedClusters"
	typeVNet    = "Microsoft.Network/virtualNetworks"
	typeSubnet  = "Microsoft.Network/virtualNetworks/subnets"
	typeRT      = "Microsoft.Network/routeTables"
	typeNSG     = "Microsoft.Network/networkSecurityGroups"
	typePeering = "Microsoft.Network/virtualNetworks/virtualNetworkPeerings"
	typeZone    = "Microsoft.Network/privateDnsZones"
	typeLink    = "Microsoft.Network/privateDnsZones/virtualNetworkLinks"
	typeA       = "Microsoft.Network/privateDnsZones/A"
	typeACR     = "Microsoft.ContainerRegistry/registries"
	typePE      = "Microsoft.Network/privateEndpoints"
	typeRole    = "Microsoft.Authorization/roleAssignments"
)

// InputError is bad input: a file that is missing, not JSON, or another
// command's output. Its message is one line naming the file and what was
// expected.
type InputError struct {
	File string
	Msg  string
}

func (e *InputError) Error() string { return e.File + ": " + e.Msg }

// Load reads the --from folder (or the files collect made in memory) into a
// Model. aks-show.json and acr-show.json are required; every other missing
// file is a warning naming the command that would produce it, and the
// checks that needed it warn too.
func Load(fsys fs.FS) (*Model, error) {
	m := &Model{
		Subnets:          map[string]*armnetwork.Subnet{},
		RouteTables:      map[string]*armnetwork.RouteTable{},
		NSGs:             map[string]*armnetwork.SecurityGroup{},
		PrivateEndpoints: map[string]*armnetwork.PrivateEndpoint{},
		Routes:           map[string][]*armnetwork.EffectiveRoute{},
	}
	m.given, m.cmds = map[string]bool{}, map[string]string{}
	l := &loader{fsys: fsys, m: m}

	subnets, managed, err := l.cluster()
	if err != nil {
		return nil, err
	}
	reg, err := l.registry()
	if err != nil {
		return nil, err
	}
	vnetID := ""
	if len(subnets) > 0 {
		vnetID = parentID(subnets[0])
	}
	l.network(vnetID, subnets, managed)
	l.peerings(vnetID)
	l.privateDNS()
	l.privateEndpoints(reg)
	// Role assignments at the registry's scope and above.
	if ok := l.roles(cmdRoles(str(reg.ID))); ok {
		m.RolesKnown = true
	}
	// The artifact cache, when its files are given (collect writes them
	// for an image a cache rule serves).
	l.cache()
	// The effective routes of one node NIC per pool were read with the
	// route tables; their warnings sort with the others.
	sort.SliceStable(m.Warnings, func(i, j int) bool { return m.Warnings[i].File < m.Warnings[j].File })
	return m, nil
}

// cluster reads the cluster: pools, their subnets, the kubelet identity;
// on an AKS-managed VNet, the node resource group's listing.
func (l *loader) cluster() (subnets []string, managed *armnetwork.VirtualNetwork, err error) {
	var mc armcontainerservice.ManagedCluster
	if _, err := l.object(FileAKS, typeAKS, "az aks show -g RG -n CLUSTER", &mc, true); err != nil {
		return nil, nil, err
	}
	if mc.Properties == nil || len(mc.Properties.AgentPoolProfiles) == 0 {
		return nil, nil, &InputError{File: FileAKS, Msg: "no agentPoolProfiles: want the output of `az aks show -g RG -n CLUSTER`"}
	}
	l.m.Cluster = &mc
	subnets = l.m.NodeSubnets()
	if len(subnets) == 0 {
		managed = l.managedVNet()
		subnets = l.m.NodeSubnets()
	}
	return subnets, managed, nil
}

// registry reads the registry: login server, data endpoints, private
// endpoint connections, and the two fields the CLI adds.
func (l *loader) registry() (*armcontainerregistry.Registry, error) {
	m := l.m
	var reg armcontainerregistry.Registry
	raw, err := l.object(FileACR, typeACR, "az acr show -n REGISTRY", &reg, true)
	if err != nil {
		return nil, err
	}
	if reg.Properties == nil || (reg.Properties.LoginServer == nil && reg.Name == nil) {
		return nil, &InputError{File: FileACR, Msg: "no loginServer: want the output of `az acr show -n REGISTRY`"}
	}
	m.Registry = &reg
	if obj, ok := raw.(map[string]any); ok {
		// renested in place: the field sits in properties now
		m.RoleAssignmentMode = stringField(obj, "roleAssignmentMode")
		if p, ok := obj["properties"].(map[string]any); ok && m.RoleAssignmentMode == "" {
			m.RoleAssignmentMode = stringField(p, "roleAssignmentMode")
		}
		m.EndpointProtocol = stringField(obj, "endpointProtocol")
		if p, ok := obj["properties"].(map[string]any); ok && m.EndpointProtocol == "" {
			m.EndpointProtocol = stringField(p, "endpointProtocol")
		}
	}
	return &reg, nil
}

// network reads the VNet of the node subnets, each subnet, and (in
// parallel) their route tables, NSGs and the nodes' effective routes.
func (l *loader) network(vnetID string, subnets []string, managed *armnetwork.VirtualNetwork) {
	m := l.m
	var vnet armnetwork.VirtualNetwork
	if managed != nil {
		// the node resource group's listing holds the VNet whole
		m.VNet = managed
	} else if ok, _ := l.optional(FileVNet, typeVNet, cmdVNet(resourceGroupOf(vnetID), lastName(vnetID)), &vnet); ok {
		m.VNet = &vnet
		if vnetID != "" && !sameID(str(vnet.ID), vnetID) {
			m.warn(fmt.Sprintf("%s describes %s, not the node subnets' VNet %s", FileVNet, str(vnet.ID), vnetID), FileVNet, cmdVNet(resourceGroupOf(vnetID), lastName(vnetID)))
		}
	}
	for _, id := range subnets {
		l.subnet(id)
	}
	runAll(l.tableJobs())
}

// subnet reads one node subnet, or falls back to the VNet's own copy
// (without ipConfigurations).
func (l *loader) subnet(id string) {
	name := lastName(id)
	var sn armnetwork.Subnet
	ok, _ := l.optional(FileSubnet(name), typeSubnet, cmdSubnet(resourceGroupOf(id), idSegment(id, "virtualNetworks"), name), &sn)
	if !ok {
		if s := l.m.vnetSubnet(id); s != nil {
			sn, ok = *s, true
			l.m.fellBack(FileSubnet(name))
		}
	}
	if ok {
		if sn.ID == nil {
			sn.ID = &id
		}
		l.m.Subnets[idKey(id)] = &sn
	}
}

// tableJobs are the reads of the route tables, NSGs and effective
// routes: the bulk of the input, read two at a time per core (the SDK's
// UnmarshalJSON is the cost).
func (l *loader) tableJobs() []func() {
	m := l.m
	var jobs []func()
	seenRT, seenNSG := map[string]bool{}, map[string]bool{}
	for _, k := range sortedKeys(m.Subnets) {
		sn := m.Subnets[k]
		if sn.Properties == nil {
			continue
		}
		if rt := sn.Properties.RouteTable; rt != nil && rt.ID != nil && !seenRT[idKey(*rt.ID)] {
			seenRT[idKey(*rt.ID)] = true
			id := *rt.ID
			jobs = append(jobs, func() {
				var t armnetwork.RouteTable
				if ok, _ := l.optional(FileRouteTable(lastName(id)), typeRT, cmdRT(resourceGroupOf(id), lastName(id)), &t); ok {
					l.mu.Lock()
					m.RouteTables[idKey(id)] = &t
					l.mu.Unlock()
				}
			})
		}
		if g := sn.Properties.NetworkSecurityGroup; g != nil && g.ID != nil && !seenNSG[idKey(*g.ID)] {
			seenNSG[idKey(*g.ID)] = true
			id := *g.ID
			jobs = append(jobs, func() {
				var t armnetwork.SecurityGroup
				if ok, _ := l.optional(FileNSG(lastName(id)), typeNSG, cmdNSG(resourceGroupOf(id), lastName(id)), &t); ok {
					l.mu.Lock()
					m.NSGs[idKey(id)] = &t
					l.mu.Unlock()
				}
			})
		}
	}
	for _, nic := range m.NodeNICs() {
		jobs = append(jobs, func() {
			var res armnetwork.EffectiveRouteListResult
			if ok, _ := l.routes(FileRoutes(nic.Name), cmdRoutes(nic.ResourceGroup, nic.Name), &res); ok {
				l.mu.Lock()
				m.Routes[strings.ToLower(nic.Name)] = res.Value
				l.mu.Unlock()
			}
		})
	}
	return jobs
}

// peerings reads the cluster VNet's peerings (its side only), or the
// VNet's own copy of them.
func (l *loader) peerings(vnetID string) {
	m := l.m
	var peerings []*armnetwork.VirtualNetworkPeering
	if ok, _ := l.list(FilePeerings, typePeering, cmdPeerings(resourceGroupOf(vnetID), lastName(vnetID)), reflect.TypeOf(peerings), &peerings); ok {
		m.Peerings, m.PeeringsKnown = peerings, true
	} else if m.VNet != nil && m.VNet.Properties != nil && m.VNet.Properties.VirtualNetworkPeerings != nil {
		m.Peerings, m.PeeringsKnown = m.VNet.Properties.VirtualNetworkPeerings, true
		m.fellBack(FilePeerings)
	}
}

// privateDNS reads the zones, and the links and A records of
// privatelink.azurecr.io.
func (l *loader) privateDNS() {
	m := l.m
	var zones []*armprivatedns.PrivateZone
	if ok, _ := l.list(FileZones, typeZone, cmdZones(), reflect.TypeOf(zones), &zones); ok {
		m.Zones, m.ZonesKnown = zones, true
	}
	zoneRG := "RG"
	for _, z := range m.Zones {
		if strings.EqualFold(str(z.Name), ACRZone) {
			zoneRG = resourceGroupOf(str(z.ID))
			break
		}
	}
	var links []*armprivatedns.VirtualNetworkLink
	if ok, _ := l.list(FileLinks(ACRZone), typeLink, cmdLinks(zoneRG, ACRZone), reflect.TypeOf(links), &links); ok {
		m.Links, m.LinksKnown = links, true
	}
	var recs []*armprivatedns.RecordSet
	if ok, _ := l.list(FileRecords(ACRZone), typeA, cmdRecords(zoneRG, ACRZone), reflect.TypeOf(recs), &recs); ok {
		m.Records, m.RecordsKnown = recs, true
	}
}

// privateEndpoints reads the registry's private endpoints.
func (l *loader) privateEndpoints(reg *armcontainerregistry.Registry) {
	for _, c := range reg.Properties.PrivateEndpointConnections {
		if c == nil || c.Properties == nil || c.Properties.PrivateEndpoint == nil || c.Properties.PrivateEndpoint.ID == nil {
			continue
		}
		id := *c.Properties.PrivateEndpoint.ID
		var pe armnetwork.PrivateEndpoint
		if ok, _ := l.optional(FilePE(lastName(id)), typePE, cmdPE(resourceGroupOf(id), lastName(id)), &pe); ok {
			l.m.PrivateEndpoints[idKey(id)] = &pe
		}
	}
}

// managedVNet finds the node subnet of an AKS-managed VNet (no pool has a
// vnetSubnetId): AKS creates it in the node resource group (aks-vnet-N
// with the subnet aks-subnet), which network-vnet-list.json lists. Every
// pool without a vnetSubnetId is placed in it, and a warning says from
// which file; without the file the warning names it and its command.
func (l *loader) managedVNet() *armnetwork.VirtualNetwork {
	m := l.m
	p := m.Cluster.Properties
	nodeRG := str(p.NodeResourceGroup)
	cmd := cmdVNets(nodeRG)
	if nodeRG == "" {
		cmd = cmdVNets("NODE_RESOURCE_GROUP")
	}
	var vnets []*armnetwork.VirtualNetwork
	if ok, _ := l.list(FileVNets, typeVNet, cmd, reflect.TypeOf(vnets), &vnets); !ok {
		for i := range m.Warnings {
			if m.Warnings[i].File == FileVNets {
				m.Warnings[i].Message = "no agent pool has a vnetSubnetId (an AKS-managed VNet) and " + FileVNets + " is not given: the node subnet is unknown; only the cluster-wide checks run"
			}
		}
		return nil
	}
	vnet, subnet := managedSubnet(vnets, nodeRG)
	if subnet == nil {
		m.warn(fmt.Sprintf("no agent pool has a vnetSubnetId (an AKS-managed VNet) and %s holds no VNet with a subnet in the node resource group %s: the node subnet is unknown; only the cluster-wide checks run", FileVNets, nodeRG), FileVNets, cmd)
		return nil
	}
	id := *subnet.ID
	for _, ap := range p.AgentPoolProfiles {
		if ap != nil && str(ap.VnetSubnetID) == "" {
			ap.VnetSubnetID = &id
		}
	}
	m.ManagedSubnet = id
	m.warn(fmt.Sprintf("no agent pool has a vnetSubnetId (an AKS-managed VNet): the node subnet %s of %s is read from %s", lastName(id), str(vnet.Name), FileVNets), FileVNets, "")
	return vnet
}

// managedSubnet is the node subnet AKS made in the node resource group:
// the aks-vnet-N VNet's aks-subnet (else the group's only VNet and its
// subnet). collect and Load pick it alike.
func managedSubnet(vnets []*armnetwork.VirtualNetwork, nodeRG string) (*armnetwork.VirtualNetwork, *armnetwork.Subnet) {
	var vnet *armnetwork.VirtualNetwork
	for _, v := range vnets {
		if v == nil || (nodeRG != "" && !strings.EqualFold(resourceGroupOf(str(v.ID)), nodeRG)) {
			continue
		}
		if vnet == nil || strings.HasPrefix(strings.ToLower(str(v.Name)), "aks-vnet-") {
			vnet = v
		}
	}
	var subnet *armnetwork.Subnet
	if vnet != nil && vnet.Properties != nil {
		for _, s := range vnet.Properties.Subnets {
			if s != nil && s.ID != nil && (subnet == nil || strings.EqualFold(str(s.Name), "aks-subnet")) {
				subnet = s
			}
		}
	}
	return vnet, subnet
}

// NIC is one node NIC, named by the scale set's ipConfigurations on a subnet.
type NIC struct {
	Name          string
	ResourceGroup string
	Pool          string
	SubnetID      string
}

// NodeNICs is one NIC per pool: the scale-set NIC named in its subnet's
// ipConfigurations (/virtualMachineScaleSets/aks-POOL-N-vmss/virtualMachines/I/networkInterfaces/NIC/ipConfigurations/C).
func (m *Model) NodeNICs() []NIC {
	var out []NIC
	for _, p := range m.Pools() {
		sn := m.Subnets[idKey(p.SubnetID)]
		if sn == nil || sn.Properties == nil {
			continue
		}
		for _, ipc := range sn.Properties.IPConfigurations {
			if ipc == nil || ipc.ID == nil {
				continue
			}
			id := *ipc.ID
			vmss := idSegment(id, "virtualMachineScaleSets")
			nic := idSegment(id, "networkInterfaces")
			if nic == "" {
				continue
			}
			if vmss != "" && !poolOfScaleSet(vmss, p.Name) {
				continue
			}
			if vmss == "" && !strings.HasPrefix(strings.ToLower(nic), "aks-"+strings.ToLower(p.Name)+"-") {
				continue
			}
			out = append(out, NIC{Name: nic, ResourceGroup: resourceGroupOf(id), Pool: p.Name, SubnetID: p.SubnetID})
			break
		}
	}
	return out
}

// poolOfScaleSet reports whether an AKS scale set (aks-POOL-12345678-vmss)
// belongs to pool.
func poolOfScaleSet(vmss, pool string) bool {
	v, p := strings.ToLower(vmss), strings.ToLower(pool)
	if !strings.HasPrefix(v, "aks-"+p+"-") {
		return false
	}
	rest := strings.TrimPrefix(v, "aks-"+p+"-")
	// the remainder is NUMBER-vmss; a pool named "app" must not take "app2"'s scale set
	return strings.HasSuffix(rest, "-vmss") && !strings.Contains(strings.TrimSuffix(rest, "-vmss"), "-")
}

// PoolOfNode reads an AKS node name (aks-POOL-12345678-vmss00000a) into its pool.
func PoolOfNode(node string) string {
	n := strings.ToLower(node)
	if !strings.HasPrefix(n, "aks-") {
		return ""
	}
	n = strings.TrimPrefix(n, "aks-")
	i := strings.Index(n, "-")
	if i <= 0 {
		return ""
	}
	return n[:i]
}

func (m *Model) vnetSubnet(id string) *armnetwork.Subnet {
	if m.VNet == nil || m.VNet.Properties == nil {
		return nil
	}
	for _, s := range m.VNet.Properties.Subnets {
		if s != nil && sameID(str(s.ID), id) {
			return s
		}
	}
	return nil
}

type loader struct {
	fsys fs.FS
	m    *Model
	mu   sync.Mutex // guards m while files are read in parallel
}

// runAll runs jobs on GOMAXPROCS workers and waits for them.
func runAll(jobs []func()) {
	n := runtime.GOMAXPROCS(0)
	ch := make(chan func())
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				j()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

var errMissing = errors.New("missing")

func (l *loader) read(name string) (any, error) {
	f, err := l.fsys.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errMissing
		}
		return nil, &InputError{File: name, Msg: fmt.Sprintf("cannot read: %v", errors.Unwrap(err))}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	if len(data) > maxFile {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("larger than %d MiB", maxFile>>20)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // PowerShell's redirect writes a BOM
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &InputError{File: name, Msg: "not JSON (" + units.Clip(err.Error(), 160) + "): want the Azure CLI's JSON output (-o json)"}
	}
	if !dec.More() {
		return v, nil
	}
	// Several values: ARM's list pages one after another (a paging
	// script's output); array takes them, a resource file does not.
	pages := pageStream{v}
	for dec.More() {
		var p any
		if err := dec.Decode(&p); err != nil {
			return nil, &InputError{File: name, Msg: fmt.Sprintf("not JSON after value %d (%s): want the Azure CLI's JSON output (-o json) or ARM's list pages", len(pages), units.Clip(err.Error(), 160))}
		}
		pages = append(pages, p)
	}
	return pages, nil
}

// pageStream is a file of several JSON values: ARM's list pages.
type pageStream []any

// pagesOf flattens ARM list pages ({"value": [...], "nextLink": ...}) into
// their items; ok is false when arr is not a list of pages.
func pagesOf(arr []any) ([]any, bool) {
	if len(arr) == 0 {
		return nil, false
	}
	var out []any
	for _, p := range arr {
		obj, ok := p.(map[string]any)
		if !ok {
			return nil, false
		}
		val, ok := obj["value"].([]any)
		if !ok || resourceType(obj) != "" {
			return nil, false
		}
		out = append(out, val...)
	}
	return out, true
}

// object reads one resource file of type want into out.
func (l *loader) object(name, want, cmd string, out any, required bool) (any, error) {
	v, err := l.read(name)
	if err == errMissing {
		if required {
			return nil, &InputError{File: name, Msg: "missing: want the output of `" + cmd + "`"}
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if _, many := v.(pageStream); many {
		return nil, &InputError{File: name, Msg: "more than one JSON value: want one command's output per file"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("a %s, not an object: want the output of `%s`", jsonKind(v), cmd)}
	}
	if got := resourceType(obj); got != "" && !strings.EqualFold(got, want) {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("holds a %s, not a %s: want the output of `%s`", got, want, cmd)}
	}
	if err := decodeInto(obj, out); err != nil {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("does not read as a %s (%s): want the output of `%s`", want, units.Clip(err.Error(), 160), cmd)}
	}
	return v, nil
}

// optional reads a file that may be missing: a missing or unreadable file is
// a warning, and the checks that needed it warn.
func (l *loader) optional(name, want, cmd string, out any) (bool, error) {
	_, err := l.object(name, want, cmd, out, false)
	return l.settle(name, cmd, err)
}

func (l *loader) settle(name, cmd string, err error) (bool, error) {
	l.mu.Lock()
	l.m.given[name], l.m.cmds[name] = err == nil, cmd
	l.mu.Unlock()
	switch {
	case err == nil:
		return true, nil
	case err == errMissing:
		l.mu.Lock()
		l.m.warn(name+" is missing; the checks that need it warn", name, cmd)
		l.mu.Unlock()
	default:
		l.mu.Lock()
		l.m.warn(err.Error()+"; the file is ignored", name, cmd)
		l.mu.Unlock()
	}
	return false, err
}

// list reads a list file: the CLI prints a bare array, ARM a {"value": [...]}
// page; either is taken.
func (l *loader) list(name, want, cmd string, t reflect.Type, out any) (bool, error) {
	arr, err := l.array(name, want, cmd)
	if err != nil {
		return l.settle(name, cmd, err)
	}
	arr = renest(arr, t).([]any)
	if err := remarshal(arr, out); err != nil {
		return l.settle(name, cmd, &InputError{File: name, Msg: fmt.Sprintf("does not read as a list of %s (%s): want the output of `%s`", want, units.Clip(err.Error(), 160), cmd)})
	}
	return l.settle(name, cmd, nil)
}

func (l *loader) array(name, want, cmd string) ([]any, error) {
	v, err := l.read(name)
	if err != nil {
		return nil, err
	}
	var arr []any
	switch x := v.(type) {
	case pageStream:
		items, ok := pagesOf(x)
		if !ok {
			return nil, &InputError{File: name, Msg: "more than one JSON value, not ARM's list pages ({\"value\": [...]} each): want the output of `" + cmd + "`"}
		}
		arr = items
	case []any:
		arr = x
		if items, ok := pagesOf(x); ok {
			arr = items // an array of ARM's list pages
		}
	case map[string]any:
		val, ok := x["value"].([]any)
		if !ok {
			if t := resourceType(x); t != "" {
				return nil, &InputError{File: name, Msg: fmt.Sprintf("holds one %s, not a list of %s: want the output of `%s`", t, want, cmd)}
			}
			return nil, &InputError{File: name, Msg: "an object without a value list: want the output of `" + cmd + "`"}
		}
		arr = val
	default:
		return nil, &InputError{File: name, Msg: fmt.Sprintf("a %s, not a list: want the output of `%s`", jsonKind(v), cmd)}
	}
	for i, e := range arr {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, &InputError{File: name, Msg: fmt.Sprintf("item %d is a %s, not an object: want the output of `%s`", i, jsonKind(e), cmd)}
		}
		if want == "" {
			continue
		}
		if got := resourceType(obj); got != "" && !strings.EqualFold(got, want) {
			return nil, &InputError{File: name, Msg: fmt.Sprintf("item %d is a %s, not a %s: want the output of `%s`", i, got, want, cmd)}
		}
	}
	return arr, nil
}

func (l *loader) roles(cmd string) bool {
	ras, ok := l.roleFile(FileRoles, cmd)
	l.m.Roles = append(l.m.Roles, ras...)
	return ok
}

// roleFile reads a role assignment list (`az role assignment list`), with
// the role names the CLI adds.
func (l *loader) roleFile(file, cmd string) ([]RoleAssignment, bool) {
	arr, err := l.array(file, typeRole, cmd)
	if err != nil {
		ok, _ := l.settle(file, cmd, err)
		return nil, ok
	}
	names := make([]string, len(arr))
	for i, e := range arr {
		obj := e.(map[string]any)
		names[i] = stringField(obj, "roleDefinitionName")
		if names[i] == "" {
			if p, ok := obj["properties"].(map[string]any); ok {
				names[i] = stringField(p, "roleDefinitionName")
			}
		}
	}
	var ras []*armauthorization.RoleAssignment
	arr = renest(arr, reflect.TypeOf(ras)).([]any)
	if err := remarshal(arr, &ras); err != nil {
		ok, _ := l.settle(file, cmd, &InputError{File: file, Msg: "does not read as role assignments (" + units.Clip(err.Error(), 160) + "): want the output of `" + cmd + "`"})
		return nil, ok
	}
	var out []RoleAssignment
	for i, ra := range ras {
		if ra == nil {
			continue
		}
		out = append(out, RoleAssignment{RoleAssignment: ra, DefinitionName: names[i]})
	}
	ok, _ := l.settle(file, cmd, nil)
	return out, ok
}

func (l *loader) routes(name, cmd string, out *armnetwork.EffectiveRouteListResult) (bool, error) {
	arr, err := l.array(name, "", cmd)
	if err != nil {
		return l.settle(name, cmd, err)
	}
	for i, e := range arr {
		obj := e.(map[string]any)
		if _, ok := obj["nextHopType"]; !ok {
			if _, nested := obj["properties"]; !nested {
				return l.settle(name, cmd, &InputError{File: name, Msg: fmt.Sprintf("item %d has no nextHopType: want the output of `%s`", i, cmd)})
			}
		}
		// effective routes are not ARM resources; a pasted properties wrapper is unwrapped
		if p, ok := obj["properties"].(map[string]any); ok {
			arr[i] = p
		}
	}
	arr = renest(arr, reflect.TypeOf(out.Value)).([]any)
	if err := remarshal(arr, &out.Value); err != nil {
		return l.settle(name, cmd, &InputError{File: name, Msg: "does not read as effective routes (" + units.Clip(err.Error(), 160) + "): want the output of `" + cmd + "`"})
	}
	return l.settle(name, cmd, nil)
}

// decodeInto renests obj for out's type and unmarshals it with the SDK's
// own UnmarshalJSON.
func decodeInto(obj map[string]any, out any) error {
	t := reflect.TypeOf(out)
	v := renest(obj, t)
	return remarshal(v, out)
}

func remarshal(v, out any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// resourceType is the ARM type of a decoded resource: its "type" field, else
// what its id names.
func resourceType(obj map[string]any) string {
	if t := stringField(obj, "type"); strings.Contains(t, "/") {
		return t
	}
	if id := stringField(obj, "id"); id != "" {
		return typeOfID(id)
	}
	return ""
}

func stringField(obj map[string]any, k string) string {
	s, _ := obj[k].(string)
	return s
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "JSON object"
	case []any:
		return "JSON array"
	case string:
		return "JSON string"
	case json.Number, float64:
		return "JSON number"
	case bool:
		return "JSON boolean"
	case nil:
		return "JSON null"
	}
	return "JSON value"
}

// fellBack rewords the warning about a missing file whose content the VNet
// file also holds.
func (m *Model) fellBack(file string) {
	for i := range m.Warnings {
		if m.Warnings[i].File == file {
			m.Warnings[i].Message = file + " is unusable; read from " + FileVNet + " instead (a subnet read there has no ipConfigurations, so its node NIC is unknown)"
			if file == FilePeerings {
				m.Warnings[i].Message = file + " is unusable; the peerings were read from " + FileVNet + " instead"
			}
		}
	}
}
