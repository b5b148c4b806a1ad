//go:build !fuzzonly

package runtimecfg

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// crioBenchNode writes a CRI-O node with n registries.conf.d drop-ins
// (one [[registry]] with two mirrors each, an OpenShift node's IDMS/ITMS
// renderings at scale), a certs.d folder per registry, crio.conf and 10
// crio.conf.d files; and beside it a containerd certs.d of n hosts.toml
// folders, what the same node given --certs-dir would read.
func crioBenchNode(b *testing.B, n int) (root, certsDir string) {
	b.Helper()
	root = b.TempDir()
	w := func(p, s string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	w("/etc/crio/crio.conf", "[crio.image]\npause_image = \"quay.io/openshift/pause:4.16\"\n")
	for i := 0; i < 10; i++ {
		w(fmt.Sprintf("/etc/crio/crio.conf.d/%02d-mco.conf", i), "[crio.image]\nglobal_auth_file = \"/var/lib/kubelet/config.json\"\n")
	}
	w("/etc/containers/registries.conf", "unqualified-search-registries = [\"registry.access.redhat.com\", \"docker.io\"]\n")
	for i := 0; i < n; i++ {
		reg := fmt.Sprintf("registry%03d.corp.example", i)
		w(fmt.Sprintf("/etc/containers/registries.conf.d/%03d-idms.conf", i), fmt.Sprintf(
			"[[registry]]\nprefix = \"\"\nlocation = %q\n\n[[registry.mirror]]\nlocation = \"mirror-a.corp.example:5000/%s\"\npull-from-mirror = \"digest-only\"\n\n[[registry.mirror]]\nlocation = \"mirror-b.corp.example:5000/%s\"\n", reg, reg, reg))
		w(fmt.Sprintf("/etc/containers/certs.d/%s/ca.crt", reg), "not read by the benchmark")
		w(fmt.Sprintf("/certs.d/%s/hosts.toml", reg), fmt.Sprintf("server = \"https://%s\"\n\n[host.\"https://mirror-a.corp.example:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n", reg))
	}
	return root, filepath.Join(root, "certs.d")
}

// BenchmarkRuntimeConfigCRIO is step 0 on a CRI-O node with 300
// registries.conf.d drop-ins: finding CRI-O, reading crio.conf and its
// drop-ins and every registries.conf file, then the hosts of one
// reference; beside it the same reference's hosts from a --certs-dir of
// 300 hosts.toml folders (what a probe given --certs-dir reads).
func BenchmarkRuntimeConfigCRIO(b *testing.B) {
	root, certs := crioBenchNode(b, 300)
	ref, err := ParseReference("registry150.corp.example/team/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("discover+read+hosts", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			rc, err := DiscoverRuntime(RuntimeOptions{Root: root, ProcRoot: filepath.Join(root, "proc")})
			if err != nil {
				b.Fatal(err)
			}
			if rc.Runtime != RuntimeCRIO {
				b.Fatalf("runtime %s, want cri-o", rc.Runtime)
			}
			set, err := rc.Registry.Hosts(ref)
			if err != nil || len(set.Hosts) != 3 {
				b.Fatalf("Hosts = %d hosts, %v; want the two mirrors and the registry", len(set.Hosts), err)
			}
		}
	})
	b.Run("one-registries.conf-300-entries", func(b *testing.B) {
		// what the Machine Config Operator renders: every mirror set in
		// /etc/containers/registries.conf itself
		one := b.TempDir()
		var conf []byte
		for i := 0; i < 300; i++ {
			reg := fmt.Sprintf("registry%03d.corp.example", i)
			conf = fmt.Appendf(conf, "[[registry]]\nprefix = \"\"\nlocation = %q\n\n[[registry.mirror]]\nlocation = \"mirror-a.corp.example:5000/%s\"\npull-from-mirror = \"digest-only\"\n\n[[registry.mirror]]\nlocation = \"mirror-b.corp.example:5000/%s\"\n\n", reg, reg, reg)
		}
		for p, c := range map[string][]byte{"/etc/containers/registries.conf": conf, "/etc/crio/crio.conf": []byte("[crio.image]\n")} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(one, p)), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(one, p), c, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		defer cpuPerOp(b)()
		for b.Loop() {
			rc, err := DiscoverRuntime(RuntimeOptions{Root: one, ProcRoot: filepath.Join(one, "proc")})
			if err != nil {
				b.Fatal(err)
			}
			if set, err := rc.Registry.Hosts(ref); err != nil || len(set.Hosts) != 3 {
				b.Fatalf("Hosts = %d hosts, %v", len(set.Hosts), err)
			}
		}
	})
	b.Run("certs-dir", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			set, err := (CertsDirs{Dirs: []string{certs}}).Hosts(ref)
			if err != nil || len(set.Hosts) != 2 {
				b.Fatalf("Hosts = %d hosts, %v", len(set.Hosts), err)
			}
		}
	})
}

// cpuPerOp reports the process's CPU time (user and system) per op,
// cpu-ms/op: on a machine shared with other builds the wall time per op
// is the CPU time plus the wait for a core.
func cpuPerOp(b *testing.B) func() {
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	return func() {
		var after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		d := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
		b.ReportMetric(float64(d.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}
