package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Focus is what an audit looks at first: where a pull failed. It comes from
// a probe report (ReadProbeReport), from the CLI's flags (--subnet, the
// IMAGE argument, --image-size) or from diagnose (its failing nodes and
// host). The zero Focus audits every node subnet alike.
type Focus struct {
	// Nodes are the nodes the pull failed on: the subnets that hold them
	// come first in the report, every other node subnet stays beside them
	// to compare.
	Nodes []Node
	// Subnets, when set, keeps only these node subnets (--subnet); a
	// subnet named here that the cluster has no nodes in is a warning.
	Subnets []string
	// Host is the failing host (lowercase, no port), Role its part in the
	// pull and Code what the probe saw (verdict.OK for a pull that worked).
	Host string
	Role verdict.Role
	Code verdict.Code
	// Image is the image the pull is for, when named: its registry may be
	// another account's than the cluster's.
	Image string
	// ImageBytes and PullsPerDay feed the cost note (AWS: the layers
	// through a NAT gateway against the endpoints); no size, no note.
	ImageBytes  int64
	PullsPerDay int
	// File is the probe report the focus was read from, for messages.
	File string
}

// Node is a node as an audit places it in a subnet: by Subnet when known,
// by an address inside a subnet's range, by Pool, or by what only the
// cloud can tell from Name or ProviderID (an instance id, a pool in the
// node's name: Focus.Place).
type Node struct {
	Name       string       // ip-10-0-3-17.ec2.internal, aks-apps-12345678-vmss000002
	ProviderID string       // aws:///us-east-1a/i-0abc..., azure:///subscriptions/...
	Addresses  []netip.Addr // the node's own (InternalIP)
	Pool       string       // nodegroup, agent pool
	Subnet     string       // the subnet id, as the cloud spells it
}

// Place fills, for each node the focus names, what only the cloud can
// tell (its subnet, pool or addresses) through where, which returns the
// node as the cloud finds it (unchanged when it does not know it).
func (f Focus) Place(where func(Node) Node) Focus {
	if len(f.Nodes) == 0 {
		return f
	}
	nodes := make([]Node, len(f.Nodes))
	for i, n := range f.Nodes {
		nodes[i] = where(n)
	}
	f.Nodes = nodes
	return f
}

// NodeNames are the names of the focus's nodes, for messages.
func (f Focus) NodeNames() []string {
	var out []string
	for _, n := range f.Nodes {
		if n.Name != "" {
			out = append(out, n.Name)
		}
	}
	return out
}

// maxProbeReport bounds what ReadProbeReport reads.
const maxProbeReport = 64 << 20

// ReadProbeReport reads `pullpath probe IMAGE -o json` output into a
// Focus: the probed node, the failing host (the registry when the pull
// worked), its role, the probe's code and the bytes it downloaded.
func ReadProbeReport(path string) (Focus, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return Focus{}, fmt.Errorf("--probe-report %s: %v", path, err)
	}
	defer f.Close()
	return ParseProbeReport(f, path)
}

// ParseProbeReport reads a probe report from r; name is for messages.
func ParseProbeReport(r io.Reader, name string) (Focus, error) {
	var pr report.ProbeReport
	if err := json.NewDecoder(io.LimitReader(r, maxProbeReport)).Decode(&pr); err != nil {
		return Focus{}, fmt.Errorf("--probe-report %s: not a probe report (%s): want `pullpath probe IMAGE -o json` output", name, units.Clip(err.Error(), 200))
	}
	if pr.Kind != report.ProbeKind {
		return Focus{}, fmt.Errorf("--probe-report %s: kind %q, want ProbeReport (`pullpath probe IMAGE -o json`)", name, pr.Kind)
	}
	f := Focus{Host: HostOf(pr.Verdict.Endpoint), Role: pr.Verdict.Role, Code: pr.Verdict.Code, File: name}
	if f.Host == "" {
		f.Host = HostOf(pr.Reference.Host)
	}
	if pr.Verdict.Status == verdict.StatusOK {
		f.Code = verdict.OK
	}
	if pr.Node != "" {
		f.Nodes = []Node{{Name: pr.Node}}
	}
	if pr.Transfer != nil {
		f.ImageBytes = pr.Transfer.Bytes
	}
	return f, nil
}

// HostOf is a host as the focus compares it: lowercase, without a port or
// a trailing dot.
func HostOf(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	return strings.TrimSuffix(h, ".")
}
