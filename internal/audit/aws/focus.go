package aws

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Focus is what a probe report says about where a pull failed: the node it
// ran on and the host that failed.
type Focus struct {
	Node    string // ip-10-0-3-17.ec2.internal, an instance id, or an address
	Host    string // the failing host
	Verdict string // the probe's code
	File    string
	// ImageBytes is what the probe downloaded (for the cost note).
	ImageBytes int64
}

// ReadProbeReport reads `pullpath probe -o json` output into a Focus.
func ReadProbeReport(path string) (*Focus, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--probe-report %s: %w", path, unwrapPathErr(err))
	}
	var pr report.ProbeReport
	if err := json.Unmarshal(data, &pr); err != nil {
		return nil, fmt.Errorf("--probe-report %s: not a probe report (want `pullpath probe -o json` output): %v", path, err)
	}
	if pr.Kind != "ProbeReport" {
		return nil, fmt.Errorf("--probe-report %s: kind %q, want ProbeReport (`pullpath probe -o json`)", path, pr.Kind)
	}
	f := &Focus{Node: pr.Node, Host: pr.Verdict.Endpoint, Verdict: string(pr.Verdict.Code), File: path}
	if pr.Transfer != nil {
		f.ImageBytes = pr.Transfer.Bytes
	}
	if f.Node == "" {
		return nil, fmt.Errorf("--probe-report %s: the report names no node (run the probe with --node NAME, or on the node)", path)
	}
	return f, nil
}

// applyFocus keeps the subnet of the probed node: an instance whose private
// DNS name, id or private address is the probe's node.
func applyFocus(m *Model, f *Focus, r *report.AuditReport) []*NodeSubnet {
	r.Target.FocusHost = f.Host
	r.Target.ProbeVerdict = f.Verdict
	node := strings.TrimSuffix(strings.ToLower(f.Node), ".")
	for _, ns := range m.NodeSubnets {
		for _, in := range ns.Instances {
			dns := strings.ToLower(str(in.PrivateDnsName))
			short, _, _ := strings.Cut(dns, ".")
			if node == dns || node == short || node == strings.ToLower(str(in.InstanceId)) || node == str(in.PrivateIpAddress) {
				r.Target.FocusSubnet = ns.ID
				return []*NodeSubnet{ns}
			}
		}
	}
	// An EKS node name carries its address: ip-10-0-3-17.
	if a, ok := addrFromNodeName(node); ok {
		for _, ns := range m.NodeSubnets {
			if ns.CIDR.IsValid() && ns.CIDR.Contains(a) {
				r.Target.FocusSubnet = ns.ID
				return []*NodeSubnet{ns}
			}
		}
	}
	r.Warnings = append(r.Warnings, report.AuditWarning{File: f.File,
		Message: fmt.Sprintf("the probed node %s is not among the cluster's instances or subnets: auditing every subnet", f.Node)})
	return m.NodeSubnets
}

func addrFromNodeName(n string) (netip.Addr, bool) {
	n, _, _ = strings.Cut(n, ".")
	if a, err := netip.ParseAddr(n); err == nil {
		return a, true
	}
	if strings.HasPrefix(n, "ip-") {
		if a, err := netip.ParseAddr(strings.ReplaceAll(strings.TrimPrefix(n, "ip-"), "-", ".")); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// focusHost orders the subnet's checks so those about the failing host come
// first, and tags every check with the host it is about.
func focusHost(m *Model, s *report.AuditSubnet, host string) {
	svc := ""
	switch verdict.DetectPlatform(host) {
	case verdict.PlatformS3:
		svc = SvcS3
	case verdict.PlatformECR:
		svc = SvcECRDKR
		if strings.HasPrefix(host, "api.ecr.") {
			svc = SvcECRAPI
		}
	}
	about := map[string][]string{
		SvcECRAPI: {CheckEndpointECRAPI, CheckPrivateDNS, CheckSGEndpoint, CheckInternet, CheckIdentity},
		SvcECRDKR: {CheckEndpointECRDKR, CheckPrivateDNS, CheckSGEndpoint, CheckEndpointPolicy, CheckInternet, CheckIdentity},
		SvcS3:     {CheckS3Route, CheckS3Policy, CheckInternet, CheckNACLNode},
	}[svc]
	var first, rest []report.CheckResult
	for _, c := range s.Checks {
		if contains(about, c.ID) {
			c.Host = m.Host(svc)
			first = append(first, c)
		} else {
			rest = append(rest, c)
		}
	}
	s.Checks = append(first, rest...)
}

// applyRegistry takes the registry's account from an ECR host
// (ACCOUNT.dkr.ecr.REGION.amazonaws.com[.cn]); a registry in another region
// is not reached through this VPC's interface endpoints, which the report
// says.
func applyRegistry(m *Model, host string, r *report.AuditReport) {
	h := strings.ToLower(host)
	if i := strings.IndexByte(h, '/'); i >= 0 {
		h = h[:i]
	}
	parts := strings.Split(h, ".")
	if len(parts) < 5 || parts[1] != "dkr" || parts[2] != "ecr" {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("%s is not an ECR registry (ACCOUNT.dkr.ecr.REGION.amazonaws.com): the audit checks the ECR and S3 path of the cluster's region", host)})
		return
	}
	m.RegistryAccount = parts[0]
	if parts[3] != m.Region {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("the registry is in %s, the cluster in %s: this VPC's interface endpoints serve only %s, so the pull goes out by the route tables (NAT or internet gateway)", parts[3], m.Region, m.Region)})
	}
}
