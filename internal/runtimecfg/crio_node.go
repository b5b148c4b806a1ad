package runtimecfg

import (
	"bytes"
	"crypto/x509"
	"debug/buildinfo"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
)

// CRI-O on a node: its configuration (crio_conf.go), the registries.conf
// it reads (registries_conf.go, registries_match.go), the TLS files and
// auth files containers/image uses for each place it pulls from
// (containers_certs.go, containers_auth.go), and the versions whose rules
// apply.

// CRIOBinaries are where CRI-O's binary is looked for when the running
// process does not name it.
var CRIOBinaries = []string{"/usr/bin/crio", "/usr/local/bin/crio"}

// CRIOVersionFiles are the files CRI-O writes its version to when it
// starts (pkg/config CrioVersionPathTmp, then the persistent one): the
// running version, as JSON semver ("1.31.3").
var CRIOVersionFiles = []string{"/var/run/crio/version", "/var/lib/crio/version"}

// CRIONodeOptions say where the node's files are and how CRI-O runs.
type CRIONodeOptions struct {
	Root string // the node's filesystem ("/" or "/host")
	// Args and Env are the running CRI-O's command line (after the
	// program) and environment, when seen (/proc/PID/cmdline, environ).
	Args []string
	Env  map[string]string
	// Binary is CRI-O's executable as a node path ("" : CRIOBinaries).
	Binary string
}

// CRIONode is CRI-O's pull configuration on one node.
type CRIONode struct {
	Root, Home string
	// Version is CRI-O's running version and where it was read.
	Version     CRIOVersion
	VersionFrom string
	// CImage is the containers/image version linked into CRI-O's binary,
	// and the binary it was read from ("" when unreadable).
	CImage     string
	CImageFrom string
	Config     *CRIOConfig
	Registries *RegistriesConf
	// RegistriesErr is a registries.conf containers/image cannot use:
	// CRI-O fails every pull with it (Registries is then empty).
	RegistriesErr error
	// ShortNameMode is the mode CRI-O resolves short names with, and why.
	ShortNameMode, ShortNameModeWhy string
	// Notes are what the runtime does differently from what the files
	// seem to say.
	Notes []string
}

// LoadCRIONode reads CRI-O's configuration and the registries.conf it
// uses. The error is a *ConfigError for a file CRI-O would refuse.
func LoadCRIONode(o CRIONodeOptions) (*CRIONode, error) {
	ro := RegistriesConfOptions{Root: o.Root}
	ro.defaults()
	n := &CRIONode{Root: ro.Root, Home: ro.Home}
	n.Version, n.VersionFrom = readCRIOVersion(ro)
	n.CImage, n.CImageFrom = readCImageVersion(ro, o.Binary)
	cfg, err := ReadCRIOConfig(CRIOConfigOptions{Root: o.Root, Args: o.Args, Env: o.Env})
	if err != nil {
		return nil, err
	}
	n.Config = cfg
	rc, err := LoadRegistriesConf(RegistriesConfOptions{Root: o.Root, ConfFile: cfg.RegistriesConf.Value, ConfDir: cfg.RegistriesConfDir.Value, Rules: CImageRulesFor(n.CImage)})
	if err != nil {
		n.RegistriesErr = err
		rc = &RegistriesConf{Rules: CImageRulesFor(n.CImage), Aliases: map[string]AliasEntry{}, root: ro.Root}
	}
	n.Registries = rc
	n.ShortNameMode, n.ShortNameModeWhy = cfg.EffectiveShortNameMode(n.Version)
	if rc.ShortNameMode != "" {
		n.Notes = append(n.Notes, fmt.Sprintf("%s sets short-name-mode = %q: CRI-O never uses it (its own mode wins: %s)", rc.ShortNameModeFrom, rc.ShortNameMode, n.ShortNameModeWhy))
	}
	if len(cfg.Registries) > 0 {
		n.Notes = append(n.Notes, fmt.Sprintf("%s sets [crio.image] registries: CRI-O 1.31 and later ignore it (use unqualified-search-registries in registries.conf)", cfg.RegistriesFrom))
	}
	if len(cfg.InsecureRegistries) > 0 && !cfg.InsecureRegistriesApply(n.Version) {
		n.Notes = append(n.Notes, fmt.Sprintf("%s sets insecure_registries: CRI-O %s ignores it (1.35 removed it; set insecure = true in registries.conf)", cfg.InsecureRegistriesFrom, n.Version.Version))
	}
	n.Notes = append(n.Notes, rc.Notes...)
	return n, nil
}

// readCRIOVersion reads the version CRI-O wrote when it started.
func readCRIOVersion(ro RegistriesConfOptions) (CRIOVersion, string) {
	for _, f := range CRIOVersionFiles {
		b, err := os.ReadFile(ro.node(f))
		if err != nil {
			continue
		}
		v := strings.Trim(strings.TrimSpace(string(b)), `"`)
		if i := strings.IndexAny(v, "+-"); i > 0 {
			v = v[:i]
		}
		if _, _, ok := semverMajorMinor(v); ok {
			return CRIOVersion{Version: v}, f
		}
	}
	return CRIOVersion{}, ""
}

// readCImageVersion reads the containers/image module version from CRI-O's
// binary (its Go build information).
func readCImageVersion(ro RegistriesConfOptions, binary string) (string, string) {
	bins := CRIOBinaries
	if binary != "" {
		bins = []string{binary}
	}
	for _, b := range bins {
		p := ro.node(b)
		info, err := buildinfo.ReadFile(p)
		if err != nil {
			continue
		}
		for _, d := range info.Deps {
			if d.Path == "go.podman.io/image/v5" || d.Path == "github.com/containers/image/v5" {
				if d.Replace != nil && d.Replace.Version != "" {
					return d.Replace.Version, b
				}
				return d.Version, b
			}
		}
	}
	return "", ""
}

// AuthOptions are where containers/image looks for credentials on this
// node.
func (n *CRIONode) AuthOptions() ContainersAuthOptions {
	return ContainersAuthOptions{Root: n.Root, Home: n.Home, AuthFile: n.Config.GlobalAuthFile.Value, Helpers: n.Registries.CredentialHelpers}
}

// ForcedInsecure says whether CRI-O before 1.35 turns TLS verification
// off for every source of an image of registry (its --insecure-registry /
// insecure_registries, to which it always adds 127.0.0.0/8;
// internal/storage isSecureIndex): a registry named there, or an IP
// literal in one of its CIDRs. A CIDR also covers a name that resolves
// into it; that needs the node's resolver and is said in the note.
func (n *CRIONode) ForcedInsecure(registry string) (bool, string) {
	if !n.Config.InsecureRegistriesApply(n.Version) {
		return false, ""
	}
	list := append(append([]string{}, n.Config.InsecureRegistries...), "127.0.0.0/8")
	host := hostname(registry)
	ip := net.ParseIP(strings.Trim(host, "[]"))
	for _, r := range list {
		if _, ipnet, err := net.ParseCIDR(r); err == nil {
			if ip != nil && ipnet.Contains(ip) {
				from := n.Config.InsecureRegistriesFrom
				if r == "127.0.0.0/8" {
					from = "CRI-O adds 127.0.0.0/8 itself"
				}
				return true, fmt.Sprintf("insecure_registries %s (%s)", r, from)
			}
			continue
		}
		if r == registry {
			return true, fmt.Sprintf("insecure_registries %q (%s)", r, n.Config.InsecureRegistriesFrom)
		}
	}
	return false, ""
}

// SourceHost is the host the walk contacts for src, with the TLS trust
// containers/image gives it: the certs.d folder of src's registry, TLS
// verification off and plain HTTP after HTTPS for an insecure source (or
// one CRI-O's insecure_registries covers). CA files the library would
// skip (no PEM certificate: AppendCertsFromPEM's result is ignored) are
// left out and noted. The error is the one the library fails the attempt
// with (a client certificate without its key).
func (n *CRIONode) SourceHost(src PullSource, logical Ref) (RegistryHost, []string, error) {
	h := RegistryHost{
		Scheme: "https", Host: src.Ref.Host, Path: "/v2",
		Capabilities: []string{CapPull, CapResolve},
		Mirror:       src.Mirror, Server: !src.Mirror, Source: src.At,
	}
	var notes []string
	certs, err := ContainersCertsFor(n.Root, n.Home, src.Ref.Registry)
	if err != nil {
		return h, nil, err
	}
	for _, f := range certs.CAFiles {
		if pemHasCert(f) {
			h.CAFiles = append(h.CAFiles, f)
		} else {
			notes = append(notes, f+": no PEM certificate in it: containers/image skips it without a word")
		}
	}
	h.ClientPairs = certs.ClientPairs
	for _, s := range certs.Shadowed {
		notes = append(notes, fmt.Sprintf("%s is not read: containers/image uses only the first folder for %s (%s)", s, src.Ref.Registry, certs.Dir))
	}
	if h.Source == "" && certs.Dir != "" {
		h.Source = certs.Dir
	}
	insecure := src.Insecure
	if forced, why := n.ForcedInsecure(logical.Registry); forced {
		insecure = true
		notes = append(notes, fmt.Sprintf("TLS verification is off for %s: %s", src.Ref.Host, why))
	}
	h.SkipVerify, h.HTTPFallback = insecure, insecure
	return h, notes, nil
}

func pemHasCert(file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) // gone since the listing: TLSConfig names it
	}
	for {
		var blk *pem.Block
		blk, b = pem.Decode(bytes.TrimSpace(b))
		if blk == nil {
			return false
		}
		if blk.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(blk.Bytes); err == nil {
				return true
			}
		}
	}
}
