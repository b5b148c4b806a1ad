package runtimecfg

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The environment systemd gives a service's processes, read from the
// node's files as systemd v252+ reads them (src/core/execute.c: the
// manager's DefaultEnvironment=, then the unit's Environment= lines, then
// its EnvironmentFile= files, later ones winning).
//
// The unit file is the first NAME found in the unit search path; drop-ins
// are every NAME.d/*.conf (and the type-wide service.d/*.conf) of every
// directory of that path, a file name in an earlier directory hiding the
// same name in a later one, applied in file-name order
// (src/shared/dropin.c, src/basic/path-lookup.c). The manager's
// DefaultEnvironment= comes from system.conf and system.conf.d/*.conf
// (src/core/main.c). What systemctl set-environment added at run time is in
// no file: only the running process shows it.

// unitSearchPath is the system manager's unit search path, most important
// first (path-lookup.c, the system scope; /lib is /usr/lib on merged-/usr
// distributions and read as well for the others).
var unitSearchPath = []string{
	"/etc/systemd/system.control",
	"/run/systemd/system.control",
	"/run/systemd/transient",
	"/etc/systemd/system",
	"/run/systemd/system",
	"/usr/local/lib/systemd/system",
	"/usr/lib/systemd/system",
	"/lib/systemd/system",
}

// managerConfDirs hold system.conf.d/*.conf; /etc/systemd/system.conf is
// read first.
var managerConfDirs = []string{
	"/etc/systemd/system.conf.d",
	"/run/systemd/system.conf.d",
	"/usr/local/lib/systemd/system.conf.d",
	"/usr/lib/systemd/system.conf.d",
	"/lib/systemd/system.conf.d",
}

// EnvVar is one environment variable and where it was set.
type EnvVar struct {
	Name  string
	Value string
	From  string // "/etc/systemd/system/containerd.service.d/http-proxy.conf:2 (Environment=)", "/proc/812/environ"
}

// unitEnv is what a service's files say its environment is.
type unitEnv struct {
	Unit     string
	Fragment string   // the unit file used ("" when none was found)
	Files    []string // every file that was read, in order, host paths
	Vars     map[string]EnvVar
	Notes    []string // what systemd ignores or cannot be known from files
}

// confLine is one NAME=VALUE line of a unit or configuration file.
type confLine struct {
	Section, Key, Value string
	File                string // host path (without the root)
	Line                int
}

// parseConf reads a systemd configuration file (src/shared/conf-parser.c):
// [Section] headers, KEY=VALUE lines with blanks around both trimmed,
// # and ; comments, and a trailing backslash continuing the line (it
// becomes a blank; comment lines inside a continuation are skipped).
func parseConf(content, file string) []confLine {
	var out []confLine
	section := ""
	var cont strings.Builder
	contStart := 0
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	for i, raw := range lines {
		l := raw
		trimmed := strings.TrimLeft(l, " \t")
		if cont.Len() > 0 && trimmed != "" && (trimmed[0] == '#' || trimmed[0] == ';') {
			continue
		}
		if cont.Len() == 0 {
			contStart = i + 1
		}
		if endsEscaped(l) {
			cont.WriteString(l[:len(l)-1] + " ")
			continue
		}
		cont.WriteString(l)
		full := strings.TrimSpace(cont.String())
		cont.Reset()
		if full == "" || full[0] == '#' || full[0] == ';' {
			continue
		}
		if full[0] == '[' {
			if end := strings.IndexByte(full, ']'); end > 0 {
				section = full[1:end]
			}
			continue
		}
		k, v, ok := strings.Cut(full, "=")
		if !ok {
			continue
		}
		out = append(out, confLine{Section: section, Key: strings.TrimSpace(k), Value: strings.TrimSpace(v), File: file, Line: contStart})
	}
	return out
}

// endsEscaped says a line ends with a backslash that is not itself
// escaped.
func endsEscaped(l string) bool {
	escaped := false
	for i := 0; i < len(l); i++ {
		if escaped {
			escaped = false
		} else if l[i] == '\\' {
			escaped = true
		}
	}
	return escaped
}

// unitFiles finds the unit file and drop-ins of unit under root, in the
// order systemd applies them. A unit file linked to /dev/null is masked.
func unitFiles(root, unit string) (fragment string, dropins []string, masked bool) {
	at := func(p string) string { return filepath.Join(root, p) }
	for _, dir := range unitSearchPath {
		p := filepath.Join(dir, unit)
		if t, err := os.Readlink(at(p)); err == nil && t == "/dev/null" {
			return p, nil, true
		}
		if st, err := os.Stat(at(p)); err == nil && !st.IsDir() {
			fragment = p
			break
		}
	}
	typ := unit[strings.LastIndexByte(unit, '.')+1:]
	byName := map[string]string{}
	for _, dir := range unitSearchPath {
		for _, d := range []string{filepath.Join(dir, typ+".d"), filepath.Join(dir, unit+".d")} {
			ents, err := os.ReadDir(at(d))
			if err != nil {
				continue
			}
			for _, e := range ents {
				if e.IsDir() || !strings.HasSuffix(e.Name(), ".conf") {
					continue
				}
				if _, seen := byName[e.Name()]; !seen {
					byName[e.Name()] = filepath.Join(d, e.Name())
				}
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		dropins = append(dropins, byName[n])
	}
	return fragment, dropins, false
}

// readUnitEnv computes what unit's files say its environment is, the way
// systemd builds it: DefaultEnvironment=, Environment=, EnvironmentFile=.
func readUnitEnv(root, unit string) *unitEnv {
	ue := &unitEnv{Unit: unit, Vars: map[string]EnvVar{}}
	// 1. The manager's DefaultEnvironment=.
	def := map[string]EnvVar{}
	for _, f := range managerConfFiles(root) {
		content, ok := ue.read(root, f)
		if !ok {
			continue
		}
		for _, l := range parseConf(content, f) {
			if l.Section == "Manager" && l.Key == "DefaultEnvironment" {
				ue.apply(def, l, "DefaultEnvironment=")
			}
		}
	}
	// 2. Environment= and EnvironmentFile= of the unit and its drop-ins.
	fragment, dropins, masked := unitFiles(root, unit)
	ue.Fragment = fragment
	if masked {
		ue.Notes = append(ue.Notes, fmt.Sprintf("%s is masked (%s links to /dev/null): systemd does not start it", unit, fragment))
		return ue
	}
	env, envFiles := ue.serviceEnv(root, append([]string{fragment}, dropins...))
	// 3. The environment files, in order.
	files := map[string]EnvVar{}
	for _, l := range envFiles {
		ue.loadEnvFiles(root, files, l)
	}
	for _, m := range []map[string]EnvVar{def, env, files} {
		for k, v := range m {
			ue.Vars[k] = v
		}
	}
	return ue
}

// read reads one of the unit's files under root, noting it as read.
func (ue *unitEnv) read(root, p string) (string, bool) {
	b, err := readBounded(filepath.Join(root, p), 1<<20)
	if err != nil {
		return "", false
	}
	ue.Files = append(ue.Files, p)
	return string(b), true
}

// managerConfFiles is system.conf and then its drop-ins (the first folder
// of managerConfDirs naming a file wins), by name.
func managerConfFiles(root string) []string {
	files := []string{"/etc/systemd/system.conf"}
	byName := map[string]string{}
	for _, d := range managerConfDirs {
		ents, _ := os.ReadDir(filepath.Join(root, d))
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".conf") {
				if _, seen := byName[e.Name()]; !seen {
					byName[e.Name()] = filepath.Join(d, e.Name())
				}
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, byName[n])
	}
	return files
}

// serviceEnv reads Environment= of the unit's files in order, and the
// EnvironmentFile= lines still in effect (an empty one resets the list).
func (ue *unitEnv) serviceEnv(root string, files []string) (map[string]EnvVar, []confLine) {
	env := map[string]EnvVar{}
	var envFiles []confLine
	for _, f := range files {
		if f == "" {
			continue
		}
		content, ok := ue.read(root, f)
		if !ok {
			continue
		}
		for _, l := range parseConf(content, f) {
			if l.Section != "Service" {
				continue
			}
			switch l.Key {
			case "Environment":
				ue.apply(env, l, "Environment=")
			case "EnvironmentFile":
				if strings.TrimSpace(l.Value) == "" {
					envFiles = nil // an empty assignment resets the list
					continue
				}
				envFiles = append(envFiles, l)
			}
		}
	}
	return env, envFiles
}

// apply records the assignments of one Environment=-style line into m.
func (ue *unitEnv) apply(m map[string]EnvVar, l confLine, what string) {
	as, reset := parseEnvironmentValue(l.Value)
	if reset {
		for k := range m {
			delete(m, k)
		}
		return
	}
	from := fmt.Sprintf("%s:%d (%s)", l.File, l.Line, what)
	for _, a := range as {
		if a.Ignored != "" {
			ue.Notes = append(ue.Notes, fmt.Sprintf("%s:%d: systemd ignores %s", l.File, l.Line, a.Ignored))
			continue
		}
		if len(a.Specifiers) > 0 {
			ue.Notes = append(ue.Notes, fmt.Sprintf("%s:%d: %s holds %s, which systemd fills in from the machine and the unit (left as written here)", l.File, l.Line, a.Name, strings.Join(a.Specifiers, ", ")))
		}
		m[a.Name] = EnvVar{Name: a.Name, Value: a.Value, From: from}
	}
}

// loadEnvFiles reads one EnvironmentFile= value: a path (its unit
// specifiers resolved, globs expanded), optional with a leading "-".
func (ue *unitEnv) loadEnvFiles(root string, m map[string]EnvVar, l confLine) {
	spec := l.Value
	optional := strings.HasPrefix(spec, "-")
	spec = strings.TrimPrefix(spec, "-")
	path, err := ue.resolvePath(spec)
	if err != nil {
		ue.Notes = append(ue.Notes, fmt.Sprintf("%s:%d: EnvironmentFile=%s: %v", l.File, l.Line, l.Value, err))
		return
	}
	if !filepath.IsAbs(path) {
		if !optional {
			ue.Notes = append(ue.Notes, fmt.Sprintf("%s:%d: EnvironmentFile=%s is not an absolute path: systemd refuses to start the service", l.File, l.Line, l.Value))
		}
		return
	}
	matches, _ := filepath.Glob(filepath.Join(root, path))
	if len(matches) == 0 {
		if !optional {
			ue.Notes = append(ue.Notes, fmt.Sprintf("%s:%d: EnvironmentFile=%s does not exist and has no leading \"-\": systemd fails to start %s", l.File, l.Line, path, ue.Unit))
		}
		return
	}
	sort.Strings(matches)
	for _, match := range matches {
		host := "/" + strings.TrimPrefix(strings.TrimPrefix(match, filepath.Clean(root)), "/")
		b, err := readBounded(match, 1<<20)
		if err != nil {
			if !optional {
				ue.Notes = append(ue.Notes, fmt.Sprintf("%s:%d: EnvironmentFile=%s: %v", l.File, l.Line, host, err))
			}
			continue
		}
		ue.Files = append(ue.Files, host)
		for _, e := range parseEnvFile(string(b)) {
			if e.Ignored != "" {
				ue.Notes = append(ue.Notes, fmt.Sprintf("%s:%d: systemd ignores %s", host, e.Line, e.Ignored))
				continue
			}
			m[e.Name] = EnvVar{Name: e.Name, Value: e.Value, From: fmt.Sprintf("%s:%d (EnvironmentFile= of %s)", host, e.Line, ue.Unit)}
		}
	}
}

// resolvePath resolves the unit-name specifiers systemd allows in a path
// (%n %N %p %i %%); another specifier cannot be resolved from files.
func (ue *unitEnv) resolvePath(p string) (string, error) {
	if !strings.Contains(p, "%") {
		return p, nil
	}
	name := ue.Unit
	base := strings.TrimSuffix(name, filepath.Ext(name)) // %N: the name without the type suffix
	prefix, instance := base, ""
	if at := strings.IndexByte(base, '@'); at >= 0 {
		prefix, instance = base[:at], base[at+1:]
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' || i+1 == len(p) {
			b.WriteByte(p[i])
			continue
		}
		i++
		switch p[i] {
		case '%':
			b.WriteByte('%')
		case 'n':
			b.WriteString(name)
		case 'N':
			b.WriteString(base)
		case 'p':
			b.WriteString(prefix)
		case 'i':
			b.WriteString(instance)
		default:
			return "", fmt.Errorf("specifier %%%c is filled in by systemd from the machine; not resolved here", p[i])
		}
	}
	return b.String(), nil
}
