package nodeplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		ip          string
		want        Place
	}{
		{"aks label wins over the older one", map[string]string{"kubernetes.azure.com/agentpool": "np1", "agentpool": "old", "topology.kubernetes.io/zone": "koreacentral-1"}, nil, "10.224.0.4",
			Place{Pool: "np1", PoolSource: "label kubernetes.azure.com/agentpool", Zone: "koreacentral-1", Subnet: "10.224.0.0/24", SubnetSource: "InternalIP /24 (a guess: no subnet label)", SubnetGuessed: true}},
		{"eks, beta zone, eniConfig", map[string]string{"eks.amazonaws.com/nodegroup": "ng-a", "failure-domain.beta.kubernetes.io/zone": "ap-northeast-2a", "k8s.amazonaws.com/eniConfig": "subnet-0a"}, nil, "10.0.1.5",
			Place{Pool: "ng-a", PoolSource: "label eks.amazonaws.com/nodegroup", Zone: "ap-northeast-2a", Subnet: "subnet-0a", SubnetSource: "label k8s.amazonaws.com/eniConfig"}},
		{"GA zone label before beta", map[string]string{"topology.kubernetes.io/zone": "a", "failure-domain.beta.kubernetes.io/zone": "b"}, nil, "",
			Place{Zone: "a"}},
		{"gke pool", map[string]string{"cloud.google.com/gke-nodepool": "pool-1", "node.kubernetes.io/instance-type": "e2-standard-4"}, nil, "",
			Place{Pool: "pool-1", PoolSource: "label cloud.google.com/gke-nodepool"}},
		{"instance type when no pool label", map[string]string{"node.kubernetes.io/instance-type": "m5.large"}, map[string]string{"pullpath.io/subnet": "subnet-ann"}, "10.0.0.1",
			Place{Pool: "m5.large", PoolSource: "instance type (no pool label)", Subnet: "subnet-ann", SubnetSource: "annotation pullpath.io/subnet"}},
		{"a key's label before its annotation", map[string]string{"pullpath.io/subnet": "from-label"}, map[string]string{"pullpath.io/subnet": "from-annotation"}, "",
			Place{Subnet: "from-label", SubnetSource: "label pullpath.io/subnet"}},
		{"the first key's annotation before the second key's label", map[string]string{"k8s.amazonaws.com/eniConfig": "eni"}, map[string]string{"pullpath.io/subnet": "ann"}, "",
			Place{Subnet: "ann", SubnetSource: "annotation pullpath.io/subnet"}},
		{"IPv6 guess is /64", nil, nil, "fd00:1:2:3::9",
			Place{Subnet: "fd00:1:2:3::/64", SubnetSource: "InternalIP /64 (a guess: no subnet label)", SubnetGuessed: true}},
		{"IPv4-mapped IPv6 is IPv4", nil, nil, "::ffff:10.1.2.3",
			Place{Subnet: "10.1.2.0/24", SubnetSource: "InternalIP /24 (a guess: no subnet label)", SubnetGuessed: true}},
		{"not an address", nil, nil, "node-1", Place{}},
		{"nothing", nil, nil, "", Place{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Of(tt.labels, tt.annotations, tt.ip)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Of(%v, %v, %q) (-want +got):\n%s", tt.labels, tt.annotations, tt.ip, d)
			}
		})
	}
}
