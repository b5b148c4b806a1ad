package sweep

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

type nodeOpt func(*corev1.Node)

func mkNode(name, pool, zone, subnet string, age time.Duration, opts ...nodeOpt) corev1.Node {
	n := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-age)),
			Labels: map[string]string{"kubernetes.io/os": "linux"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
	if pool != "" {
		n.Labels["eks.amazonaws.com/nodegroup"] = pool
	}
	if zone != "" {
		n.Labels["topology.kubernetes.io/zone"] = zone
	}
	if subnet != "" {
		n.Labels["pullpath.io/subnet"] = subnet
	}
	for _, o := range opts {
		o(&n)
	}
	return n
}

func notReady(n *corev1.Node) {
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown"}}
}
func windows(n *corev1.Node)  { n.Labels["kubernetes.io/os"] = "windows" }
func virtualK(n *corev1.Node) { n.Labels["type"] = "virtual-kubelet" }
func fargate(n *corev1.Node)  { n.Labels["eks.amazonaws.com/compute-type"] = "fargate" }
func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }
func ubuntu(n *corev1.Node)   { n.Status.NodeInfo.OSImage = "Ubuntu 24.04.1 LTS" }

func names(ps []report.PlannedNode) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func skipped(ss []report.SkippedNode) map[string]string {
	out := map[string]string{}
	for _, s := range ss {
		out[s.Name] = s.Reason
	}
	return out
}

func TestPlan(t *testing.T) {
	h := time.Hour
	cluster := []corev1.Node{
		mkNode("a-old", "pool-a", "z1", "subnet-1", 48*h),
		mkNode("a-new", "pool-a", "z1", "subnet-1", 1*h), // newest of its group: chosen
		mkNode("a-z2", "pool-a", "z2", "subnet-2", 10*h, ubuntu),
		mkNode("b-1", "pool-b", "z1", "subnet-1", 5*h),
		mkNode("b-cordoned-new", "pool-b", "z1", "subnet-1", 1*h, cordoned), // newer, but cordoned: b-1 speaks for the group
		mkNode("c-only-cordoned", "pool-c", "z1", "subnet-3", 1*h, cordoned),
		mkNode("down", "pool-a", "z1", "subnet-1", 1*h, notReady),
		mkNode("win", "pool-w", "z1", "subnet-1", 1*h, windows),
		mkNode("vk", "", "", "", 1*h, virtualK),
		mkNode("fargate-ip-10-0-0-1", "", "z1", "", 1*h, fargate),
	}
	tests := []struct {
		name        string
		o           PlanOptions
		wantChosen  []string
		wantSkipped map[string]string
		wantEmpty   []string
		wantUnch    int
	}{
		{
			name:       "one per pool x zone x subnet, newest uncordoned first",
			o:          PlanOptions{},
			wantChosen: []string{"a-new", "a-z2", "b-1", "c-only-cordoned"},
			wantSkipped: map[string]string{"down": report.SkipNotReady, "win": report.SkipWindows, "vk": report.SkipVirtualKubelet,
				"fargate-ip-10-0-0-1": report.SkipFargate},
			wantUnch: 2,
		},
		{
			name:       "skip cordoned",
			o:          PlanOptions{SkipCordoned: true},
			wantChosen: []string{"a-new", "a-z2", "b-1"},
			wantSkipped: map[string]string{"down": report.SkipNotReady, "win": report.SkipWindows, "vk": report.SkipVirtualKubelet,
				"fargate-ip-10-0-0-1": report.SkipFargate, "b-cordoned-new": report.SkipCordoned, "c-only-cordoned": report.SkipCordoned},
			wantUnch: 1,
		},
		{
			name:       "--all",
			o:          PlanOptions{All: true},
			wantChosen: []string{"a-new", "a-old", "a-z2", "b-1", "b-cordoned-new", "c-only-cordoned"},
			wantSkipped: map[string]string{"down": report.SkipNotReady, "win": report.SkipWindows, "vk": report.SkipVirtualKubelet,
				"fargate-ip-10-0-0-1": report.SkipFargate},
		},
		{
			name:       "--per pool",
			o:          PlanOptions{Per: PerPool},
			wantChosen: []string{"a-new", "b-1", "c-only-cordoned"},
			wantSkipped: map[string]string{"down": report.SkipNotReady, "win": report.SkipWindows, "vk": report.SkipVirtualKubelet,
				"fargate-ip-10-0-0-1": report.SkipFargate},
			wantUnch: 3,
		},
		{
			name:       "--per zone",
			o:          PlanOptions{Per: PerZone},
			wantChosen: []string{"a-new", "a-z2"},
			wantSkipped: map[string]string{"down": report.SkipNotReady, "win": report.SkipWindows, "vk": report.SkipVirtualKubelet,
				"fargate-ip-10-0-0-1": report.SkipFargate},
			wantUnch: 4,
		},
		{
			name:       "pools with no node: expected and from the autoscaler",
			o:          PlanOptions{ExpectPools: []string{"gpu", "pool-a"}, AutoscalerPools: map[string]int{"eks-spot-1": 0, "eks-pool-a-2": 3}},
			wantChosen: []string{"a-new", "a-z2", "b-1", "c-only-cordoned"},
			wantSkipped: map[string]string{"down": report.SkipNotReady, "win": report.SkipWindows, "vk": report.SkipVirtualKubelet,
				"fargate-ip-10-0-0-1": report.SkipFargate},
			wantEmpty: []string{"gpu", "eks-spot-1"},
			wantUnch:  2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan(cluster, tc.o)
			got := names(p.Chosen)
			// Chosen is ordered by group then name; compare as sets in name order.
			if diff := cmp.Diff(sortStrings(tc.wantChosen), sortStrings(got)); diff != "" {
				t.Errorf("chosen (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSkipped, skipped(p.Skipped)); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			var empty []string
			for _, e := range p.EmptyPools {
				empty = append(empty, e.Pool)
			}
			if diff := cmp.Diff(tc.wantEmpty, empty); diff != "" {
				t.Errorf("empty pools (-want +got):\n%s", diff)
			}
			if p.Unchosen != tc.wantUnch {
				t.Errorf("Unchosen = %d, want %d", p.Unchosen, tc.wantUnch)
			}
			if p.TotalNodes != len(cluster) {
				t.Errorf("TotalNodes = %d, want %d", p.TotalNodes, len(cluster))
			}
		})
	}
	t.Run("facts as explain reads them", func(t *testing.T) {
		p := Plan(cluster, PlanOptions{})
		for _, n := range p.Chosen {
			switch n.Name {
			case "a-z2":
				if n.Group != "pool-a/z2/subnet-2" || !n.Resolved {
					t.Errorf("a-z2 = group %q resolved %v, want pool-a/z2/subnet-2 and systemd-resolved (Ubuntu)", n.Group, n.Resolved)
				}
			case "c-only-cordoned":
				if !n.Cordoned {
					t.Errorf("c-only-cordoned not marked cordoned")
				}
			}
		}
	})
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestParseAutoscalerStatus(t *testing.T) {
	old := `Cluster-autoscaler status at 2026-01-01 00:00:00 +0000 UTC:
Cluster-wide:
  Health:      Healthy (ready=3 unready=0 notStarted=0 longNotStarted=0 registered=3 longUnregistered=0)

NodeGroups:
  Name:        eks-gpu-0ac1
  Health:      Healthy (ready=0 unready=0 notStarted=0 longNotStarted=0 registered=0 longUnregistered=0 cloudProviderTarget=0 (minSize=0, maxSize=4))
  Name:        eks-web-77aa
  Health:      Healthy (ready=3 unready=0 notStarted=0 longNotStarted=0 registered=3 longUnregistered=0 cloudProviderTarget=3 (minSize=1, maxSize=9))
`
	yml := `time: "2026-01-01"
nodeGroups:
- name: gpu
  health:
    status: Healthy
    nodeCounts:
      registered: {total: 0, ready: 0}
- name: web
  health:
    nodeCounts:
      registered: {total: 2, ready: 2}
`
	for name, tc := range map[string]struct {
		in   string
		want map[string]int
	}{
		"text":    {old, map[string]int{"eks-gpu-0ac1": 0, "eks-web-77aa": 3}},
		"yaml":    {yml, map[string]int{"gpu": 0, "web": 2}},
		"garbage": {"not a status", nil},
	} {
		if diff := cmp.Diff(tc.want, ParseAutoscalerStatus(tc.in)); diff != "" {
			t.Errorf("%s: ParseAutoscalerStatus (-want +got):\n%s", name, diff)
		}
	}
}

func TestNextStepsNameTheAudit(t *testing.T) {
	tests := []struct {
		providerID, cloud, want string
	}{
		{"aws:///ap-northeast-2c/i-0abc", "aws", "pullpath aws audit --cluster CLUSTER --region ap-northeast-2   # the cloud's configuration: subnet subnet-a (failing) against the healthy subnets"},
		{"aws:////i-0abc", "aws", "pullpath aws audit --cluster CLUSTER --region REGION   # the cloud's configuration: subnet subnet-a (failing) against the healthy subnets"},
		{"azure:///subscriptions/s/resourceGroups/MC_shop-rg_shop-aks_koreacentral/providers/Microsoft.Compute/virtualMachineScaleSets/aks-system-1-vmss/virtualMachines/0", "azure",
			"pullpath azure audit --resource-group shop-rg --name shop-aks   # the cloud's configuration: subnet subnet-a (failing) against the healthy subnets"},
		{"azure:///subscriptions/s/resourceGroups/custom-nodes/providers/x", "azure",
			"pullpath azure audit --resource-group RG --name CLUSTER   # the cloud's configuration: subnet subnet-a (failing) against the healthy subnets"},
	}
	for _, tt := range tests {
		n := &report.SweepNode{PlannedNode: report.PlannedNode{Name: "n1", ProviderID: tt.providerID, Cloud: tt.cloud, Subnet: "subnet-a", SubnetSource: "label pullpath.io/subnet"}}
		got := nextSteps(&report.SweepReport{Image: "img"}, []*report.SweepNode{n})
		if len(got) == 0 || got[0] != tt.want {
			t.Errorf("nextSteps(%s) = %q, want first %q", tt.providerID, got, tt.want)
		}
	}
}

func TestSweepExitCode(t *testing.T) {
	for _, tc := range []struct {
		v    report.SweepVerdict
		want int
	}{
		{report.SweepVerdict{Status: verdict.StatusOK}, 0},
		{report.SweepVerdict{Status: verdict.StatusFail, Failed: 2, Condition: verdict.ConditionEndpointSet}, 5},
		{report.SweepVerdict{Status: verdict.StatusFail, Failed: 3, Condition: verdict.ConditionTLSIdentity}, 6},
		{report.SweepVerdict{Status: verdict.StatusFail, NoAnswer: 1}, 2},
	} {
		if got := exitCode(tc.v); got != tc.want {
			t.Errorf("exitCode(%+v) = %d, want %d", tc.v, got, tc.want)
		}
	}
}
