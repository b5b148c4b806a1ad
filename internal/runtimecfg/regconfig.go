package runtimecfg

import (
	"fmt"
	"path/filepath"
	"strings"
)

// RegistryConfig is the seam between finding the runtime (runtime.go) and
// walking the pull: one runtime's registry configuration, read by that
// runtime's own rules, answering for a reference which hosts the runtime
// contacts, in its order, with their TLS trust and the credentials the
// runtime itself holds for them.
//
// containerd's config_path folders and inline registry.mirrors/configs
// (containerd.go) and CRI-O's registries.conf (crio.go) each implement it;
// CertsDirs is the --certs-dir override. The walk never asks which one it
// has.
type RegistryConfig interface {
	// Hosts returns the hosts the runtime contacts for ref, in its order:
	// mirrors first, the registry itself (the server) last unless the
	// configuration leaves it out. Every host says where it came from
	// (RegistryHost.Source: FILE or FILE:LINE). The error is a
	// configuration the runtime cannot use (*ConfigError), or a reference
	// the runtime refuses before sending a packet (*RefusedError).
	Hosts(ref Ref) (HostSet, error)
}

// RefusedError is a reference the runtime refuses by its configuration
// before any packet (CRI-O's blocked registries): the walk stops there and
// the verdict names the rule.
type RefusedError struct {
	Registry string
	File     string // FILE or FILE:LINE of the rule
	Reason   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: the runtime refuses %s: %s", e.File, e.Registry, e.Reason)
}

// CertsDirs is containerd's hosts resolution over explicit folders: the
// folders of config_path in order (the first that holds a folder for the
// registry, or _default, decides), then, when no hosts.toml applied,
// Docker's certs.d folder for the registry's CAs and client pairs. It is
// what --certs-dir and --docker-certs-dir give, and what containerd's
// config_path resolves to.
type CertsDirs struct {
	Dirs      []string // config_path folders, in order ("" entries skipped)
	DockerDir string   // "" for none
	// Auth gives the runtime's own credentials for a host (containerd's
	// registry.configs.HOST.auth, which the CRI uses when the kubelet
	// passes none); nil for none.
	Auth func(host string) *Credentials
	// Root is the node's filesystem when it is not "/" (a Pod with the
	// host at /host): absolute paths inside hosts.toml (ca, client) are
	// the node's and are read under it. "" or "/" reads them as written.
	Root string
}

// Hosts implements RegistryConfig.
func (c CertsDirs) Hosts(ref Ref) (HostSet, error) {
	set, err := hostsFromRoots(c.Dirs, c.DockerDir, c.Root, ref)
	if err != nil {
		return set, err
	}
	// the node's names for the files (CA and client files stay readable
	// paths: the walk opens them)
	set.Dir, set.File = nodePath(c.Root, set.Dir), nodePath(c.Root, set.File)
	for i := range set.Hosts {
		h := &set.Hosts[i]
		h.Source = nodePaths(c.Root, h.Source)
		if c.Auth != nil {
			h.Auth = c.Auth(h.Host)
		}
	}
	return set, nil
}

// String names the folders, for reports.
func (c CertsDirs) String() string {
	dirs := make([]string, 0, len(c.Dirs))
	for _, d := range c.Dirs {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, ":")
}

// hostsFromRoots is containerd's hostDirFromRoots (pkg/cri/server in 1.6
// and 1.7, internal/cri/server/images in 2.x): each config_path folder in
// turn is asked for HOST_PORT_, HOST and _default; the first folder that
// has one of them decides, so a _default of an earlier folder wins over
// the registry's own folder in a later one.
func hostsFromRoots(roots []string, dockerDir, nodeRoot string, ref Ref) (HostSet, error) {
	for _, r := range roots {
		dir, err := hostDir(r, ref.Registry)
		if err != nil {
			return HostSet{}, err
		}
		if dir != "" {
			return hostsConfig(r, dockerDir, nodeRoot, ref)
		}
	}
	return hostsConfig("", dockerDir, nodeRoot, ref)
}

// underRoot is p on the node whose filesystem is at root ("" or "/": p).
func underRoot(root, p string) string {
	if root == "" || root == "/" || !filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// nodePaths is nodePath of each path of a ", "-separated list.
func nodePaths(root, list string) string {
	if root == "" || root == "/" || list == "" {
		return list
	}
	parts := strings.Split(list, ", ")
	for i, p := range parts {
		parts[i] = nodePath(root, p)
	}
	return strings.Join(parts, ", ")
}

// nodePath is the node's name for a path read under root.
func nodePath(root, p string) string {
	if root == "" || root == "/" {
		return p
	}
	if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return "/" + rel
	}
	return p
}
