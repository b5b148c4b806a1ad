package azure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/authorization/armauthorization/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// LiveOptions name the cluster to collect and how to reach ARM.
type LiveOptions struct {
	Subscription  string
	ResourceGroup string
	Cluster       string
	Registry      string                 // name or login server; found from the kubelet identity's role assignments when empty
	Credential    azcore.TokenCredential // nil: DefaultAzureCredential (env, workload identity, managed identity, az login)
	// ClientOptions reach another cloud or, in tests, a loopback ARM server.
	ClientOptions *arm.ClientOptions
	// Calls counts the ARM requests made (nil: not counted).
	Calls *atomic.Int64
	// Image is the image the audit is for: the artifact cache rule that
	// serves it, when one does, is read too.
	Image string
}

type countPolicy struct{ n *atomic.Int64 }

func (p countPolicy) Do(req *policy.Request) (*http.Response, error) {
	p.n.Add(1)
	return req.Next()
}

// collector holds the SDK clients, one factory set per subscription (the
// zone or the registry may sit in another subscription than the cluster).
type collector struct {
	o        LiveOptions
	opts     *arm.ClientOptions
	files    audit.Files
	warnings []report.AuditWarning
	cs       map[string]*armcontainerservice.ClientFactory
	net      map[string]*armnetwork.ClientFactory
	dns      map[string]*armprivatedns.ClientFactory
	acr      map[string]*armcontainerregistry.ClientFactory
	auth     map[string]*armauthorization.ClientFactory
}

// Collect reads the cluster's pull path from ARM with the SDK's clients
// (pagers for every list) and returns the contract's files in the CLI's
// shape. API calls grow with pools, subnets, route tables and NSGs, never
// with routes, rules or zone records: records are fetched by name.
func Collect(ctx context.Context, o LiveOptions) (*audit.Collection, error) {
	if o.Credential == nil {
		dc, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("azure credential: %w", err)
		}
		o.Credential = dc
	}
	opts := &arm.ClientOptions{}
	if o.ClientOptions != nil {
		c := *o.ClientOptions
		opts = &c
	}
	if o.Calls != nil {
		opts.PerRetryPolicies = append(append([]policy.Policy(nil), opts.PerRetryPolicies...), countPolicy{o.Calls})
	}
	c := &collector{o: o, opts: opts, files: audit.Files{},
		cs: map[string]*armcontainerservice.ClientFactory{}, net: map[string]*armnetwork.ClientFactory{},
		dns: map[string]*armprivatedns.ClientFactory{}, acr: map[string]*armcontainerregistry.ClientFactory{},
		auth: map[string]*armauthorization.ClientFactory{}}
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	return &audit.Collection{Files: c.files, Warnings: c.warnings}, nil
}

func (c *collector) warn(msg, file, cmd string) {
	c.warnings = append(c.warnings, report.AuditWarning{Message: msg, File: file, Command: cmd})
}

func (c *collector) run(ctx context.Context) error {
	m, subnets, listed, err := c.cluster(ctx)
	if err != nil {
		return err
	}
	if len(subnets) > 0 {
		if err := c.network(ctx, subnets, listed); err != nil {
			return err
		}
	}
	reg, err := c.registryFile(ctx, m)
	if err != nil {
		return err
	}
	if err := c.privateEndpoints(ctx, reg); err != nil {
		return err
	}
	// Private DNS: zones, the ACR zone's links, and its A records for
	// the registry's hosts (fetched by name).
	if err := c.privateDNS(ctx, c.o.Subscription); err != nil {
		return err
	}
	// Role assignments of the kubelet identity at the registry's scope and above.
	c.roles(ctx, m.KubeletObjectID(), str(reg.ID))
	// The artifact cache rule that serves the image, when one does.
	if err := c.cache(ctx, reg); err != nil {
		return err
	}
	// Effective routes of one node NIC per pool.
	loaded, err := Load(c.files.FS())
	if err != nil {
		return err
	}
	for _, nic := range loaded.NodeNICs() {
		c.effectiveRoutes(ctx, nic)
	}
	return nil
}

// cluster collects the managed cluster and finds its node subnets: the
// pools' own, or (listed) an AKS-managed VNet's from the node resource
// group's listing.
func (c *collector) cluster(ctx context.Context) (m *Model, subnets []string, listed bool, err error) {
	csf, err := c.csFactory(c.o.Subscription)
	if err != nil {
		return nil, nil, false, err
	}
	mc, err := csf.NewManagedClustersClient().Get(ctx, c.o.ResourceGroup, c.o.Cluster, nil)
	if err != nil {
		return nil, nil, false, deniedOr(err, "az aks show -g "+c.o.ResourceGroup+" -n "+c.o.Cluster, "Microsoft.ContainerService/managedClusters/read", "")
	}
	if err := c.put(FileAKS, mc.ManagedCluster); err != nil {
		return nil, nil, false, err
	}
	m = &Model{Cluster: &mc.ManagedCluster}
	subnets = m.NodeSubnets()
	if len(subnets) == 0 {
		if subnets, err = c.managedVNet(ctx, m); err != nil {
			return nil, nil, false, err
		}
		listed = len(subnets) > 0
	}
	return m, subnets, listed, nil
}

// network collects the VNet (unless the listing held it), each node
// subnet with its route table and NSG, and the cluster side's peerings.
func (c *collector) network(ctx context.Context, subnets []string, listed bool) error {
	vnetID := parentID(subnets[0])
	nf, err := c.netFactory(subscriptionOf(vnetID))
	if err != nil {
		return err
	}
	if !listed {
		if v, err := nf.NewVirtualNetworksClient().Get(ctx, resourceGroupOf(vnetID), lastName(vnetID), nil); err == nil {
			if err := c.put(FileVNet, v.VirtualNetwork); err != nil {
				return err
			}
		} else {
			c.warn("az network vnet show: "+armError(err), FileVNet, cmdVNet(resourceGroupOf(vnetID), lastName(vnetID)))
		}
	}
	rts, nsgs := map[string]bool{}, map[string]bool{}
	for _, id := range subnets {
		if err := c.subnet(ctx, id, rts, nsgs); err != nil {
			return err
		}
	}
	return c.peerings(ctx, nf, vnetID)
}

// subnet collects one node subnet, and its route table and NSG the
// first time one is seen.
func (c *collector) subnet(ctx context.Context, id string, rts, nsgs map[string]bool) error {
	nf, err := c.netFactory(subscriptionOf(id))
	if err != nil {
		return err
	}
	name := lastName(id)
	s, err := nf.NewSubnetsClient().Get(ctx, resourceGroupOf(id), idSegment(id, "virtualNetworks"), name, nil)
	if err != nil {
		c.warn("az network vnet subnet show: "+armError(err), FileSubnet(name), cmdSubnet(resourceGroupOf(id), idSegment(id, "virtualNetworks"), name))
		return nil
	}
	if err := c.put(FileSubnet(name), s.Subnet); err != nil {
		return err
	}
	p := s.Properties
	if p == nil {
		return nil
	}
	if p.RouteTable != nil && p.RouteTable.ID != nil && !rts[idKey(*p.RouteTable.ID)] {
		rts[idKey(*p.RouteTable.ID)] = true
		c.routeTable(ctx, *p.RouteTable.ID)
	}
	if p.NetworkSecurityGroup != nil && p.NetworkSecurityGroup.ID != nil && !nsgs[idKey(*p.NetworkSecurityGroup.ID)] {
		nsgs[idKey(*p.NetworkSecurityGroup.ID)] = true
		c.nsg(ctx, *p.NetworkSecurityGroup.ID)
	}
	return nil
}

// peerings collects the cluster side's VNet peerings, every page; a
// refused page leaves the file out with a warning.
func (c *collector) peerings(ctx context.Context, nf *armnetwork.ClientFactory, vnetID string) error {
	var peerings []*armnetwork.VirtualNetworkPeering
	pager := nf.NewVirtualNetworkPeeringsClient().NewListPager(resourceGroupOf(vnetID), lastName(vnetID), nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			c.warn("az network vnet peering list: "+armError(err), FilePeerings, cmdPeerings(resourceGroupOf(vnetID), lastName(vnetID)))
			return nil
		}
		peerings = append(peerings, page.Value...)
	}
	return c.put(FilePeerings, peerings)
}

// registryFile collects the registry and writes it as the CLI shows it,
// with the two fields the CLI adds.
func (c *collector) registryFile(ctx context.Context, m *Model) (armcontainerregistry.Registry, error) {
	reg, extra, err := c.registry(ctx, m)
	if err != nil {
		return reg, err
	}
	x, err := toCLI(reg)
	if err != nil {
		return reg, fmt.Errorf("%s: %v", FileACR, err)
	}
	if obj, ok := x.(map[string]any); ok {
		if extra.Mode != "" {
			obj["roleAssignmentMode"] = extra.Mode
		}
		if extra.Protocol != "" {
			obj["endpointProtocol"] = extra.Protocol
		}
	}
	if c.files[FileACR], err = encodeCLI(x); err != nil {
		return reg, fmt.Errorf("%s: %v", FileACR, err)
	}
	return reg, nil
}

// privateEndpoints collects the registry's private endpoints.
func (c *collector) privateEndpoints(ctx context.Context, reg armcontainerregistry.Registry) error {
	if reg.Properties == nil {
		return nil
	}
	for _, pc := range reg.Properties.PrivateEndpointConnections {
		if pc == nil || pc.Properties == nil || pc.Properties.PrivateEndpoint == nil || pc.Properties.PrivateEndpoint.ID == nil {
			continue
		}
		id := *pc.Properties.PrivateEndpoint.ID
		nf, err := c.netFactory(subscriptionOf(id))
		if err != nil {
			return err
		}
		pe, err := nf.NewPrivateEndpointsClient().Get(ctx, resourceGroupOf(id), lastName(id), nil)
		if err != nil {
			c.warn("az network private-endpoint show: "+armError(err), FilePE(lastName(id)), cmdPE(resourceGroupOf(id), lastName(id)))
			continue
		}
		if err := c.put(FilePE(lastName(id)), pe.PrivateEndpoint); err != nil {
			return err
		}
	}
	return nil
}

func (c *collector) routeTable(ctx context.Context, id string) {
	nf, err := c.netFactory(subscriptionOf(id))
	if err != nil {
		return
	}
	rt, err := nf.NewRouteTablesClient().Get(ctx, resourceGroupOf(id), lastName(id), nil)
	if err != nil {
		c.warn("az network route-table show: "+armError(err), FileRouteTable(lastName(id)), cmdRT(resourceGroupOf(id), lastName(id)))
		return
	}
	_ = c.put(FileRouteTable(lastName(id)), rt.RouteTable)
}

func (c *collector) nsg(ctx context.Context, id string) {
	nf, err := c.netFactory(subscriptionOf(id))
	if err != nil {
		return
	}
	g, err := nf.NewSecurityGroupsClient().Get(ctx, resourceGroupOf(id), lastName(id), nil)
	if err != nil {
		c.warn("az network nsg show: "+armError(err), FileNSG(lastName(id)), cmdNSG(resourceGroupOf(id), lastName(id)))
		return
	}
	_ = c.put(FileNSG(lastName(id)), g.SecurityGroup)
}

// registry finds the registry: by --registry among the subscription's
// registries, else the one the kubelet identity holds a role on, else the
// only one.
// registryExtra are the registry's fields this SDK version does not model.
type registryExtra struct{ Mode, Protocol string }

func (c *collector) registry(ctx context.Context, m *Model) (armcontainerregistry.Registry, registryExtra, error) {
	af, err := c.acrFactory(c.o.Subscription)
	if err != nil {
		return armcontainerregistry.Registry{}, registryExtra{}, err
	}
	// --registry NAME, or a login server (the image's): by name or by loginServer
	want, server := strings.ToLower(c.o.Registry), ""
	if strings.Contains(want, ".") {
		want, server = registryName(want), want
	}
	var all []*armcontainerregistry.Registry
	pager := af.NewRegistriesClient().NewListPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return armcontainerregistry.Registry{}, registryExtra{}, fmt.Errorf("az acr list: %s", armError(err))
		}
		all = append(all, page.Value...)
	}
	var pick *armcontainerregistry.Registry
	switch {
	case want != "":
		for _, r := range all {
			if r != nil && (strings.EqualFold(str(r.Name), want) || server != "" && r.Properties != nil && strings.EqualFold(str(r.Properties.LoginServer), server)) {
				pick = r
			}
		}
		if pick == nil {
			return armcontainerregistry.Registry{}, registryExtra{}, fmt.Errorf("registry %s: no such registry in subscription %s (want the name or login server of one of its %d registries: --registry NAME)", c.o.Registry, c.o.Subscription, len(all))
		}
	case len(all) == 1:
		pick = all[0]
	case len(all) == 0:
		return armcontainerregistry.Registry{}, registryExtra{}, fmt.Errorf("subscription %s has no container registry: name one with --registry", c.o.Subscription)
	default:
		scopes := c.kubeletScopes(ctx, m.KubeletObjectID())
		for _, r := range all {
			for _, s := range scopes {
				if r != nil && scopeCovers(str(r.ID), s) || r != nil && sameID(str(r.ID), s) {
					pick = r
				}
			}
		}
		if pick == nil {
			return armcontainerregistry.Registry{}, registryExtra{}, fmt.Errorf("subscription %s has %d registries and the kubelet identity holds a role on none of them: name one with --registry", c.o.Subscription, len(all))
		}
	}
	// the list's entries can be partial: get it, keeping the raw answer for
	// the fields this SDK version does not model (roleAssignmentMode)
	var resp *http.Response
	r, err := af.NewRegistriesClient().Get(runtime.WithCaptureResponse(ctx, &resp), resourceGroupOf(str(pick.ID)), str(pick.Name), nil)
	if err != nil {
		return armcontainerregistry.Registry{}, registryExtra{}, fmt.Errorf("az acr show -n %s: %s", str(pick.Name), armError(err))
	}
	mode, protocol := "", ""
	if resp != nil && resp.Body != nil {
		var body struct {
			Properties struct {
				RoleAssignmentMode string `json:"roleAssignmentMode"`
				EndpointProtocol   string `json:"endpointProtocol"`
			} `json:"properties"`
		}
		if data, err := io.ReadAll(io.LimitReader(resp.Body, maxFile)); err == nil && json.Unmarshal(data, &body) == nil {
			mode = body.Properties.RoleAssignmentMode
			protocol = body.Properties.EndpointProtocol
		}
	}
	return r.Registry, registryExtra{Mode: mode, Protocol: protocol}, nil
}

func (c *collector) kubeletScopes(ctx context.Context, obj string) []string {
	if obj == "" {
		return nil
	}
	f, err := c.authFactory(c.o.Subscription)
	if err != nil {
		return nil
	}
	var out []string
	pager := f.NewRoleAssignmentsClient().NewListForSubscriptionPager(&armauthorization.RoleAssignmentsClientListForSubscriptionOptions{Filter: to.Ptr(principalFilter(obj))})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return out
		}
		for _, ra := range page.Value {
			if ra != nil && ra.Properties != nil {
				out = append(out, str(ra.Properties.Scope))
			}
		}
	}
	return out
}

func (c *collector) privateDNS(ctx context.Context, sub string) error {
	df, err := c.dnsFactory(sub)
	if err != nil {
		return err
	}
	var zones []*armprivatedns.PrivateZone
	pager := df.NewPrivateZonesClient().NewListPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			c.warn("az network private-dns zone list: "+armError(err), FileZones, cmdZones())
			return nil
		}
		zones = append(zones, page.Value...)
	}
	if err := c.put(FileZones, zones); err != nil {
		return err
	}
	var zone *armprivatedns.PrivateZone
	for _, z := range zones {
		if z != nil && strings.EqualFold(str(z.Name), ACRZone) {
			zone = z
			break
		}
	}
	if zone == nil {
		return nil
	}
	zid := str(zone.ID)
	zf, err := c.dnsFactory(subscriptionOf(zid))
	if err != nil {
		return err
	}
	var links []*armprivatedns.VirtualNetworkLink
	lp := zf.NewVirtualNetworkLinksClient().NewListPager(resourceGroupOf(zid), ACRZone, nil)
	ok := true
	for lp.More() {
		page, err := lp.NextPage(ctx)
		if err != nil {
			c.warn("az network private-dns link vnet list: "+armError(err), FileLinks(ACRZone), cmdLinks(resourceGroupOf(zid), ACRZone))
			ok = false
			break
		}
		links = append(links, page.Value...)
	}
	if ok {
		if err := c.put(FileLinks(ACRZone), links); err != nil {
			return err
		}
	}
	// the records the pull needs, by name: the registry's hosts
	loaded, err := Load(c.files.FS())
	if err != nil {
		return err
	}
	var recs []*armprivatedns.RecordSet
	rc := zf.NewRecordSetsClient()
	seen := map[string]bool{}
	for _, h := range loaded.hosts() {
		if h.Record == "" || seen[h.Record] || h.Name == BlobWildcard {
			continue
		}
		seen[h.Record] = true
		r, err := rc.Get(ctx, resourceGroupOf(zid), ACRZone, armprivatedns.RecordTypeA, h.Record, nil)
		if err != nil {
			var re *azcore.ResponseError
			if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
				continue // a missing record is a finding, not an error
			}
			c.warn("az network private-dns record-set a show: "+armError(err), FileRecords(ACRZone), cmdRecords(resourceGroupOf(zid), ACRZone))
			return nil
		}
		recs = append(recs, &r.RecordSet)
	}
	return c.put(FileRecords(ACRZone), recs)
}

func (c *collector) roles(ctx context.Context, obj, regID string) {
	if regID == "" {
		return
	}
	f, err := c.authFactory(subscriptionOf(regID))
	if err != nil {
		return
	}
	var opts *armauthorization.RoleAssignmentsClientListForScopeOptions
	if obj != "" {
		opts = &armauthorization.RoleAssignmentsClientListForScopeOptions{Filter: to.Ptr(principalFilter(obj))}
	}
	var ras []*armauthorization.RoleAssignment
	pager := f.NewRoleAssignmentsClient().NewListForScopePager(regID, opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			c.warn("az role assignment list: "+armError(err), FileRoles, cmdRoles(regID))
			return
		}
		ras = append(ras, page.Value...)
	}
	if data, err := c.roleItems(ctx, f, ras); err == nil {
		c.files[FileRoles] = data
	}
}

// roleItems are role assignments as the CLI prints them: it adds
// roleDefinitionName; so does collect, one GET per distinct role.
func (c *collector) roleItems(ctx context.Context, f *armauthorization.ClientFactory, ras []*armauthorization.RoleAssignment) ([]byte, error) {
	names := map[string]string{}
	rd := f.NewRoleDefinitionsClient()
	var items []any
	for _, ra := range ras {
		if ra == nil || ra.Properties == nil {
			continue
		}
		did := str(ra.Properties.RoleDefinitionID)
		if _, done := names[did]; !done && did != "" {
			names[did] = ""
			if d, err := rd.GetByID(ctx, did, nil); err == nil && d.Properties != nil {
				names[did] = str(d.Properties.RoleName)
			}
		}
		v, err := toCLI(ra)
		if err != nil {
			continue
		}
		if obj, ok := v.(map[string]any); ok && names[did] != "" {
			obj["roleDefinitionName"] = names[did]
		}
		items = append(items, v)
	}
	if items == nil {
		items = []any{}
	}
	return encodeCLI(items)
}

func (c *collector) effectiveRoutes(ctx context.Context, nic NIC) {
	nf, err := c.netFactory(subscriptionOf(nic.SubnetID))
	if err != nil {
		return
	}
	poller, err := nf.NewInterfacesClient().BeginGetEffectiveRouteTable(ctx, nic.ResourceGroup, nic.Name, nil)
	if err == nil {
		var res armnetwork.InterfacesClientGetEffectiveRouteTableResponse
		res, err = poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: time.Second})
		if err == nil {
			_ = c.put(FileRoutes(nic.Name), res.EffectiveRouteListResult)
			return
		}
	}
	c.warn(fmt.Sprintf("az network nic show-effective-route-table for pool %s: %s; its routes are computed from the route table, the VNet and its peerings", nic.Pool, armError(err)), FileRoutes(nic.Name), cmdRoutes(nic.ResourceGroup, nic.Name))
}

// put writes one SDK value in the CLI's shape.
func (c *collector) put(name string, v any) error {
	x, err := toCLI(v)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	data, err := encodeCLI(x)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	c.files[name] = data
	return nil
}

// toCLI marshals an SDK value (ARM shape) and flattens it as the CLI prints it.
func toCLI(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	if x == nil {
		x = []any{}
	}
	return flatten(x, reflect.TypeOf(v)), nil
}

// encodeCLI is the CLI's JSON: 2-space indent, sorted keys, a final newline.
func encodeCLI(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// armError is an SDK error on one line: the status and ARM's error code.
func armError(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	}
	return units.Clip(err.Error(), 160)
}

func (c *collector) csFactory(sub string) (*armcontainerservice.ClientFactory, error) {
	if f, ok := c.cs[sub]; ok {
		return f, nil
	}
	f, err := armcontainerservice.NewClientFactory(sub, c.o.Credential, c.opts)
	c.cs[sub] = f
	return f, err
}

func (c *collector) netFactory(sub string) (*armnetwork.ClientFactory, error) {
	if f, ok := c.net[sub]; ok {
		return f, nil
	}
	f, err := armnetwork.NewClientFactory(sub, c.o.Credential, c.opts)
	c.net[sub] = f
	return f, err
}

func (c *collector) dnsFactory(sub string) (*armprivatedns.ClientFactory, error) {
	if f, ok := c.dns[sub]; ok {
		return f, nil
	}
	f, err := armprivatedns.NewClientFactory(sub, c.o.Credential, c.opts)
	c.dns[sub] = f
	return f, err
}

func (c *collector) acrFactory(sub string) (*armcontainerregistry.ClientFactory, error) {
	if f, ok := c.acr[sub]; ok {
		return f, nil
	}
	f, err := armcontainerregistry.NewClientFactory(sub, c.o.Credential, c.opts)
	c.acr[sub] = f
	return f, err
}

func (c *collector) authFactory(sub string) (*armauthorization.ClientFactory, error) {
	if f, ok := c.auth[sub]; ok {
		return f, nil
	}
	f, err := armauthorization.NewClientFactory(sub, c.o.Credential, c.opts)
	c.auth[sub] = f
	return f, err
}

// principalFilter is the $filter for one principal's assignments. The SDK
// appends $filter unencoded, so the spaces are encoded here.
func principalFilter(obj string) string {
	return strings.ReplaceAll(fmt.Sprintf("principalId eq '%s'", obj), " ", "%20")
}

// Files writes a model back as the contract's files in the CLI's shape (the
// benchmark's synthetic accounts; collect itself writes what ARM answered).
func (m *Model) Files() (audit.Files, error) {
	c := &collector{files: audit.Files{}}
	put := func(name string, v any) error { return c.put(name, v) }
	if err := put(FileAKS, m.Cluster); err != nil {
		return nil, err
	}
	if m.VNet != nil {
		if err := put(FileVNet, m.VNet); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedKeys(m.Subnets) {
		if err := put(FileSubnet(lastName(k)), m.Subnets[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedKeys(m.RouteTables) {
		if err := put(FileRouteTable(lastName(k)), m.RouteTables[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedKeys(m.NSGs) {
		if err := put(FileNSG(lastName(k)), m.NSGs[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedKeys(m.PrivateEndpoints) {
		if err := put(FilePE(lastName(k)), m.PrivateEndpoints[k]); err != nil {
			return nil, err
		}
	}
	lists := []struct {
		name  string
		known bool
		v     any
	}{{FilePeerings, m.PeeringsKnown, m.Peerings}, {FileZones, m.ZonesKnown, m.Zones}, {FileLinks(ACRZone), m.LinksKnown, m.Links}, {FileRecords(ACRZone), m.RecordsKnown, m.Records}}
	for _, l := range lists {
		if l.known {
			if err := put(l.name, l.v); err != nil {
				return nil, err
			}
		}
	}
	x, err := toCLI(m.Registry)
	if err != nil {
		return nil, err
	}
	if obj, ok := x.(map[string]any); ok {
		if m.RoleAssignmentMode != "" {
			obj["roleAssignmentMode"] = m.RoleAssignmentMode
		}
		if m.EndpointProtocol != "" {
			obj["endpointProtocol"] = m.EndpointProtocol
		}
	}
	if c.files[FileACR], err = encodeCLI(x); err != nil {
		return nil, err
	}
	if m.RolesKnown {
		var items []any
		for _, ra := range m.Roles {
			v, err := toCLI(ra.RoleAssignment)
			if err != nil {
				return nil, err
			}
			if obj, ok := v.(map[string]any); ok && ra.DefinitionName != "" {
				obj["roleDefinitionName"] = ra.DefinitionName
			}
			items = append(items, v)
		}
		if items == nil {
			items = []any{}
		}
		if c.files[FileRoles], err = encodeCLI(items); err != nil {
			return nil, err
		}
	}
	for _, nic := range m.NodeNICs() {
		if routes, ok := m.Routes[strings.ToLower(nic.Name)]; ok {
			if err := put(FileRoutes(nic.Name), armnetwork.EffectiveRouteListResult{Value: routes}); err != nil {
				return nil, err
			}
		}
	}
	return c.files, nil
}
