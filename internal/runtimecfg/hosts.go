package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pelletier/go-toml/v2"
	tomlu "github.com/pelletier/go-toml/v2/unstable"

	"github.com/pullpath/pullpath/internal/units"
)

// Host capabilities, as in hosts.toml.
const (
	CapPull    = "pull"
	CapResolve = "resolve"
	CapPush    = "push"
)

// RegistryHost is one host the runtime contacts for a registry, in the
// runtime's order.
type RegistryHost struct {
	Scheme       string      // https | http
	Host         string      // host[:port]
	Path         string      // API root, default "/v2"
	Capabilities []string    // subset of pull, resolve, push (default all three)
	SkipVerify   bool        // TLS verification off
	CAFiles      []string    // absolute paths
	ClientPairs  [][2]string // cert, key (key "" means the key is in the cert file)
	Header       http.Header // extra headers sent to this host
	Mirror       bool        // not the registry itself: a [host] entry on another host[:port], or a server on another host name
	Source       string      // file (hosts.toml) or folder (certs.d layout) it came from, "" for the default
	// HTTPFallback: the entry says http but carries TLS settings (or is a
	// localhost registry on a port other than 80/443), so containerd tries
	// HTTPS first and falls back to plain HTTP when the server does not speak
	// TLS. Scheme is then "https".
	HTTPFallback bool
	DialTimeout  time.Duration // dial_timeout, 0 when not set
	OverridePath bool          // override_path: Path is used as the API root as written, without /v2
	Server       bool          // the server entry (last): the file's server, or the registry's default host
	// Auth is the runtime's own credentials for this host (containerd's
	// registry.configs.HOST.auth): used when the kubelet passes none.
	// nil when the runtime holds none. Never printed.
	Auth *Credentials
	// Repository is the repository on this host when the runtime rewrites
	// it (CRI-O's prefix/location); "" is the reference's own.
	Repository string
}

// Has reports whether the host is configured for the capability
// (pull, resolve or push).
func (h RegistryHost) Has(capability string) bool {
	for _, c := range h.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}

// URL is the API root, e.g. https://reg.example/v2.
func (h RegistryHost) URL() string {
	return h.Scheme + "://" + h.Host + h.Path
}

// HostSet is the full answer of HostsConfig: the hosts in order, where they
// came from, and notes on what the runtime does differently from what the
// file seems to say. Notes are warnings, not errors.
type HostSet struct {
	Hosts []RegistryHost
	Dir   string   // the certs.d folder that applied ("" when none)
	File  string   // the hosts.toml that applied ("" when none)
	Notes []string // e.g. "unknown key ...: containerd ignores it"
}

// ConfigError is a hosts.toml or certs.d folder the runtime cannot use.
type ConfigError struct {
	File   string
	Reason string
}

func (e *ConfigError) Error() string { return e.File + ": " + e.Reason }

// Hosts returns the hosts the runtime contacts for ref's registry, in order:
// the [host."..."] mirrors of hosts.toml in file order, then the server.
// See HostsConfig.
func Hosts(certsDir, dockerCertsDir string, ref Ref) ([]RegistryHost, error) {
	set, err := HostsConfig(certsDir, dockerCertsDir, ref)
	if err != nil {
		return nil, err
	}
	return set.Hosts, nil
}

// HostsConfig follows containerd's registry config_path (v1.6, 1.7, 2.x):
//
//  1. The folder is the first that exists of certsDir/HOST_PORT_ (for a
//     registry with a port), certsDir/HOST[:PORT] and certsDir/_default;
//     HOST is ref.Registry ("docker.io" for Docker Hub). A folder that exists
//     wins even when it holds no hosts.toml: _default is then not read.
//  2. A non-empty hosts.toml there gives the [host."URL"] entries in file
//     order, then the server (server = "...", or the registry's default host
//     when absent) last; top-level ca/client/skip_verify/header apply to it.
//  3. Without a hosts.toml (or with an empty one) the folder is read in the
//     Docker certs.d layout: *.crt are CAs, *.cert with a matching *.key are
//     client pairs; they apply to the default host. So does
//     dockerCertsDir/HOST[:PORT] ("" skips it), as on nodes whose runtime
//     reads /etc/docker/certs.d.
//  4. The default host is https://registry-1.docker.io/v2 for docker.io,
//     https://HOST/v2 otherwise; for localhost and loopback registries on a
//     port other than 443 containerd tries https without verification, then
//     plain http (on port 80 plain http only).
//  5. An http entry with TLS settings (ca, client, skip_verify) and a port
//     other than 80 is tried with https first, falling back to http.
//
// A missing certsDir is not an error. A hosts.toml that does not parse is a
// *ConfigError naming the file, the line and what is wrong. (containerd
// itself logs such a file and falls back to the certs.d layout of its folder;
// pullpath reports it, since the operator meant something by it.)
func HostsConfig(certsDir, dockerCertsDir string, ref Ref) (HostSet, error) {
	return hostsConfig(certsDir, dockerCertsDir, "", ref)
}

// hostsConfig is HostsConfig on the node whose filesystem is at root
// (absolute paths in hosts.toml are read under it).
func hostsConfig(certsDir, dockerCertsDir, root string, ref Ref) (HostSet, error) {
	var set HostSet
	registry := ref.Registry
	if registry == "" {
		return set, fmt.Errorf("hosts: reference %q has no registry", ref.Original)
	}

	var entries []hostEntry // nil: none configured; the default host is added
	dir, err := hostDir(certsDir, registry)
	if err != nil {
		return set, err
	}
	set.Dir = dir
	tomlApplied := false
	if dir != "" {
		file := filepath.Join(dir, "hosts.toml")
		b, err := os.ReadFile(file)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return set, &ConfigError{File: file, Reason: "cannot read: " + pathErrReason(err)}
		}
		if len(b) > 0 {
			entries, set.Notes, err = parseHostsFile(file, root, b)
			if err != nil {
				return set, err
			}
			set.File = file
			tomlApplied = true
		}
	}
	if !tomlApplied {
		var e hostEntry
		if dir != "" {
			if err := addCertFiles(&e, dir); err != nil {
				return set, err
			}
		}
		if dockerCertsDir != "" {
			if err := addCertFiles(&e, filepath.Join(dockerCertsDir, registry)); err != nil {
				return set, err
			}
		}
		entries = []hostEntry{e}
	}

	// 4. the default host fills an entry without one (the last).
	last := &entries[len(entries)-1]
	last.isServer = true
	if last.host == "" {
		fillDefault(last, registry)
	}

	for _, e := range entries {
		set.Hosts = append(set.Hosts, registryHost(e, ref, &set.Notes))
	}
	return set, nil
}

// registryHost is one built entry as the walk uses it: explicit TLS on
// an http entry tries https first; a host is a mirror unless it is the
// registry (the server on another port of the registry's name included).
func registryHost(e hostEntry, ref Ref, notes *[]string) RegistryHost {
	h := RegistryHost{
		Scheme:       e.scheme,
		Host:         e.host,
		Path:         e.path,
		Capabilities: e.capabilities,
		CAFiles:      e.caFiles,
		ClientPairs:  e.clientPairs,
		Header:       e.header,
		Source:       e.source,
		DialTimeout:  e.dialTimeout,
		OverridePath: e.overridePath,
		Server:       e.isServer,
	}
	if e.skipVerify != nil {
		h.SkipVerify = *e.skipVerify
	}
	// 5. explicit TLS on an http entry: https first, then http.
	explicitTLS := e.caFiles != nil || e.clientPairs != nil || e.skipVerify != nil
	if h.Scheme == "http" && explicitTLS {
		if _, port, _ := net.SplitHostPort(h.Host); port != "80" {
			h.Scheme = "https"
			h.HTTPFallback = true
			if e.source != "" && !e.isDefault {
				*notes = append(*notes, fmt.Sprintf("%s: http://%s has TLS settings: containerd tries https first, then falls back to http", e.source, h.Host))
			}
		}
	}
	h.Mirror = !sameHost(h.Host, ref)
	if e.isServer && h.Mirror {
		// the server on another port of the registry's own name is still the registry
		h.Mirror = !sameHost(hostname(h.Host), Ref{Host: hostname(ref.Host), Registry: hostname(ref.Registry)})
	}
	return h
}

// hostEntry is one host while it is being built.
type hostEntry struct {
	scheme, host, path string
	capabilities       []string
	caFiles            []string
	clientPairs        [][2]string
	skipVerify         *bool
	header             http.Header
	dialTimeout        time.Duration
	overridePath       bool
	source             string
	isDefault          bool // filled by fillDefault
	isServer           bool // the server entry (last), configured or default
}

func fillDefault(e *hostEntry, registry string) {
	e.isDefault = true
	e.path = "/v2"
	e.capabilities = []string{CapPull, CapResolve, CapPush}
	switch {
	case registry == DockerHubRegistry:
		e.scheme, e.host = "https", DockerHubHost
	case isLocalhost(registry):
		e.host = registry
		_, port, _ := net.SplitHostPort(registry)
		if port == "" || port == "443" {
			e.scheme = "https"
		} else {
			e.scheme = "http"
		}
		if port != "80" {
			t := true
			e.skipVerify = &t
		}
	default:
		e.scheme, e.host = "https", registry
	}
}

// isLocalhost is containerd's docker.IsLocalhost: "localhost" or a loopback IP.
func isLocalhost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostname is host without its port.
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

func sameHost(host string, ref Ref) bool {
	return strings.EqualFold(host, ref.Host) || strings.EqualFold(host, ref.Registry)
}

// hostDir finds the folder containerd would use for registry under root.
func hostDir(root, registry string) (string, error) {
	if root == "" {
		return "", nil
	}
	var candidates []string
	if i := strings.LastIndex(registry, ":"); i > 0 {
		candidates = append(candidates, filepath.Join(root, registry[:i]+"_"+registry[i+1:]+"_"))
	}
	candidates = append(candidates, filepath.Join(root, registry), filepath.Join(root, "_default"))
	for _, p := range candidates {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				continue
			}
			return p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", &ConfigError{File: p, Reason: "cannot read: " + pathErrReason(err)}
		}
	}
	return "", nil
}

// addCertFiles reads a folder in the Docker certs.d layout into e.
func addCertFiles(e *hostEntry, dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return &ConfigError{File: dir, Reason: "cannot read: " + pathErrReason(err)}
	}
	found := false
	for _, f := range ents {
		if f.IsDir() {
			continue
		}
		name := f.Name()
		switch {
		case strings.HasSuffix(name, ".crt"):
			e.caFiles = append(e.caFiles, filepath.Join(dir, name))
			found = true
		case strings.HasSuffix(name, ".cert"):
			pair := [2]string{filepath.Join(dir, name), ""}
			key := filepath.Join(dir, strings.TrimSuffix(name, ".cert")+".key")
			if _, err := os.Stat(key); err == nil {
				pair[1] = key
			} else if !errors.Is(err, fs.ErrNotExist) {
				return &ConfigError{File: key, Reason: "cannot read: " + pathErrReason(err)}
			}
			e.clientPairs = append(e.clientPairs, pair)
			found = true
		}
	}
	if found && e.source == "" {
		e.source = dir
	} else if found {
		e.source += ", " + dir
	}
	return nil
}

// hostFileEntry is one table of hosts.toml (the top level or a [host."..."]).
type hostFileEntry struct {
	Capabilities []string       `toml:"capabilities"`
	CA           any            `toml:"ca"`
	Client       any            `toml:"client"`
	SkipVerify   *bool          `toml:"skip_verify"`
	Header       map[string]any `toml:"header"`
	OverridePath bool           `toml:"override_path"`
	DialTimeout  string         `toml:"dial_timeout"`
}

type hostFile struct {
	hostFileEntry
	Server string                   `toml:"server"`
	Host   map[string]hostFileEntry `toml:"host"`
}

// parseHostsFile parses hosts.toml into entries: [host] tables in file
// order, then the server (host "" when server is not set).
func parseHostsFile(file, root string, b []byte) ([]hostEntry, []string, error) {
	var notes []string
	var c hostFile
	if err := toml.Unmarshal(b, &c); err != nil {
		return nil, nil, &ConfigError{File: file, Reason: tomlReason(err)}
	}
	order, err := hostTableOrder(b)
	if err != nil {
		return nil, nil, &ConfigError{File: file, Reason: tomlReason(err)}
	}
	// Unknown keys: containerd ignores them; say so.
	var strict hostFile
	d := toml.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	var sme *toml.StrictMissingError
	if err := d.Decode(&strict); errors.As(err, &sme) {
		for _, e := range sme.Errors {
			row, _ := e.Position()
			notes = append(notes, fmt.Sprintf("%s: line %d: unknown key %q: containerd ignores it", file, row, strings.Join(e.Key(), ".")))
		}
	}

	var entries []hostEntry
	seen := map[string]bool{}
	for _, h := range order {
		if seen[h] {
			continue
		}
		seen[h] = true
		cfg, ok := c.Host[h]
		if !ok {
			continue
		}
		if strings.TrimSpace(h) == "" {
			return nil, nil, &ConfigError{File: file, Reason: `[host.""]: empty URL (want [host."https://mirror.example"])`}
		}
		e, err := parseHostEntry(file, root, h, false, cfg)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	var dropped []string
	for h := range c.Host {
		if !seen[h] {
			dropped = append(dropped, h)
		}
	}
	sort.Strings(dropped)
	for _, h := range dropped {
		notes = append(notes, fmt.Sprintf("%s: host %q is not declared as a [host.%q] table header: containerd does not use it", file, h, h))
	}

	// containerd 1.6 rejects a file with a server and no [host] table
	// ("invalid `host` tree", containerd issue 10027) and silently falls
	// back to https://REGISTRY; 1.7 and later accept it. We accept it, as
	// 1.7+ does, and say so in a note.
	if c.Server != "" && len(c.Host) == 0 {
		notes = append(notes, fmt.Sprintf("%s: server without any [host] table: containerd 1.6 ignores this file (falls back to https://REGISTRY); 1.7 and later honour it; add a [host.%q] table to work on both", file, c.Server))
	}

	e, err := parseHostEntry(file, root, c.Server, true, c.hostFileEntry)
	if err != nil {
		return nil, nil, err
	}
	if c.Server != "" {
		for _, prev := range entries {
			if prev.scheme == e.scheme && prev.host == e.host && prev.path == e.path {
				notes = append(notes, fmt.Sprintf("%s: server %s is also a [host] entry: containerd tries it twice", file, c.Server))
				break
			}
		}
	}
	entries = append(entries, e)
	return entries, notes, nil
}

// parseHostEntry turns one table into an entry; server "" leaves host unset.
func parseHostEntry(file, root, server string, isServer bool, cfg hostFileEntry) (hostEntry, error) {
	baseDir := filepath.Dir(file)
	// a relative path is the file's folder's; an absolute one the node's.
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return underRoot(root, p)
		}
		return filepath.Join(baseDir, p)
	}
	e := hostEntry{source: file, skipVerify: cfg.SkipVerify, overridePath: cfg.OverridePath && server != ""}
	var err error
	if server != "" {
		err = e.setServer(server, cfg.OverridePath)
	}
	if err == nil {
		err = e.setCapabilities(cfg.Capabilities)
	}
	if err == nil {
		err = e.setCA(cfg.CA, abs)
	}
	if err == nil {
		err = e.setClient(cfg.Client, abs)
	}
	if err == nil {
		err = e.setHeader(cfg.Header)
	}
	if err == nil {
		err = e.setDialTimeout(cfg.DialTimeout)
	}
	if err != nil {
		where := "top level"
		if server != "" {
			where = fmt.Sprintf("host %q", server)
			if isServer {
				where = fmt.Sprintf("server %q", server)
			}
		}
		return hostEntry{}, &ConfigError{File: file, Reason: where + ": " + err.Error()}
	}
	return e, nil
}

// setServer reads a host's URL as containerd does: https unless said,
// /v2 added to the path unless override_path.
func (e *hostEntry) setServer(server string, overridePath bool) error {
	s := server
	if scheme, _, ok := strings.Cut(s, "://"); ok && scheme != "http" && scheme != "https" {
		return fmt.Errorf("scheme %q: want http or https", scheme)
	}
	if !strings.HasPrefix(s, "http") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("cannot parse URL: %s", units.OneLine(err.Error()))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q: want http or https", u.Scheme)
	}
	if u.Host == "" || strings.HasSuffix(u.Host, ":") || u.Hostname() == "" {
		return errors.New("URL has no host (want http[s]://host[:port][/path])")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q: want 1-65535", p)
		}
	}
	e.scheme, e.host = u.Scheme, u.Host
	p := u.Path
	if p != "" {
		p = path.Clean(p)
		if !strings.HasSuffix(p, "/v2") && !overridePath {
			p += "/v2"
		}
	} else if !overridePath {
		p = "/v2"
	}
	e.path = p
	return nil
}

// setCapabilities keeps pull, resolve and push once each; none given is all three.
func (e *hostEntry) setCapabilities(caps []string) error {
	if len(caps) == 0 {
		e.capabilities = []string{CapPull, CapResolve, CapPush}
		return nil
	}
	have := map[string]bool{}
	for _, c := range caps {
		lc := strings.ToLower(c)
		switch lc {
		case CapPull, CapResolve, CapPush:
			if !have[lc] {
				e.capabilities = append(e.capabilities, lc)
				have[lc] = true
			}
		default:
			return fmt.Errorf("unknown capability %q (want pull, resolve, push)", c)
		}
	}
	return nil
}

// setCA reads "ca": one file or a list.
func (e *hostEntry) setCA(v any, abs func(string) string) error {
	switch ca := v.(type) {
	case nil:
	case string:
		e.caFiles = []string{abs(ca)}
	case []any:
		list, ok := stringList(ca)
		if !ok {
			return errors.New(`"ca" must be a string or a list of strings`)
		}
		e.caFiles = make([]string, 0, len(list))
		for _, p := range list {
			e.caFiles = append(e.caFiles, abs(p))
		}
	default:
		return fmt.Errorf(`"ca" must be a string or a list of strings, not %T`, v)
	}
	return nil
}

// setClient reads "client": a file, a list of files or of [cert, key] pairs.
func (e *hostEntry) setClient(v any, abs func(string) string) error {
	switch cl := v.(type) {
	case nil:
	case string:
		e.clientPairs = [][2]string{{abs(cl), ""}}
	case []any:
		e.clientPairs = [][2]string{}
		for _, item := range cl {
			switch p := item.(type) {
			case string:
				e.clientPairs = append(e.clientPairs, [2]string{abs(p), ""})
			case []any:
				list, ok := stringList(p)
				if !ok || len(list) != 2 {
					return errors.New(`"client" pair must be [cert, key], two strings`)
				}
				e.clientPairs = append(e.clientPairs, [2]string{abs(list[0]), abs(list[1])})
			default:
				return fmt.Errorf(`"client" list items must be a file or a [cert, key] pair, not %T`, item)
			}
		}
	default:
		return fmt.Errorf(`"client" must be a file, a list of files or a list of [cert, key] pairs, not %T`, v)
	}
	return nil
}

// setHeader reads "header": each value a string or a list of strings.
func (e *hostEntry) setHeader(h map[string]any) error {
	if h == nil {
		return nil
	}
	e.header = http.Header{}
	for k, v := range h {
		switch val := v.(type) {
		case string:
			e.header[k] = []string{val}
		case []any:
			list, ok := stringList(val)
			if !ok {
				return fmt.Errorf("header %q must be a string or a list of strings", k)
			}
			e.header[k] = list
		default:
			return fmt.Errorf("header %q must be a string or a list of strings, not %T", k, v)
		}
	}
	return nil
}

// setDialTimeout reads "dial_timeout" as a Go duration.
func (e *hostEntry) setDialTimeout(s string) error {
	if s == "" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("dial_timeout %q: want a duration such as \"5s\"", s)
	}
	e.dialTimeout = d
	return nil
}

// hostTableOrder lists the [host."X"] table headers in file order, as
// containerd does (dotted keys outside a header do not count).
func hostTableOrder(b []byte) ([]string, error) {
	var order []string
	var p tomlu.Parser
	p.Reset(b)
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != tomlu.Table {
			continue
		}
		var parts []string
		for it := e.Key(); it.Next(); {
			parts = append(parts, string(it.Node().Data))
		}
		if len(parts) < 2 || parts[0] != "host" {
			continue
		}
		order = append(order, parts[1])
	}
	return order, p.Error()
}

// reTypeMismatch matches go-toml's "cannot decode TOML array into struct
// field pkg.type.Field of type string".
var reTypeMismatch = regexp.MustCompile(`^cannot decode TOML (\S+) into struct field \S*?\.?(\w+) of type (.+)$`)

// tomlReason renders a go-toml error on one line with its position.
func tomlReason(err error) string {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		msg := strings.TrimPrefix(units.OneLine(de.Error()), "toml: ")
		if m := reTypeMismatch.FindStringSubmatch(msg); m != nil {
			key := strings.Join(de.Key(), ".")
			if key == "" {
				key = strings.ToLower(m[2])
			}
			msg = fmt.Sprintf("key %q: a TOML %s where a %s is expected", key, m[1], m[3])
		}
		return fmt.Sprintf("line %d column %d: %s", row, col, msg)
	}
	var pe *tomlu.ParserError
	if errors.As(err, &pe) {
		return "invalid TOML: " + units.OneLine(pe.Message)
	}
	return "invalid TOML: " + strings.TrimPrefix(units.OneLine(err.Error()), "toml: ")
}

func stringList(in []any) ([]string, bool) {
	out := make([]string, 0, len(in))
	for _, v := range in {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// pathErrReason is the reason part of a *fs.PathError (the path is named by
// the caller).
func pathErrReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return units.OneLine(err.Error())
}
