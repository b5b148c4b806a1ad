package events

import "testing"

func TestGroupOf(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   group
	}{
		{"AKS pool and zone", map[string]string{"kubernetes.azure.com/agentpool": "np1", "topology.kubernetes.io/zone": "eastus-1"}, group{"np1", "eastus-1"}},
		{"EKS nodegroup, beta zone", map[string]string{"eks.amazonaws.com/nodegroup": "ng-a", "failure-domain.beta.kubernetes.io/zone": "us-east-1a"}, group{"ng-a", "us-east-1a"}},
		{"instance type when no pool label", map[string]string{"node.kubernetes.io/instance-type": "m5.large"}, group{"m5.large", ""}},
		{"no labels", nil, group{}},
	}
	for _, tt := range tests {
		if got := groupOf(tt.labels); got != tt.want {
			t.Errorf("%s: groupOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
