package nodeplace

import "strings"

// Clouds a providerID names.
const (
	CloudAWS   = "aws"
	CloudAzure = "azure"
	CloudGCE   = "gce"
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
//   - gce://PROJECT/ZONE/INSTANCE (the GCE cloud provider, GKE).
//
// A part the ID does not carry is "".
type ProviderID struct {
	Cloud    string // aws | azure | gce | "" (another scheme, or no providerID)
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
	switch strings.ToLower(scheme) {
	case CloudAWS:
		p.Cloud = CloudAWS
		parts := strings.Split(strings.Trim(rest, "/"), "/")
		switch len(parts) {
		case 1:
			p.Instance = parts[0]
		case 2:
			p.Zone, p.Instance = parts[0], parts[1]
		}
	case CloudAzure:
		p.Cloud = CloudAzure
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
	case CloudGCE:
		p.Cloud = CloudGCE
		if parts := strings.Split(rest, "/"); len(parts) == 3 {
			p.Project, p.Zone, p.Instance = parts[0], parts[1], parts[2]
		}
	}
	return p
}

// CloudOf is the cloud a spec.providerID names: aws, azure, gce, or "".
func CloudOf(id string) string { return ParseProviderID(id).Cloud }

// Region is the AWS region of the ID's zone (ap-northeast-2a ->
// ap-northeast-2), or "" when the ID is not AWS's or carries no zone.
func (p ProviderID) Region() string {
	if p.Cloud != CloudAWS || len(p.Zone) < 2 {
		return ""
	}
	return p.Zone[:len(p.Zone)-1]
}

// AKSCluster reads an AKS cluster's resource group and name from its
// node resource group, named MC_RG_NAME_LOCATION by default; ok is false
// when the node resource group was given another name.
func (p ProviderID) AKSCluster() (rg, name string, ok bool) {
	if p.Cloud != CloudAzure {
		return "", "", false
	}
	f := strings.Split(p.ResourceGroup, "_")
	if len(f) == 4 && strings.EqualFold(f[0], "MC") {
		return f[1], f[2], true
	}
	return "", "", false
}
