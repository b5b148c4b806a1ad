package runtimecfg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCmdline adds a runtime process with its command line to root's /proc.
func fakeCmdline(t *testing.T, root, pid, comm, netns string, args ...string) {
	t.Helper()
	fakeProc(t, root, pid, comm, netns, "0::/system.slice/"+comm+".service")
	if err := os.WriteFile(filepath.Join(root, "proc", pid, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
}

const k3sConfig = "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"

func discoverRuntime(t *testing.T, root string, o RuntimeOptions) *RuntimeConfig {
	t.Helper()
	o.Root = root
	if o.SelfNetNS == "" {
		o.SelfNetNS = "net:[1]"
	}
	o.SelfMntNS = "mnt:[1]"
	rc, err := DiscoverRuntime(o)
	if err != nil {
		t.Fatalf("DiscoverRuntime: %v", err)
	}
	return rc
}

func chosen(rc *RuntimeConfig) RuntimeCandidate {
	for _, c := range rc.Candidates {
		if c.Chosen {
			return c
		}
	}
	return RuntimeCandidate{}
}

func TestDiscoverRuntimeLayoutsOnDisk(t *testing.T) {
	root := nodeFS(t, map[string]string{
		k3sConfig:                     "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/var/lib/rancher/k3s/agent/etc/containerd/certs.d\"\n",
		"/etc/containerd/config.toml": "version = 2\n",
	})
	rc := discoverRuntime(t, root, RuntimeOptions{})
	if rc.Layout != "k3s" || rc.ConfigFile != k3sConfig {
		t.Fatalf("layout %q file %q, want k3s %s", rc.Layout, rc.ConfigFile, k3sConfig)
	}
	if !strings.Contains(rc.HowFound, "no running runtime seen") {
		t.Errorf("HowFound = %q, want it to say no process was seen", rc.HowFound)
	}
	if len(rc.Candidates) != 2 || rc.Candidates[1].ConfigFile != "/etc/containerd/config.toml" || !strings.Contains(rc.Candidates[1].Why, "k3s renders its config") {
		t.Errorf("candidates = %+v, want the default file second with why k3s won", rc.Candidates)
	}
	dirs := rc.Registry.(CertsDirs).Dirs
	if want := filepath.Join(root, "/var/lib/rancher/k3s/agent/etc/containerd/certs.d"); len(dirs) != 1 || dirs[0] != want {
		t.Errorf("config_path dirs = %v, want [%s]", dirs, want)
	}
	if len(rc.Sources) != 1 || !rc.Sources[0].Missing || rc.Sources[0].Path != "/var/lib/rancher/k3s/agent/etc/containerd/certs.d" {
		t.Errorf("sources = %+v, want the k3s certs.d as a node path, missing", rc.Sources)
	}
}

func TestDiscoverRuntimeRunningProcess(t *testing.T) {
	root := nodeFS(t, map[string]string{
		k3sConfig:                     "version = 2\n",
		"/etc/containerd/config.toml": "version = 2\n",
	})
	// a containerd in another network namespace (another lab node) is not this node's
	fakeCmdline(t, root, "40", "containerd", "net:[2]", "containerd", "--config", "/etc/containerd/config.toml")
	fakeCmdline(t, root, "77", "containerd", "net:[1]", "containerd", "-c", k3sConfig, "-a", "/run/k3s/containerd/containerd.sock")
	rc := discoverRuntime(t, root, RuntimeOptions{ProcRoot: filepath.Join(root, "proc")})
	if rc.PID != 77 || rc.Layout != "k3s" || rc.ConfigFile != k3sConfig {
		t.Fatalf("pid %d layout %q file %q, want 77 k3s %s", rc.PID, rc.Layout, rc.ConfigFile, k3sConfig)
	}
	if want := "the running containerd (pid 77): -c " + k3sConfig; rc.HowFound != want {
		t.Errorf("HowFound = %q, want %q", rc.HowFound, want)
	}
	var fileWhy string
	for _, c := range rc.Candidates {
		if c.PID == 0 && c.ConfigFile == "/etc/containerd/config.toml" {
			fileWhy = c.Why
		}
	}
	if !strings.Contains(fileWhy, "the running containerd (pid 77) reads "+k3sConfig) {
		t.Errorf("the default file's why = %q, want it to name the running process's file", fileWhy)
	}
	if !strings.Contains(strings.Join(rc.Notes, "\n"), "1 runtime process(es) in other network namespaces") {
		t.Errorf("notes = %q, want the other namespace's containerd counted", rc.Notes)
	}
}

// TestDiscoverRuntimeSkipsExitedProcess: a containerd whose namespace
// links are gone (a zombie waiting for its parent, or one that exited
// after /proc was listed) pulls nothing: no note blames permissions, it is
// not counted in another namespace, and the running one is found.
func TestDiscoverRuntimeSkipsExitedProcess(t *testing.T) {
	root := nodeFS(t, map[string]string{k3sConfig: "version = 2\n"})
	fakeCmdline(t, root, "31", "containerd", "net:[1]", "containerd", "--config", "/etc/containerd/config.toml")
	if err := os.Remove(filepath.Join(root, "proc", "31", "ns", "net")); err != nil {
		t.Fatal(err)
	}
	fakeCmdline(t, root, "77", "containerd", "net:[1]", "containerd", "-c", k3sConfig)
	rc := discoverRuntime(t, root, RuntimeOptions{ProcRoot: filepath.Join(root, "proc")})
	if rc.PID != 77 || rc.ConfigFile != k3sConfig {
		t.Fatalf("pid %d file %q, want 77 %s", rc.PID, rc.ConfigFile, k3sConfig)
	}
	for _, n := range rc.Notes {
		if strings.Contains(n, "pid 31") || strings.Contains(n, "other network namespaces") {
			t.Errorf("note %q: the exited process must be skipped silently", n)
		}
	}
}

func TestDiscoverRuntimeDefaultsAndFlags(t *testing.T) {
	empty := nodeFS(t, nil)
	rc := discoverRuntime(t, empty, RuntimeOptions{})
	if rc.Runtime != RuntimeContainerd || rc.Layout != "none" || rc.ConfigFile != "" {
		t.Fatalf("empty node: %q %q %q, want containerd's defaults", rc.Runtime, rc.Layout, rc.ConfigFile)
	}

	if _, err := DiscoverRuntime(RuntimeOptions{Root: empty, ConfigFile: "/etc/cri/containerd.toml"}); err == nil || !strings.Contains(err.Error(), "--runtime-config /etc/cri/containerd.toml") {
		t.Errorf("a missing --runtime-config: err = %v, want one naming the flag and file", err)
	}
	if _, err := DiscoverRuntime(RuntimeOptions{Root: empty, Runtime: "docker"}); err == nil || !strings.Contains(err.Error(), `--runtime "docker"`) {
		t.Errorf("--runtime docker: err = %v, want one naming the flag and the choices", err)
	}

	v3 := nodeFS(t, map[string]string{
		"/etc/cri/containerd.toml": "version = 3\n[plugins.'io.containerd.cri.v1.images'.registry]\n  config_path = '/etc/cri/conf.d/hosts:/etc/docker/certs.d'\n",
	})
	rc = discoverRuntime(t, v3, RuntimeOptions{})
	if rc.Layout != "talos" || !strings.HasPrefix(rc.Rules, "containerd 2.x") {
		t.Fatalf("talos v3: layout %q rules %q, want talos with 2.x rules", rc.Layout, rc.Rules)
	}
	// containerd 2.1's transfer pull takes the list as one folder
	if got := rc.Registry.(CertsDirs).String(); got != filepath.Join(v3, "/etc/cri/conf.d/hosts:/etc/docker/certs.d") {
		t.Errorf("config_path = %q, want the whole list as one folder, as the transfer service reads it", got)
	}

	dir := "/tmp/my-certs"
	rc = discoverRuntime(t, v3, RuntimeOptions{CertsDir: &dir})
	if !strings.HasPrefix(rc.Override, "--certs-dir /tmp/my-certs replaces the runtime's own registry configuration (config_path /etc/cri/conf.d/hosts") {
		t.Errorf("Override = %q, want it to name the flag and what it replaced", rc.Override)
	}
	if got := rc.Registry.(CertsDirs).Dirs; len(got) != 1 || got[0] != dir {
		t.Errorf("--certs-dir: dirs %v, want [%s]", got, dir)
	}
}

func TestCertsDirsSeveralRoots(t *testing.T) {
	// containerd asks each config_path folder for HOST_PORT_, HOST and
	// _default before the next folder: an earlier _default wins.
	root := nodeFS(t, map[string]string{
		"a/_default/hosts.toml":         "[host.\"https://mirror-a\"]\n",
		"b/reg.example/hosts.toml":      "[host.\"https://mirror-b\"]\n",
		"c/other.example/hosts.toml":    "[host.\"https://mirror-c\"]\n",
		"c/other.example:5000/ca.crt":   "x",
		"d/third.example:5000/ca.crt":   "x",
		"d/third.example_5000_/ca.crt":  "x",
		"d/third.example_5000_/foo.crt": "x",
	})
	c := CertsDirs{Dirs: []string{filepath.Join(root, "a"), filepath.Join(root, "b")}}
	set, err := c.Hosts(Ref{Registry: "reg.example", Host: "reg.example"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Hosts[0].Host != "mirror-a" {
		t.Errorf("hosts %v: want a's _default mirror first", set.Hosts)
	}
	c = CertsDirs{Dirs: []string{filepath.Join(root, "b"), filepath.Join(root, "c")}}
	set, err = c.Hosts(Ref{Registry: "other.example", Host: "other.example"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Hosts[0].Host != "mirror-c" || set.File != filepath.Join(root, "c/other.example/hosts.toml") {
		t.Errorf("hosts %v file %s: want c's folder for other.example", set.Hosts, set.File)
	}
	set, err = CertsDirs{Dirs: []string{filepath.Join(root, "d")}}.Hosts(Ref{Registry: "third.example:5000", Host: "third.example:5000"})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Hosts) != 1 || len(set.Hosts[0].CAFiles) != 2 {
		t.Errorf("third.example:5000: %+v, want the HOST_PORT_ folder's two CAs", set.Hosts)
	}
}

func TestDiscoverRuntimeSkipsContainerdWithoutCRI(t *testing.T) {
	// Talos runs two containerds in the host's namespaces: the system one
	// (CRI disabled) and the CRI's.
	root := nodeFS(t, map[string]string{
		"/etc/containerd/config.toml": testdata(t, "talos-system-containerd.toml"),
		"/etc/cri/containerd.toml":    testdata(t, "talos-containerd.toml"),
	})
	fakeCmdline(t, root, "20", "containerd", "net:[1]", "/bin/containerd", "--address", "/system/run/containerd/containerd.sock", "--config", "/etc/containerd/config.toml")
	fakeCmdline(t, root, "30", "containerd", "net:[1]", "/bin/containerd", "--address", "/run/containerd/containerd.sock", "--config", "/etc/cri/containerd.toml")
	rc := discoverRuntime(t, root, RuntimeOptions{ProcRoot: filepath.Join(root, "proc")})
	if rc.PID != 30 || rc.ConfigFile != "/etc/cri/containerd.toml" {
		t.Fatalf("chose pid %d %s, want the CRI's containerd (pid 30)", rc.PID, rc.ConfigFile)
	}
	for _, c := range rc.Candidates {
		if c.PID == 20 && !strings.Contains(c.Why, "disables the CRI plugin") {
			t.Errorf("pid 20 why = %q, want the disabled CRI named", c.Why)
		}
	}
}

func TestDiscoverRuntimeCRIODropInsOnly(t *testing.T) {
	// CRI-O packages since 1.29 ship crio.conf.d/10-crio.conf and no crio.conf
	root := nodeFS(t, map[string]string{"/etc/crio/crio.conf.d/10-crio.conf": "[crio.image]\n"})
	rc := discoverRuntime(t, root, RuntimeOptions{})
	if rc.Runtime != RuntimeCRIO || rc.Layout != "cri-o" {
		t.Fatalf("runtime %q layout %q, want CRI-O found by its crio.conf.d", rc.Runtime, rc.Layout)
	}
	if c := chosen(rc); !strings.Contains(c.Seen, "/etc/crio/crio.conf.d") {
		t.Errorf("candidate seen %q, want the folder that marked it", c.Seen)
	}
	if want := "the cri-o layout on disk (/etc/crio/crio.conf.d, no crio.conf)"; !strings.Contains(rc.HowFound, want) {
		t.Errorf("how found %q, want %q: the report must not claim a crio.conf the node lacks", rc.HowFound, want)
	}
}

func TestDiscoverRuntimeProcessEnvironment(t *testing.T) {
	root := nodeFS(t, map[string]string{"/etc/crio/crio.conf": ""})
	fakeCmdline(t, root, "55", "crio", "net:[1]", "/usr/bin/crio")
	if err := os.WriteFile(filepath.Join(root, "proc", "55", "environ"), []byte("CONTAINER_REGISTRIES_CONF=/etc/alt.conf\x00PATH=/bin\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := discoverRuntime(t, root, RuntimeOptions{ProcRoot: filepath.Join(root, "proc")})
	if rc.PID != 55 || rc.Env["CONTAINER_REGISTRIES_CONF"] != "/etc/alt.conf" {
		t.Errorf("pid %d env %v, want crio's environment for its loader", rc.PID, rc.Env)
	}
	if strings.Contains(everything(rc), "/etc/alt.conf") {
		t.Errorf("the environment shows in the discovery: %s", everything(rc))
	}
}
