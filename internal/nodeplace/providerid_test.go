package nodeplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProviderID(t *testing.T) {
	tests := []struct {
		id   string
		want ProviderID
	}{
		{"aws:///ap-northeast-2c/i-0abc", ProviderID{Cloud: "aws", Zone: "ap-northeast-2c", Instance: "i-0abc"}},
		{"aws:////i-0abc", ProviderID{Cloud: "aws", Instance: "i-0abc"}},
		{"aws:///us-east-1a/fargate-ip-10-0-1-2.ec2.internal", ProviderID{Cloud: "aws", Zone: "us-east-1a", Instance: "fargate-ip-10-0-1-2.ec2.internal"}},
		{"AWS:///us-east-1a/i-1", ProviderID{Cloud: "aws", Zone: "us-east-1a", Instance: "i-1"}},
		{"aws:///a/b/c", ProviderID{Cloud: "aws"}},
		{"azure:///subscriptions/s1/resourceGroups/MC_shop-rg_shop-aks_koreacentral/providers/Microsoft.Compute/virtualMachineScaleSets/aks-system-1-vmss/virtualMachines/0",
			ProviderID{Cloud: "azure", Subscription: "s1", ResourceGroup: "MC_shop-rg_shop-aks_koreacentral", ScaleSet: "aks-system-1-vmss", Instance: "0"}},
		{"azure:///subscriptions/s1/resourcegroups/mc_rg_aks_eastus/providers/Microsoft.Compute/virtualMachines/aks-np-1",
			ProviderID{Cloud: "azure", Subscription: "s1", ResourceGroup: "mc_rg_aks_eastus", Instance: "aks-np-1"}},
		{"gce://my-project/europe-west1-b/gke-pool-1-abcd", ProviderID{Cloud: "gcp", Project: "my-project", Zone: "europe-west1-b", Instance: "gke-pool-1-abcd"}},
		{"gce://my-project/europe-west1-b", ProviderID{Cloud: "gcp"}},
		{"kind://docker/kind/kind-worker", ProviderID{}},
		{"virtual-kubelet://vk", ProviderID{}},
		{"i-0abc", ProviderID{}},
		{"", ProviderID{}},
	}
	for _, tt := range tests {
		got := ParseProviderID(tt.id)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("ParseProviderID(%q) (-want +got):\n%s", tt.id, d)
		}
		if c := CloudOf(tt.id); c != tt.want.Cloud {
			t.Errorf("CloudOf(%q) = %q, want %q", tt.id, c, tt.want.Cloud)
		}
	}
}

func TestRegion(t *testing.T) {
	tests := []struct{ id, want string }{
		{"aws:///ap-northeast-2c/i-0abc", "ap-northeast-2"},
		{"aws:///us-west-2-lax-1a/i-0abc", "us-west-2"},
		{"aws:///us-east-1-wl1-bos-wlz-1/i-0abc", "us-east-1"},
		{"aws:///us-gov-west-1a/i-0abc", "us-gov-west-1"},
		{"aws:////i-0abc", ""},
		{"gce://p/europe-west1-b/i", ""},
		{"azure:///subscriptions/s", ""},
	}
	for _, tt := range tests {
		if got := ParseProviderID(tt.id).Region(); got != tt.want {
			t.Errorf("ParseProviderID(%q).Region() = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestAKSCluster(t *testing.T) {
	tests := []struct {
		id       string
		rg, name string
		ok       bool
	}{
		{"azure:///subscriptions/s/resourceGroups/MC_shop-rg_shop-aks_koreacentral/providers/Microsoft.Compute/virtualMachineScaleSets/aks-system-1-vmss/virtualMachines/0", "shop-rg", "shop-aks", true},
		{"azure:///subscriptions/s/resourceGroups/mc_rg_aks_eastus/providers/x", "rg", "aks", true},
		{"azure:///subscriptions/s/resourceGroups/custom-nodes/providers/x", "", "", false},
		{"aws:///MC_a_b_c/i-1", "", "", false},
	}
	for _, tt := range tests {
		rg, name, ok := ParseProviderID(tt.id).AKSCluster()
		if rg != tt.rg || name != tt.name || ok != tt.ok {
			t.Errorf("ParseProviderID(%q).AKSCluster() = %q, %q, %v; want %q, %q, %v", tt.id, rg, name, ok, tt.rg, tt.name, tt.ok)
		}
	}
}

func TestRegionOfZone(t *testing.T) {
	for zone, want := range map[string]string{
		"ap-northeast-2a": "ap-northeast-2", "us-west-2-lax-1a": "us-west-2", "us-east-1-wl1-bos-wlz-1": "us-east-1",
		"us-gov-west-1a": "us-gov-west-1", "eu-central-1c": "eu-central-1", "": "", "nonsense": "",
	} {
		if got := RegionOfZone(zone); got != want {
			t.Errorf("RegionOfZone(%q) = %q, want %q", zone, got, want)
		}
	}
}
