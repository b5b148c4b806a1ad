package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// CRI-O's own configuration, read as CRI-O reads it (cri-o
// internal/criocli mergeConfigFiles, pkg/config UpdateFromFile and
// UpdateFromPath): the --config file (default /etc/crio/crio.conf;
// missing is fine unless given explicitly), then every file under
// --config-dir (default /etc/crio/crio.conf.d), walked recursively in
// lexical order whatever its extension, each decoded on top of the last
// (a key a file sets replaces the earlier value; a list replaces the whole
// list). Command-line flags and their CONTAINER_* environment variables
// win over every file.

// Default paths of CRI-O's config (pkg/config config_unix.go).
const (
	CRIOConfigPath       = "/etc/crio/crio.conf"
	CRIOConfigDropInPath = "/etc/crio/crio.conf.d"
)

// CRIOConfigOptions say where CRI-O's config is and how CRI-O was
// started.
type CRIOConfigOptions struct {
	Root string // the node's filesystem, as in RegistriesConfOptions
	// Args is CRI-O's command line after the program name (from
	// /proc/PID/cmdline, or its unit's ExecStart), nil when unknown.
	Args []string
	// Env is CRI-O's environment (its CONTAINER_* variables set flags).
	Env map[string]string
}

// CRIOSetting is one value and where it was set ("" for CRI-O's
// default).
type CRIOSetting struct {
	Value string
	From  string
}

// CRIOConfig is what CRI-O's configuration says about image pulls.
type CRIOConfig struct {
	// ConfigFile and ConfigDir are the file and folder CRI-O reads.
	ConfigFile, ConfigDir string
	// Files are the files applied, in order.
	Files []string
	// [crio.image] keys and their flags.
	GlobalAuthFile  CRIOSetting
	PauseImage      CRIOSetting
	SignaturePolicy CRIOSetting
	ShortNameMode   CRIOSetting // "" : CRI-O's default (enforcing from 1.34)
	// InsecureRegistries is insecure_registries (--insecure-registry):
	// registries or CIDRs whose TLS is not verified, up to CRI-O 1.34
	// (1.35 removed its effect).
	InsecureRegistries     []string
	InsecureRegistriesFrom string
	// Registries is the [crio.image] registries list CRI-O removed in 1.31.
	Registries     []string
	RegistriesFrom string
	// RegistriesConf and RegistriesConfDir are --registries-conf and
	// --registries-conf-dir ("" when not given).
	RegistriesConf, RegistriesConfDir CRIOSetting
	Notes                             []string
}

// crioFile is the part of crio.conf that decides pulls.
type crioFile struct {
	Crio struct {
		Image struct {
			GlobalAuthFile     *string   `toml:"global_auth_file"`
			PauseImage         *string   `toml:"pause_image"`
			SignaturePolicy    *string   `toml:"signature_policy"`
			InsecureRegistries *[]string `toml:"insecure_registries"`
			Registries         *[]string `toml:"registries"`
			ShortNameMode      *string   `toml:"short_name_mode"`
		} `toml:"image"`
	} `toml:"crio"`
}

// crioFlags are the flags read from CRI-O's command line: name, aliases,
// environment variable.
var crioFlags = []struct {
	name    string
	aliases []string
	env     string
}{
	{"config", []string{"c"}, "CONTAINER_CONFIG"},
	{"config-dir", []string{"d"}, "CONTAINER_CONFIG_DIR"},
	{"global-auth-file", nil, "CONTAINER_GLOBAL_AUTH_FILE"},
	{"pause-image", nil, "CONTAINER_PAUSE_IMAGE"},
	{"signature-policy", nil, "CONTAINER_SIGNATURE_POLICY"},
	{"registries-conf", nil, "CONTAINER_REGISTRIES_CONF"},
	{"registries-conf-dir", nil, "CONTAINER_REGISTRIES_CONF_DIR"},
	{"short-name-mode", nil, "CONTAINER_SHORT_NAME_MODE"},
	{"insecure-registry", nil, ""},
}

// parseCRIOArgs reads CRI-O's flags (urfave/cli: -name or --name, with
// the value after = or as the next word); a repeated flag keeps every
// value. Unknown flags are skipped (their value is taken as a word and
// skipped when it does not start with '-').
func parseCRIOArgs(args []string, env map[string]string) map[string][]CRIOSetting {
	names := map[string]string{}
	for _, f := range crioFlags {
		names[f.name] = f.name
		for _, a := range f.aliases {
			names[a] = f.name
		}
	}
	out := map[string][]CRIOSetting{}
	for _, f := range crioFlags {
		if v, ok := env[f.env]; ok && f.env != "" {
			out[f.name] = []CRIOSetting{{Value: v, From: "CRI-O's environment " + f.env}}
		}
	}
	fromArgs := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			continue
		}
		n := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if k, v, ok := strings.Cut(n, "="); ok {
			n, val, hasVal = k, v, true
		}
		name, known := names[n]
		if !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			val, hasVal = args[i+1], true
			i++
		}
		if !known || !hasVal {
			continue
		}
		if !fromArgs[name] {
			out[name] = nil // the command line replaces the environment
			fromArgs[name] = true
		}
		out[name] = append(out[name], CRIOSetting{Value: val, From: "CRI-O's command line --" + name})
	}
	return out
}

// ReadCRIOConfig reads CRI-O's configuration for image pulls. A file that
// does not parse is a *ConfigError naming it (CRI-O refuses to start with
// it).
func ReadCRIOConfig(o CRIOConfigOptions) (*CRIOConfig, error) {
	ro := RegistriesConfOptions{Root: o.Root}
	ro.defaults()
	flags := parseCRIOArgs(o.Args, o.Env)
	last := func(name string) (CRIOSetting, bool) {
		v := flags[name]
		if len(v) == 0 {
			return CRIOSetting{}, false
		}
		return v[len(v)-1], true
	}
	c := &CRIOConfig{ConfigFile: CRIOConfigPath, ConfigDir: CRIOConfigDropInPath}
	explicit := false
	if s, ok := last("config"); ok {
		c.ConfigFile, explicit = s.Value, true
	}
	if s, ok := last("config-dir"); ok {
		c.ConfigDir = s.Value
	}
	if c.ConfigFile != "" {
		b, err := os.ReadFile(ro.node(c.ConfigFile))
		switch {
		case err == nil:
			if err := c.apply(c.ConfigFile, b); err != nil {
				return nil, err
			}
		case errors.Is(err, fs.ErrNotExist) && !explicit:
		default:
			return nil, &ConfigError{File: c.ConfigFile, Reason: "cannot read: " + pathErrReason(err)}
		}
	}
	files, err := walkFiles(ro.node(c.ConfigDir))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, &ConfigError{File: nodePath(ro.Root, f), Reason: "cannot read: " + pathErrReason(err)}
		}
		if err := c.apply(nodePath(ro.Root, f), b); err != nil {
			return nil, err
		}
	}
	set := func(dst *CRIOSetting, name string) {
		if s, ok := last(name); ok {
			*dst = s
		}
	}
	set(&c.GlobalAuthFile, "global-auth-file")
	set(&c.PauseImage, "pause-image")
	set(&c.SignaturePolicy, "signature-policy")
	set(&c.ShortNameMode, "short-name-mode")
	set(&c.RegistriesConf, "registries-conf")
	set(&c.RegistriesConfDir, "registries-conf-dir")
	if v := flags["insecure-registry"]; len(v) > 0 {
		c.InsecureRegistries = nil
		for _, s := range v {
			c.InsecureRegistries = append(c.InsecureRegistries, s.Value)
		}
		c.InsecureRegistriesFrom = v[0].From
	}
	return c, nil
}

// walkFiles is filepath.Walk's order of every regular file under dir
// (lexical, recursive, whatever the extension); a missing dir is none.
func walkFiles(dir string) ([]string, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []string
	err := filepath.Walk(dir, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, &ConfigError{File: dir, Reason: "cannot walk: " + pathErrReason(err)} // the caller's path
	}
	return out, nil
}

// apply decodes one file on top.
func (c *CRIOConfig) apply(file string, b []byte) error {
	var f crioFile
	if err := toml.Unmarshal(b, &f); err != nil {
		return &ConfigError{File: file, Reason: tomlReason(err)}
	}
	c.Files = append(c.Files, file)
	im := f.Crio.Image
	str := func(dst *CRIOSetting, v *string) {
		if v != nil {
			*dst = CRIOSetting{Value: *v, From: file}
		}
	}
	str(&c.GlobalAuthFile, im.GlobalAuthFile)
	str(&c.PauseImage, im.PauseImage)
	str(&c.SignaturePolicy, im.SignaturePolicy)
	str(&c.ShortNameMode, im.ShortNameMode)
	if im.InsecureRegistries != nil {
		c.InsecureRegistries, c.InsecureRegistriesFrom = append([]string{}, *im.InsecureRegistries...), file
	}
	if im.Registries != nil {
		c.Registries, c.RegistriesFrom = append([]string{}, *im.Registries...), file
	}
	if m := c.ShortNameMode.Value; m != "" && m != ShortNameEnforcing && m != ShortNameDisabled {
		return &ConfigError{File: file, Reason: fmt.Sprintf("[crio.image] short_name_mode = %q: invalid short name mode (want enforcing or disabled; CRI-O refuses to start)", m)}
	}
	return nil
}

// CRIOVersion is a CRI-O version read from its binary ("1.31.3"), with
// what it decides.
type CRIOVersion struct {
	Version string // "" unknown
}

func (v CRIOVersion) atLeast(minor int) (bool, bool) {
	major, m, ok := semverMajorMinor(v.Version)
	if !ok {
		return false, false
	}
	return major > 1 || (major == 1 && m >= minor), true
}

// EffectiveShortNameMode is the short-name mode CRI-O resolves with:
// "disabled" up to 1.33 (CRI-O forces it: every candidate in order); from
// 1.34 crio.conf's short_name_mode, enforcing unless it says disabled.
// Unknown versions: crio.conf's key decides when set, else the note says
// both.
func (c *CRIOConfig) EffectiveShortNameMode(v CRIOVersion) (mode, why string) {
	newer, known := v.atLeast(34)
	switch {
	case known && !newer:
		return ShortNameDisabled, fmt.Sprintf("CRI-O %s (before 1.34) resolves short names with every candidate in order, whatever the configuration says", v.Version)
	case c.ShortNameMode.Value == ShortNameDisabled:
		return ShortNameDisabled, "short_name_mode = \"disabled\" (" + c.ShortNameMode.From + ")"
	case c.ShortNameMode.Value != "":
		return ShortNameEnforcing, "short_name_mode = \"enforcing\" (" + c.ShortNameMode.From + ")"
	case known:
		return ShortNameEnforcing, fmt.Sprintf("CRI-O %s's default short_name_mode, enforcing", v.Version)
	}
	return ShortNameEnforcing, "CRI-O's default short_name_mode (enforcing from 1.34; before 1.34 every candidate is tried in order); CRI-O's version is unknown"
}

// InsecureRegistriesApply says whether insecure_registries still has an
// effect: up to CRI-O 1.34 (1.35 logs it as no longer effective).
func (c *CRIOConfig) InsecureRegistriesApply(v CRIOVersion) bool {
	newer, known := v.atLeast(35)
	return !(known && newer)
}
