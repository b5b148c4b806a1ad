package monitor

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// podTemplate is the part of a pod template that decides where it may
// land and what it pulls.
type podTemplate struct {
	Spec struct {
		NodeSelector map[string]string `json:"nodeSelector,omitempty"`
		Affinity     *struct {
			NodeAffinity *struct {
				Required *struct {
					Terms []nodeSelectorTerm `json:"nodeSelectorTerms"`
				} `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
			} `json:"nodeAffinity,omitempty"`
		} `json:"affinity,omitempty"`
		Tolerations    []toleration `json:"tolerations,omitempty"`
		Containers     []container  `json:"containers"`
		InitContainers []container  `json:"initContainers,omitempty"`
	} `json:"spec"`
}

type container struct {
	Image string `json:"image"`
}

type nodeSelectorTerm struct {
	MatchExpressions []selectorReq `json:"matchExpressions,omitempty"`
	MatchFields      []selectorReq `json:"matchFields,omitempty"`
}

type selectorReq struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

type toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"`
}

type workloadList struct {
	Metadata listMeta `json:"metadata"`
	Items    []struct {
		Metadata objectMeta `json:"metadata"`
		Spec     struct {
			Replicas *int        `json:"replicas,omitempty"`
			Template podTemplate `json:"template"`
		} `json:"spec"`
	} `json:"items"`
}

// workloadKinds are listed for --from-cluster: the controllers whose Pods
// a scale-up or a new node brings (bare Pods and Jobs are not).
var workloadKinds = []struct{ kind, path string }{
	{"Deployment", "/apis/apps/v1/deployments"},
	{"StatefulSet", "/apis/apps/v1/statefulsets"},
	{"DaemonSet", "/apis/apps/v1/daemonsets"},
}

// daemonSetTolerations are added to every DaemonSet Pod by its controller.
var daemonSetTolerations = []toleration{
	{Key: "node.kubernetes.io/not-ready", Operator: "Exists", Effect: "NoExecute"},
	{Key: "node.kubernetes.io/unreachable", Operator: "Exists", Effect: "NoExecute"},
	{Key: "node.kubernetes.io/disk-pressure", Operator: "Exists", Effect: "NoSchedule"},
	{Key: "node.kubernetes.io/memory-pressure", Operator: "Exists", Effect: "NoSchedule"},
	{Key: "node.kubernetes.io/pid-pressure", Operator: "Exists", Effect: "NoSchedule"},
	{Key: "node.kubernetes.io/unschedulable", Operator: "Exists", Effect: "NoSchedule"},
	{Key: "node.kubernetes.io/network-unavailable", Operator: "Exists", Effect: "NoSchedule"},
}

// clusterImages lists the workloads in pages and returns the distinct
// images of those whose Pods could land on n, most used first (replicas
// summed; a DaemonSet counts 1), at most max.
func (k *kubeClient) clusterImages(ctx context.Context, n *node, max int) ([]string, error) {
	weight := map[string]int{}
	for _, wk := range workloadKinds {
		cont := ""
		for {
			q := url.Values{"limit": {"250"}}
			if cont != "" {
				q.Set("continue", cont)
			}
			var l workloadList
			if err := k.do(ctx, "GET", wk.path, q, nil, &l); err != nil {
				return nil, err
			}
			for _, it := range l.Items {
				t := &it.Spec.Template
				tol := t.Spec.Tolerations
				w := 1
				if wk.kind == "DaemonSet" {
					tol = append(append([]toleration{}, tol...), daemonSetTolerations...)
				} else if it.Spec.Replicas != nil {
					w = *it.Spec.Replicas
				}
				if !canLand(t, tol, n) {
					continue
				}
				for _, cs := range [][]container{t.Spec.InitContainers, t.Spec.Containers} {
					for _, c := range cs {
						if c.Image != "" {
							weight[c.Image] += w // a workload scaled to zero still lists its image
						}
					}
				}
			}
			cont = l.Metadata.Continue
			if cont == "" {
				break
			}
		}
	}
	imgs := make([]string, 0, len(weight))
	for img := range weight {
		imgs = append(imgs, img)
	}
	sort.Slice(imgs, func(i, j int) bool {
		if weight[imgs[i]] != weight[imgs[j]] {
			return weight[imgs[i]] > weight[imgs[j]]
		}
		return imgs[i] < imgs[j]
	})
	if len(imgs) > max {
		imgs = imgs[:max]
	}
	return imgs, nil
}

// canLand is the scheduler's node filter for the template, reduced to what
// the labels and taints of one Node decide: nodeSelector, required node
// affinity, and NoSchedule/NoExecute taints against the tolerations.
func canLand(t *podTemplate, tol []toleration, n *node) bool {
	labels := n.Metadata.Labels
	for k, v := range t.Spec.NodeSelector {
		if labels[k] != v {
			return false
		}
	}
	if a := t.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.Required != nil && len(a.NodeAffinity.Required.Terms) > 0 {
		any := false
		for _, term := range a.NodeAffinity.Required.Terms {
			if termMatches(term, n) {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	for _, tn := range n.Spec.Taints {
		if tn.Effect != "NoSchedule" && tn.Effect != "NoExecute" || transientTaint(tn.Key) {
			continue
		}
		if !tolerated(tn, tol) {
			return false
		}
	}
	return true
}

func termMatches(t nodeSelectorTerm, n *node) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false // an empty term matches nothing
	}
	for _, r := range t.MatchExpressions {
		v, has := n.Metadata.Labels[r.Key]
		if !reqMatches(r, v, has) {
			return false
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != "metadata.name" || !reqMatches(r, n.Metadata.Name, true) {
			return false
		}
	}
	return true
}

func reqMatches(r selectorReq, v string, has bool) bool {
	in := func() bool {
		for _, x := range r.Values {
			if x == v {
				return true
			}
		}
		return false
	}
	switch r.Operator {
	case "In":
		return has && in()
	case "NotIn":
		return !has || !in()
	case "Exists":
		return has
	case "DoesNotExist":
		return !has
	case "Gt", "Lt":
		if !has || len(r.Values) != 1 {
			return false
		}
		a, err1 := strconv.ParseInt(v, 10, 64)
		b, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == "Gt" {
			return a > b
		}
		return a < b
	}
	return false
}

// transientTaint: the taints Kubernetes itself puts on a node for a
// condition it leaves again (not-ready while the kubelet starts, pressure,
// cordoned, not yet initialized by the cloud provider). The question is
// which images a scale-up brings here, not what the node takes this second.
func transientTaint(key string) bool {
	return strings.HasPrefix(key, "node.kubernetes.io/") || strings.HasPrefix(key, "node.cloudprovider.kubernetes.io/")
}

func tolerated(tn taint, tol []toleration) bool {
	for _, t := range tol {
		if t.Effect != "" && t.Effect != tn.Effect {
			continue
		}
		if t.Key == "" && t.Operator == "Exists" {
			return true
		}
		if t.Key != tn.Key {
			continue
		}
		if t.Operator == "Exists" || t.Value == tn.Value {
			return true
		}
	}
	return false
}
