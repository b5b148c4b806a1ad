//go:build !fuzzonly

package runtimecfg

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// containerdBenchNode writes a containerd node with n hosts.toml folders
// under its config_path, 50 imported drop-ins (conf.d/*.toml, as
// Deckhouse- and k0s-style nodes merge them), inline registry.configs
// credentials for 20 registries, and this machine's dpkg status with
// containerd 2.1 in it: the version source on a Debian node without build
// information (2.x merges the drop-ins key by key; 1.x would let each
// drop-in's CRI section replace the main file's, config_path with it).
func containerdBenchNode(b *testing.B, n int) string {
	b.Helper()
	files := map[string]string{}
	w := func(p, s string) { files[p] = s }
	main := "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d:/etc/docker/certs.d\"\n"
	for i := 0; i < 20; i++ {
		main += fmt.Sprintf("[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"registry%03d.corp.example\".auth]\n  username = \"u%d\"\n  password = \"p%d\"\n", i, i, i)
	}
	w("/etc/containerd/config.toml", main)
	for i := 0; i < 50; i++ {
		w(fmt.Sprintf("/etc/containerd/conf.d/%02d.toml", i), fmt.Sprintf("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.r%d]\n  runtime_type = \"io.containerd.runc.v2\"\n", i))
	}
	for i := 0; i < n; i++ {
		reg := fmt.Sprintf("registry%03d.corp.example", i)
		w(fmt.Sprintf("/etc/containerd/certs.d/%s/hosts.toml", reg), fmt.Sprintf("server = \"https://%s\"\n\n[host.\"https://mirror-a.corp.example:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = \"/etc/lab/ca.crt\"\n\n[host.\"https://mirror-b.corp.example:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n", reg))
	}
	w("/etc/containerd/certs.d/_default/hosts.toml", "[host.\"https://cache.corp.example\"]\n  capabilities = [\"pull\", \"resolve\"]\n")
	if status, err := os.ReadFile("/var/lib/dpkg/status"); err == nil {
		// the machine's own containerd entry renamed: the node's is 2.1
		st := strings.ReplaceAll(string(status), "Package: containerd\n", "Package: containerd-machine\n")
		w("/var/lib/dpkg/status", st+"\nPackage: containerd\nStatus: install ok installed\nVersion: 2.1.4-1\n")
	}
	return nodeFS(b, files)
}

// BenchmarkRuntimeConfigContainerd is step 0 on a containerd node with
// 300 hosts.toml folders and 50 imported drop-ins: finding the runtime
// (the machine's real /proc scanned, or none), reading config.toml and its
// imports as containerd does, then the hosts of one reference; beside it
// the same reference's hosts from --certs-dir (what a probe given it
// reads).
func BenchmarkRuntimeConfigContainerd(b *testing.B) {
	root := containerdBenchNode(b, 300)
	ref, err := ParseReference("registry010.corp.example/team/app:1.0")
	if err != nil {
		b.Fatal(err)
	}
	step0 := func(b *testing.B, procRoot string) {
		defer cpuPerOp(b)()
		for b.Loop() {
			rc, err := DiscoverRuntime(RuntimeOptions{Root: root, ProcRoot: procRoot})
			if err != nil {
				b.Fatal(err)
			}
			set, err := rc.Registry.Hosts(ref)
			if err != nil || len(set.Hosts) != 3 || set.Hosts[2].Auth == nil {
				b.Fatalf("Hosts = %+v, %v; want two mirrors and the registry with its credentials", set.Hosts, err)
			}
		}
	}
	b.Run("discover+read+hosts", func(b *testing.B) { step0(b, filepath.Join(root, "proc")) })
	b.Run("discover+read+hosts/real-proc", func(b *testing.B) { step0(b, "/proc") })
	b.Run("certs-dir", func(b *testing.B) {
		certs := filepath.Join(root, "etc", "containerd", "certs.d")
		defer cpuPerOp(b)()
		for b.Loop() {
			set, err := (CertsDirs{Dirs: []string{certs}}).Hosts(ref)
			if err != nil || len(set.Hosts) != 3 {
				b.Fatalf("Hosts = %d hosts, %v", len(set.Hosts), err)
			}
		}
	})
}
