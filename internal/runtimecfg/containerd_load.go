package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
	tomlu "github.com/pelletier/go-toml/v2/unstable"
)

// containerd's config loader, as containerd runs it
// (services/server/config/config.go LoadConfig in 1.6 and 1.7,
// cmd/containerd/server/config/config.go LoadConfigWithPlugins in 2.x):
//
//  1. The main file, then its imports, breadth first: each file's imports
//     are resolved against that file (relative paths from its folder, a
//     path with * is a filepath.Glob, sorted) and appended to the queue; a
//     file already loaded is skipped (circular imports).
//  2. Each file is merged over the ones before it. 1.6 and 1.7 replace a
//     whole [plugins."ID"] section by a later file's (mergeConfig's
//     "Replace entire sections"), so an import that sets only
//     registry.config_path drops the main file's other CRI settings. 2.x
//     merges plugin tables key by key (mergo.WithOverride on map[string]any;
//     a later scalar or list wins).
//  3. The schema version: 1.x keeps the last non-zero version = of the
//     files (0 is 1). 2.x starts from its own version and migrates every
//     older file before merging it: a version 1 file's plugin IDs become
//     URIs ("cri" is io.containerd.grpc.v1.cri), and a version 1 or 2 file's
//     [plugins."io.containerd.grpc.v1.cri".registry] moves to
//     [plugins."io.containerd.cri.v1.images".registry] (plugins/cri/images
//     configMigration), as do image_pull_progress_timeout and
//     max_concurrent_downloads.
//
// Every key keeps the file and line that set it, so the report can say
// where a mirror, a CA or a credential came from.

// ctrdConfig is containerd's merged config.
type ctrdConfig struct {
	major   int // whose loader: 1 (1.6, 1.7) or 2 (2.x)
	version int // the merged schema version (after migration in 2.x)
	values  map[string]any
	from    map[string]string // key path (keyPath) -> "FILE:LINE"
}

// ctrdFile is one file as read.
type ctrdFile struct {
	path    string // node path
	version int    // as written; 0 when absent
	values  map[string]any
	lines   map[string]int // key path -> line
}

// keyPath joins a TOML key path.
func keyPath(parts ...string) string { return strings.Join(parts, "\x00") }

// at is the FILE:LINE that set the key, "" when none did.
func (c *ctrdConfig) at(parts ...string) string { return c.from[keyPath(parts...)] }

// parseCtrdFile reads one config file. A missing file is fs.ErrNotExist.
func (rc *RuntimeConfig) parseCtrdFile(path string) (*ctrdFile, error) {
	b, err := rc.readNodeFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &ConfigError{File: path, Reason: "cannot read: " + err.Error()}
	}
	f := &ctrdFile{path: path}
	if err := toml.Unmarshal(b, &f.values); err != nil {
		return nil, &ConfigError{File: path, Reason: tomlReason(err)}
	}
	if f.values == nil {
		f.values = map[string]any{}
	}
	if v, ok := f.values["version"].(int64); ok {
		f.version = int(v)
	}
	f.lines = tomlLines(b)
	return f, nil
}

// imports are the file's imports = [...], as written.
func (f *ctrdFile) imports() []string {
	list, _ := f.values["imports"].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// loadContainerdConfig runs containerd's loader on the main file. A main
// file that does not parse is a *ConfigError (containerd refuses to
// start with it); an import that is missing or does not parse is a
// warning, and the rest is read.
func (rc *RuntimeConfig) loadContainerdConfig(main string) (*ctrdConfig, error) {
	cfg := &ctrdConfig{values: map[string]any{}, from: map[string]string{}}
	if main == "" {
		cfg.major = rc.containerdMajor(0, false)
		return cfg, nil
	}
	first, err := rc.parseCtrdFile(main)
	if errors.Is(err, fs.ErrNotExist) {
		rc.Notes = append(rc.Notes, main+" does not exist: containerd runs with its built-in defaults")
		cfg.major = rc.containerdMajor(0, false)
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	cfg.major = rc.containerdMajor(first.version, true)
	if cfg.major == 2 {
		cfg.version = 3
	}
	loaded := map[string]bool{}
	pending := []string{main}
	for len(pending) > 0 {
		path := pending[0]
		pending = pending[1:]
		if loaded[path] {
			continue
		}
		f := first
		if path != main {
			if f, err = rc.parseCtrdFile(path); err != nil {
				reason := "it does not exist"
				if !errors.Is(err, fs.ErrNotExist) {
					reason = err.Error()
				}
				rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigRefused, Ignored: path, Read: main, Message: fmt.Sprintf(
					"%s imports %s, but %s: containerd refuses to start with this config (the running containerd, if any, started before); the walk reads the other files", main, path, reason)})
				loaded[path] = true
				continue
			}
		}
		if cfg.major == 2 {
			rc.migrateCtrdFile(f)
		}
		cfg.merge(f)
		loaded[path] = true
		rc.Files = append(rc.Files, path)
		imps, err := rc.resolveImports(path, f.imports())
		if err != nil {
			return nil, err
		}
		pending = append(pending, imps...)
	}
	if cfg.major == 1 && cfg.version == 0 {
		cfg.version = 1
	}
	return cfg, nil
}

// resolveImports is containerd's resolveImports: Clean, relative to the
// importing file's folder, * globbed (under the node's root here; the
// matches are node paths again).
func (rc *RuntimeConfig) resolveImports(parent string, imports []string) ([]string, error) {
	var out []string
	for _, p := range imports {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(parent), p)
		}
		if !strings.Contains(p, "*") {
			out = append(out, p)
			continue
		}
		matches, err := filepath.Glob(underRoot(rc.Root, p))
		if err != nil {
			return nil, &ConfigError{File: parent, Reason: fmt.Sprintf("imports %q: %v", p, err)}
		}
		for _, m := range matches {
			out = append(out, nodePath(rc.Root, m))
		}
	}
	return out, nil
}

// merge puts f over c by the rules of c.major.
func (c *ctrdConfig) merge(f *ctrdFile) {
	if f.version != 0 {
		c.version = f.version
		if c.major == 2 && c.version < 3 {
			c.version = 3 // migrated
		}
	}
	at := func(p string) string { return fmt.Sprintf("%s:%d", f.path, f.lines[p]) }
	if c.major == 1 {
		// 1.x: a later file's [plugins."ID"] replaces the whole section;
		// other keys are overridden one by one.
		plugins, _ := f.values["plugins"].(map[string]any)
		dst, _ := c.values["plugins"].(map[string]any)
		if dst == nil && plugins != nil {
			dst = map[string]any{}
			c.values["plugins"] = dst
		}
		for id, sec := range plugins {
			dst[id] = sec
			prefix := keyPath("plugins", id)
			for k := range c.from {
				if k == prefix || strings.HasPrefix(k, prefix+"\x00") {
					delete(c.from, k)
				}
			}
		}
		for k, v := range f.values {
			if k != "plugins" {
				c.values[k] = v
			}
		}
		for p := range f.lines {
			c.from[p] = at(p)
		}
		return
	}
	deepMerge(c.values, f.values)
	for p := range f.lines {
		c.from[p] = at(p)
	}
}

// deepMerge is mergo.Merge(WithOverride) on map[string]any as containerd
// 2.x calls it: tables merged key by key, anything else replaced.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			deepMerge(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// v1PluginURIs are containerd 2.x's names for version 1's plugin IDs
// (cmd/containerd/server/config v1MigratePluginName).
var v1PluginURIs = map[string]string{
	"cri":       "io.containerd.grpc.v1.cri",
	"cgroups":   "io.containerd.monitor.v1.cgroups",
	"linux":     "io.containerd.runtime.v1.linux",
	"scheduler": "io.containerd.gc.v1.scheduler",
	"bolt":      "io.containerd.metadata.v1.bolt",
	"task":      "io.containerd.runtime.v2.task",
	"opt":       "io.containerd.internal.v1.opt",
	"restart":   "io.containerd.internal.v1.restart",
}

// imagesKeys are the keys containerd 2.x moves from the version 2 CRI
// section to the images plugin (plugins/cri/images configMigration) that
// matter to a pull.
var imagesKeys = []string{"registry", "max_concurrent_downloads", "image_pull_progress_timeout", "image_pull_with_sync_fs"}

// imagesContainerdKeys are the keys it moves from the version 2 CRI
// section's containerd table that decide its pull mode (transfer.go).
var imagesContainerdKeys = []string{"disable_snapshot_annotations", "discard_unpacked_layers"}

// migrateCtrdFile migrates one file to version 3 as containerd 2.x does
// before merging it; its lines move with its keys.
func (rc *RuntimeConfig) migrateCtrdFile(f *ctrdFile) {
	plugins, _ := f.values["plugins"].(map[string]any)
	if plugins == nil {
		return
	}
	// rename moves the lines of a key and everything under it.
	rename := func(from, to []string) {
		pf, pt := keyPath(from...), keyPath(to...)
		for k, l := range f.lines {
			if k == pf || strings.HasPrefix(k, pf+"\x00") {
				delete(f.lines, k)
				f.lines[pt+strings.TrimPrefix(k, pf)] = l
			}
		}
	}
	if f.version <= 1 {
		for id, sec := range plugins {
			if strings.Contains(id, ".") {
				continue
			}
			uri, ok := v1PluginURIs[id]
			if !ok {
				uri = "io.containerd.grpc.v1." + id
			}
			delete(plugins, id)
			plugins[uri] = sec
			rename([]string{"plugins", id}, []string{"plugins", uri})
		}
	}
	// 2.3 and later (config version 4) run the CRI's migration for a
	// version 3 file too.
	migrates := f.version < 3 || strings.HasPrefix(rc.Version, "2.") && !versionBefore(rc.Version, 2, 3)
	cri, _ := plugins[criV2Section].(map[string]any)
	if cri == nil || !migrates {
		return
	}
	images, _ := plugins[criImagesSection].(map[string]any)
	if images == nil {
		images = map[string]any{}
		plugins[criImagesSection] = images
	}
	// containerd copies these keys and leaves them where they were, unread
	// there; the walk moves them, so only keys the images plugin never
	// sees stay behind (and are named by checkOtherSections).
	for _, k := range imagesKeys {
		if v, ok := cri[k]; ok {
			images[k] = v
			delete(cri, k)
			rename([]string{"plugins", criV2Section, k}, []string{"plugins", criImagesSection, k})
		}
	}
	if ct, ok := cri["containerd"].(map[string]any); ok {
		for _, k := range imagesContainerdKeys {
			if v, ok := ct[k]; ok {
				images[k] = v
				rename([]string{"plugins", criV2Section, "containerd", k}, []string{"plugins", criImagesSection, k})
			}
		}
	}
}

// versionBefore reports whether v ("2.2.1", "2.3.0-rc.1") is before
// major.minor; an unparsable version is not.
func versionBefore(v string, major, minor int) bool {
	var a, b int
	if n, _ := fmt.Sscanf(v, "%d.%d", &a, &b); n != 2 {
		return false
	}
	return a < major || a == major && b < minor
}

// tomlLines maps every table header and key of a TOML document to its
// line: "[a.b]" gives a\x00b, "c.d = 1" under it a\x00b\x00c\x00d, and keys
// of inline tables their full path. A document that does not parse gives
// what was read before the error.
func tomlLines(b []byte) map[string]int {
	lines := map[string]int{}
	var p tomlu.Parser
	p.Reset(b)
	var prefix []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case tomlu.Table, tomlu.ArrayTable:
			prefix = keyParts(e.Key())
			it := e.Key()
			if it.Next() {
				lines[keyPath(prefix...)] = dataLine(&p, it.Node().Data)
			}
		case tomlu.KeyValue:
			line := p.Shape(e.Raw).Start.Line
			k := append(append([]string{}, prefix...), keyParts(e.Key())...)
			lines[keyPath(k...)] = line
			inlineLines(lines, k, e.Value(), line)
		}
	}
	return lines
}

// inlineLines records the keys of an inline table value at line.
func inlineLines(lines map[string]int, prefix []string, v *tomlu.Node, line int) {
	if v == nil || v.Kind != tomlu.InlineTable {
		return
	}
	for it := v.Children(); it.Next(); {
		kv := it.Node()
		if kv.Kind != tomlu.KeyValue {
			continue
		}
		k := append(append([]string{}, prefix...), keyParts(kv.Key())...)
		lines[keyPath(k...)] = line
		inlineLines(lines, k, kv.Value(), line)
	}
}

func keyParts(it tomlu.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// dataLine is the line of a slice of the parser's input (1 when it is not
// one: a key with escapes is decoded into a new buffer).
func dataLine(p *tomlu.Parser, data []byte) int {
	doc := p.Data()
	off := cap(doc) - cap(data)
	if len(data) == 0 || off < 0 || off > len(doc) {
		return 1
	}
	return strings.Count(string(doc[:off]), "\n") + 1
}
