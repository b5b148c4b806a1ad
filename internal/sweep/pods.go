package sweep

import (
	"fmt"
	"path"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/report"
)

// Labels every object of a sweep carries.
const (
	LabelName      = "app.kubernetes.io/name"      // pullpath
	LabelComponent = "app.kubernetes.io/component" // sweep
	LabelRun       = "pullpath.io/sweep-run"       // the run id
	LabelRole      = "pullpath.io/sweep-role"      // owner | probe | canary
	AnnotationNode = "pullpath.io/node"
)

// Roles of a sweep's objects.
const (
	RoleOwner  = "owner"
	RoleProbe  = "probe"
	RoleCanary = "canary"
)

// CleanupSelector selects every object any sweep left.
const CleanupSelector = LabelComponent + "=sweep," + LabelName + "=pullpath"

// RunSelector selects the objects of one run.
func RunSelector(run string) string { return CleanupSelector + "," + LabelRun + "=" + run }

// hostRoot is where the node's files appear in the probe container.
const hostRoot = "/host"

// pullSecretRoot is where the pull secrets appear, one directory each.
const pullSecretRoot = "/pull-secrets"

// hostMount is one read-only file or directory of the node the probe reads.
type hostMount struct {
	name, path string
	kind       corev1.HostPathType
	flag       string // the probe flag that reads it
}

// The node's files the walk reads, not the kubelet-written copies a
// hostNetwork Pod gets: /etc/hosts and /etc/resolv.conf as files;
// /run/systemd/resolve only where the node's OS runs systemd-resolved (its
// /etc/resolv.conf is then a link to the stub file in there, 127.0.0.53,
// which a hostNetwork Pod reaches as containerd does; the upstream list
// beside it is what the kubelet hands to Pods). The runtime's own
// configuration (its config file and the registry folders it names) is
// read under nodeRoot (nodeMounts); certsMounts only when the caller names
// the registry folders by hand.
var hostMounts = []hostMount{
	{"hosts", "/etc/hosts", corev1.HostPathFile, "--hosts-file"},
	{"resolv", "/etc/resolv.conf", corev1.HostPathFile, "--resolv-conf"},
	// The node's system roots, which containerd trusts: the probe reads
	// them through SSL_CERT_DIR instead of its image's (it has none).
	{"ca-certs", "/etc/ssl/certs", corev1.HostPathDirectory, ""},
}

// certsMounts are --node-certs-dir and --node-docker-certs-dir: registry
// folders given by hand, which replace the runtime's own configuration
// (the probe's --certs-dir). No type check: a missing one is made empty by
// the runtime, which reads the same as missing.
var certsMounts = []hostMount{
	{"containerd-certs", "", corev1.HostPathUnset, "--certs-dir"},
	{"docker-certs", "", corev1.HostPathUnset, "--docker-certs-dir"},
}

var resolvedMount = hostMount{"systemd-resolve", "/run/systemd/resolve", corev1.HostPathDirectory, ""}

// nodeRoot is where the node's /etc, /usr and /var/lib appear in the
// probe container, for the runtime's configuration and proxy settings: the
// probe's --host-root.
const nodeRoot = "/node"

// proxyMounts are the node's files that make containerd's environment
// (runtimecfg.DiscoverProxy reads them under --host-root): the systemd
// unit and its drop-ins in /etc/systemd/system and /usr/lib/systemd/system,
// the manager's DefaultEnvironment= (/etc/systemd/system.conf.d), the
// EnvironmentFile= files (/etc/environment, /etc/sysconfig, ...), k3s's and
// rke2's /etc/default files. Whole /etc and /usr, each HostPathDirectory:
// both exist on every Linux node, so the check never blocks the Pod, and
// nothing is created on the node. A single file or a deeper directory
// (/etc/environment, /etc/default, /etc/systemd) may be missing, and then
// no HostPathType works: File or Directory refuses the Pod, and unset
// makes containerd's CRI create the missing source as an empty directory
// on the node (containerd internal/cri/opts/spec_linux_opts.go,
// WithMounts: os.MkdirAll of a missing host path).
// The probe runs as uid 65532 without capabilities: it reads only the
// world-readable files of both, which the unit files and drop-ins are.
// The running containerd's own environment (/proc/PID/environ) is not
// read: that takes the host's PID namespace and CAP_SYS_PTRACE as root
// (ptrace's PTRACE_MODE_READ_FSCREDS check), far more than reading files;
// a drop-in changed without a restart shows in the files, not in what
// runs (the report says the proxy came from the files).
//
// The runtime's configuration (runtimecfg.DiscoverRuntime) lives in the
// same /etc (containerd, Talos's /etc/cri, CRI-O, the registries.conf and
// certs.d of containers/image) and in /var/lib, where k3s and rke2 render
// containerd's config and certs.d (/var/lib/rancher/*/agent/etc/containerd):
// /var/lib exists on every Linux node, so it is mounted whole like /etc.
// The kubelet's own folders under it (/var/lib/kubelet/pods with the
// Pods' secrets) are root's only: the probe's uid cannot enter them.
var proxyMounts = []hostMount{
	{"node-etc", "/etc", corev1.HostPathDirectory, ""},
	{"node-usr", "/usr", corev1.HostPathDirectory, ""},
	{"node-var-lib", "/var/lib", corev1.HostPathDirectory, ""},
}

// PodOptions shape the Pods.
type PodOptions struct {
	RunID       string
	Namespace   string
	Image       string // the target image
	ProbeImage  string
	CanaryImage string // default Image
	Deadline    int64  // activeDeadlineSeconds
	ProbeArgs   []string
	// CheckUpstream passes --check-upstream to the probe.
	CheckUpstream bool
	Owner         *batchv1.Job
	// CertsDir and DockerCertsDir, when set, are registry folders on the
	// node the walk reads instead of the runtime's own configuration (the
	// probe's --certs-dir and --docker-certs-dir); by default the probe
	// finds the runtime's config and folders under the node's /etc and
	// /var/lib.
	CertsDir, DockerCertsDir string
	// PullSecrets are the imagePullSecrets (in Namespace), in order, of the
	// canary and of the probe Pod (whose image, a private copy of
	// pullpath's node-side image, may live in the same registry); the
	// probe mounts each (an optional Secret volume: a missing one reads as
	// missing, as the kubelet skips it) and walks with them in the
	// kubelet's order.
	PullSecrets []string
	// ServiceAccount is the canary's serviceAccountName (default: the
	// namespace's default): a credential provider that asks for the Pod's
	// service account token gets that account's, as the workload's Pods do.
	ServiceAccount string
}

// Mounts lists the node paths a probe Pod reads, for the plan.
func (o PodOptions) Mounts() []string {
	var out []string
	for _, m := range o.mounts(false) {
		out = append(out, m.path)
	}
	out = append(out, resolvedMount.path+" (where the OS runs systemd-resolved)")
	for _, m := range proxyMounts {
		out = append(out, m.path+" (for the runtime's config files, registry folders and proxy settings)")
	}
	return out
}

func (o PodOptions) mounts(resolved bool) []hostMount {
	ms := append([]hostMount(nil), hostMounts...)
	for i, dir := range []string{o.CertsDir, o.DockerCertsDir} {
		if dir != "" {
			m := certsMounts[i]
			m.path = dir
			ms = append(ms, m)
		}
	}
	if resolved {
		ms = append(ms, resolvedMount)
	}
	return ms
}

func (o PodOptions) meta(name, role string, n report.PlannedNode) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:      name,
		Namespace: o.Namespace,
		Labels: map[string]string{
			LabelName: "pullpath", LabelComponent: "sweep", LabelRun: o.RunID, LabelRole: role,
		},
		Annotations: map[string]string{AnnotationNode: n.Name},
	}
	if o.Owner != nil {
		m.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "batch/v1", Kind: "Job", Name: o.Owner.Name, UID: o.Owner.UID,
		}}
	}
	return m
}

var (
	nonRootUser  = int64(65532)
	falseVal     = false
	trueVal      = true
	zero         = int64(0)
	probeRequest = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("32Mi")}
	probeLimit   = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
	tinyRequest  = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("8Mi")}
)

func (o PodOptions) podSpec(n report.PlannedNode) corev1.PodSpec {
	return corev1.PodSpec{
		NodeName:                      n.Name, // no scheduler: aimed at this node
		Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		HostNetwork:                   true,
		DNSPolicy:                     corev1.DNSDefault,
		RestartPolicy:                 corev1.RestartPolicyNever,
		ActiveDeadlineSeconds:         &o.Deadline,
		TerminationGracePeriodSeconds: &zero,
		AutomountServiceAccountToken:  &falseVal,
		EnableServiceLinks:            &falseVal,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   &trueVal,
			RunAsUser:      &nonRootUser,
			RunAsGroup:     &nonRootUser,
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}

func containerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		ReadOnlyRootFilesystem:   &trueVal,
		AllowPrivilegeEscalation: &falseVal,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// ProbePod is the walk on node n: pullpath probe in the node's network
// namespace, reading the node's files through read-only mounts, its compact
// verdict in the termination message and the whole report in the log.
func (o PodOptions) ProbePod(name string, n report.PlannedNode) *corev1.Pod {
	spec := o.podSpec(n)
	args := []string{"probe", o.Image, "-o", "json", "--no-progress",
		"--node", "$(NODE_NAME)", "--verdict-file", "/dev/termination-log",
		"--timeout", fmt.Sprintf("%ds", probeBudget(o.Deadline))}
	var mounts []corev1.VolumeMount
	for _, m := range o.mounts(n.Resolved) {
		t := m.kind
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: m.name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: m.path, Type: &t}}})
		in := path.Join(hostRoot, m.path)
		mounts = append(mounts, corev1.VolumeMount{Name: m.name, MountPath: in, ReadOnly: true})
		if m.flag != "" {
			args = append(args, m.flag, in)
		}
	}
	// the runtime's configuration and proxy settings, from its files under
	// /node: the walk follows the mirrors and the proxy the node's runtime
	// follows.
	for _, m := range proxyMounts {
		t := m.kind
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: m.name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: m.path, Type: &t}}})
		mounts = append(mounts, corev1.VolumeMount{Name: m.name, MountPath: path.Join(nodeRoot, m.path), ReadOnly: true})
	}
	args = append(args, "--host-root", nodeRoot)
	// The credentials a Pod of this namespace pulls with: every pull
	// secret, in order, each a Secret volume the probe reads as the
	// kubelet reads the Secret (its .dockerconfigjson or .dockercfg). The
	// Secret never leaves its namespace; a missing one mounts empty
	// (optional), and the probe skips it as the kubelet does.
	mode := int32(0o444)
	for i, name := range o.PullSecrets {
		vol := fmt.Sprintf("pull-secret-%d", i)
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: name, DefaultMode: &mode, Optional: &trueVal,
		}}})
		in := path.Join(pullSecretRoot, name)
		mounts = append(mounts, corev1.VolumeMount{Name: vol, MountPath: in, ReadOnly: true})
		args = append(args, "--pull-secret", in)
	}
	if o.CheckUpstream {
		args = append(args, "--check-upstream")
	}
	args = append(args, o.ProbeArgs...)
	for _, s := range o.PullSecrets {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	spec.Containers = []corev1.Container{{
		Name:            "probe",
		Image:           o.ProbeImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            args,
		Env: []corev1.EnvVar{
			{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "SSL_CERT_DIR", Value: path.Join(hostRoot, "/etc/ssl/certs")},
		},
		VolumeMounts:             mounts,
		Resources:                corev1.ResourceRequirements{Requests: probeRequest, Limits: probeLimit},
		SecurityContext:          containerSecurity(),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}}
	return &corev1.Pod{ObjectMeta: o.meta(name, RoleProbe, n), Spec: spec}
}

// CanaryCommand is the canary's command: a path no image holds, so the
// container ends the moment it is created, whatever the image is. The pull
// is the whole test: a container that reached creation was pulled.
const CanaryCommand = "/pullpath-canary-exits-at-once"

// CanaryPod makes the real kubelet and runtime pull the target image on node
// n with the kubelet's identity (imagePullPolicy Always).
func (o PodOptions) CanaryPod(name string, n report.PlannedNode) *corev1.Pod {
	spec := o.podSpec(n)
	img := o.CanaryImage
	if img == "" {
		img = o.Image
	}
	for _, s := range o.PullSecrets {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	spec.ServiceAccountName = o.ServiceAccount
	spec.Containers = []corev1.Container{{
		Name:                     "canary",
		Image:                    img,
		ImagePullPolicy:          corev1.PullAlways,
		Command:                  []string{CanaryCommand},
		Resources:                corev1.ResourceRequirements{Requests: tinyRequest, Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")}},
		SecurityContext:          containerSecurity(),
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}}
	return &corev1.Pod{ObjectMeta: o.meta(name, RoleCanary, n), Spec: spec}
}

// probeBudget leaves the probe time to report before the Pod's deadline.
func probeBudget(deadline int64) int64 {
	b := deadline - 10
	if deadline > 60 {
		b = deadline - deadline/10
	}
	if b < 5 {
		b = 5
	}
	return b
}
