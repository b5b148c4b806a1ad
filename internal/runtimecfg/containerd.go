package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// containerd's CRI keeps its registry settings in a plugin section whose
// name depends on the config's schema version: "cri" in version 1,
// io.containerd.grpc.v1.cri in version 2, io.containerd.cri.v1.images in
// version 3 (containerd 2.x, which migrates older files on load).
const (
	criV1Section     = "cri"
	criV2Section     = "io.containerd.grpc.v1.cri"
	criImagesSection = "io.containerd.cri.v1.images"
)

// containerd2DefaultConfigPath is containerd 2.x's config_path when a
// config sets neither config_path nor mirrors (plugins/cri/images,
// Linux).
const containerd2DefaultConfigPath = "/etc/containerd/certs.d:/etc/docker/certs.d"

// loadContainerd reads containerd's config as containerd does and answers
// with its registry configuration.
func loadContainerd(o RuntimeOptions, rc *RuntimeConfig) error {
	tree, version, err := rc.readContainerdTree()
	if err != nil {
		return err
	}
	major := rc.containerdMajor(version)
	section := criV2Section
	switch {
	case version >= 3:
		section = criImagesSection
	case version <= 1:
		section = criV1Section
	}
	reg, _ := dig(tree, "plugins", section, "registry").(map[string]any)
	configPath, _ := reg["config_path"].(string)
	where := fmt.Sprintf("[plugins.%q.registry] config_path", section)
	if rc.ConfigFile != "" {
		where = rc.ConfigFile + " " + where
	}
	if configPath == "" && major == 2 && len(asMap(reg["mirrors"])) == 0 {
		configPath, where = containerd2DefaultConfigPath, "containerd 2.x's default config_path (the config sets none)"
	}
	if len(asMap(reg["mirrors"])) > 0 {
		rc.Notes = append(rc.Notes, fmt.Sprintf("%s sets inline registry.mirrors: not read yet, the walk uses config_path only", rc.ConfigFile))
	}
	var dirs []string
	for _, d := range filepath.SplitList(configPath) {
		if d == "" {
			continue
		}
		dirs = append(dirs, underRoot(rc.Root, d))
		src := RegistrySource{Kind: "config_path", Path: d, Detail: where}
		if _, err := rc.readNodeDir(d); errors.Is(err, fs.ErrNotExist) {
			src.Missing = true
		}
		rc.Sources = append(rc.Sources, src)
	}
	if configPath == "" {
		rc.Notes = append(rc.Notes, "no config_path: containerd "+rc.majorWord(major)+" reads no hosts.toml folder; each registry is contacted directly with the system's CAs")
	}
	rc.Registry = CertsDirs{Dirs: dirs, Root: rc.Root}
	return nil
}

// readContainerdTree reads the main config file. A missing file is
// containerd's defaults (containerd starts without one).
func (rc *RuntimeConfig) readContainerdTree() (map[string]any, int, error) {
	if rc.ConfigFile == "" {
		return nil, 0, nil
	}
	b, err := rc.readNodeFile(rc.ConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		rc.Notes = append(rc.Notes, rc.ConfigFile+" does not exist: containerd runs with its built-in defaults")
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, &ConfigError{File: rc.ConfigFile, Reason: "cannot read: " + err.Error()}
	}
	var tree map[string]any
	if err := toml.Unmarshal(b, &tree); err != nil {
		return nil, 0, &ConfigError{File: rc.ConfigFile, Reason: tomlReason(err) + " (containerd refuses to start with it)"}
	}
	rc.Files = append(rc.Files, rc.ConfigFile)
	version := 1
	if v, ok := tree["version"].(int64); ok && v > 0 {
		version = int(v)
	}
	return tree, version, nil
}

// containerdMajor decides whose rules apply: a version 3 config is
// containerd 2.x's; otherwise the binary's version when known, else 1.x
// (a version 1 or 2 file is what 1.6 and 1.7 nodes carry).
func (rc *RuntimeConfig) containerdMajor(configVersion int) int {
	rc.Version, rc.VersionFrom = runtimeVersion(rc)
	major := 1
	switch {
	case configVersion >= 3:
		major = 2
		rc.Rules = fmt.Sprintf("containerd 2.x (config version %d)", configVersion)
	case strings.HasPrefix(rc.Version, "2."):
		major = 2
		rc.Rules = fmt.Sprintf("containerd 2.x (version %s, config version %d migrated on load)", rc.Version, configVersion)
	case rc.Version != "":
		rc.Rules = fmt.Sprintf("containerd 1.6/1.7 (version %s, config version %d)", rc.Version, configVersion)
	default:
		rc.Rules = fmt.Sprintf("containerd 1.6/1.7 (config version %d; the binary's version is unknown)", configVersion)
	}
	return major
}

func (rc *RuntimeConfig) majorWord(major int) string {
	if major == 2 {
		return "2.x"
	}
	return "1.6/1.7"
}

// readNodeDir lists a node folder under rc.Root.
func (rc *RuntimeConfig) readNodeDir(p string) ([]fs.DirEntry, error) {
	ents, err := readDir(underRoot(rc.Root, p))
	return ents, err
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

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
