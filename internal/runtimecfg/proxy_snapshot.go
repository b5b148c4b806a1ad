package runtimecfg

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A runtime-env snapshot is the running runtime's proxy variables written
// by one process for another: a Pod's init container (root, the host's
// PID namespace, no network use) reads /proc/PID/environ of the node's
// containerd and writes them for the probe container, which runs as
// nobody and cannot read another user's environ. It is an environment
// file (--runtime-env reads it) whose first line says where it came from.

// snapshotHeader starts the first line of a snapshot.
const snapshotHeader = "# pullpath-runtime-env: "

// RuntimeEnvSnapshot finds the running containerd as DiscoverProxy does
// and returns its proxy variables as an environment file. With no
// readable containerd the file holds only its header, saying why.
func RuntimeEnvSnapshot(o ProxyDiscoveryOptions) string {
	if o.ProcRoot == "" {
		root := o.Root
		if root == "" {
			root = "/"
		}
		o.ProcRoot = strings.TrimSuffix(root, "/") + "/proc"
	}
	p, notes := findRuntimeProcess(o)
	if p == nil {
		return snapshotHeader + "none: " + strings.Join(notes, "; ") + "\n"
	}
	var b strings.Builder
	b.WriteString(snapshotHeader + processOrigin(p) + "\n")
	for _, n := range slices.Sorted(maps.Keys(p.Vars)) {
		fmt.Fprintf(&b, "%s=%s\n", n, envFileQuote(p.Vars[n].Value))
	}
	return b.String()
}

// processOrigin says which process the settings are read from.
func processOrigin(p *RuntimeProcess) string {
	s := fmt.Sprintf("the running %s (pid %d", p.Comm, p.PID)
	if p.Unit != "" {
		s += ", " + p.Unit
	}
	return s + fmt.Sprintf("): /proc/%d/environ", p.PID)
}

// envFileQuote double-quotes a value so that systemd's environment-file
// reading (parseEnvFile) gives it back unchanged.
func envFileQuote(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(v) {
		if strings.IndexByte("\"\\`$", c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}
