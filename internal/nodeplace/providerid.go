package nodeplace

import (
	"regexp"
	"strings"
)

// ProviderID is what a node's spec.providerID says, in the forms the
// clouds' node controllers write:
//
//   - aws:///ZONE/INSTANCE, or aws:////INSTANCE without a zone
//     (cloud-provider-aws's KubernetesInstanceID; INSTANCE is i-... or, on
//     Fargate, fargate-...);
//   - azure:///subscriptions/SUB/resourceGroups/RG/providers/Microsoft.Compute/
//     virtualMachines/NAME, or .../virtualMachineScaleSets/SET/virtualMachines/N
//     (cloud-provider-azure; the resource group's case varies);
//   - gce://PROJECT/ZONE/INSTANCE (the GCE cloud provider, GKE: Cloud GCP).
//
// A part the ID does not carry is "".
type ProviderID struct {
	Cloud    Cloud  // aws | azure | gcp (gce://) | "" (another scheme, or no providerID)
	Zone     string // aws, gce
	Instance string // aws i-...; gce instance name; azure VM name or scale-set instance
	Project  string // gce
	// Azure's resource path: the subscription, the (node) resource group
	// and the scale set of a VMSS node.
	Subscription  string
	ResourceGroup string
	ScaleSet      string
}

// ParseProviderID reads a spec.providerID. It never fails: what it cannot
// read stays "", and a scheme it does not know gives no Cloud.
func ParseProviderID(id string) ProviderID {
	scheme, rest, ok := strings.Cut(id, "://")
	if !ok {
		return ProviderID{}
	}
	var p ProviderID
	for c, f := range facts {
		if strings.EqualFold(scheme, f.scheme) {
			p.Cloud = c
		}
	}
	switch p.Cloud {
	case AWS:
		parts := strings.Split(strings.Trim(rest, "/"), "/")
		switch len(parts) {
		case 1:
			p.Instance = parts[0]
		case 2:
			p.Zone, p.Instance = parts[0], parts[1]
		}
	case Azure:
		parts := strings.Split(strings.Trim(rest, "/"), "/")
		for i := 0; i+1 < len(parts); i++ {
			switch v := parts[i+1]; strings.ToLower(parts[i]) {
			case "subscriptions":
				p.Subscription = v
			case "resourcegroups":
				p.ResourceGroup = v
			case "virtualmachinescalesets":
				p.ScaleSet = v
			case "virtualmachines":
				p.Instance = v
			}
		}
	case GCP:
		if parts := strings.Split(rest, "/"); len(parts) == 3 {
			p.Project, p.Zone, p.Instance = parts[0], parts[1], parts[2]
		}
	}
	return p
}

// CloudOf is the cloud a spec.providerID names: aws, azure, gcp, or "".
func CloudOf(id string) Cloud { return ParseProviderID(id).Cloud }

var zoneRegionRE = regexp.MustCompile(`^([a-z]{2}(?:-gov|-iso[a-z]*)?-[a-z]+-\d+)`)

// Region is the AWS region of the ID's zone, or "" when the ID is not
// AWS's or carries no zone (RegionOfZone).
func (p ProviderID) Region() string {
	if p.Cloud != AWS {
		return ""
	}
	return RegionOfZone(p.Zone)
}

// RegionOfZone is the AWS region of an availability zone, a Local Zone or
// a Wavelength Zone name: ap-northeast-2a, us-west-2-lax-1a and
// us-east-1-wl1-bos-wlz-1 are in ap-northeast-2, us-west-2, us-east-1.
func RegionOfZone(zone string) string {
	m := zoneRegionRE.FindStringSubmatch(zone)
	if m == nil {
		return ""
	}
	return m[1]
}

// AKSCluster reads an AKS cluster's resource group and name from its
// node resource group, named MC_RG_NAME_LOCATION by default; ok is false
// when the node resource group was given another name.
func (p ProviderID) AKSCluster() (rg, name string, ok bool) {
	if p.Cloud != Azure {
		return "", "", false
	}
	f := strings.Split(p.ResourceGroup, "_")
	if len(f) == 4 && strings.EqualFold(f[0], "MC") {
		return f[1], f[2], true
	}
	return "", "", false
}
