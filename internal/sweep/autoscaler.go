package sweep

import (
	"regexp"
	"strconv"

	"sigs.k8s.io/yaml"
)

// ParseAutoscalerStatus reads the node groups of the cluster-autoscaler's
// status ConfigMap (its "status" key), as name -> ready nodes. Both formats
// are read: the YAML of cluster-autoscaler >= 1.30 (nodeGroups[].name,
// health.nodeCounts.registered.ready) and the older text ("Name: X" then
// "Health: ... (ready=N ...)"). Anything else gives nil.
func ParseAutoscalerStatus(status string) map[string]int {
	var y struct {
		NodeGroups []struct {
			Name   string `json:"name"`
			Health struct {
				NodeCounts struct {
					Registered struct {
						Total int `json:"total"`
						Ready int `json:"ready"`
					} `json:"registered"`
				} `json:"nodeCounts"`
			} `json:"health"`
		} `json:"nodeGroups"`
	}
	if err := yaml.Unmarshal([]byte(status), &y); err == nil && len(y.NodeGroups) > 0 {
		out := map[string]int{}
		for _, g := range y.NodeGroups {
			if g.Name != "" {
				out[g.Name] = g.Health.NodeCounts.Registered.Total
			}
		}
		return out
	}
	ms := oldStatusRE.FindAllStringSubmatch(status, -1)
	if len(ms) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, m := range ms {
		reg, _ := strconv.Atoi(m[3])
		out[m[1]] = reg
	}
	return out
}

var oldStatusRE = regexp.MustCompile(`(?m)^\s*Name:\s+(\S+)\s*\n\s*Health:\s+\S+\s+\(ready=(\d+)[^)]*?registered=(\d+)`)
