package monitor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/testenv"
)

// ruleFile writes the PrometheusRule's spec (a plain Prometheus rule file)
// into dir/rules.yaml and returns its path.
func ruleFile(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/monitor/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &pr); err != nil || pr.Kind != "PrometheusRule" {
		t.Fatalf("deploy/monitor/prometheusrule.yaml: kind %q, %v", pr.Kind, err)
	}
	out, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAlertRules runs the real promtool on the PrometheusRule as shipped:
// `check rules`, then `test rules` with each deploy/monitor/tests file (the
// agents' alerts and the events exporter's).
func TestAlertRules(t *testing.T) {
	promtool := testenv.RequireTool(t, "promtool")
	dir := t.TempDir()
	rules := ruleFile(t, dir)
	out, err := exec.Command(promtool, "check", "rules", rules).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS: 6 rules found") {
		t.Fatalf("promtool check rules = %v\n%s", err, out)
	}
	var all strings.Builder
	for _, f := range []string{"alerts.test.yaml", "alerts-events.test.yaml"} {
		tb, err := os.ReadFile("../../deploy/monitor/tests/" + f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(tb)
		test := filepath.Join(dir, f)
		if err := os.WriteFile(test, tb, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err = exec.Command(promtool, "test", "rules", test).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Fatalf("promtool test rules %s = %v\n%s", f, err, out)
		}
	}
	for _, alert := range []string{"PullPathSomeNodesBroken", "PullPathAllNodesFailing", "PullPathPoolNoSuccess", "PullPathMonitorStale",
		"PullFailuresInOneGroup", "PullFailuresInEveryGroup"} {
		if !strings.Contains(all.String(), "alertname: "+alert) {
			t.Errorf("deploy/monitor/tests has no test of %s", alert)
		}
	}
}
