package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// containerd's CRI keeps its registry settings in a plugin section whose
// name depends on the schema version: "cri" in version 1,
// io.containerd.grpc.v1.cri in version 2, io.containerd.cri.v1.images in
// version 3 (containerd 2.x, which migrates older files on load).
const (
	criV1Section     = "cri"
	criV2Section     = "io.containerd.grpc.v1.cri"
	criImagesSection = "io.containerd.cri.v1.images"
)

// containerd2DefaultConfigPath is containerd 2.x's config_path on Linux
// when a config sets neither config_path nor mirrors (plugins/cri/images
// init). 1.6 and 1.7 have no default: no folder is read.
const containerd2DefaultConfigPath = "/etc/containerd/certs.d:/etc/docker/certs.d"

const (
	codeConfigIgnored = verdict.RuntimeConfigIgnored
	codeConfigRefused = verdict.RuntimeConfigRefused
	codeRestart       = verdict.RuntimeRestartPending
)

// loadContainerd reads containerd's config as containerd does and answers
// with its registry configuration, in containerd's order of decisions
// (pkg/cri/server/image_pull.go registryHosts in 1.6 and 1.7,
// internal/cri/server/images/image_pull.go in 2.x):
//
//  1. config_path set: its folders, separated by ":", are read for every
//     pull (hosts.toml, certs.d files; _default); registry.configs.HOST.auth
//     still gives the credentials for HOST when the kubelet passes none.
//  2. config_path not set and 2.x with no mirrors: the default
//     /etc/containerd/certs.d:/etc/docker/certs.d.
//  3. Otherwise the inline registry.mirrors (inline.go): the endpoints of
//     the registry's entry (or of "*"), then the registry itself unless an
//     endpoint is it; registry.configs.HOST gives each endpoint's TLS (1.x
//     only) and credentials.
//
// Mirrors beside config_path make the CRI plugin refuse to load (1.6
// through 2.x: "`mirrors` cannot be set when `config_path` is provided"),
// as does registry.configs TLS beside config_path in 1.6 and 1.7: a
// RUNTIME_CONFIG_REFUSED warning, and the walk follows config_path.
func loadContainerd(o RuntimeOptions, rc *RuntimeConfig) error {
	cfg, err := rc.loadContainerdConfig(rc.ConfigFile)
	if err != nil {
		return err
	}
	reg, err := cfg.registry(rc)
	if err != nil {
		return err
	}
	rc.Limits = cfg.limits(rc)
	rc.checkRestart()
	rc.checkDisabledCRI(cfg)

	switch {
	case reg.configPath != "" || len(reg.mirrors) == 0 && cfg.major == 2:
		rc.useConfigPath(cfg, reg)
	default:
		rc.useInline(cfg, reg)
	}
	rc.checkIgnoredCertsD(reg)
	rc.checkLayoutFiles()
	return nil
}

// useConfigPath walks config_path's folders.
func (rc *RuntimeConfig) useConfigPath(cfg *ctrdConfig, reg *ctrdRegistry) {
	cp, where := reg.configPath, reg.configPathAt
	if cp == "" {
		cp, where = containerd2DefaultConfigPath, "containerd 2.x's default (the config sets neither config_path nor mirrors)"
	}
	if len(reg.mirrors) > 0 {
		rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigRefused, Ignored: reg.mirrorsAt, Read: reg.configPathAt, Message: fmt.Sprintf(
			"%s sets registry.mirrors beside config_path (%s): containerd's CRI plugin refuses to load (\"`mirrors` cannot be set when `config_path` is provided\"), so this node's runtime pulls nothing until one of them goes; the walk follows config_path", reg.mirrorsAt, reg.configPathAt)})
	}
	if cfg.major == 1 {
		for _, host := range sortedKeys(reg.configs) {
			if c := reg.configs[host]; c.tls != nil {
				rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigRefused, Ignored: c.tlsAt, Read: reg.configPathAt, Message: fmt.Sprintf(
					"%s sets registry.configs.%q.tls beside config_path (%s): containerd 1.6 and 1.7 refuse to load the CRI plugin (\"`configs.tls` cannot be set when `config_path` is provided\"); put the CA in %s/%s/hosts.toml", c.tlsAt, host, reg.configPathAt, firstDir(cp), host)})
			}
		}
	}
	folders := filepath.SplitList(cp)
	if mode, why := cfg.pullMode(rc, reg); mode == "transfer" {
		rc.Rules += "; CRI pulls through the transfer service: " + why
		if len(folders) > 1 {
			// the transfer service takes the whole list as one folder
			rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigIgnored, Ignored: cp, Read: "none", Message: fmt.Sprintf(
				"config_path %q (%s) lists %d folders, but containerd 2.1 and later pull through the transfer service, which takes the whole value as one folder (containerd issues 12415, 12808): no hosts.toml under any of them is read, and every registry is contacted directly. Name one folder, or set use_local_image_pull = true under [plugins.'io.containerd.cri.v1.images']", cp, where, len(folders))})
			folders = []string{cp}
		}
	} else if cfg.major == 2 {
		rc.Rules += "; CRI pulls locally: " + why
	}
	var dirs []string
	for _, d := range folders {
		if d == "" {
			continue
		}
		dirs = append(dirs, underRoot(rc.Root, d))
		src := RegistrySource{Kind: "config_path", Path: d, Detail: where}
		if _, err := readDir(underRoot(rc.Root, d)); errors.Is(err, fs.ErrNotExist) {
			src.Missing = true
		}
		rc.Sources = append(rc.Sources, src)
	}
	rc.addAuthSources(reg)
	rc.Registry = CertsDirs{Dirs: dirs, Root: rc.Root, Auth: reg.auth}
}

// useInline walks the inline registry.mirrors.
func (rc *RuntimeConfig) useInline(cfg *ctrdConfig, reg *ctrdRegistry) {
	if len(reg.mirrors) == 0 {
		rc.Notes = append(rc.Notes, "no config_path and no registry.mirrors: containerd 1.6 and 1.7 read no hosts.toml folder; each registry is contacted directly, with the system's CAs and registry.configs TLS")
	}
	for _, host := range sortedKeys(reg.mirrors) {
		m := reg.mirrors[host]
		rc.Sources = append(rc.Sources, RegistrySource{Kind: "mirrors", Path: fileOf(m.at), Line: lineOf(m.at), Registry: host, Detail: "endpoint " + strings.Join(m.endpoints, ", ")})
	}
	for _, host := range sortedKeys(reg.configs) {
		c := reg.configs[host]
		if c.tls == nil {
			continue
		}
		if cfg.major == 2 {
			rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigIgnored, Ignored: c.tlsAt, Read: "hosts.toml under config_path", Message: fmt.Sprintf(
				"%s sets registry.configs.%q.tls, which containerd 2.x no longer reads: its pulls to %s use the system's CAs only; put ca/client/skip_verify in a hosts.toml under config_path", c.tlsAt, host, host)})
			continue
		}
		rc.Sources = append(rc.Sources, RegistrySource{Kind: "configs.tls", Path: fileOf(c.tlsAt), Line: lineOf(c.tlsAt), Registry: host, Detail: c.tls.describe()})
	}
	rc.addAuthSources(reg)
	rc.Registry = &inlineRegistry{reg: reg, tls: cfg.major == 1, root: rc.Root}
}

// addAuthSources names where the runtime holds credentials, never what.
func (rc *RuntimeConfig) addAuthSources(reg *ctrdRegistry) {
	for _, host := range sortedKeys(reg.configs) {
		if c := reg.configs[host]; c.auth != nil {
			rc.Sources = append(rc.Sources, RegistrySource{Kind: "configs.auth", Path: fileOf(c.authAt), Line: lineOf(c.authAt), Registry: host, Detail: c.auth.String()})
		}
	}
}

// checkDisabledCRI says when the chosen config turns the CRI off (Talos's
// system containerd): the kubelet's runtime is another process.
func (rc *RuntimeConfig) checkDisabledCRI(cfg *ctrdConfig) {
	list, _ := cfg.values["disabled_plugins"].([]any)
	for _, v := range list {
		switch v {
		case "cri", criV2Section, criImagesSection:
			rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigIgnored, Ignored: rc.ConfigFile, Message: fmt.Sprintf(
				"%s disables %s: this containerd serves no kubelet (Talos's system containerd is one); give the kubelet's runtime with --runtime-config", rc.ConfigFile, v)})
			return
		}
	}
}

// checkIgnoredCertsD names hosts.toml files under /etc/containerd/certs.d
// that this containerd never reads (k3s, rke2, Talos, a 1.x config
// without config_path).
func (rc *RuntimeConfig) checkIgnoredCertsD(reg *ctrdRegistry) {
	const certsD = "/etc/containerd/certs.d"
	for _, s := range rc.Sources {
		if s.Kind == "config_path" && filepath.Clean(s.Path) == certsD {
			return
		}
	}
	ents, err := readDir(underRoot(rc.Root, certsD))
	if err != nil {
		return
	}
	read := "none: " + rc.ConfigFile + " sets no config_path"
	if rc.ConfigFile == "" {
		read = "none: containerd runs without a config file"
	}
	var dirs []string
	for _, s := range rc.Sources {
		if s.Kind == "config_path" {
			dirs = append(dirs, s.Path)
		}
	}
	if len(dirs) > 0 {
		read = strings.Join(dirs, ":") + " (config_path of " + rc.ConfigFile + ")"
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		f := filepath.Join(certsD, e.Name(), "hosts.toml")
		if _, err := rc.readNodeFile(f); err != nil {
			continue
		}
		why := "containerd reads " + read
		switch rc.Layout {
		case "k3s", "rke2":
			why = fmt.Sprintf("%s's containerd reads %s, rendered from /etc/rancher/%s/registries.yaml at start", rc.Layout, read, rc.Layout)
		}
		rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigIgnored, Ignored: f, Read: read, Message: fmt.Sprintf("%s is never read: %s", f, why)})
	}
}

// checkLayoutFiles names the registry settings of other candidates' files
// (an /etc/containerd/config.toml on a k3s node) and a k3s or rke2
// registries.yaml newer than the config it renders.
func (rc *RuntimeConfig) checkLayoutFiles() {
	for _, c := range rc.Candidates {
		if c.Chosen || c.Runtime != RuntimeContainerd || c.ConfigFile == rc.ConfigFile {
			continue
		}
		f, err := rc.parseCtrdFile(c.ConfigFile)
		if err != nil {
			continue
		}
		for _, sec := range []string{criV1Section, criV2Section, criImagesSection} {
			if reg, ok := dig(f.values, "plugins", sec, "registry").(map[string]any); ok && len(reg) > 0 {
				rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigIgnored, Ignored: c.ConfigFile, Read: rc.ConfigFile, Message: fmt.Sprintf(
					"%s has registry settings (line %d), but the runtime that pulls here reads %s: %s", c.ConfigFile, f.lines[keyPath("plugins", sec, "registry")], rc.ConfigFile, c.Why)})
				break
			}
		}
	}
	switch rc.Layout {
	case "k3s", "rke2":
	default:
		return
	}
	yaml := "/etc/rancher/" + rc.Layout + "/registries.yaml"
	ym, err1 := statNode(rc, yaml)
	cm, err2 := statNode(rc, rc.ConfigFile)
	if err1 == nil && err2 == nil && ym.ModTime().After(cm.ModTime()) {
		rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeRestart, Ignored: yaml, Read: rc.ConfigFile, Message: fmt.Sprintf(
			"%s (changed %s) is newer than %s (rendered %s): %s renders it only at start, so a restart of %s is pending; the walk follows what the runtime reads now",
			yaml, ym.ModTime().UTC().Format("2006-01-02 15:04:05Z"), rc.ConfigFile, cm.ModTime().UTC().Format("2006-01-02 15:04:05Z"), rc.Layout, rc.Layout)})
	}
}

// checkRestart warns when a config file changed after the running
// containerd started: it still runs with what it read then.
func (rc *RuntimeConfig) checkRestart() {
	started, ok := processStart(rc.procRoot, rc.PID)
	if !ok {
		return
	}
	for _, f := range rc.Files {
		fi, err := statNode(rc, f)
		if err == nil && fi.ModTime().After(started) {
			rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeRestart, Ignored: f, Message: fmt.Sprintf(
				"%s changed (%s) after the running containerd (pid %d) started (%s): containerd reads its config only at start, so the walk follows the file and the runtime does not until it restarts",
				f, fi.ModTime().UTC().Format("2006-01-02 15:04:05Z"), rc.PID, started.UTC().Format("2006-01-02 15:04:05Z"))})
		}
	}
}

func firstDir(configPath string) string {
	if d, _, ok := strings.Cut(configPath, ":"); ok {
		return d
	}
	return configPath
}

// fileOf and lineOf split "FILE:LINE".
func fileOf(at string) string {
	if i := strings.LastIndexByte(at, ':'); i > 0 {
		return at[:i]
	}
	return at
}

func lineOf(at string) int {
	n := 0
	if i := strings.LastIndexByte(at, ':'); i > 0 {
		fmt.Sscanf(at[i+1:], "%d", &n)
	}
	return n
}

// containerdMajor decides whose rules apply: a version 3 config is
// containerd 2.x's; otherwise the binary's version when known, else 1.x
// (a version 1 or 2 file is what 1.6 and 1.7 nodes carry).
func (rc *RuntimeConfig) containerdMajor(configVersion int, haveFile bool) int {
	rc.Version, rc.VersionFrom = runtimeVersion(rc)
	v := configVersion
	if v == 0 {
		v = 1
	}
	switch {
	case strings.HasPrefix(rc.Version, "1.") && configVersion >= 3:
		rc.Rules = fmt.Sprintf("containerd %s (config version %d, which 1.x refuses)", rc.Version, configVersion)
		rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigRefused, Ignored: rc.ConfigFile, Message: fmt.Sprintf(
			"%s is config version %d, which containerd %s refuses (\"unsupported config version\"): it does not start with it; the walk reads it with 2.x's rules", rc.ConfigFile, configVersion, rc.Version)})
		return 2
	case configVersion >= 3:
		rc.Rules = fmt.Sprintf("containerd 2.x (config version %d)", configVersion)
		return 2
	case strings.HasPrefix(rc.Version, "2."):
		rc.Rules = fmt.Sprintf("containerd 2.x (version %s; config version %d, migrated on load)", rc.Version, v)
		return 2
	case rc.Version != "":
		rc.Rules = fmt.Sprintf("containerd 1.6/1.7 (version %s, config version %d)", rc.Version, v)
	case !haveFile:
		// no config file and no version: today's containerd's defaults
		rc.Rules = "containerd 2.x defaults (no config file; the binary's version is unknown: 1.6 and 1.7 would read no certs.d folder)"
		return 2
	default:
		rc.Rules = fmt.Sprintf("containerd 1.6/1.7 (config version %d; the binary's version is unknown)", v)
	}
	return 1
}

// dig walks nested TOML tables; nil when a step is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
