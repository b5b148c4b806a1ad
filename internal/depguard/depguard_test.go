package depguard

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pullpath/pullpath/"

// nodeSide are the packages a node runs. A new node-side package (the
// monitor agent's) is one more line here.
var nodeSide = []string{
	"internal/pull",
	"internal/netcheck",
	"internal/runtimecfg",
	"internal/redact",
	"internal/verdict",
	"internal/addrscope",
	"internal/units",
	"internal/nodeplace",
	"internal/monitor",
	"internal/probeopts",
	"internal/probesummary",
	"internal/buildinfo",
	"internal/nodecli",
	"cmd/pullpath-agent", // the node-side image: agent, probe, version
}

// forbidden are import paths (a module, package or owner) no node-side
// package may link, even transitively, with the reason shown when one does.
var forbidden = []rule{
	{"github.com/spf13/cobra", "the CLI belongs in internal/cli"},
	{"k8s.io/client-go", "the node side talks to no apiserver"},
	{"k8s.io/apimachinery", "the node side talks to no apiserver"},
	{"sigs.k8s.io/yaml", "YAML is an output format: internal/printers"},
	{module + "internal/printers", "engines return data; the CLI prints it"},
	{"github.com/aws", "cloud SDKs belong to the audits (internal/audit/aws)"},
	{"github.com/Azure", "cloud SDKs belong to the audits (internal/audit/azure)"},
	{"google.golang.org/api", "cloud SDKs belong to the audits (internal/audit/gcp)"},
	{"cloud.google.com/go", "cloud SDKs belong to the audits (internal/audit/gcp)"},
	{"k8s.io/api", "the node side talks to no apiserver (the agent's REST client has its own types)"},
	{"google.golang.org/grpc", "gRPC comes with the cloud SDKs and the CRI: the lab's, never a node's"},
	{"helm.sh", "helm is a test tool (test/tools), never a node's"},
}

// rule is an import path (a module, package or owner) a set of packages
// may not link, even transitively, and why.
type rule struct{ path, why string }

// labPlumbing are the lab's packages other than internal/lab/cluster, the
// lab's only Kubernetes client: the scenario schema and the namespace
// runner link no Kubernetes client, CLI, printer or cloud SDK (YAML is
// theirs: scenario files are YAML).
var labPlumbing = []string{
	"internal/lab",
	"internal/lab/scenario",
}

// labForbidden are the node side's rules but YAML.
var labForbidden = []rule{
	{"github.com/spf13/cobra", "the CLI belongs in internal/cli"},
	{"k8s.io/client-go", "the lab's only Kubernetes client is internal/lab/cluster"},
	{"k8s.io/apimachinery", "the lab's only Kubernetes client is internal/lab/cluster"},
	{module + "internal/printers", "engines return data; the CLI prints it"},
	{"github.com/aws", "cloud SDKs belong to the audits"},
	{"github.com/Azure", "cloud SDKs belong to the audits"},
}

// forbids returns why dep may not be linked on the node side, or "" when
// it may: dep is a forbidden path or lies under one.
func forbids(dep string) string {
	f, _ := ruleFor(forbidden, dep)
	return f.why
}

// ruleFor is the rule of rules dep breaks, if any.
func ruleFor(rules []rule, dep string) (rule, bool) {
	for _, f := range rules {
		if dep == f.path || strings.HasPrefix(dep, f.path+"/") {
			return f, true
		}
	}
	return rule{}, false
}

func TestForbids(t *testing.T) {
	tests := []struct {
		dep  string
		want bool
	}{
		{"github.com/spf13/cobra", true},
		{"github.com/spf13/pflag", false},
		{"k8s.io/client-go/kubernetes", true},
		{"k8s.io/apimachinery/pkg/apis/meta/v1", true},
		{"sigs.k8s.io/yaml", true},
		{"sigs.k8s.io/yamlish", false},
		{module + "internal/printers", true},
		{module + "internal/report", false},
		{"github.com/aws/aws-sdk-go-v2/service/ec2", true},
		{"github.com/awslabs/smithy-go", false},
		{"github.com/Azure/azure-sdk-for-go/sdk/azcore", true},
		{"google.golang.org/api/compute/v1", true},
		{"google.golang.org/protobuf/proto", false},
		{"k8s.io/api/core/v1", true},
		{"k8s.io/apiserver", false},
		{"github.com/miekg/dns", false},
		{"net/http", false},
	}
	for _, tt := range tests {
		if got := forbids(tt.dep) != ""; got != tt.want {
			t.Errorf("forbids(%q) = %v, want %v", tt.dep, got, tt.want)
		}
	}
}

// TestNodeSideDependencies is go-containerregistry's cmd/crane
// depcheck_test.go for pullpath: it lists the transitive dependencies of
// every node-side package with `go list -deps` and fails on any forbidden
// one, naming the package that links it.
func TestNodeSideDependencies(t *testing.T) { guard(t, nodeSide, forbidden) }

// TestLabDependencies keeps the Kubernetes client out of the lab's schema
// and runner (issue 20: the lab cut in three).
func TestLabDependencies(t *testing.T) { guard(t, labPlumbing, labForbidden) }

// guard fails for each of pkgs that links a path of rules, naming the
// import chain.
func guard(t *testing.T, pkgs []string, rules []rule) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the dependency guard needs the go command: %v", err)
	}
	for _, pkg := range pkgs {
		t.Run(pkg, func(t *testing.T) {
			deps := goList(t, goBin, "-deps", "-f", "{{.ImportPath}}", module+pkg)
			if !slices.Contains(deps, module+pkg) {
				t.Fatalf("go list -deps %s did not list the package itself: %v", pkg, deps)
			}
			count := map[string]int{} // forbidden path -> packages linked under it
			for _, d := range deps {
				if f, ok := ruleFor(rules, d); ok {
					count[f.path]++
				}
			}
			if len(count) == 0 {
				return
			}
			nearest := nearestForbidden(t, goBin, module+pkg, rules)
			for _, f := range rules {
				if n := count[f.path]; n > 0 {
					t.Errorf("%s links %s (%d package(s); %s); import chain: %s", pkg, f.path, n, f.why, nearest[f.path])
				}
			}
		})
	}
}

// goList runs `go list ARGS` and returns its lines.
func goList(t *testing.T, goBin string, args ...string) []string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(goBin, append([]string{"list"}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.Fields(string(out))
}

// nearestForbidden returns, for each forbidden path pkg links, the
// shortest import chain from pkg to a package under it ("a -> b -> dep"),
// so a failure says which import to remove.
func nearestForbidden(t *testing.T, goBin, pkg string, rules []rule) map[string]string {
	t.Helper()
	imports := map[string][]string{}
	for _, line := range goList(t, goBin, "-deps", "-f", "{{.ImportPath}}:{{join .Imports \",\"}}", pkg) {
		p, is, _ := strings.Cut(line, ":")
		if is != "" {
			imports[p] = strings.Split(is, ",")
		}
	}
	out := map[string]string{}
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if f, ok := ruleFor(rules, p); ok {
			if _, seen := out[f.path]; !seen {
				var path []string
				for q := p; q != ""; q = prev[q] {
					path = append([]string{strings.TrimPrefix(q, module)}, path...)
				}
				out[f.path] = strings.Join(path, " -> ")
			}
		}
		for _, i := range imports[p] {
			if _, seen := prev[i]; !seen {
				prev[i] = p
				queue = append(queue, i)
			}
		}
	}
	return out
}

// TestOnlyCmdImportsCLI: internal/cli is the command line, and only a
// main package under cmd/ builds one from it. Tests that run a command as
// a user would run the built binary (testenv.PullpathBinary; the lab's
// re-executed children through labtest.Main), so no test binary links
// every engine and cloud SDK the CLI does.
func TestOnlyCmdImportsCLI(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the dependency guard needs the go command: %v", err)
	}
	const cli = module + "internal/cli"
	lines := goList(t, goBin, "-f", "{{.ImportPath}}:{{join .Imports \",\"}},{{join .TestImports \",\"}},{{join .XTestImports \",\"}}", module+"...")
	importers := 0
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, ":")
		if !slices.Contains(strings.Split(imports, ","), cli) {
			continue
		}
		importers++
		if !strings.HasPrefix(pkg, module+"cmd/") {
			t.Errorf("%s imports internal/cli (it or its tests): only cmd/ may; run the built binary instead (testenv.PullpathBinary)", strings.TrimPrefix(pkg, module))
		}
	}
	if importers == 0 {
		t.Errorf("go list found no importer of internal/cli (cmd/pullpath is one): %d packages listed", len(lines))
	}
}
