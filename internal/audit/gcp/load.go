package gcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	artifactregistry "google.golang.org/api/artifactregistry/v1"
	cloudresourcemanager "google.golang.org/api/cloudresourcemanager/v1"
	compute "google.golang.org/api/compute/v1"
	dns "google.golang.org/api/dns/v1"
	secretmanager "google.golang.org/api/secretmanager/v1"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// maxFile bounds one input file: gcloud's JSON for the largest network is
// a few MiB; anything bigger is not what the contract names.
const maxFile = 256 << 20

// Load reads the contract's files from fsys (a --from folder, or the files
// collect wrote). The cluster file is required; every other missing file is
// a warning naming the command that writes it, and the checks that needed
// it warn. A file that is not the JSON gcloud prints is an error naming
// the file and what was expected.
func Load(fsys fs.FS) (*Model, error) {
	m := &Model{Subnets: map[string]*compute.Subnetwork{}, Records: map[string][]*dns.ResourceRecordSet{}, RepoPolicies: map[string]*artifactregistry.Policy{},
		NodeProjects: map[string]*cloudresourcemanager.Project{}, Repos: map[string]*artifactregistry.Repository{},
		SecretPolicies: map[string]*secretmanager.Policy{}}
	if err := readObject(fsys, FileCluster, "gcloud container clusters describe CLUSTER --location L --format=json", &m.Cluster); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: missing: the audit starts from the cluster (gcloud container clusters describe CLUSTER --location L --format=json)", FileCluster)
		}
		return nil, err
	}
	if m.Cluster == nil || (m.Cluster.Name == "" && m.Cluster.SelfLink == "") {
		return nil, fmt.Errorf("%s: no cluster name or selfLink: want the output of gcloud container clusters describe CLUSTER --location L --format=json", FileCluster)
	}
	if err := m.loadLists(fsys); err != nil {
		return nil, err
	}
	if err := m.loadNamed(fsys); err != nil {
		return nil, err
	}
	m.warnUnknown()
	return m, nil
}

// missing warns that file is missing and what cannot be known without it.
func (m *Model) missing(file, what, cmd string) {
	m.Warnings = append(m.Warnings, report.AuditWarning{Message: fmt.Sprintf("%s is missing: %s", file, what), File: file, Command: cmd})
}

// loadLists reads the files of fixed names: the nodes, the network's
// lists, DNS, the registry project's policy and the perimeters.
func (m *Model) loadLists(fsys fs.FS) error {
	proj, netProj, net := m.ClusterProject(), m.NetworkProject(), m.NetworkName()
	warn := m.missing
	var err error
	if m.InstancesKnown, err = readList(fsys, FileInstances, cmdInstances(proj, m.Cluster.Name), &m.Instances); err != nil {
		return err
	} else if !m.InstancesKnown {
		warn(FileInstances, "the nodes' subnets, tags, service accounts and scopes come from the node pools' configuration instead", cmdInstances(proj, m.Cluster.Name))
	}
	if err := readObject(fsys, FileNetwork, cmdNetwork(netProj, net), &m.Network); errors.Is(err, fs.ErrNotExist) {
		warn(FileNetwork, "the network is known by the cluster's name for it only", cmdNetwork(netProj, net))
	} else if err != nil {
		return err
	}
	if m.RoutesKnown, err = readList(fsys, FileRoutes, cmdRoutes(netProj, net), &m.Routes); err != nil {
		return err
	} else if !m.RoutesKnown {
		warn(FileRoutes, "the route check cannot decide", cmdRoutes(netProj, net))
	}
	if m.FirewallsKnown, err = readList(fsys, FileFirewalls, cmdFirewalls(netProj, net), &m.Firewalls); err != nil {
		return err
	} else if !m.FirewallsKnown {
		warn(FileFirewalls, "the egress firewall check cannot decide", cmdFirewalls(netProj, net))
	}
	if m.RoutersKnown, err = readList(fsys, FileRouters, cmdRouters(netProj, net), &m.Routers); err != nil {
		return err
	} else if !m.RoutersKnown {
		warn(FileRouters, "Cloud NAT coverage cannot be decided", cmdRouters(netProj, net))
	}
	if m.ZonesKnown, err = readList(fsys, FileZones, cmdZones(netProj), &m.Zones); err != nil {
		return err
	} else if !m.ZonesKnown {
		warn(FileZones, "the private zones bound to the network are unknown", cmdZones(netProj))
	}
	if m.PolicyKnown, err = readList(fsys, FileDNSPolicies, cmdDNSPolicies(netProj), &m.Policies); err != nil {
		return err
	} else if !m.PolicyKnown {
		warn(FileDNSPolicies, "a server policy with alternative name servers cannot be seen", cmdDNSPolicies(netProj))
	}
	if err := readObject(fsys, FileProjectPolicy, "gcloud projects get-iam-policy REGISTRY_PROJECT --format=json", &m.ProjectPolicy); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := readObject(fsys, FileProject, "gcloud projects describe REGISTRY_PROJECT --format=json", &m.Project); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := readObject(fsys, FileVPCSCConfig, cmdVPCSCConfig("L", "REGISTRY_PROJECT"), &m.VPCSC); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if m.PerimetersKnown, err = readList(fsys, FilePerimeters, cmdPerimeters(""), &m.Perimeters); err != nil {
		return err
	} else if !m.PerimetersKnown {
		warn(FilePerimeters, "VPC Service Controls perimeters cannot be decided", cmdPerimeters(""))
	}
	return nil
}

// loadNamed reads the files named after their object: node subnets, a
// zone's records, repositories and their policies, secrets' policies,
// projects.
func (m *Model) loadNamed(fsys fs.FS) error {
	netProj := m.NetworkProject()
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fmt.Errorf("reading the folder: %v", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, fileSuffix) {
			continue
		}
		base := strings.TrimSuffix(name, fileSuffix)
		switch {
		case strings.HasPrefix(name, filePrefSubnet):
			var s *compute.Subnetwork
			if err := readObject(fsys, name, cmdSubnet(netProj, "REGION", strings.TrimPrefix(base, filePrefSubnet)), &s); err != nil {
				return err
			}
			if s == nil || s.SelfLink == "" {
				return fmt.Errorf("%s: no selfLink: want the output of gcloud compute networks subnets describe NAME --region R --format=json", name)
			}
			m.Subnets[strings.ToLower(resPath(s.SelfLink))] = s
		case strings.HasPrefix(name, filePrefRecords):
			zone := strings.TrimPrefix(base, filePrefRecords)
			var rs []*dns.ResourceRecordSet
			if _, err := readList(fsys, name, cmdRecords(netProj, zone), &rs); err != nil {
				return err
			}
			m.Records[zone] = rs
		case strings.HasPrefix(name, filePrefRepoPolicy):
			var p *artifactregistry.Policy
			if err := readObject(fsys, name, cmdRepoPolicy(strings.TrimPrefix(base, filePrefRepoPolicy), "L", "REGISTRY_PROJECT"), &p); err != nil {
				return err
			}
			m.RepoPolicies[strings.TrimPrefix(base, filePrefRepoPolicy)] = p
		case strings.HasPrefix(name, filePrefRepo):
			repo := strings.TrimPrefix(base, filePrefRepo)
			var r *artifactregistry.Repository
			if err := readObject(fsys, name, cmdRepo(repo, "L", "REGISTRY_PROJECT"), &r); err != nil {
				return err
			}
			if r == nil || r.Name == "" {
				return fmt.Errorf("%s: no name: want the output of %s", name, cmdRepo(repo, "L", "REGISTRY_PROJECT"))
			}
			m.Repos[repo] = r
		case strings.HasPrefix(name, filePrefSecretPol):
			secret := strings.TrimPrefix(base, filePrefSecretPol)
			var p *secretmanager.Policy
			if err := readObject(fsys, name, cmdSecretPolicy(secret, "SECRET_PROJECT"), &p); err != nil {
				return err
			}
			m.SecretPolicies[secret] = p
		case strings.HasPrefix(name, filePrefProject):
			id := strings.TrimPrefix(base, filePrefProject)
			var p *cloudresourcemanager.Project
			if err := readObject(fsys, name, cmdProject(id), &p); err != nil {
				return err
			}
			if p == nil || p.ProjectId == "" || p.ProjectNumber == 0 {
				return fmt.Errorf("%s: no projectId or projectNumber: want the output of %s", name, cmdProject(id))
			}
			m.NodeProjects[id] = p
		}
	}
	return nil
}

// warnUnknown names the bound zones whose records and the node subnets
// that were not given.
func (m *Model) warnUnknown() {
	netProj, warn := m.NetworkProject(), m.missing
	for _, z := range m.boundZones() {
		if _, ok := m.Records[z.Name]; !ok && z.ForwardingConfig == nil && z.PeeringConfig == nil {
			warn(FileRecords(z.Name), fmt.Sprintf("the records of zone %s (%s), bound to the network, are unknown", z.Name, z.DnsName), cmdRecords(netProj, z.Name))
		}
	}
	for _, s := range m.NodeSubnetPaths() {
		if m.subnet(s) == nil {
			warn(FileSubnet(lastSeg(s)), "the node subnet "+lastSeg(s)+" is not described: its checks cannot decide", cmdSubnet(segment(s, "projects"), segment(s, "regions"), lastSeg(s)))
		}
	}
}

func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a gcloud --format=json output", name, maxFile>>20)
	}
	if body, err := unwrapRecording(data); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	} else if body != nil {
		return body, nil
	}
	return data, nil
}

// readObject decodes one JSON object (a gcloud describe).
func readObject[T any](fsys fs.FS, name, cmd string, into *T) error {
	data, err := readFile(fsys, name)
	if err != nil {
		return err
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("%s: not a JSON object: want the output of %s", name, cmd)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %s: want the output of %s", name, units.Clip(err.Error(), 200), cmd)
	}
	return nil
}

// readList decodes one list (a gcloud list, or the REST API's list pages);
// false when the file is absent. The shapes read (pages.go): gcloud's JSON
// array; one page of the REST API ({"items": [...]} for Compute,
// {"managedZones": [...]}, {"rrsets": [...]}, {"policies": [...]} for Cloud
// DNS, {"servicePerimeters": [...]} for Access Context Manager); Compute's
// aggregated list ({"items": {"zones/Z": {"instances": [...]}}}); several
// pages, one after another or in an array. Anything else is a one-line
// error naming what the file holds.
func readList[T any](fsys fs.FS, name, cmd string, into *[]T) (bool, error) {
	data, err := readFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	items, err := listItems(name, data)
	if err != nil {
		return false, fmt.Errorf("%s: %s: want the output of %s (a JSON array) or the API's list pages", name, err, cmd)
	}
	for _, raw := range items {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return false, fmt.Errorf("%s: %s: want the output of %s", name, units.Clip(err.Error(), 200), cmd)
		}
		*into = append(*into, v)
	}
	return true, nil
}
