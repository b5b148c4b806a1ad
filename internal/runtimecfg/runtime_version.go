package runtimecfg

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Where a runtime's version is read, most direct first: the Go build
// information of the running binary (/proc/PID/exe) or of the layout's
// binary on disk (its main module's version, the version an -ldflags -X
// set, or for k3s and rke2 the containerd module they link), then the
// node's package database (dpkg). "" when none says.

// runtimeBinaries are where each layout keeps its runtime's binary.
var runtimeBinaries = map[string][]string{
	"k3s":                  {"/var/lib/rancher/k3s/data/current/bin/containerd", "/usr/local/bin/k3s"},
	"rke2":                 {"/var/lib/rancher/rke2/bin/containerd"},
	"canonical-kubernetes": {"/snap/k8s/current/bin/containerd"},
	"microk8s":             {"/snap/microk8s/current/bin/containerd"},
	"containerd":           {"/usr/bin/containerd", "/usr/local/bin/containerd"},
	"cri-o":                {"/usr/bin/crio", "/usr/local/bin/crio"},
}

// runtimePackages are the dpkg packages that ship each runtime.
var runtimePackages = map[string][]string{
	RuntimeContainerd: {"containerd", "containerd.io"},
	RuntimeCRIO:       {"cri-o"},
}

// runtimeModules are the Go modules whose version is the runtime's.
var runtimeModules = []string{"github.com/containerd/containerd/v2", "github.com/containerd/containerd", "github.com/cri-o/cri-o"}

var reLdflagsVersion = regexp.MustCompile(`(?:containerd|cri-o)\S*/version\.[Vv]ersion=([^\s'"]+)`)

func runtimeVersion(rc *RuntimeConfig) (version, from string) {
	var bins []string
	if rc.PID > 0 {
		bins = append(bins, filepath.Join(rc.procRoot, strconv.Itoa(rc.PID), "exe"))
	}
	for _, b := range runtimeBinaries[rc.Layout] {
		bins = append(bins, underRoot(rc.Root, b))
	}
	for _, b := range bins {
		if v := binaryVersion(b); v != "" {
			return v, "the Go build information of " + nodePath(rc.Root, b)
		}
	}
	for _, pkg := range runtimePackages[rc.Runtime] {
		if v := dpkgVersion(underRoot(rc.Root, "/var/lib/dpkg/status"), pkg); v != "" {
			return v, "the dpkg package " + pkg
		}
	}
	return "", ""
}

// binaryVersion reads a Go binary's runtime version from its build
// information; "" when it carries none.
func binaryVersion(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "-ldflags" {
			if m := reLdflagsVersion.FindStringSubmatch(s.Value); m != nil {
				return cleanVersion(m[1])
			}
		}
	}
	for _, m := range runtimeModules {
		if bi.Main.Path == m || strings.HasPrefix(bi.Main.Path, m+"/") {
			if v := cleanVersion(bi.Main.Version); v != "" {
				return v
			}
		}
	}
	for _, d := range bi.Deps {
		for _, m := range runtimeModules {
			if d.Path != m {
				continue
			}
			if d.Replace != nil {
				return cleanVersion(d.Replace.Version)
			}
			return cleanVersion(d.Version)
		}
	}
	return ""
}

// cleanVersion is "1.6.20" of "v1.6.20", "1.6.20~ds1-1+deb12u3" kept
// whole but for the v; "(devel)" is none.
func cleanVersion(v string) string {
	if v == "" || v == "(devel)" {
		return ""
	}
	return strings.TrimPrefix(v, "v")
}

// dpkgVersion is the installed version of pkg in a dpkg status file (its
// stanza found by its Package: line, not by splitting the whole file: a
// Debian node's is most of a megabyte).
func dpkgVersion(status, pkg string) string {
	b, err := readBounded(status, 64<<20)
	if err != nil {
		return ""
	}
	mark := []byte("Package: " + pkg + "\n")
	for off := 0; ; {
		i := bytes.Index(b[off:], mark)
		if i < 0 {
			return ""
		}
		i += off
		off = i + len(mark)
		if i > 0 && b[i-1] != '\n' {
			continue // "Package: X" inside another line
		}
		stanza := b[i:]
		if end := bytes.Index(stanza, []byte("\n\n")); end >= 0 {
			stanza = stanza[:end]
		}
		var ver string
		installed := false
		for _, line := range bytes.Split(stanza, []byte("\n")) {
			switch {
			case bytes.HasPrefix(line, []byte("Version: ")):
				ver = string(line[len("Version: "):])
			case bytes.HasPrefix(line, []byte("Status: ")):
				installed = bytes.HasSuffix(line, []byte(" installed"))
			}
		}
		if installed {
			return ver
		}
	}
}

func readDir(p string) ([]os.DirEntry, error) { return os.ReadDir(p) }
