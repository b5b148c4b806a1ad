package depguard

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// toolPrograms are the packages of the programs hack/controlplane.sh builds
// from the tools module (test/tools): its programs=( "NAME PACKAGE" ... )
// list, read from the script so the two never differ.
func toolPrograms(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "hack", "controlplane.sh"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(b), "\nprograms=(\n")
	list, _, ok2 := strings.Cut(list, "\n)\n")
	if !ok || !ok2 {
		t.Fatal("hack/controlplane.sh: no programs=( ... ) list")
	}
	var pkgs []string
	for _, line := range strings.Split(list, "\n") {
		_, pkg, ok := strings.Cut(strings.Trim(strings.TrimSpace(line), `"`), " ")
		if !ok {
			t.Fatalf("hack/controlplane.sh: programs line %q, want \"NAME PACKAGE\"", line)
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs
}

// TestToolsShareVersions keeps test/tools/go.mod aligned with the project's
// go.mod: every module that gives packages both to the tools' build and to
// the project's test build must be at one version in both. The build cache
// is keyed by each package's source, so a package at one version is
// compiled once in a CI (by hack/controlplane.sh) and found in the cache by
// the tests; at two versions, the Kubernetes API types, client-go, grpc,
// protobuf and otel were compiled twice in a cold CI. When this fails, raise
// the lower side to the higher: `go get MODULE@VERSION` in that module, then
// `go mod tidy` in both.
func TestToolsShareVersions(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the version check needs the go command: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(root, "test", "tools")
	if _, err := os.Stat(filepath.Join(tools, "go.mod")); err != nil {
		t.Fatalf("the tools module: %v", err)
	}
	const format = "{{with .Module}}{{.Path}} {{.Version}}{{end}}"
	project := moduleVersions(t, goBin, root, "-deps", "-test", "-f", format, "./...")
	toolVers := moduleVersions(t, goBin, tools, append([]string{"-deps", "-f", format}, toolPrograms(t, root)...)...)
	shared := 0
	var differ []string
	for path, v := range project {
		tv, ok := toolVers[path]
		if !ok {
			continue
		}
		shared++
		if tv != v {
			differ = append(differ, path+": "+v+" in go.mod, "+tv+" in test/tools/go.mod")
		}
	}
	sort.Strings(differ)
	for _, d := range differ {
		t.Errorf("%s", d)
	}
	// The check must be able to see sharing at all: client-go and the
	// Kubernetes API types are in both builds.
	for _, must := range []string{"k8s.io/client-go", "k8s.io/api", "google.golang.org/protobuf"} {
		if _, ok := project[must]; !ok {
			t.Errorf("%s is not in the project's test build (go list -deps -test ./...)", must)
		}
		if _, ok := toolVers[must]; !ok {
			t.Errorf("%s is not in the tools' build", must)
		}
	}
	t.Logf("%d modules give packages to both builds; %d at different versions", shared, len(differ))
}

// moduleVersions runs `go list ARGS` in dir (GOWORK off: each module on its
// own) and returns module path -> version of the packages listed.
func moduleVersions(t *testing.T, goBin, dir string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(goBin, append([]string{"list"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		path, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && v != "" {
			m[path] = v
		}
	}
	return m
}
