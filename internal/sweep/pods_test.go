package sweep

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/report"
)

// TestProbePodSpec: the probe Pod is a per-node walk's Pod, field by field:
// pinned by nodeName on the host network, tolerating every taint, bounded
// and deleted at once, locked down, reading the node's files read-only.
func TestProbePodSpec(t *testing.T) {
	o := PodOptions{RunID: "r1", Namespace: "ns", Image: "reg.example/app:1", ProbeImage: "reg.example/pullpath:1", Deadline: 600, PullSecrets: []string{"creds", "more-creds"}, ServiceAccount: "web"}
	for _, resolved := range []bool{false, true} {
		p := o.ProbePod("p", report.PlannedNode{Name: "node-1", Resolved: resolved})
		s := p.Spec
		if s.NodeName != "node-1" || !s.HostNetwork || s.DNSPolicy != corev1.DNSDefault || s.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("nodeName %q hostNetwork %v dnsPolicy %s restart %s", s.NodeName, s.HostNetwork, s.DNSPolicy, s.RestartPolicy)
		}
		if len(s.Tolerations) != 1 || s.Tolerations[0].Operator != corev1.TolerationOpExists || s.Tolerations[0].Key != "" {
			t.Errorf("tolerations = %+v, want one operator Exists for every taint", s.Tolerations)
		}
		if *s.ActiveDeadlineSeconds != 600 || *s.TerminationGracePeriodSeconds != 0 || *s.AutomountServiceAccountToken {
			t.Errorf("deadline %d grace %d token %v", *s.ActiveDeadlineSeconds, *s.TerminationGracePeriodSeconds, *s.AutomountServiceAccountToken)
		}
		c := s.Containers[0]
		sc := c.SecurityContext
		if !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || !*s.SecurityContext.RunAsNonRoot {
			t.Errorf("security context = %+v / %+v", sc, s.SecurityContext)
		}
		if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError || c.Resources.Requests.Cpu().MilliValue() > 100 || c.Resources.Requests.Memory().Value() > 64<<20 {
			t.Errorf("termination policy %s requests %v", c.TerminationMessagePolicy, c.Resources.Requests)
		}
		args := strings.Join(c.Args, " ")
		// the runtime's own registry configuration, found under /node:
		// no folder given by hand
		if strings.Contains(args, "--certs-dir") || strings.Contains(args, "--docker-certs-dir") {
			t.Errorf("args %q name registry folders by hand, want the runtime's own found under --host-root", args)
		}
		for _, want := range []string{"probe reg.example/app:1 -o json", "--verdict-file /dev/termination-log", "--hosts-file /host/etc/hosts",
			"--resolv-conf /host/etc/resolv.conf",
			"--pull-secret /pull-secrets/creds --pull-secret /pull-secrets/more-creds", "--node $(NODE_NAME)", "--host-root /node"} {
			if !strings.Contains(args, want) {
				t.Errorf("args %q lack %q", args, want)
			}
		}
		hostPaths := map[string]bool{}
		var secrets []string
		for _, v := range s.Volumes {
			if v.HostPath != nil {
				hostPaths[v.HostPath.Path] = true
				// containerd's proxy settings: whole /etc and /usr,
				// which exist on every node (a missing file or deeper
				// directory would block the Pod or be created on the node)
				if p := v.HostPath.Path; (p == "/etc" || p == "/usr" || p == "/var/lib") && *v.HostPath.Type != corev1.HostPathDirectory {
					t.Errorf("host path %s type %q, want Directory (never created on the node)", p, *v.HostPath.Type)
				}
			}
			if sv := v.Secret; sv != nil {
				if sv.Optional == nil || !*sv.Optional || len(sv.Items) != 0 {
					t.Errorf("secret volume %s = %+v, want the whole Secret, optional (a missing one is skipped, as the kubelet does)", v.Name, sv)
				}
				secrets = append(secrets, sv.SecretName)
			}
		}
		if strings.Join(secrets, ",") != "creds,more-creds" {
			t.Errorf("secret volumes %v, want every pull secret in order", secrets)
		}
		for _, m := range c.VolumeMounts {
			if !m.ReadOnly {
				t.Errorf("mount %s is writable", m.MountPath)
			}
		}
		at := map[string]string{}
		for _, m := range c.VolumeMounts {
			at[m.Name] = m.MountPath
		}
		if at["node-etc"] != "/node/etc" || at["node-usr"] != "/node/usr" || at["node-var-lib"] != "/node/var/lib" {
			t.Errorf("mounts %v, want the node's /etc, /usr and /var/lib (k3s's and rke2's containerd config) under /node (--host-root /node)", at)
		}
		for _, want := range []string{"/etc/hosts", "/etc/resolv.conf", "/etc/ssl/certs", "/etc", "/usr", "/var/lib"} {
			if !hostPaths[want] {
				t.Errorf("host paths %v lack %s", hostPaths, want)
			}
		}
		if hostPaths["/run/systemd/resolve"] != resolved {
			t.Errorf("/run/systemd/resolve mounted = %v, want %v (systemd-resolved node)", hostPaths["/run/systemd/resolve"], resolved)
		}
		if len(s.ImagePullSecrets) != 2 || s.ImagePullSecrets[0].Name != "creds" || s.ImagePullSecrets[1].Name != "more-creds" {
			t.Errorf("imagePullSecrets = %v, want the pull secrets in order (for a private copy of the probe image)", s.ImagePullSecrets)
		}
		if p.Labels[LabelRun] != "r1" || p.Labels[LabelRole] != RoleProbe || p.Annotations[AnnotationNode] != "node-1" {
			t.Errorf("labels %v annotations %v", p.Labels, p.Annotations)
		}
	}
	// registry folders given by hand (--node-certs-dir) replace the
	// runtime's own configuration
	o2 := o
	o2.CertsDir = "/etc/k8s/registry.d"
	args := strings.Join(o2.ProbePod("p", report.PlannedNode{Name: "node-1"}).Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--certs-dir /host/etc/k8s/registry.d") || strings.Contains(args, "--docker-certs-dir") {
		t.Errorf("args %q, want --certs-dir of the folder given and no docker folder", args)
	}
	cp := o.CanaryPod("c", report.PlannedNode{Name: "node-1"})
	cc := cp.Spec.Containers[0]
	if cc.Image != "reg.example/app:1" || cc.ImagePullPolicy != corev1.PullAlways || len(cp.Spec.ImagePullSecrets) != 2 || cc.Command[0] != CanaryCommand || cp.Spec.ServiceAccountName != "web" {
		t.Errorf("canary = image %s policy %s secrets %v command %v, want the target image, Always, the pull secrets, service account web", cc.Image, cc.ImagePullPolicy, cp.Spec.ImagePullSecrets, cc.Command)
	}
	j := newOwner(o)
	if *j.Spec.Parallelism != 0 || *j.Spec.TTLSecondsAfterFinished != 0 || *j.Spec.ActiveDeadlineSeconds != 600+ownerGrace {
		t.Errorf("owner = parallelism %d ttl %d deadline %d, want 0, 0 and the run's deadline plus %d", *j.Spec.Parallelism, *j.Spec.TTLSecondsAfterFinished, *j.Spec.ActiveDeadlineSeconds, ownerGrace)
	}
}
