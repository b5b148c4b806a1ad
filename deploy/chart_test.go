// Package deploy tests the Helm chart (deploy/helm/pullpath) with the real
// helm, built from its Go module by hack/controlplane.sh, and keeps the
// kustomize folders (deploy/monitor, deploy/sweep) and the dashboard JSON
// (deploy/grafana) equal to what the chart renders: one source.
//
//	go test ./deploy -run TestDeployIsTheChart -update   # after a chart change
package deploy

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

var update = flag.Bool("update", false, "rewrite deploy/monitor, deploy/sweep and deploy/grafana from the chart")

const chart = "helm/pullpath"

// helmBin is the helm that hack/controlplane.sh builds; missing, the test
// skips (fails under CI=true).
func helmBin(t *testing.T) string {
	t.Helper()
	dir, err := controlplane.BinDir()
	if err == nil {
		p := filepath.Join(dir, "helm")
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	if testenv.CI() {
		t.Fatalf("helm not built (run hack/controlplane.sh): %v", err)
	}
	t.Skipf("helm not built, run hack/controlplane.sh: %v", err)
	return ""
}

// helm runs the real helm with its own empty home, cache and config, so no
// repository, plugin or kubeconfig of the machine takes part.
func helm(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBin(t), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data",
		"KUBECONFIG="+home+"/none")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// doc is one rendered object and the template it came from.
type doc struct {
	source string // e.g. monitor/daemonset.yaml
	text   string // the YAML, without helm's "---" and "# Source:" lines
	obj    map[string]any
}

func (d doc) kind() string { s, _ := d.obj["kind"].(string); return s }
func (d doc) name() string {
	m, _ := d.obj["metadata"].(map[string]any)
	s, _ := m["name"].(string)
	return s
}

var sourceLine = regexp.MustCompile(`^# Source: pullpath/templates/(.+)$`)

// render is `helm template pullpath deploy/helm/pullpath ARGS...`, split
// into its objects.
func render(t *testing.T, args ...string) []doc {
	t.Helper()
	out, errOut, err := helm(t, append([]string{"template", "pullpath", chart}, args...)...)
	if err != nil {
		t.Fatalf("helm template %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return splitDocs(t, out)
}

func splitDocs(t *testing.T, out string) []doc {
	t.Helper()
	var docs []doc
	for _, part := range strings.Split(out, "\n---\n") {
		part = strings.TrimPrefix(part, "---\n")
		lines := strings.SplitN(part, "\n", 2)
		m := sourceLine.FindStringSubmatch(lines[0])
		if m == nil || len(lines) < 2 {
			if strings.TrimSpace(part) != "" {
				t.Fatalf("a rendered document without its # Source line:\n%s", part)
			}
			continue
		}
		d := doc{source: m[1], text: strings.TrimRight(lines[1], "\n") + "\n"}
		if err := yaml.Unmarshal([]byte(d.text), &d.obj); err != nil {
			t.Fatalf("%s: %v\n%s", d.source, err, d.text)
		}
		if d.obj == nil {
			continue // a comment only
		}
		docs = append(docs, d)
	}
	return docs
}

const banner = "# Generated from deploy/helm/pullpath (helm template, default values, release\n" +
	"# \"pullpath\") by `go test ./deploy -run TestDeployIsTheChart -update`.\n" +
	"# Edit the chart, not this file.\n"

// TestDeployIsTheChart holds deploy/monitor/*.yaml and deploy/sweep/*.yaml
// (but kustomization.yaml) equal to the chart's objects with default values,
// one file per template, and deploy/grafana/pullpath.json equal to the
// chart's dashboard. With -update it writes them.
func TestDeployIsTheChart(t *testing.T) {
	docs := render(t)
	want := map[string]string{} // deploy path -> content
	for _, d := range docs {
		p := d.source
		if !strings.HasPrefix(p, "monitor/") && !strings.HasPrefix(p, "sweep/") {
			t.Errorf("template %s renders by default but maps to no deploy folder (templates/monitor or templates/sweep)", p)
			continue
		}
		if want[p] == "" {
			want[p] = banner
		} else {
			want[p] += "---\n"
		}
		want[p] += d.text
	}
	dash, err := os.ReadFile(filepath.Join(chart, "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	want["grafana/pullpath.json"] = string(dash)

	have := map[string]bool{}
	for _, dir := range []string{"monitor", "sweep"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			if filepath.Base(f) != "kustomization.yaml" {
				have[f] = true
			}
		}
	}
	if *update {
		for f := range have {
			if _, ok := want[f]; !ok {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		for f, content := range want {
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for f := range have {
		if _, ok := want[f]; !ok {
			t.Errorf("deploy/%s is not rendered by the chart: remove it, or add its template (go test ./deploy -run TestDeployIsTheChart -update)", f)
		}
	}
	paths := make([]string, 0, len(want))
	for f := range want {
		paths = append(paths, f)
	}
	sort.Strings(paths)
	for _, f := range paths {
		got, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("deploy/%s: %v (go test ./deploy -run TestDeployIsTheChart -update writes it)", f, err)
			continue
		}
		if string(got) != want[f] {
			t.Errorf("deploy/%s differs from the chart's rendering (go test ./deploy -run TestDeployIsTheChart -update):\n%s", f, firstDiff(string(got), want[f]))
		}
	}
	// deploy/monitor/kustomization.yaml lists every manifest of its folder
	// (deploy/sweep is applied with kubectl apply -f).
	for _, dir := range []string{"monitor"} {
		var k struct {
			Resources []string `json:"resources"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Errorf("deploy/%s/kustomization.yaml: %v", dir, err)
			continue
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		for _, f := range paths {
			if filepath.Dir(f) == dir && !slices.Contains(k.Resources, filepath.Base(f)) {
				t.Errorf("deploy/%s/kustomization.yaml does not list %s", dir, filepath.Base(f))
			}
		}
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  file:  %q\n  chart: %q", i+1, a, b)
		}
	}
	return "(same lines, different ending)"
}

// TestChartLint is `helm lint --strict` on the defaults and on values that
// turn every option on.
func TestChartLint(t *testing.T) {
	for name, args := range map[string][]string{
		"defaults": nil,
		"everything": {"--set", "metrics.serviceMonitor.enabled=true", "--set", "monitor.fromCluster=true",
			"--set", "monitor.credentialProvider.config=/etc/eks/image-credential-provider/config.json",
			"--set", "monitor.credentialProvider.binDir=/etc/eks/image-credential-provider",
			"--set", "monitor.credentialProvider.hostPaths={/etc/eks/image-credential-provider}",
			"--set", "imagePullSecrets[0].name=mirror-creds", "--set", "image.registry=registry.internal:5000/tools"},
		"nothing": {"--set", "monitor.enabled=false", "--set", "events.enabled=false", "--set", "sweep.enabled=false", "--set", "grafana.dashboard.enabled=false"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := helm(t, append([]string{"lint", "--strict", chart}, args...)...)
			if err != nil || !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
				t.Fatalf("helm lint --strict %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
			}
		})
	}
}

// TestChartBadValuesFail: values.schema.json turns each bad value into a
// failed render whose message names the value.
func TestChartBadValuesFail(t *testing.T) {
	tests := []struct {
		set  []string
		want string // in helm's message
	}{
		{[]string{"monitor.interval=5 minutes"}, "/monitor/interval"},
		{[]string{"monitor.images=null"}, "missing property 'images'"},
		{[]string{"monitor.images={}"}, "/monitor/images"},
		{[]string{"namespaces.podSecurity.enforce=baseline"}, "/namespaces/podSecurity/enforce"},
		{[]string{"monitor.tolerations[0].operator=Sometimes"}, "/monitor/tolerations/0/operator"},
		{[]string{"imagePullSecrets[0].nam=creds"}, "/imagePullSecrets/0"},
		{[]string{"events.maxHosts=0"}, "/events/maxHosts"},
		{[]string{"monitor.credentialProvider.config=/etc/kubelet/cp.yaml"}, "/monitor/credentialProvider"},
		{[]string{"monitor.credentialProvider.config=relative/cp.yaml", "monitor.credentialProvider.binDir=/x", "monitor.credentialProvider.hostPaths={/x}"}, "/monitor/credentialProvider/config"},
		{[]string{"image.registry="}, "/image/registry"},
		{[]string{"monitorr.enabled=false"}, "monitorr"},
		{[]string{"monitor.namespace=Pullpath_Monitor"}, "/monitor/namespace"},
		{[]string{"monitor.image.digest=sha256:abc"}, "/monitor/image/digest"},
		{[]string{"monitor.port=70000"}, "/monitor/port"},
		{[]string{"monitor.podLabels.team=a b"}, "/monitor/podLabels/team"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.set, ","), func(t *testing.T) {
			var args []string
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			out, errOut, err := helm(t, append([]string{"template", "pullpath", chart}, args...)...)
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("helm template --set %s = %v, want a failed render\n%s", strings.Join(tc.set, " --set "), err, firstLines(out, 5))
			}
			if !strings.Contains(errOut, "values don't meet the specifications of the schema") || !strings.Contains(errOut, tc.want) {
				t.Errorf("helm template --set %s: message does not name %s:\n%s", strings.Join(tc.set, " --set "), tc.want, errOut)
			}
		})
	}
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	return strings.Join(l[:min(n, len(l))], "\n")
}

// find returns the rendered object of kind and name, or nil.
func find(docs []doc, kind, name string) *doc {
	for i := range docs {
		if docs[i].kind() == kind && docs[i].name() == name {
			return &docs[i]
		}
	}
	return nil
}

// TestChartValues renders with values changed and reads the objects back.
func TestChartValues(t *testing.T) {
	t.Run("each part off", func(t *testing.T) {
		docs := render(t, "--set", "monitor.enabled=false", "--set", "events.enabled=false", "--set", "sweep.enabled=false", "--set", "grafana.dashboard.enabled=false")
		if len(docs) != 0 {
			var names []string
			for _, d := range docs {
				names = append(names, d.kind()+"/"+d.name())
			}
			t.Errorf("everything off still renders %v", names)
		}
		docs = render(t, "--set", "monitor.enabled=false")
		if find(docs, "DaemonSet", "pullpath-monitor") != nil || find(docs, "Deployment", "pullpath-events") == nil || find(docs, "Namespace", "pullpath-monitor") == nil {
			t.Errorf("monitor off: want no DaemonSet, the exporter and its namespace")
		}
		docs = render(t, "--set", "events.enabled=false", "--set", "metrics.prometheusRule.enabled=true")
		if find(docs, "Deployment", "pullpath-events") != nil || find(docs, "ClusterRole", "pullpath-events") != nil {
			t.Errorf("events off: the exporter is still rendered")
		}
		if pr := find(docs, "PrometheusRule", "pullpath-monitor"); pr == nil || strings.Contains(pr.text, "PullFailuresInOneGroup") {
			t.Errorf("events off: its alerts are still in the PrometheusRule")
		}
		docs = render(t, "--set", "metrics.podMonitor.enabled=false", "--set", "metrics.prometheusRule.enabled=false")
		for _, d := range docs {
			if strings.Contains(d.obj["apiVersion"].(string), "monitoring.coreos.com") {
				t.Errorf("operator objects off: %s/%s rendered", d.kind(), d.name())
			}
		}
		docs = render(t, "--set", "namespaces.create=false")
		if find(docs, "Namespace", "pullpath-monitor") != nil || find(docs, "Namespace", "pullpath-sweep") != nil {
			t.Errorf("namespaces.create=false still renders Namespaces")
		}
	})
	t.Run("mirror, pull secrets, credential provider, placement", func(t *testing.T) {
		docs := render(t, "--set", "image.registry=registry.internal:5000/tools", "--set", "imagePullSecrets[0].name=mirror-creds",
			"--set", "monitor.credentialProvider.config=/etc/eks/image-credential-provider/config.json",
			"--set", "monitor.credentialProvider.binDir=/etc/eks/image-credential-provider",
			"--set", "monitor.credentialProvider.hostPaths={/etc/eks/image-credential-provider}",
			"--set", "monitor.nodeSelector.kubernetes\\.io/os=linux", "--set", "monitor.image.digest=sha256:"+strings.Repeat("ab", 32),
			"--set", "namespaces.labels.team=platform", "--set", "metrics.serviceMonitor.enabled=true")
		ds, dep := find(docs, "DaemonSet", "pullpath-monitor"), find(docs, "Deployment", "pullpath-events")
		if ds == nil || dep == nil {
			t.Fatal("no DaemonSet or Deployment rendered")
		}
		for _, want := range []string{
			"image: registry.internal:5000/tools/pullpath/pullpath-agent@sha256:" + strings.Repeat("ab", 32),
			"- --image-credential-provider-config=/etc/eks/image-credential-provider/config.json",
			"- --image-credential-provider-bin-dir=/etc/eks/image-credential-provider",
			"path: /etc/eks/image-credential-provider", "mountPath: /etc/eks/image-credential-provider",
			"- name: mirror-creds", "kubernetes.io/os: linux",
		} {
			if !strings.Contains(ds.text, want) {
				t.Errorf("DaemonSet lacks %q", want)
			}
		}
		if strings.Contains(ds.text, "--docker-config") {
			t.Errorf("with a credential provider the DaemonSet still passes --docker-config")
		}
		for _, want := range []string{"image: registry.internal:5000/tools/pullpath/pullpath:v0.1.0", "- name: mirror-creds"} {
			if !strings.Contains(dep.text, want) {
				t.Errorf("Deployment lacks %q", want)
			}
		}
		if ns := find(docs, "Namespace", "pullpath-monitor"); ns == nil || !strings.Contains(ns.text, "team: platform") || !strings.Contains(ns.text, "pod-security.kubernetes.io/enforce: privileged") {
			t.Errorf("monitor namespace lacks its labels")
		}
		if find(docs, "ServiceMonitor", "pullpath-events") == nil || find(docs, "Service", "pullpath-monitor") == nil {
			t.Errorf("serviceMonitor.enabled renders no Service and ServiceMonitor")
		}
	})
	t.Run("defaults", func(t *testing.T) {
		docs := render(t)
		ds := find(docs, "DaemonSet", "pullpath-monitor")
		if ds == nil || !strings.Contains(ds.text, "- operator: Exists") {
			t.Fatalf("the DaemonSet does not tolerate every taint by default")
		}
		cr := find(docs, "ClusterRole", "pullpath-events")
		if cr == nil {
			t.Fatal("no ClusterRole pullpath-events")
		}
		var role struct {
			Rules []struct {
				APIGroups []string `json:"apiGroups"`
				Resources []string `json:"resources"`
				Verbs     []string `json:"verbs"`
			} `json:"rules"`
		}
		if err := yaml.Unmarshal([]byte(cr.text), &role); err != nil {
			t.Fatal(err)
		}
		for _, r := range role.Rules {
			for _, v := range r.Verbs {
				if v != "get" && v != "list" && v != "watch" {
					t.Errorf("the exporter's ClusterRole grants %q on %v", v, r.Resources)
				}
			}
		}
	})
}
