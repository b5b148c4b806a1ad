package runtimecfg

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// loadCRIO reads CRI-O's configuration (crio.conf, crio.conf.d, the
// running crio's flags) and the registries.conf of containers/image it
// points at (crio_node.go) into rc: the registry configuration the walk
// follows is the *CRIONode itself, whose sources the walk tries the way
// containers/image does (internal/pull walkCRIO).
func loadCRIO(o RuntimeOptions, rc *RuntimeConfig) error {
	var args []string
	binary := ""
	if len(rc.Args) > 0 {
		args = rc.Args[1:]
		if filepath.IsAbs(rc.Args[0]) {
			binary = rc.Args[0]
		}
	}
	if rc.ConfigFile != "" && argValue(args, "--config", "-c") == "" && rc.ConfigFile != CRIOConfigPath {
		args = append(args, "--config", rc.ConfigFile)
	}
	n, err := LoadCRIONode(CRIONodeOptions{Root: rc.Root, Args: args, Binary: binary})
	if err != nil {
		return err
	}
	rc.Registry = n
	rc.Files = append(rc.Files, n.Config.Files...)
	rc.Files = append(rc.Files, n.Registries.Files...)
	if n.Version.Version != "" {
		rc.Version, rc.VersionFrom = n.Version.Version, n.VersionFrom
	}
	rc.Rules = n.Registries.Rules.String()
	if n.CImageFrom != "" {
		rc.Rules += " (read from " + n.CImageFrom + ")"
	}
	rc.Notes = append(rc.Notes, n.Notes...)
	rc.Notes = append(rc.Notes, "short names: "+n.ShortNameModeWhy)
	if n.RegistriesErr != nil {
		rc.Notes = append(rc.Notes, "registries.conf cannot be used: "+n.RegistriesErr.Error())
	}
	rc.Sources = append(rc.Sources, n.sources()...)
	rc.Warnings = append(rc.Warnings, unreadContainerdConfig(rc)...)
	return nil
}

// sources lists where CRI-O's registry configuration comes from, in the
// order it is read: each registries.conf file, each [[registry]] in
// effect (its mirrors, blocked, insecure, digest-only), the auth file.
func (n *CRIONode) sources() []RegistrySource {
	var out []RegistrySource
	for i, f := range n.Registries.Files {
		kind := "registries.conf.d"
		if i == 0 && !strings.Contains(f, "registries.conf.d/") {
			kind = "registries.conf"
		}
		out = append(out, RegistrySource{Kind: kind, Path: f})
	}
	if len(n.Registries.Files) == 0 {
		out = append(out, RegistrySource{Kind: "registries.conf", Path: strings.Join(n.Registries.Searched, ", "), Missing: true, Detail: "none of these exists: every image is pulled from its own registry"})
	}
	for _, e := range n.Registries.Registries {
		var d []string
		for _, m := range e.Mirrors {
			s := "mirror " + m.Location
			if m.PullFromMirror != "" && m.PullFromMirror != MirrorAll {
				s += " (" + m.PullFromMirror + ")"
			}
			if m.Insecure {
				s += " (insecure)"
			}
			d = append(d, s)
		}
		if e.Location != "" && e.Location != e.Prefix {
			d = append(d, "location "+e.Location)
		}
		if e.MirrorByDigestOnly {
			d = append(d, "mirror-by-digest-only")
		}
		if e.Blocked {
			d = append(d, "blocked")
		}
		if e.Insecure {
			d = append(d, "insecure")
		}
		out = append(out, RegistrySource{Kind: "[[registry]]", Path: e.File, Line: e.Line, Registry: e.Prefix, Detail: strings.Join(d, ", ")})
	}
	if f := n.Config.GlobalAuthFile; f.Value != "" {
		out = append(out, RegistrySource{Kind: "global_auth_file", Path: f.Value, Detail: "set in " + f.From, Missing: !exists(underRoot(n.Root, f.Value))})
	}
	return out
}

// containerdFiles are containerd's registry files: on a CRI-O node nothing
// reads them.
var containerdFiles = []string{"/etc/containerd/certs.d", "/etc/containerd/config.toml"}

// unreadContainerdConfig warns about containerd's registry configuration
// on a CRI-O node: hosts.toml files (and a config.toml) CRI-O never
// reads, often written by a guide meant for containerd.
func unreadContainerdConfig(rc *RuntimeConfig) []ConfigWarning {
	var out []ConfigWarning
	read := "/etc/containers/registries.conf and registries.conf.d"
	dir := containerdFiles[0]
	if ents, err := os.ReadDir(underRoot(rc.Root, dir)); err == nil {
		var hosts []string
		for _, e := range ents {
			if _, err := os.Stat(underRoot(rc.Root, filepath.Join(dir, e.Name(), "hosts.toml"))); err == nil {
				hosts = append(hosts, filepath.Join(dir, e.Name(), "hosts.toml"))
			}
		}
		sort.Strings(hosts)
		for _, h := range hosts {
			out = append(out, ConfigWarning{Code: verdict.RuntimeConfigIgnored, Ignored: h, Read: read,
				Message: fmt.Sprintf("%s is containerd's registry configuration: CRI-O pulls on this node and never reads it; its mirrors and CAs belong in %s and /etc/containers/certs.d", h, read)})
		}
	}
	if _, err := os.Stat(underRoot(rc.Root, containerdFiles[1])); err == nil {
		out = append(out, ConfigWarning{Code: verdict.RuntimeConfigIgnored, Ignored: containerdFiles[1], Read: read,
			Message: fmt.Sprintf("%s is containerd's config: CRI-O pulls on this node and never reads it (its registry mirrors and configs are containerd's)", containerdFiles[1])})
	}
	return out
}

// Hosts implements RegistryConfig: the sources containers/image tries for
// ref (no short-name resolution: ref is qualified), each with its TLS
// from certs.d, the reference rewritten for it (Repository) and the
// runtime's own credentials. A reference every source of which is blocked
// is a *RefusedError. The walk itself goes through PullPlan (walkCRIO);
// Hosts answers those who only ask which hosts (the token and redirect
// hosts' trust, a node's summary).
func (n *CRIONode) Hosts(ref Ref) (HostSet, error) {
	var set HostSet
	if n.RegistriesErr != nil {
		return set, n.RegistriesErr
	}
	plan, err := n.Registries.PullPlan(ref)
	if err != nil {
		return set, err
	}
	var blocked *RegistryConfEntry
	for _, src := range plan.Sources {
		if src.Blocked != nil {
			blocked = src.Blocked
			continue
		}
		h, _, err := n.SourceHost(src, ref)
		if err != nil {
			return set, err
		}
		if src.Ref.Repository != ref.Repository || src.Ref.Registry != ref.Registry {
			h.Repository = src.Ref.Repository
		}
		set.Hosts = append(set.Hosts, h)
	}
	if len(set.Hosts) == 0 && blocked != nil {
		return set, &RefusedError{Registry: ref.Registry, File: blocked.At(), Reason: fmt.Sprintf("registry %s is blocked (blocked = true)", blocked.Prefix)}
	}
	if plan.Entry != nil {
		set.File = plan.Entry.File
	}
	return set, nil
}
