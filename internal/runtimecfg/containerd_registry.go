package runtimecfg

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ctrdRegistry is the CRI's registry section of containerd's merged config
// (pkg/cri/config Registry in 1.x, internal/cri/config Registry in 2.x).
type ctrdRegistry struct {
	section      string // the plugin section read
	configPath   string
	configPathAt string // FILE:LINE, or FILE [plugins."..".registry] when unset
	mirrors      map[string]ctrdMirror
	mirrorsAt    string // FILE:LINE of the first mirror
	configs      map[string]*ctrdHost
}

type ctrdMirror struct {
	endpoints []string
	at        string
}

// ctrdHost is registry.configs.HOST: credentials (auth) and, in 1.x, TLS.
type ctrdHost struct {
	auth   *Credentials
	authAt string
	tls    *ctrdTLS
	tlsAt  string
}

type ctrdTLS struct {
	caFile, certFile, keyFile string // node paths
	skip                      bool
}

func (t *ctrdTLS) describe() string {
	var parts []string
	if t.caFile != "" {
		parts = append(parts, "ca_file "+t.caFile)
	}
	if t.certFile != "" || t.keyFile != "" {
		parts = append(parts, "cert_file "+t.certFile+", key_file "+t.keyFile)
	}
	if t.skip {
		parts = append(parts, "insecure_skip_verify")
	}
	return strings.Join(parts, "; ")
}

// auth is the runtime's own credentials for host (registry.configs.HOST.auth).
func (r *ctrdRegistry) auth(host string) *Credentials {
	if c := r.configs[host]; c != nil && c.auth != nil {
		a := *c.auth
		return &a
	}
	return nil
}

// section is the CRI section the merged config is read from.
func (c *ctrdConfig) section() string {
	switch {
	case c.major == 2:
		return criImagesSection
	case c.version <= 1:
		return criV1Section
	}
	return criV2Section
}

// registry reads the CRI's registry section. A value of the wrong type is
// a *ConfigError: containerd refuses to load the plugin with it.
func (c *ctrdConfig) registry(rc *RuntimeConfig) (*ctrdRegistry, error) {
	sec := c.section()
	r := &ctrdRegistry{section: sec, mirrors: map[string]ctrdMirror{}, configs: map[string]*ctrdHost{}}
	base := []string{"plugins", sec, "registry"}
	at := func(parts ...string) string { return c.atNearest(append(append([]string{}, base...), parts...)...) }
	bad := func(what, want string) error {
		return &ConfigError{File: fileOf(at()), Reason: fmt.Sprintf("[plugins.%q.registry] %s: want %s (containerd's CRI plugin does not load with it)", sec, what, want)}
	}
	reg, _ := dig(c.values, base[0], base[1], base[2]).(map[string]any)
	c.checkOtherSections(rc, sec)
	if reg == nil {
		return r, nil
	}
	if v, ok := reg["config_path"]; ok {
		s, isStr := v.(string)
		if !isStr {
			return nil, bad("config_path", "a string of folders separated by ':'")
		}
		r.configPath, r.configPathAt = s, at("config_path")
	}
	if r.configPathAt == "" {
		r.configPathAt = fmt.Sprintf("%s [plugins.%q.registry] (no config_path)", rc.ConfigFile, sec)
	}
	mirrors, _ := reg["mirrors"].(map[string]any)
	for _, host := range sortedKeys(mirrors) {
		m, _ := mirrors[host].(map[string]any)
		list, ok := m["endpoint"].([]any)
		if m == nil || (m["endpoint"] != nil && !ok) {
			return nil, bad(fmt.Sprintf("mirrors.%q", host), "a table with endpoint = [\"https://...\"]")
		}
		eps, ok := stringList(list)
		if !ok {
			return nil, bad(fmt.Sprintf("mirrors.%q.endpoint", host), "a list of URLs")
		}
		r.mirrors[host] = ctrdMirror{endpoints: eps, at: at("mirrors", host, "endpoint")}
		if r.mirrorsAt == "" {
			r.mirrorsAt = at("mirrors", host)
		}
	}
	configs, _ := reg["configs"].(map[string]any)
	for _, host := range sortedKeys(configs) {
		h, _ := configs[host].(map[string]any)
		e := &ctrdHost{}
		if a, ok := h["auth"].(map[string]any); ok {
			e.authAt = at("configs", host, "auth")
			e.auth = parseCtrdAuth(a, e.authAt)
		}
		if t, ok := h["tls"].(map[string]any); ok {
			e.tlsAt = at("configs", host, "tls")
			e.tls = &ctrdTLS{caFile: str(t["ca_file"]), certFile: str(t["cert_file"]), keyFile: str(t["key_file"])}
			e.tls.skip, _ = t["insecure_skip_verify"].(bool)
		}
		r.configs[host] = e
	}
	// registry.auths (deprecated): the URL's host keys registry.configs
	// (pkg/cri/config ValidatePluginConfig, ValidateImageConfig in 2.x).
	auths, _ := reg["auths"].(map[string]any)
	for _, endpoint := range sortedKeys(auths) {
		a, _ := auths[endpoint].(map[string]any)
		host := endpoint
		if u, err := url.Parse(endpoint); err == nil && u.Scheme != "" {
			host = u.Host
		}
		e := r.configs[host]
		if e == nil {
			e = &ctrdHost{}
			r.configs[host] = e
		}
		e.authAt = at("auths", endpoint)
		e.auth = parseCtrdAuth(a, e.authAt)
	}
	return r, nil
}

// checkOtherSections warns about registry settings in a CRI section this
// containerd does not read (a [plugins.cri] table in a version 2 file, a
// version 2 table left in a version 3 file).
func (c *ctrdConfig) checkOtherSections(rc *RuntimeConfig, read string) {
	for _, sec := range []string{criV1Section, criV2Section, criImagesSection} {
		if sec == read {
			continue
		}
		reg, _ := dig(c.values, "plugins", sec, "registry").(map[string]any)
		if len(reg) == 0 {
			continue
		}
		at := c.atNearest("plugins", sec, "registry")
		rc.Warnings = append(rc.Warnings, ConfigWarning{Code: codeConfigIgnored, Ignored: at, Read: fmt.Sprintf("[plugins.%q.registry]", read), Message: fmt.Sprintf(
			"%s sets [plugins.%q.registry], which %s does not read: it reads [plugins.%q.registry] (config version %d)", at, sec, rc.Rules, read, c.version)})
	}
}

// atNearest is the FILE:LINE of the key, or of its nearest table.
func (c *ctrdConfig) atNearest(parts ...string) string {
	for n := len(parts); n > 0; n-- {
		if a := c.at(parts[:n]...); a != "" {
			return a
		}
	}
	return ""
}

// parseCtrdAuth is the CRI's ParseAuth on registry.configs.HOST.auth: a
// username with its password, else an identity token (a refresh token for
// the token service), else auth, base64 of user:password.
func parseCtrdAuth(a map[string]any, at string) *Credentials {
	c := &Credentials{Source: "containerd config " + at}
	switch user, tok, enc := str(a["username"]), str(a["identitytoken"]), str(a["auth"]); {
	case user != "":
		c.Username, c.Password = user, str(a["password"])
	case tok != "":
		c.IdentityToken = tok
	case enc != "":
		b, err := base64.StdEncoding.DecodeString(enc)
		u, p, ok := strings.Cut(string(b), ":")
		if err != nil || !ok {
			c.Source += " (auth does not decode to user:password: containerd's pull fails)"
			return c
		}
		c.Username, c.Password = u, strings.Trim(p, "\x00")
	default:
		return nil
	}
	return c
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// limits are the pull's limits from the section the CRI reads them from.
func (c *ctrdConfig) limits(rc *RuntimeConfig) *PullLimits {
	sec, _ := dig(c.values, "plugins", c.section()).(map[string]any)
	l, err := limitsFrom(rc.ConfigFile, c.section(), sec)
	if err != nil {
		rc.Notes = append(rc.Notes, err.Error())
	}
	if rc.ConfigFile != "" {
		l.ConfigFile = rc.ReadPath(rc.ConfigFile)
	}
	return &l
}

// statNode stats a node path under rc.Root.
func statNode(rc *RuntimeConfig, p string) (os.FileInfo, error) {
	return os.Stat(underRoot(rc.Root, p))
}

// processStart is when process pid started: its /proc/PID/stat start
// time (clock ticks after boot, USER_HZ 100) after /proc/stat's btime.
func processStart(procRoot string, pid int) (time.Time, bool) {
	if pid <= 0 {
		return time.Time{}, false
	}
	b, err := readBounded(filepath.Join(procRoot, strconv.Itoa(pid), "stat"), 64<<10)
	if err != nil {
		return time.Time{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return time.Time{}, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 { // starttime is field 22; fields[0] is field 3
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	st, err := readBounded(filepath.Join(procRoot, "stat"), 1<<20)
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			bt, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			return time.Unix(bt, 0).Add(time.Duration(ticks) * 10 * time.Millisecond), true
		}
	}
	return time.Time{}, false
}
