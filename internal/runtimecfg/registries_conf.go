package runtimecfg

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	tomlu "github.com/pelletier/go-toml/v2/unstable"
)

// CRI-O reads its mirrors, blocked and insecure registries and short names
// from containers-registries.conf(5) through containers/image's
// pkg/sysregistriesv2. This file reads the same files by the same rules,
// keeping for every registry and mirror the file and line it came from,
// which the library merges away. Each rule below names the behaviour of
// containers/image it mirrors (github.com/containers/image up to v5.36,
// go.podman.io/image/v5 from v5.37; read at v5.36.1, v5.39 and v5.42.1).
//
// The library's rules changed once in a way that moves mirrors: v5.41
// searches the files with go.podman.io/storage's configfile (a main file
// under /usr/share/containers as a fallback, registries.rootful.conf.d
// folders, drop-ins of several folders sorted by name together) and refuses
// the v1 format outright. Every CRI-O released up to 1.36 links an earlier
// one (1.36: go.podman.io/image/v5 v5.38.0), so the earlier rules are the
// default; the version read from CRI-O's binary decides (CImageRulesFor).

// CImageRules are the containers/image rules applied to registries.conf.
type CImageRules struct {
	// Version is containers/image's version as read from the runtime's
	// binary ("v5.38.0"), "" when it could not be read.
	Version string
	// Configfile: v5.41 and later (configfile search, v1 refused).
	Configfile bool
}

// CImageRulesFor returns the rules of containers/image version v
// ("v5.38.0", "5.42.1"; "" for unknown: the rules of every CRI-O release
// so far).
func CImageRulesFor(v string) CImageRules {
	r := CImageRules{Version: v}
	major, minor, ok := semverMajorMinor(v)
	r.Configfile = ok && major == 5 && minor >= 41
	return r
}

// String names the rules for a report: "containers/image v5.38.0 rules".
func (r CImageRules) String() string {
	switch {
	case r.Version != "":
		return "containers/image " + r.Version + " rules"
	case r.Configfile:
		return "containers/image v5.41+ rules"
	}
	return "containers/image up to v5.39 rules (version unknown: every CRI-O release up to 1.36 links one)"
}

// semverMajorMinor reads "v5.38.0" or "5.38" as 5, 38.
func semverMajorMinor(v string) (int, int, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minorStr := parts[1]
	if i := strings.IndexFunc(minorStr, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorStr = minorStr[:i]
	}
	minor, err2 := strconv.Atoi(minorStr)
	return major, minor, err1 == nil && err2 == nil
}

// RegistriesConfOptions say where the node's files are and which rules
// apply.
type RegistriesConfOptions struct {
	// Root is the node's filesystem ("/" on the node, "/host" in a Pod
	// that mounts it). Every path below is a node path joined to Root.
	Root string
	// Home is the runtime's home directory on the node (CRI-O runs as
	// root: "/root", the default). containers/image reads
	// $HOME/.config/containers/registries.conf first.
	Home string
	// ConfFile and ConfDir are CRI-O's --registries-conf and
	// --registries-conf-dir (SystemContext.SystemRegistriesConfPath and
	// ...DirPath), "" when not given.
	ConfFile, ConfDir string
	Rules             CImageRules
}

func (o *RegistriesConfOptions) defaults() {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Home == "" {
		o.Home = "/root"
	}
}

// node joins a node path to Root.
func (o *RegistriesConfOptions) node(p string) string {
	if o.Root == "/" || o.Root == "" {
		return p
	}
	return filepath.Join(o.Root, p)
}

// RegistriesConf is registries.conf and its drop-ins as containers/image
// merges them, with the file and line of everything in it.
type RegistriesConf struct {
	Rules CImageRules
	// root is where the node's files were read; every path reported is
	// the node's (nodePath).
	root string
	// byPrefix is Registries while the files are merged.
	byPrefix map[string]*RegistryConfEntry
	// Files are the files read, in the order they were applied.
	Files []string
	// Searched are the main files and drop-in folders looked for, for a
	// report that found none.
	Searched []string
	// Registries are the [[registry]] tables in effect, one per prefix,
	// sorted by prefix (the library's order).
	Registries []*RegistryConfEntry
	// UnqualifiedSearch is unqualified-search-registries, from
	// UnqualifiedSearchFrom (nil when no file sets it).
	UnqualifiedSearch     []string
	UnqualifiedSearchFrom string
	// ShortNameMode is short-name-mode ("" when no file sets it: the
	// library's default, enforcing), from ShortNameModeFrom.
	ShortNameMode     string
	ShortNameModeFrom string
	// Aliases are the [aliases] short names in effect (an empty value in
	// a later file removes one).
	Aliases map[string]AliasEntry
	// CredentialHelpers is credential-helpers (nil: the default,
	// containers-auth.json), from CredentialHelpersFrom.
	CredentialHelpers     []string
	CredentialHelpersFrom string
	// Notes say what the runtime does differently from what the files
	// seem to say (unknown keys, a prefix given twice, a drop-in replacing
	// an entry).
	Notes []string
}

// RegistryConfEntry is one [[registry]] table.
type RegistryConfEntry struct {
	Prefix             string
	Location           string
	Insecure           bool
	Blocked            bool
	MirrorByDigestOnly bool
	Mirrors            []MirrorConfEntry
	File               string
	Line               int
}

// MirrorConfEntry is one [[registry.mirror]] table.
type MirrorConfEntry struct {
	Location       string
	Insecure       bool
	PullFromMirror string // "", all, digest-only, tag-only
	File           string
	Line           int
}

// AliasEntry is one short-name alias and where it is set.
type AliasEntry struct {
	Value string
	File  string
}

// At is "FILE:LINE" (or FILE when the line is unknown).
func (e *RegistryConfEntry) At() string { return fileLine(e.File, e.Line) }

// At is "FILE:LINE".
func (m MirrorConfEntry) At() string { return fileLine(m.File, m.Line) }

func fileLine(f string, l int) string {
	if l > 0 {
		return f + ":" + strconv.Itoa(l)
	}
	return f
}

// Pull-from-mirror values (containers/image's MirrorAll, MirrorByDigestOnly,
// MirrorByTagOnly).
const (
	MirrorAll        = "all"
	MirrorDigestOnly = "digest-only"
	MirrorTagOnly    = "tag-only"
)

// rcEndpoint, rcRegistry and rcFile are the file as the library decodes it
// (V2RegistriesConf, with V1RegistriesConf beside it to detect v1).
type rcEndpoint struct {
	Location       string `toml:"location"`
	Insecure       bool   `toml:"insecure"`
	PullFromMirror string `toml:"pull-from-mirror"`
	NamespaceProxy string `toml:"namespace-proxy"` // v5.42; earlier versions ignore it
}

type rcRegistry struct {
	Prefix             string       `toml:"prefix"`
	Location           string       `toml:"location"`
	Insecure           bool         `toml:"insecure"`
	PullFromMirror     string       `toml:"pull-from-mirror"`
	NamespaceProxy     string       `toml:"namespace-proxy"`
	Mirrors            []rcEndpoint `toml:"mirror"`
	Blocked            bool         `toml:"blocked"`
	MirrorByDigestOnly bool         `toml:"mirror-by-digest-only"`
}

type rcV1List struct {
	Registries []string `toml:"registries"`
}

type rcFile struct {
	Registries                     []rcRegistry      `toml:"registry"`
	UnqualifiedSearchRegistries    *[]string         `toml:"unqualified-search-registries"`
	CredentialHelpers              *[]string         `toml:"credential-helpers"`
	ShortNameMode                  string            `toml:"short-name-mode"`
	AdditionalLayerStoreAuthHelper string            `toml:"additional-layer-store-auth-helper"`
	Aliases                        map[string]string `toml:"aliases"`
	V1                             struct {
		Search   rcV1List `toml:"search"`
		Insecure rcV1List `toml:"insecure"`
		Block    rcV1List `toml:"block"`
	} `toml:"registries"`
}

func (f *rcFile) hasV1() bool {
	return len(f.V1.Search.Registries) > 0 || len(f.V1.Insecure.Registries) > 0 || len(f.V1.Block.Registries) > 0
}

func (f *rcFile) hasV2() bool {
	return len(f.Registries) > 0 || f.UnqualifiedSearchRegistries != nil || f.ShortNameMode != "" || f.CredentialHelpers != nil || len(f.Aliases) > 0
}

// LoadRegistriesConf reads registries.conf and its drop-ins the way
// containers/image does for CRI-O (root, HOME=/root):
//
//	up to v5.39 (tryUpdatingCache, newConfigWrapperWithHomeDir, dropInConfigs):
//	 1. the main file is ConfFile when given (it must exist), else
//	    $HOME/.config/containers/registries.conf when it exists (and then
//	    only $HOME's drop-ins are read), else /etc/containers/registries.conf
//	    (missing: an empty configuration);
//	 2. drop-ins are ConfDir when given, else /etc/containers/registries.conf.d
//	    then $HOME/.config/containers/registries.conf.d, each folder's *.conf
//	    files in name order;
//	 3. the main file may be in the v1 format (converted); a drop-in must
//	    be v2.
//	v5.41 and later (go.podman.io/storage pkg/configfile):
//	 1. the main file is ConfFile, else the first that exists of
//	    $HOME/.config/containers/, /etc/containers/ and /usr/share/containers/
//	    registries.conf;
//	 2. drop-ins are ConfDir, else the *.conf files of $HOME's
//	    registries.conf.d, /etc/containers/registries.rootful.conf.d and
//	    registries.conf.d, /usr/share/containers/registries.rootful.conf.d and
//	    registries.conf.d, one per file name (the earlier folder wins) and
//	    all sorted by name;
//	 3. the v1 format is refused.
//
// Each file is merged on top (updateWithConfigurationFrom): a [[registry]]
// replaces the one with the same prefix; unqualified-search-registries,
// short-name-mode and credential-helpers replace when set; aliases merge
// by name. A file the library would refuse is a *ConfigError naming it:
// CRI-O then fails every pull (and refuses to start with it).
func LoadRegistriesConf(o RegistriesConfOptions) (*RegistriesConf, error) {
	o.defaults()
	c := &RegistriesConf{Rules: o.Rules, Aliases: map[string]AliasEntry{}, root: o.Root, byPrefix: map[string]*RegistryConfEntry{}}
	main, mainMustExist, dirs := c.searchPaths(&o)
	if main != "" {
		b, err := readConfigFile(main)
		switch {
		case err == nil:
			if err := c.apply(main, b, true); err != nil {
				return nil, err
			}
		case errors.Is(err, fs.ErrNotExist) && !mainMustExist:
		default:
			return nil, &ConfigError{File: nodePath(o.Root, main), Reason: "cannot read: " + pathErrReason(err)}
		}
	}
	files, err := dropInFiles(dirs, o.Rules.Configfile)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := readConfigFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing: the library skips it too
		}
		if err != nil {
			return nil, &ConfigError{File: nodePath(o.Root, f), Reason: "cannot read: " + pathErrReason(err)}
		}
		if err := c.apply(f, b, false); err != nil {
			return nil, err
		}
	}
	// the library keeps them sorted by prefix
	prefixes := make([]string, 0, len(c.byPrefix))
	for p := range c.byPrefix {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		c.Registries = append(c.Registries, c.byPrefix[p])
	}
	c.byPrefix = nil
	return c, nil
}

// searchPaths is step 1 and 2's list of places: the main file (whether it
// must exist) and the drop-in folders, highest priority first.
func (c *RegistriesConf) searchPaths(o *RegistriesConfOptions) (string, bool, []string) {
	userFile := o.node(filepath.Join(o.Home, ".config/containers/registries.conf"))
	userDir := userFile + ".d"
	etcFile := o.node("/etc/containers/registries.conf")
	var main string
	var dirs []string
	mustExist := o.ConfFile != ""
	if !o.Rules.Configfile {
		switch {
		case o.ConfFile != "":
			main = o.node(o.ConfFile)
			c.Searched = append(c.Searched, main)
		case exists(userFile):
			main = userFile
			c.Searched = append(c.Searched, main)
			if o.ConfDir != "" {
				dirs = []string{o.node(o.ConfDir)}
			} else {
				dirs = []string{userDir}
			}
			c.Searched = append(c.Searched, dirs...)
			for i, p := range c.Searched {
				c.Searched[i] = nodePath(o.Root, p)
			}
			return main, false, dirs
		default:
			main = etcFile
			c.Searched = append(c.Searched, userFile, main)
		}
		if o.ConfDir != "" {
			dirs = []string{o.node(o.ConfDir)}
		} else {
			dirs = []string{etcFile + ".d", userDir}
		}
		c.Searched = append(c.Searched, dirs...)
		return main, mustExist, dirs
	}
	if o.ConfFile != "" {
		main = o.node(o.ConfFile)
		c.Searched = append(c.Searched, main)
	} else {
		candidates := []string{userFile, etcFile, o.node("/usr/share/containers/registries.conf")}
		c.Searched = append(c.Searched, candidates...)
		for _, f := range candidates {
			if exists(f) {
				main = f
				break
			}
		}
	}
	if o.ConfDir != "" {
		dirs = []string{o.node(o.ConfDir)}
	} else {
		dirs = []string{userDir,
			o.node("/etc/containers/registries.rootful.conf.d"), etcFile + ".d",
			o.node("/usr/share/containers/registries.rootful.conf.d"), o.node("/usr/share/containers/registries.conf.d")}
	}
	c.Searched = append(c.Searched, dirs...)
	for i, p := range c.Searched {
		c.Searched[i] = nodePath(o.Root, p)
	}
	return main, mustExist, dirs
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// dropInFiles lists the drop-ins of dirs: per folder in name order, the
// folders in turn (up to v5.39's dropInConfigs, a WalkDir that does not
// recurse); or (v5.41 configfile's readDropInsFromPaths) one file per
// name, the first folder's winning, all sorted by name. Missing folders
// are skipped; unreadable ones are an error, as in the library.
func dropInFiles(dirs []string, byName bool) ([]string, error) {
	var out []string
	chosen := map[string]string{}
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, &ConfigError{File: d, Reason: "cannot read the drop-in folder: " + pathErrReason(err)}
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".conf") {
				continue
			}
			if !byName {
				out = append(out, filepath.Join(d, e.Name()))
				continue
			}
			if _, ok := chosen[e.Name()]; !ok {
				chosen[e.Name()] = filepath.Join(d, e.Name())
			}
		}
	}
	if byName {
		names := make([]string, 0, len(chosen))
		for n := range chosen {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, chosen[n])
		}
	}
	return out, nil
}

// apply parses one file (loadConfigFile, postProcessRegistries) and merges
// it on top (updateWithConfigurationFrom).
func (c *RegistriesConf) apply(read string, b []byte, isMain bool) error {
	file := nodePath(c.root, read)
	f, outline, err := c.decode(file, b)
	if err == nil && f.hasV1() {
		err = c.fromV1(file, &f, isMain)
		outline = nil // converted entries have no line of their own
	}
	var entries []*RegistryConfEntry
	if err == nil {
		entries, err = registryEntries(file, f.Registries, outline)
	}
	if err == nil {
		err = conflictingEntries(entries)
	}
	var search []string
	var aliases map[string]string
	if err == nil {
		search, aliases, err = f.shortNames()
	}
	if err != nil {
		return &ConfigError{File: file, Reason: err.Error()}
	}
	c.merge(file, &f, entries, search, aliases)
	return nil
}

// decode reads the file's TOML as the library does (unknown keys are
// ignored, so they become notes) and where each [[registry]] starts.
func (c *RegistriesConf) decode(file string, b []byte) (rcFile, []tableLines, error) {
	var f rcFile
	d := toml.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var sme *toml.StrictMissingError
	if err := d.Decode(&f); errors.As(err, &sme) {
		// the library decodes the file and ignores these keys (a Debug
		// log line): a misspelt mirror-by-digest-only silently does
		// nothing
		for _, e := range sme.Errors {
			row, _ := e.Position()
			c.Notes = append(c.Notes, fmt.Sprintf("%s:%d: unknown key %q: containers/image ignores it", file, row, strings.Join(e.Key(), ".")))
		}
	} else if err != nil {
		return f, nil, errors.New(tomlReason(err))
	}
	c.Files = append(c.Files, file)
	outline := headerOutline(b)
	if len(outline) != len(f.Registries) {
		// inline tables (registry = [{...}]): the parser knows their lines
		var err error
		if outline, err = registryOutline(b); err != nil {
			return f, nil, errors.New(tomlReason(err))
		}
	}
	return f, outline, nil
}

// fromV1 converts a v1 file where the library version still does.
func (c *RegistriesConf) fromV1(file string, f *rcFile, isMain bool) error {
	switch {
	case c.Rules.Configfile:
		return errors.New("registries.conf must be in v2 format but is in v1 ([registries.search], [registries.insecure] or [registries.block]; containers/image v5.41 and later refuse it)")
	case !isMain:
		return errors.New("registry must be in v2 format but is in v1 (a drop-in must use [[registry]] tables)")
	case f.hasV2():
		return errors.New("mixing sysregistry v1/v2 is not supported (use [[registry]] tables only)")
	}
	convertV1(f)
	c.Notes = append(c.Notes, fmt.Sprintf("%s is in the deprecated v1 format: containers/image up to v5.39 converts it (v5.41 and later refuse it)", file))
	return nil
}

// registryEntries is postProcessRegistries: locations and prefixes,
// mirror settings, each entry with its line.
func registryEntries(file string, regs []rcRegistry, outline []tableLines) ([]*RegistryConfEntry, error) {
	entries := make([]*RegistryConfEntry, 0, len(regs))
	for i, r := range regs {
		e := &RegistryConfEntry{File: file, Insecure: r.Insecure, Blocked: r.Blocked, MirrorByDigestOnly: r.MirrorByDigestOnly}
		var mirrorLines []int
		if i < len(outline) {
			e.Line, mirrorLines = outline[i].line, outline[i].mirrors
		}
		where := fmt.Sprintf("[[registry]] %d", i+1)
		if e.Line > 0 {
			where = fmt.Sprintf("line %d: [[registry]]", e.Line)
		}
		if err := e.place(r); err != nil {
			return nil, fmt.Errorf("%s: %s", where, err)
		}
		if err := e.addMirrors(r, mirrorLines); err != nil {
			return nil, fmt.Errorf("%s: %s", where, err)
		}
		if strings.HasPrefix(e.Prefix, "*.") && strings.ContainsAny(e.Prefix, "/@:") {
			return nil, fmt.Errorf("%s: Wildcarded prefix should be in the format: *.example.com. Current prefix %q is incorrectly formatted", where, e.Prefix)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// place sets an entry's location and prefix as the library checks them.
func (e *RegistryConfEntry) place(r rcRegistry) error {
	loc, err := parseLocation(r.Location)
	if err != nil {
		return err
	}
	e.Location = loc
	if r.Prefix == "" {
		if loc == "" {
			return errors.New("invalid condition: both location and prefix are unset")
		}
		e.Prefix = loc
	} else {
		p, err := parseLocation(r.Prefix)
		if err != nil {
			return err
		}
		e.Prefix = p
		if !strings.HasPrefix(p, "*.") && loc == "" {
			return errors.New("invalid condition: location is unset and prefix is not in the format: *.example.com")
		}
	}
	if r.PullFromMirror != "" {
		return fmt.Errorf("pull-from-mirror must not be set for a non-mirror registry %q (set it in a [[registry.mirror]])", e.Prefix)
	}
	return nil
}

// addMirrors reads an entry's [[registry.mirror]] tables, each with its line.
func (e *RegistryConfEntry) addMirrors(r rcRegistry, lines []int) error {
	for j, m := range r.Mirrors {
		me := MirrorConfEntry{Insecure: m.Insecure, PullFromMirror: m.PullFromMirror, File: e.File}
		if j < len(lines) {
			me.Line = lines[j]
		} else if e.Line > 0 {
			me.Line = e.Line
		}
		mloc, err := parseLocation(m.Location)
		if err != nil {
			return fmt.Errorf("mirror %d: %s", j+1, err)
		}
		if mloc == "" {
			return fmt.Errorf("mirror %d: invalid condition: mirror location is unset", j+1)
		}
		me.Location = mloc
		if r.MirrorByDigestOnly && m.PullFromMirror != "" {
			return fmt.Errorf("cannot set mirror usage mirror-by-digest-only for the registry (%q) and pull-from-mirror for per-mirror (%q) at the same time", e.Prefix, mloc)
		}
		switch m.PullFromMirror {
		case "", MirrorAll, MirrorDigestOnly, MirrorTagOnly:
		default:
			return fmt.Errorf("unsupported pull-from-mirror value %q for mirror %q (want all, digest-only or tag-only)", m.PullFromMirror, mloc)
		}
		e.Mirrors = append(e.Mirrors, me)
	}
	return nil
}

// conflictingEntries refuses the same location (or wildcard prefix) given
// twice with different insecure or blocked settings.
func conflictingEntries(entries []*RegistryConfEntry) error {
	byLoc := map[string]*RegistryConfEntry{}
	for _, e := range entries {
		key := cmp.Or(e.Location, e.Prefix)
		o, ok := byLoc[key]
		if !ok {
			byLoc[key] = e
			continue
		}
		if o.Insecure != e.Insecure {
			return fmt.Errorf("registry '%s' is defined multiple times with conflicting 'insecure' setting (lines %d and %d)", e.Location, o.Line, e.Line)
		}
		if o.Blocked != e.Blocked {
			return fmt.Errorf("registry '%s' is defined multiple times with conflicting 'blocked' setting (lines %d and %d)", e.Location, o.Line, e.Line)
		}
	}
	return nil
}

// shortNames checks the file's unqualified-search-registries,
// short-name-mode and [aliases] as the library does.
func (f *rcFile) shortNames() ([]string, map[string]string, error) {
	var search []string
	if f.UnqualifiedSearchRegistries != nil {
		search = []string{}
		for _, s := range *f.UnqualifiedSearchRegistries {
			reg, err := parseLocation(s)
			if err != nil {
				return nil, nil, fmt.Errorf("unqualified-search-registries: %s", err)
			}
			if !isDomain(reg) {
				return nil, nil, fmt.Errorf("Invalid unqualified-search-registries entry %q (want a registry host[:port])", reg)
			}
			search = append(search, reg)
		}
	}
	switch f.ShortNameMode {
	case "", "disabled", "enforcing", "permissive":
	default:
		return nil, nil, fmt.Errorf("invalid short-name mode: %q (want disabled, enforcing or permissive)", f.ShortNameMode)
	}
	aliases := map[string]string{}
	for name, value := range f.Aliases {
		if err := validateShortName(name); err != nil {
			return nil, nil, fmt.Errorf("[aliases]: %s", err)
		}
		if value != "" {
			if _, err := parseAliasValue(value); err != nil {
				return nil, nil, fmt.Errorf("[aliases] %q: %s", name, err)
			}
		}
		aliases[name] = value
	}
	return search, aliases, nil
}

// merge is updateWithConfigurationFrom: within the file the first of a
// prefix wins; a prefix replaces an earlier file's as a whole; the
// file's search list, mode, helpers and aliases replace what came before.
func (c *RegistriesConf) merge(file string, f *rcFile, entries []*RegistryConfEntry, search []string, aliases map[string]string) {
	unique := map[string]*RegistryConfEntry{}
	for _, e := range entries {
		if o, ok := unique[e.Prefix]; ok {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: prefix %q is given again: containers/image uses the first (%s) and ignores this one", e.At(), e.Prefix, o.At()))
			continue
		}
		unique[e.Prefix] = e
	}
	for _, e := range entries {
		if unique[e.Prefix] != e {
			continue
		}
		if o, ok := c.byPrefix[e.Prefix]; ok && o.File != e.File {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: [[registry]] prefix %q replaces the one of %s as a whole (its mirrors and settings are not merged)", e.At(), e.Prefix, o.At()))
		}
		c.byPrefix[e.Prefix] = e
	}
	if search != nil {
		c.UnqualifiedSearch, c.UnqualifiedSearchFrom = search, file
	}
	if f.ShortNameMode != "" {
		c.ShortNameMode, c.ShortNameModeFrom = f.ShortNameMode, file
	}
	if f.CredentialHelpers != nil {
		c.CredentialHelpers, c.CredentialHelpersFrom = append([]string{}, *f.CredentialHelpers...), file
	}
	for name, value := range aliases {
		c.Aliases[name] = AliasEntry{Value: value, File: file}
	}
}

// convertV1 is V1RegistriesConf.ConvertToV2: one registry per location,
// blocked ones first, then insecure, in the order first named.
func convertV1(f *rcFile) {
	var order []string
	regs := map[string]*rcRegistry{}
	get := func(loc string) *rcRegistry {
		loc = strings.TrimRight(loc, "/")
		r, ok := regs[loc]
		if !ok {
			r = &rcRegistry{Location: loc, Prefix: loc}
			regs[loc] = r
			order = append(order, loc)
		}
		return r
	}
	for _, b := range f.V1.Block.Registries {
		get(b).Blocked = true
	}
	for _, i := range f.V1.Insecure.Registries {
		get(i).Insecure = true
	}
	f.Registries = nil
	for _, loc := range order {
		f.Registries = append(f.Registries, *regs[loc])
	}
	search := append([]string{}, f.V1.Search.Registries...)
	f.UnqualifiedSearchRegistries = &search
}

// parseLocation is the library's parseLocation: trailing slashes dropped,
// a URI scheme refused.
func parseLocation(in string) (string, error) {
	t := strings.TrimRight(in, "/")
	if strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "https://") {
		return "", fmt.Errorf("invalid location '%s': URI schemes are not supported", in)
	}
	return t, nil
}

// tableLines are the lines of one [[registry]] table and its
// [[registry.mirror]] tables.
type tableLines struct {
	line    int
	mirrors []int
}

// headerOutline is registryOutline for a file that writes every table as
// a [[registry]] / [[registry.mirror]] header (what every generator does):
// a scan of its lines, without a second parse.
func headerOutline(b []byte) []tableLines {
	var out []tableLines
	line := 0
	for len(b) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			l, b = b, nil
		}
		l = bytes.TrimSpace(l)
		if !bytes.HasPrefix(l, []byte("[[")) {
			continue
		}
		end := bytes.Index(l, []byte("]]"))
		if end < 0 {
			continue
		}
		name := strings.Join(strings.Fields(strings.ReplaceAll(string(l[2:end]), `"`, "")), "")
		switch name {
		case "registry":
			out = append(out, tableLines{line: line})
		case "registry.mirror":
			if len(out) > 0 {
				out[len(out)-1].mirrors = append(out[len(out)-1].mirrors, line)
			}
		}
	}
	return out
}

// registryOutline lists the [[registry]] tables in file order with their
// lines and those of their [[registry.mirror]] tables. A registry written
// inline (registry = [{...}]) or inline mirrors (mirror = [{...}]) take
// the line of that key.
func registryOutline(b []byte) ([]tableLines, error) {
	var out []tableLines
	var p tomlu.Parser
	p.Reset(b)
	inRegistry := false
	for p.NextExpression() {
		e := p.Expression()
		keys, first := exprKey(e)
		line := 0
		if first != nil {
			line = p.Shape(p.Range(first)).Start.Line
		}
		switch e.Kind {
		case tomlu.ArrayTable:
			switch strings.Join(keys, ".") {
			case "registry":
				out = append(out, tableLines{line: line})
				inRegistry = true
			case "registry.mirror":
				if len(out) > 0 {
					out[len(out)-1].mirrors = append(out[len(out)-1].mirrors, line)
				}
			default:
				inRegistry = false
			}
		case tomlu.Table:
			inRegistry = false
		case tomlu.KeyValue:
			k := strings.Join(keys, ".")
			switch {
			case !inRegistry && k == "registry":
				for v := e.Value(); v != nil && v.Valid(); v = nil {
					for it := v.Children(); it.Next(); {
						tl := tableLines{line: line}
						for range inlineMirrors(it.Node()) {
							tl.mirrors = append(tl.mirrors, line)
						}
						out = append(out, tl)
					}
				}
			case inRegistry && k == "mirror" && len(out) > 0:
				if v := e.Value(); v != nil {
					for it := v.Children(); it.Next(); {
						out[len(out)-1].mirrors = append(out[len(out)-1].mirrors, line)
					}
				}
			}
		}
	}
	return out, p.Error()
}

// inlineMirrors counts the mirror = [...] entries of an inline registry table.
func inlineMirrors(n *tomlu.Node) []struct{} {
	var out []struct{}
	for it := n.Children(); it.Next(); {
		kv := it.Node()
		keys, _ := exprKey(kv)
		if strings.Join(keys, ".") != "mirror" {
			continue
		}
		if v := kv.Value(); v != nil {
			for m := v.Children(); m.Next(); {
				out = append(out, struct{}{})
			}
		}
	}
	return out
}

// exprKey is the dotted key of a table header or key-value, and the bytes
// of its first part (for its position).
func exprKey(e *tomlu.Node) ([]string, []byte) {
	var parts []string
	var first []byte
	for it := e.Key(); it.Next(); {
		d := it.Node().Data
		if first == nil {
			first = d
		}
		parts = append(parts, string(d))
	}
	return parts, first
}
