// Package synth grows a gcp audit fixture to a given size (node subnets
// and pools, firewall rules, routes, zone records) for the benchmark and
// the live path's call-count test. The growth keeps the healthy verdict:
// extra rules target other tags or lower priorities, extra routes cover
// private ranges, extra records are other names.
package synth

import (
	"fmt"
	"io/fs"

	compute "google.golang.org/api/compute/v1"
	dns "google.golang.org/api/dns/v1"

	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
)

// Size is how big the synthetic cluster is.
type Size struct {
	Subnets int // node subnets, one pool and two nodes each
	Rules   int // firewall rules
	Routes  int // routes
	Records int // record sets in the pkg.dev zone
}

// Cluster loads the fixture folder base (valid-healthy) and grows it to s.
func Cluster(base fs.FS, s Size) (*gcpaudit.Model, error) {
	m, err := gcpaudit.Load(base)
	if err != nil {
		return nil, err
	}
	if len(m.Cluster.NodePools) == 0 || len(m.Instances) == 0 || len(m.Subnets) == 0 {
		return nil, fmt.Errorf("synth: the base folder needs node pools, instances and subnets")
	}
	pool0, in0 := m.Cluster.NodePools[0], m.Instances[0]
	var sn0 *compute.Subnetwork
	for _, k := range sortedKeys(m.Subnets) {
		sn0 = m.Subnets[k]
		break
	}
	netURL, region := sn0.Network, sn0.Region
	proj := m.NetworkProject()
	m.Cluster.NodePools = nil
	m.Instances = nil
	m.Subnets = map[string]*compute.Subnetwork{}
	for i := 0; i < s.Subnets; i++ {
		name := fmt.Sprintf("nodes-%03d", i)
		sn := *sn0
		sn.Name = name
		sn.IpCidrRange = fmt.Sprintf("10.%d.%d.0/24", 100+i/256, i%256)
		sn.SelfLink = fmt.Sprintf("https://www.googleapis.com/compute/v1/projects/%s/regions/%s/subnetworks/%s", proj, lastSeg(region), name)
		m.Subnets["projects/"+proj+"/regions/"+lastSeg(region)+"/subnetworks/"+name] = &sn
		p := *pool0
		p.Name = fmt.Sprintf("pool-%03d", i)
		nc := *pool0.NetworkConfig
		nc.Subnetwork = fmt.Sprintf("projects/%s/regions/%s/subnetworks/%s", proj, lastSeg(region), name)
		p.NetworkConfig = &nc
		m.Cluster.NodePools = append(m.Cluster.NodePools, &p)
		for j := 0; j < 2; j++ {
			in := *in0
			in.Name = fmt.Sprintf("gke-prod-%s-%d", p.Name, j)
			in.Labels = map[string]string{"goog-k8s-cluster-name": m.Cluster.Name, "goog-k8s-node-pool-name": p.Name}
			nic := *in0.NetworkInterfaces[0]
			nic.Subnetwork = sn.SelfLink
			nic.NetworkIP = fmt.Sprintf("10.%d.%d.%d", 100+i/256, i%256, j+2)
			in.NetworkInterfaces = []*compute.NetworkInterface{&nic}
			m.Instances = append(m.Instances, &in)
		}
	}
	for i := len(m.Firewalls); i < s.Rules; i++ {
		m.Firewalls = append(m.Firewalls, &compute.Firewall{Name: fmt.Sprintf("app-rule-%04d", i), Network: netURL, Direction: []string{"INGRESS", "EGRESS"}[i%2],
			Priority: int64(100 + i%900), Allowed: []*compute.FirewallAllowed{{IPProtocol: "tcp", Ports: []string{fmt.Sprint(8000 + i%1000)}}},
			DestinationRanges: []string{fmt.Sprintf("10.%d.0.0/16", 200+i%50)}, SourceRanges: []string{"10.0.0.0/8"}, TargetTags: []string{fmt.Sprintf("app-%d", i)}})
	}
	for i := len(m.Routes); i < s.Routes; i++ {
		m.Routes = append(m.Routes, &compute.Route{Name: fmt.Sprintf("onprem-%04d", i), Network: netURL, DestRange: fmt.Sprintf("172.%d.%d.0/24", 16+i/256%16, i%256),
			Priority: 1000, NextHopIp: "10.255.0.2"})
	}
	for z, recs := range m.Records {
		if z != "pkg-dev" {
			continue
		}
		for i := len(recs); i < s.Records; i++ {
			recs = append(recs, &dns.ResourceRecordSet{Kind: "dns#resourceRecordSet", Name: fmt.Sprintf("host-%04d.apps.pkg.dev.", i), Type: "A", Ttl: 300, Rrdatas: []string{"199.36.153.8"}})
		}
		m.Records[z] = recs
	}
	m.InstancesKnown = true
	return m, nil
}

func lastSeg(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return s[i+1:]
		}
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
