package gcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	accesscontextmanager "google.golang.org/api/accesscontextmanager/v1"
	artifactregistry "google.golang.org/api/artifactregistry/v1"
	cloudresourcemanager "google.golang.org/api/cloudresourcemanager/v1"
	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"
	dns "google.golang.org/api/dns/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	secretmanager "google.golang.org/api/secretmanager/v1"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// LiveOptions name the cluster to collect and how to reach Google's APIs.
type LiveOptions struct {
	Project  string // the cluster's project
	Location string // the cluster's region or zone
	Cluster  string
	// Image is the image the pods pull: its registry's IAM policies and
	// project are collected. Empty: the cluster's region and project.
	Image string
	// Endpoint, when set, sends every API to this base URL (tests: a
	// loopback server speaking the REST JSON), each service under its own
	// prefix (/compute/v1/, /container/, /dns/, /artifactregistry/, /secretmanager/,
	// /cloudresourcemanager/, /accesscontextmanager/).
	Endpoint string
	// ClientOptions are added to every client (tests: a static token);
	// none means Application Default Credentials.
	ClientOptions []option.ClientOption
}

// pageSize is the most items one list call asks for (Compute's maximum):
// with it, calls grow by one per 500 routes or rules, not with each.
const pageSize = 500

type collector struct {
	o        LiveOptions
	files    audit.Files
	warnings []report.AuditWarning
	compute  *compute.Service
	dns      *dns.Service
}

func (c *collector) opts(prefix string) []option.ClientOption {
	out := append([]option.ClientOption{option.WithUserAgent("pullpath")}, c.o.ClientOptions...)
	if c.o.Endpoint != "" {
		out = append(out, option.WithEndpoint(strings.TrimSuffix(c.o.Endpoint, "/")+"/"+prefix))
	}
	return out
}

func (c *collector) warn(msg, file, cmd string) {
	c.warnings = append(c.warnings, report.AuditWarning{Message: msg, File: file, Command: cmd})
}

// Collect reads the cluster's pull path from Google's REST APIs with their
// own Go clients (every list paged) and returns the contract's files in
// gcloud's --format=json shape. API calls grow with node subnets, regions
// and private zones, not with routes, rules or zone records: records are
// fetched by name, lists in pages of 500. Clients are made here, only on
// the gcp path.
func Collect(ctx context.Context, o LiveOptions) (*audit.Collection, error) {
	c := &collector{o: o, files: audit.Files{}}
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	return &audit.Collection{Files: c.files, Warnings: c.warnings}, nil
}

func (c *collector) run(ctx context.Context) error {
	m, err := c.cluster(ctx)
	if err != nil {
		return err
	}
	if err := c.instances(ctx, m); err != nil {
		return err
	}
	regions, err := c.network(ctx, m)
	if err != nil {
		return err
	}
	if err := c.networkLists(ctx, m, regions); err != nil {
		return err
	}
	if err := c.dnsLists(ctx, m); err != nil {
		return err
	}
	t, _ := m.guessTarget()
	if c.o.Image != "" {
		if t, err = ParseImage(c.o.Image); err != nil {
			return err
		}
	}
	// The record sets the pull's names need, by name.
	if err := c.records(ctx, m, t); err != nil {
		return err
	}
	// The registry's IAM policies and project, and the perimeters.
	if err := c.registry(ctx, t); err != nil {
		return err
	}
	// The nodes' own projects (their numbers are how perimeters list them).
	return c.nodeProjects(ctx, m, t)
}

// cluster collects the cluster and opens the Compute service.
func (c *collector) cluster(ctx context.Context) (*Model, error) {
	o := c.o
	cs, err := container.NewService(ctx, c.opts("container/")...)
	if err != nil {
		return nil, fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
	}
	cl, err := cs.Projects.Locations.Clusters.Get(fmt.Sprintf("projects/%s/locations/%s/clusters/%s", o.Project, o.Location, o.Cluster)).Context(ctx).Do()
	if err != nil {
		return nil, callError(err, cmdCluster(o.Cluster, o.Location), "container.clusters.get")
	}
	if err := c.put(FileCluster, cl); err != nil {
		return nil, err
	}
	m := &Model{Cluster: cl, Subnets: map[string]*compute.Subnetwork{}, Records: map[string][]*dns.ResourceRecordSet{}}
	if c.compute, err = compute.NewService(ctx, c.opts("compute/v1/")...); err != nil {
		return nil, fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
	}
	return m, nil
}

// instances collects the nodes as they are: the cluster's labelled VMs.
func (c *collector) instances(ctx context.Context, m *Model) error {
	o := c.o
	var ins []*compute.Instance
	err := c.compute.Instances.AggregatedList(o.Project).Filter("labels.goog-k8s-cluster-name="+o.Cluster).MaxResults(pageSize).
		ReturnPartialSuccess(true).Pages(ctx, func(l *compute.InstanceAggregatedList) error {
		for _, scope := range sortedKeys(l.Items) {
			for _, in := range l.Items[scope].Instances {
				if in != nil && in.Labels[labelCluster] == o.Cluster {
					ins = append(ins, in)
				}
			}
		}
		return nil
	})
	if err != nil {
		c.warn("gcloud compute instances list: "+apiError(err), FileInstances, cmdInstances(o.Project, o.Cluster))
		return nil
	}
	m.Instances, m.InstancesKnown = ins, true
	return putList(c, FileInstances, ins)
}

// network collects the network and each node subnet (in the host project
// with Shared VPC); it returns the subnets' regions.
func (c *collector) network(ctx context.Context, m *Model) (map[string]bool, error) {
	netProj, net := m.NetworkProject(), m.NetworkName()
	if n, err := c.compute.Networks.Get(netProj, net).Context(ctx).Do(); err == nil {
		if err := c.put(FileNetwork, n); err != nil {
			return nil, err
		}
	} else {
		c.warn("gcloud compute networks describe: "+apiError(err), FileNetwork, cmdNetwork(netProj, net))
	}
	regions := map[string]bool{}
	for _, p := range m.NodeSubnetPaths() {
		proj, region, name := segment(p, "projects"), segment(p, "regions"), lastSeg(p)
		regions[region] = true
		s, err := c.compute.Subnetworks.Get(proj, region, name).Context(ctx).Do()
		if err != nil {
			c.warn("gcloud compute networks subnets describe: "+apiError(err), FileSubnet(name), cmdSubnet(proj, region, name))
			continue
		}
		if err := c.put(FileSubnet(name), s); err != nil {
			return nil, err
		}
	}
	return regions, nil
}

// networkLists collects the network's routes, firewall rules and the
// routers of the subnets' regions.
func (c *collector) networkLists(ctx context.Context, m *Model, regions map[string]bool) error {
	netProj, net := m.NetworkProject(), m.NetworkName()
	netFilter := fmt.Sprintf("network=%q", "https://www.googleapis.com/compute/v1/"+m.NetworkPath())
	var routes []*compute.Route
	if err := c.compute.Routes.List(netProj).Filter(netFilter).MaxResults(pageSize).Pages(ctx, func(l *compute.RouteList) error {
		for _, r := range l.Items {
			if r != nil && sameRes(r.Network, m.NetworkPath()) {
				routes = append(routes, r)
			}
		}
		return nil
	}); err != nil {
		c.warn("gcloud compute routes list: "+apiError(err), FileRoutes, cmdRoutes(netProj, net))
	} else if err := putList(c, FileRoutes, routes); err != nil {
		return err
	}
	var fws []*compute.Firewall
	if err := c.compute.Firewalls.List(netProj).Filter(netFilter).MaxResults(pageSize).Pages(ctx, func(l *compute.FirewallList) error {
		for _, f := range l.Items {
			if f != nil && sameRes(f.Network, m.NetworkPath()) {
				fws = append(fws, f)
			}
		}
		return nil
	}); err != nil {
		c.warn("gcloud compute firewall-rules list: "+apiError(err), FileFirewalls, cmdFirewalls(netProj, net))
	} else if err := putList(c, FileFirewalls, fws); err != nil {
		return err
	}
	var routers []*compute.Router
	for _, region := range sortedKeys(regions) {
		if err := c.compute.Routers.List(netProj, region).Filter(netFilter).MaxResults(pageSize).Pages(ctx, func(l *compute.RouterList) error {
			for _, r := range l.Items {
				if r != nil && sameRes(r.Network, m.NetworkPath()) {
					routers = append(routers, r)
				}
			}
			return nil
		}); err != nil {
			c.warn("gcloud compute routers list: "+apiError(err), FileRouters, cmdRouters(netProj, net))
			return nil
		}
	}
	return putList(c, FileRouters, routers)
}

// dnsLists collects Cloud DNS's zones and server policies of the
// network's project.
func (c *collector) dnsLists(ctx context.Context, m *Model) error {
	netProj := m.NetworkProject()
	var err error
	if c.dns, err = dns.NewService(ctx, c.opts("dns/")...); err != nil {
		return fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
	}
	var zones []*dns.ManagedZone
	if err := c.dns.ManagedZones.List(netProj).MaxResults(pageSize).Pages(ctx, func(l *dns.ManagedZonesListResponse) error {
		zones = append(zones, l.ManagedZones...)
		return nil
	}); err != nil {
		c.warn("gcloud dns managed-zones list: "+apiError(err), FileZones, cmdZones(netProj))
	} else {
		m.Zones, m.ZonesKnown = zones, true
		if err := putList(c, FileZones, zones); err != nil {
			return err
		}
	}
	var pols []*dns.Policy
	if err := c.dns.Policies.List(netProj).MaxResults(pageSize).Pages(ctx, func(l *dns.PoliciesListResponse) error {
		pols = append(pols, l.Policies...)
		return nil
	}); err != nil {
		c.warn("gcloud dns policies list: "+apiError(err), FileDNSPolicies, cmdDNSPolicies(netProj))
	} else if err := putList(c, FileDNSPolicies, pols); err != nil {
		return err
	}
	return nil
}

// nodeProjects describes the cluster's project and the network's host
// project when they are not the registry's (which registry() describes).
func (c *collector) nodeProjects(ctx context.Context, m *Model, t Target) error {
	var crm *cloudresourcemanager.Service
	for _, np := range m.nodeProjects() {
		if np == t.Project {
			continue
		}
		if crm == nil {
			var err error
			if crm, err = cloudresourcemanager.NewService(ctx, c.opts("cloudresourcemanager/")...); err != nil {
				return fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
			}
		}
		p, err := crm.Projects.Get(np).Context(ctx).Do()
		if err != nil {
			c.warn("gcloud projects describe: "+apiError(err), FileNodeProject(np), cmdProject(np))
			continue
		}
		if err := c.put(FileNodeProject(np), p); err != nil {
			return err
		}
	}
	return nil
}

// records fetches, for each host of the pull, the record sets Cloud DNS
// would look at in the bound zones: the name, the wildcards above it, and
// the same for each CNAME target.
//
// A second pass does the same as if the project's private zones for those
// names that are bound to other networks were bound to the nodes' (the
// audit's change may be binding one).
func (c *collector) records(ctx context.Context, m *Model, t Target) error {
	got := map[string]map[string]bool{} // zone -> names fetched
	var names []string
	for _, h := range t.hosts() {
		names = append(names, h.Name)
	}
	for _, zones := range [][]*dns.ManagedZone{m.boundZones(), m.asIfBound(names)} {
		c.recordsIn(ctx, m, t, zones, got)
	}
	for _, zone := range sortedKeys(m.Records) {
		rs := m.Records[zone]
		sort.SliceStable(rs, func(i, j int) bool {
			return rs[i].Name < rs[j].Name || rs[i].Name == rs[j].Name && rs[i].Type < rs[j].Type
		})
		if err := putList(c, FileRecords(zone), rs); err != nil {
			return err
		}
	}
	return nil
}

// recordsIn fetches, for each host, the record sets the zones would answer
// it from, following CNAMEs; got holds what was fetched already.
func (c *collector) recordsIn(ctx context.Context, m *Model, t Target, zones []*dns.ManagedZone, got map[string]map[string]bool) {
	for _, h := range t.hosts() {
		queue := []string{fqdn(h.Name)}
		for depth := 0; depth < 8 && len(queue) > 0; depth++ {
			name := queue[0]
			queue = queue[1:]
			z := zoneFor(zones, name)
			if z == nil || z.ForwardingConfig != nil || z.PeeringConfig != nil {
				continue
			}
			if got[z.Name] == nil {
				got[z.Name] = map[string]bool{}
				m.Records[z.Name] = []*dns.ResourceRecordSet{}
			}
			for _, q := range append(candidates(name, fqdn(z.DnsName)), vipNames(fqdn(z.DnsName))...) {
				if got[z.Name][q] {
					continue
				}
				got[z.Name][q] = true
				err := c.dns.ResourceRecordSets.List(m.NetworkProject(), z.Name).Name(q).MaxResults(pageSize).Pages(ctx, func(l *dns.ResourceRecordSetsListResponse) error {
					m.Records[z.Name] = append(m.Records[z.Name], l.Rrsets...)
					return nil
				})
				if err != nil {
					c.warn("gcloud dns record-sets list: "+apiError(err), FileRecords(z.Name), cmdRecords(m.NetworkProject(), z.Name))
					delete(m.Records, z.Name)
					break
				}
			}
			for _, r := range lookup(m.Records[z.Name], name, fqdn(z.DnsName)) {
				if r.Type == "CNAME" && len(r.Rrdatas) > 0 {
					queue = append(queue, fqdn(r.Rrdatas[0]))
				}
			}
		}
	}
}

// candidates are the names whose record sets answer name in a zone: the
// name itself and each *.PARENT up to the apex.
func candidates(name, apex string) []string {
	out := []string{name}
	for n := name; n != apex; {
		_, parent, ok := strings.Cut(n, ".")
		if !ok || parent == "" {
			break
		}
		out = append(out, "*."+parent)
		n = parent
	}
	return out
}

// vipNames are the zone's own names a repair would point a wildcard at:
// the apex (pkg.dev., gcr.io.) and, in a googleapis.com zone, the VIP
// names.
func vipNames(apex string) []string {
	out := []string{apex}
	if apex == "googleapis.com." {
		out = append(out, "private.googleapis.com.", "restricted.googleapis.com.")
	}
	return out
}

func (c *collector) registry(ctx context.Context, t Target) error {
	if t.Repo != "" {
		ar, err := artifactregistry.NewService(ctx, c.opts("artifactregistry/")...)
		if err != nil {
			return fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
		}
		if err := c.repository(ctx, ar, t); err != nil {
			return err
		}
		p, err := ar.Projects.Locations.Repositories.GetIamPolicy(fmt.Sprintf("projects/%s/locations/%s/repositories/%s", t.Project, t.Location, t.Repo)).Context(ctx).Do()
		switch {
		case err == nil:
			if err := c.put(FileRepoPolicy(t.Repo), p); err != nil {
				return err
			}
		case t.Kind == KindGCR && isStatus(err, http.StatusNotFound):
			// a gcr.io image still in Container Registry has no repository
		default:
			c.warn("gcloud artifacts repositories get-iam-policy: "+apiError(err), FileRepoPolicy(t.Repo), cmdRepoPolicy(t.Repo, t.Location, t.Project))
		}
	}
	crm, err := cloudresourcemanager.NewService(ctx, c.opts("cloudresourcemanager/")...)
	if err != nil {
		return fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
	}
	if p, err := crm.Projects.GetIamPolicy(t.Project, &cloudresourcemanager.GetIamPolicyRequest{}).Context(ctx).Do(); err == nil {
		if err := c.put(FileProjectPolicy, p); err != nil {
			return err
		}
	} else {
		c.warn("gcloud projects get-iam-policy: "+apiError(err), FileProjectPolicy, cmdProjectPolicy(t.Project))
	}
	proj, err := crm.Projects.Get(t.Project).Context(ctx).Do()
	if err != nil {
		c.warn("gcloud projects describe: "+apiError(err), FileProject, cmdProject(t.Project))
		return nil
	}
	if err := c.put(FileProject, proj); err != nil {
		return err
	}
	// 7. The perimeters of the organization's access policies (optional).
	org := ""
	if proj.Parent != nil && proj.Parent.Type == "organization" {
		org = proj.Parent.Id
	} else if anc, err := crm.Projects.GetAncestry(t.Project, &cloudresourcemanager.GetAncestryRequest{}).Context(ctx).Do(); err == nil {
		for _, a := range anc.Ancestor {
			if a != nil && a.ResourceId != nil && a.ResourceId.Type == "organization" {
				org = a.ResourceId.Id
			}
		}
	}
	if org == "" {
		c.warn("no organization above project "+t.Project+": no access policy to list perimeters from", FilePerimeters, cmdPerimeters(""))
		return nil
	}
	acm, err := accesscontextmanager.NewService(ctx, c.opts("accesscontextmanager/")...)
	if err != nil {
		return fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
	}
	var policies []string
	if err := acm.AccessPolicies.List().Parent("organizations/"+org).PageSize(100).Pages(ctx, func(l *accesscontextmanager.ListAccessPoliciesResponse) error {
		for _, p := range l.AccessPolicies {
			if p != nil {
				policies = append(policies, p.Name)
			}
		}
		return nil
	}); err != nil {
		c.warn("gcloud access-context-manager policies list: "+apiError(err), FilePerimeters, cmdPerimeters(""))
		return nil
	}
	perims := []*accesscontextmanager.ServicePerimeter{}
	for _, pol := range policies {
		if err := acm.AccessPolicies.ServicePerimeters.List(pol).PageSize(100).Pages(ctx, func(l *accesscontextmanager.ListServicePerimetersResponse) error {
			perims = append(perims, l.ServicePerimeters...)
			return nil
		}); err != nil {
			c.warn("gcloud access-context-manager perimeters list: "+apiError(err), FilePerimeters, cmdPerimeters(lastSeg(pol)))
			return nil
		}
	}
	return putList(c, FilePerimeters, perims)
}

// repository describes the audited repository; for a remote one, the
// location's VPC-SC config and the IAM policy of its credentials' secret
// (never the secret's value).
func (c *collector) repository(ctx context.Context, ar *artifactregistry.Service, t Target) error {
	name := fmt.Sprintf("projects/%s/locations/%s/repositories/%s", t.Project, t.Location, t.Repo)
	r, err := ar.Projects.Locations.Repositories.Get(name).Context(ctx).Do()
	switch {
	case err == nil:
		if err := c.put(FileRepo(t.Repo), r); err != nil {
			return err
		}
	case t.Kind == KindGCR && isStatus(err, http.StatusNotFound):
		return nil // a gcr.io image still in Container Registry has no repository
	default:
		c.warn("gcloud artifacts repositories describe: "+apiError(err), FileRepo(t.Repo), cmdRepo(t.Repo, t.Location, t.Project))
		return nil
	}
	if r.Mode != modeRemote {
		return nil
	}
	if v, err := ar.Projects.Locations.GetVpcscConfig(fmt.Sprintf("projects/%s/locations/%s/vpcscConfig", t.Project, t.Location)).Context(ctx).Do(); err == nil {
		if err := c.put(FileVPCSCConfig, v); err != nil {
			return err
		}
	} else {
		c.warn("gcloud artifacts vpcsc-config describe: "+apiError(err), FileVPCSCConfig, cmdVPCSCConfig(t.Location, t.Project))
	}
	m := &Model{Repos: map[string]*artifactregistry.Repository{t.Repo: r}, target: t}
	secret, sproj := m.upstreamSecret()
	if secret == "" {
		return nil
	}
	sm, err := secretmanager.NewService(ctx, c.opts("secretmanager/")...)
	if err != nil {
		return fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
	}
	p, err := sm.Projects.Secrets.GetIamPolicy("projects/" + sproj + "/secrets/" + secret).OptionsRequestedPolicyVersion(3).Context(ctx).Do()
	if err != nil {
		c.warn("gcloud secrets get-iam-policy: "+apiError(err), FileSecretPolicy(secret), cmdSecretPolicy(secret, sproj))
		return nil
	}
	return c.put(FileSecretPolicy(secret), p)
}

func isStatus(err error, code int) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == code
}

// apiError is a client error on one line: the status and Google's message.
func apiError(err error) string {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		msg := ge.Message
		if msg == "" {
			msg = http.StatusText(ge.Code)
		}
		return fmt.Sprintf("%d %s", ge.Code, units.Clip(msg, 200))
	}
	return units.Clip(err.Error(), 200)
}

// put writes one API value as gcloud prints it with --format=json.
func (c *collector) put(name string, v any) error {
	data, err := encodeGcloud(v)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	c.files[name] = data
	return nil
}

// putList writes a list; nil is [] as gcloud prints an empty list.
func putList[T any](c *collector, name string, items []T) error {
	if items == nil {
		items = []T{}
	}
	return c.put(name, items)
}

// encodeGcloud is gcloud's JSON printer: the resource as the API returned
// it, keys sorted, 2-space indent, a final newline; an empty list is [].
func encodeGcloud(v any) ([]byte, error) {
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
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
