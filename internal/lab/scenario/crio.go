package scenario

import "strings"

// Runtimes a lab node can play.
const (
	RuntimeContainerd = "containerd"
	RuntimeCRIO       = "cri-o"
)

// NodeCRIO is a cri-o node's registries.conf for the registry: a
// [[registry]] for it with the scenario's mirrors as [[registry.mirror]]
// tables in order (prepare writes it as
// /etc/containers/registries.conf.d/50-lab.conf under the node's root,
// and the lab CA as certs.d/HOST:PORT/ca.crt of the registry and each
// mirror). The probe and containers/image both read it; nothing writes a
// hosts.toml for such a node.
type NodeCRIO struct {
	// Blocked marks the registry blocked = true.
	Blocked bool `json:"blocked,omitempty"`
	// PullFromMirror is each mirror's pull-from-mirror: all (default),
	// digest-only (what OpenShift's ImageDigestMirrorSet renders) or
	// tag-only.
	PullFromMirror string `json:"pullFromMirror,omitempty"`
}

// IsCRIO says whether the node plays a CRI-O node.
func (n Node) IsCRIO() bool { return n.Runtime == RuntimeCRIO }

// crio checks node.runtime and node.crio (and probe.byDigest, which the
// CRI-O scenarios brought).
func (v *validator) crio() {
	if v.t.Probe.ByDigest && (v.t.Registry == nil || v.t.Probe.Image != "") {
		v.fail("probe.byDigest", "pulls the registry section's image by its digest: want a registry section and no probe.image")
	}
	n := v.t.Node
	switch n.Runtime {
	case "", RuntimeContainerd, RuntimeCRIO:
	default:
		v.fail("node.runtime", "want %s or %s, got %q", RuntimeContainerd, RuntimeCRIO, n.Runtime)
	}
	if n.CRIO == nil {
		return
	}
	if !n.IsCRIO() {
		v.fail("node.crio", "only a node with runtime: %s reads registries.conf", RuntimeCRIO)
	}
	switch n.CRIO.PullFromMirror {
	case "", "all", "digest-only", "tag-only":
	default:
		v.fail("node.crio.pullFromMirror", "want %s, got %q", strings.Join([]string{"all", "digest-only", "tag-only"}, ", "), n.CRIO.PullFromMirror)
	}
	if n.CRIO.PullFromMirror != "" && v.t.Mirrors == nil {
		v.fail("node.crio.pullFromMirror", "the scenario has no mirrors section")
	}
	if v.t.Registry == nil {
		v.fail("node.crio", "a cri-o node's registries.conf is for the registry: the scenario has no registry section")
	}
}
