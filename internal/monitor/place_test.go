package monitor_test

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/monitor"
)

// TestPlaceMatchesExplain: the agent reads pool, zone and subnet from its
// Node's JSON with its own small types; explain reads them with client-go.
// They must agree node for node, or the monitor's groups are not explain's.
func TestPlaceMatchesExplain(t *testing.T) {
	nodes := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "aks", Labels: map[string]string{"kubernetes.azure.com/agentpool": "np1", "agentpool": "old", "topology.kubernetes.io/zone": "koreacentral-1"}},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.224.0.4"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eks", Labels: map[string]string{"eks.amazonaws.com/nodegroup": "ng-a", "failure-domain.beta.kubernetes.io/zone": "ap-northeast-2a", "k8s.amazonaws.com/eniConfig": "subnet-0a"}},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "3.3.3.3"}, {Type: corev1.NodeInternalIP, Address: "10.0.1.5"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "karpenter", Labels: map[string]string{"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "m5.large"},
			Annotations: map[string]string{"pullpath.io/subnet": "subnet-ann"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bare", Labels: map[string]string{"node.kubernetes.io/instance-type": "m5.large"}},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "fd00:1:2:3::9"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "label-over-annotation", Labels: map[string]string{"pullpath.io/subnet": "from-label", "cloud.google.com/gke-nodepool": "pool-1"},
			Annotations: map[string]string{"pullpath.io/subnet": "from-annotation"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "nothing"}},
	}
	for _, n := range nodes {
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := monitor.PlaceOfJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		f := cluster.FactsOf(n)
		want := monitor.NodePlace{Pool: f.Pool, Zone: f.Zone, Subnet: f.Subnet}
		if got != want {
			t.Errorf("node %s: monitor place = %+v, explain = %+v", n.Name, got, want)
		}
	}
}
