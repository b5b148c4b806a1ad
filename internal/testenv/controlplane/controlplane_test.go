package controlplane

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/childproc"
)

// TestControlPlane starts the real etcd and kube-apiserver, writes the
// objects pullpath's explain reads (a Node with status, a Pod waiting in
// ImagePullBackOff, an Event), reads them back through both the returned
// client and the kubeconfig, then stops and checks nothing is left.
func TestControlPlane(t *testing.T) {
	began := time.Now()
	c := Require(t)
	t.Logf("control plane ready in %s", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	cs, err := c.Client()
	if err != nil {
		t.Fatalf("Client() = %v", err)
	}

	t.Run("node with status", func(t *testing.T) {
		testNode(ctx, t, cs)
	})
	t.Run("pod in ImagePullBackOff", func(t *testing.T) {
		testPod(ctx, t, cs)
	})
	t.Run("kubeconfig", func(t *testing.T) {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			t.Fatalf("BuildConfigFromFlags(%q) = %v", c.Kubeconfig, err)
		}
		kcs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatalf("NewForConfig = %v", err)
		}
		n, err := kcs.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get node through kubeconfig = %v", err)
		}
		if got, want := n.Labels["pool"], "gpu"; got != want {
			t.Errorf("node label pool = %q, want %q", got, want)
		}
	})
	t.Run("listens on loopback only", func(t *testing.T) {
		for _, p := range []*childproc.Proc{c.etcd, c.apiserver} {
			addrs, err := listeningAddrs(p.Pid())
			if err != nil {
				t.Fatalf("listeningAddrs(%s) = %v", p.Name, err)
			}
			if len(addrs) == 0 {
				t.Errorf("%s listens on no TCP socket, want its loopback port(s)", p.Name)
			}
			for _, a := range addrs {
				if !a.Addr().IsLoopback() {
					t.Errorf("%s listens on %v, want loopback only", p.Name, a)
				}
			}
		}
	})

	// Stop, and check that nothing is left: processes, ports, directory.
	pids := []int{c.etcd.Pid(), c.apiserver.Pid()}
	ports := append([]int(nil), c.ports...)
	for _, p := range []*childproc.Proc{c.etcd, c.apiserver} {
		t.Logf("%s: %s", p.Name, vmRSS(p.Pid()))
	}
	began = time.Now()
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	t.Logf("stopped in %s", time.Since(began).Round(time.Millisecond))
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop() = %v, want nil", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("kill(%d, 0) after Stop = %v, want ESRCH", pid, err)
		}
	}
	if len(ports) != 3 {
		t.Errorf("control plane used ports %v, want 3 (etcd client, etcd peer, apiserver)", ports)
	}
	for _, port := range ports {
		conn, err := net.DialTimeout("tcp", hostPort(port), time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("dial %s after Stop succeeded, want connection refused", hostPort(port))
		}
	}
	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat work dir %s after Stop = %v, want not exist", c.dir, err)
	}
}

func testNode(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   "node-a",
		Labels: map[string]string{"pool": "gpu", "kubernetes.io/os": "linux"},
	}}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create node = %v", err)
	}
	status := corev1.NodeStatus{
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "10.1.2.3"},
			{Type: corev1.NodeHostName, Address: "node-a"},
		},
		Images: []corev1.ContainerImage{
			{Names: []string{"registry.example.test/team/app@sha256:" + strings.Repeat("ab", 32), "registry.example.test/team/app:v1"}, SizeBytes: 12345},
		},
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
		NodeInfo: corev1.NodeSystemInfo{ContainerRuntimeVersion: "containerd://2.1.0", KubeletVersion: "v1.37.2"},
	}
	created.Status = status
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("UpdateStatus node = %v", err)
	}
	got, err := cs.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get node = %v", err)
	}
	if diff := cmp.Diff(node.Labels, got.Labels); diff != "" {
		t.Errorf("node labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(status.Addresses, got.Status.Addresses); diff != "" {
		t.Errorf("node addresses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(status.Images, got.Status.Images); diff != "" {
		t.Errorf("node images (-want +got):\n%s", diff)
	}
	if got, want := got.Status.NodeInfo.ContainerRuntimeVersion, "containerd://2.1.0"; got != want {
		t.Errorf("node runtime = %q, want %q", got, want)
	}
}

func testPod(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	const ns, image = "default", "registry.example.test/team/app:v2"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName:         "node-a",
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}},
			Containers:       []corev1.Container{{Name: "app", Image: image}},
		},
	}
	created, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create pod = %v", err)
	}
	waiting := &corev1.ContainerStateWaiting{
		Reason:  "ImagePullBackOff",
		Message: `Back-off pulling image "` + image + `"`,
	}
	created.Status = corev1.PodStatus{
		Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: image, State: corev1.ContainerState{Waiting: waiting},
		}},
	}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("UpdateStatus pod = %v", err)
	}
	got, err := cs.CoreV1().Pods(ns).Get(ctx, "app-0", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get pod = %v", err)
	}
	if n := len(got.Status.ContainerStatuses); n != 1 {
		t.Fatalf("pod has %d container statuses, want 1", n)
	}
	if diff := cmp.Diff(waiting, got.Status.ContainerStatuses[0].State.Waiting); diff != "" {
		t.Errorf("pod container waiting state (-want +got):\n%s", diff)
	}

	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "app-0.pull", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", Namespace: ns, Name: "app-0", UID: got.UID, FieldPath: "spec.containers{app}",
		},
		Reason:         "Failed",
		Message:        `Failed to pull image "` + image + `": 401 Unauthorized`,
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-a"},
		FirstTimestamp: metav1.Now(),
		LastTimestamp:  metav1.Now(),
		Count:          3,
	}
	if _, err := cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Create event = %v", err)
	}
	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=app-0",
	})
	if err != nil {
		t.Fatalf("List events = %v", err)
	}
	if n := len(list.Items); n != 1 {
		t.Fatalf("List events for app-0 returned %d, want 1", n)
	}
	e := list.Items[0]
	if e.Reason != ev.Reason || e.Message != ev.Message || e.Count != 3 || e.InvolvedObject.UID != got.UID {
		t.Errorf("event = {%q %q %d %s}, want {%q %q 3 %s}", e.Reason, e.Message, e.Count, e.InvolvedObject.UID, ev.Reason, ev.Message, got.UID)
	}
}

// vmRSS returns the VmRSS line of pid's /proc status, for the log.
func vmRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.Join(strings.Fields(line), " ")
		}
	}
	return "VmRSS unknown"
}

// listeningAddrs returns the TCP addresses pid listens on, from /proc.
func listeningAddrs(pid int) ([]netip.AddrPort, error) {
	inodes := map[string]bool{}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, err
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []netip.AddrPort
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			ap, err := parseProcAddr(fields[1])
			if err != nil {
				f.Close()
				return nil, err
			}
			out = append(out, ap)
		}
		f.Close()
	}
	return out, nil
}

// parseProcAddr parses a /proc/net/tcp{,6} address such as 0100007F:1F90:
// hex address bytes in host (little-endian) order per 32-bit word, then a
// hex port.
func parseProcAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("parse /proc address %q: no port", s)
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("parse /proc address %q: want 8 or 32 hex digits", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("parse /proc address %q: port: %v", s, err)
	}
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

func TestParseProcAddr(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"00000000:0050", "0.0.0.0:80"},
		{"00000000000000000000000001000000:0016", "[::1]:22"},
		{"0000000000000000FFFF00000100007F:1F90", "127.0.0.1:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseProcAddr(tt.in)
			if err != nil {
				t.Fatalf("parseProcAddr(%q) = %v", tt.in, err)
			}
			if got.String() != tt.want {
				t.Errorf("parseProcAddr(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	if _, err := parseProcAddr("zz:1"); err == nil {
		t.Errorf("parseProcAddr(%q) = nil error, want one", "zz:1")
	}
}

// TestStartMissingBinaries checks that an empty binary directory is
// reported as ErrBinariesMissing, which Require turns into a skip (or a
// failure under CI=true), and that nothing is left behind.
func TestStartMissingBinaries(t *testing.T) {
	work := t.TempDir()
	_, err := Start(t.Context(), Options{BinDir: t.TempDir(), WorkDir: work})
	if !errors.Is(err, ErrBinariesMissing) {
		t.Fatalf("Start(empty BinDir) = %v, want ErrBinariesMissing", err)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("Start(empty BinDir) left %d entries in WorkDir, want 0", len(entries))
	}
}

func TestResolveBinDir(t *testing.T) {
	t.Setenv(BinDirEnv, "")
	got, err := resolveBinDir("")
	if err != nil {
		t.Fatalf("resolveBinDir(\"\") = %v", err)
	}
	if !strings.HasSuffix(got, filepath.Join("test", "controlplane", "bin")) {
		t.Errorf("resolveBinDir(\"\") = %q, want a path ending in test/controlplane/bin", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(got))), "go.mod")); err != nil {
		t.Errorf("resolveBinDir(\"\") = %q, want it under a directory holding go.mod: %v", got, err)
	}
	t.Setenv(BinDirEnv, "/opt/cp")
	if got, _ := resolveBinDir(""); got != "/opt/cp" {
		t.Errorf("resolveBinDir with %s=/opt/cp = %q, want /opt/cp", BinDirEnv, got)
	}
	if got, _ := resolveBinDir("/explicit"); got != "/explicit" {
		t.Errorf("resolveBinDir(%q) = %q, want it unchanged", "/explicit", got)
	}
}

func TestLogBufferKeepsTail(t *testing.T) {
	var b logBuffer
	line := strings.Repeat("x", 1023) + "\n"
	for range (maxLogBytes / 1024) + 10 {
		b.Write([]byte(line))
	}
	b.Write([]byte("last line\n"))
	if n := len(b.String()); n > maxLogBytes {
		t.Errorf("logBuffer kept %d bytes, want at most %d", n, maxLogBytes)
	}
	if got := b.tail(1); got != "last line" {
		t.Errorf("tail(1) = %q, want %q", got, "last line")
	}
}
