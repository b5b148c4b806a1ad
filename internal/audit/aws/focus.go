package aws

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// placeNode finds a focus node among the cluster's instances (by private
// DNS name, its short form, instance id, the providerID's instance id or
// private address) and names its subnet; an EKS node name that is not an
// instance here still carries its address (ip-10-0-3-17), which places it
// by range.
func (m *Model) placeNode(n audit.Node) audit.Node {
	if n.Subnet != "" {
		return n
	}
	name := strings.TrimSuffix(strings.ToLower(n.Name), ".")
	instance := ""
	if p := nodeplace.ParseProviderID(n.ProviderID); p.Cloud == nodeplace.AWS {
		instance = p.Instance
	}
	for _, ns := range m.NodeSubnets {
		for _, in := range ns.Instances {
			dns := strings.ToLower(str(in.PrivateDnsName))
			short, _, _ := strings.Cut(dns, ".")
			id := strings.ToLower(str(in.InstanceId))
			ip := str(in.PrivateIpAddress)
			if name != "" && (name == dns || name == short || name == id || name == ip) || instance != "" && strings.EqualFold(instance, id) {
				n.Subnet = ns.ID
				return n
			}
			for _, a := range n.Addresses {
				if a.String() == ip {
					n.Subnet = ns.ID
					return n
				}
			}
		}
	}
	if a, ok := addrFromNodeName(name); ok {
		n.Addresses = append(append([]netip.Addr(nil), n.Addresses...), a)
	}
	return n
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
		if strings.HasPrefix(host, "api.ecr.") || strings.HasPrefix(host, "ecr.") && strings.HasSuffix(host, ".api.aws") {
			svc = SvcECRAPI
		}
	}
	about := map[string][]string{
		SvcECRAPI: {CheckEndpointECRAPI, CheckPrivateDNS, CheckSGEndpoint, CheckInternet, CheckDNS64, CheckIdentity},
		SvcECRDKR: {CheckEndpointECRDKR, CheckPrivateDNS, CheckSGEndpoint, CheckEndpointPolicy, CheckInternet, CheckIPv6Route, CheckDNS64, CheckIdentity},
		SvcS3:     {CheckS3Route, CheckS3Policy, CheckInternet, CheckDNS64, CheckNACLNode},
	}[svc]
	var first, rest []report.CheckResult
	for _, c := range s.Checks {
		if slices.Contains(about, c.ID) {
			c.Host = m.Host(svc)
			first = append(first, c)
		} else {
			rest = append(rest, c)
		}
	}
	s.Checks = append(first, rest...)
}

// applyRegistry takes the registry's account from an ECR host
// (ACCOUNT.dkr.ecr.REGION.amazonaws.com[.cn], or the dual-stack
// ACCOUNT.dkr-ecr.REGION.on.aws); a registry in another region is not
// reached through this VPC's interface endpoints, which the report says.
func applyRegistry(m *Model, host string, r *report.AuditReport) {
	h := strings.ToLower(host)
	if i := strings.IndexByte(h, '/'); i >= 0 {
		h = h[:i]
	}
	parts := strings.Split(h, ".")
	dual := verdict.ECRDualStackName(h) && len(parts) >= 5
	if !dual && (len(parts) < 5 || parts[1] != "dkr" || parts[2] != "ecr") {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("%s is not an ECR registry (ACCOUNT.dkr.ecr.REGION.amazonaws.com): the audit checks the ECR and S3 path of the cluster's region", host)})
		return
	}
	m.RegistryAccount = parts[0]
	m.RegistryDualStack = dual
	region := parts[3]
	if dual {
		region = parts[2]
	}
	if region != m.Region {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("the registry is in %s, the cluster in %s: this VPC's interface endpoints serve only %s, so the pull goes out by the route tables (NAT or internet gateway)", region, m.Region, m.Region)})
	}
}
