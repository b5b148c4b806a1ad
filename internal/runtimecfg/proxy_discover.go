package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Where the runtime's proxy settings come from, most truthful first:
//
//  1. --runtime-env FILE: the runtime's environment as the caller saw it.
//  2. The running runtime's own environment: /proc/PID/environ of the
//     containerd process in the probe's network namespace (a hostNetwork
//     Pod shares the node's). This is what the runtime uses.
//  3. The files that make it (the intent): the runtime's systemd unit and
//     drop-ins (Environment=, EnvironmentFile=, the manager's
//     DefaultEnvironment= where AKS puts its httpProxyConfig), for k3s and
//     rke2 their service's CONTAINERD_* variables (k3s strips the prefix
//     and passes them to its containerd, over the plain ones:
//     pkg/agent/containerd).
//
// When both 2 and 3 are seen and their proxy variables differ, the running
// process wins and a restart is pending. --https-proxy, --http-proxy and
// --no-proxy replace single values on top; --no-node-proxy walks direct.

// runtimeUnits are the services whose processes run the node's
// containerd, in the order they are tried when no running process names
// its own.
var runtimeUnits = []string{"containerd.service", "k3s.service", "k3s-agent.service", "rke2-server.service", "rke2-agent.service"}

// crioUnits are CRI-O's: its package's crio.service, whose drop-ins
// (crio.service.d, where OpenShift's Machine Config Operator writes
// 10-mco-default-env.conf) carry its proxy.
var crioUnits = []string{"crio.service"}

// unitsOf are the runtime's units and its process name.
func unitsOf(runtime string) ([]string, string) {
	if runtime == RuntimeCRIO {
		return crioUnits, "crio"
	}
	return runtimeUnits, "containerd"
}

// ProxyDiscoveryOptions say where to look and what the caller overrides.
type ProxyDiscoveryOptions struct {
	Root           string // the node's filesystem: "/" on the node, "/host" in a Pod with it mounted
	ProcRoot       string // the node's /proc; default Root/proc
	SelfNetNS      string // the probe's network namespace (readlink /proc/self/ns/net); default read here
	RuntimeEnvFile string // --runtime-env
	NoNodeProxy    bool   // --no-node-proxy
	// Runtime is the node's runtime (step 0): RuntimeCRIO reads crio's
	// process and crio.service; "" or RuntimeContainerd containerd's.
	Runtime string
	// Overrides, set by flags (nil: not given).
	HTTPSProxy, HTTPProxy, NoProxy *string
}

// RuntimeProcess is the running runtime whose environment was read.
type RuntimeProcess struct {
	PID  int
	Comm string
	Unit string // the systemd unit of its cgroup, "" when none
	Vars map[string]EnvVar
}

// ProxyDiscovery is what was found, and the settings the walk follows.
type ProxyDiscovery struct {
	Settings ProxySettings
	Running  *RuntimeProcess // nil when no running runtime's environment was read
	Unit     string          // the unit whose files were read
	Intent   map[string]EnvVar
	Files    []string // the files read for the intent
	Warnings []ProxyWarning
	Notes    []string
}

// DiscoverProxy finds the proxy settings of the node's runtime. The error
// is for bad input only (an unreadable --runtime-env file).
func DiscoverProxy(o ProxyDiscoveryOptions) (*ProxyDiscovery, error) {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.ProcRoot == "" {
		o.ProcRoot = filepath.Join(o.Root, "proc")
	}
	d := &ProxyDiscovery{}
	if o.NoNodeProxy {
		d.Settings = ProxySettings{Disabled: true, Origin: "none: --no-node-proxy walks direct on purpose"}
		return d, nil
	}

	var vars map[string]EnvVar
	switch {
	case o.RuntimeEnvFile != "":
		v, err := readRuntimeEnvFile(o.RuntimeEnvFile)
		if err != nil {
			return nil, err
		}
		vars = v
		d.Settings = SettingsFromEnv(vars, "--runtime-env "+o.RuntimeEnvFile)
	default:
		d.Running, d.Notes = findRuntimeProcess(o)
		unit := ""
		if d.Running != nil {
			unit = d.Running.Unit
		}
		d.readIntent(o.Root, unit, o.Runtime)
		switch {
		case d.Running != nil:
			vars = d.Running.Vars
			origin := fmt.Sprintf("the running %s (pid %d", d.Running.Comm, d.Running.PID)
			if d.Running.Unit != "" {
				origin += ", " + d.Running.Unit
			}
			d.Settings = SettingsFromEnv(vars, origin+"): /proc/"+strconv.Itoa(d.Running.PID)+"/environ")
			d.restartPending()
		case d.Unit != "" && len(d.Intent) > 0:
			vars = d.Intent
			d.Settings = SettingsFromEnv(vars, "the files of "+d.Unit+" (no running runtime's environment could be read)")
			d.Warnings = append(d.Warnings, ProxyWarning{Code: verdict.ProxyFromFiles, Message: fmt.Sprintf(
				"the proxy settings come from the files of %s, not from the running runtime (%s): a change not yet applied by a restart would not show", d.Unit, strings.Join(d.Notes, "; "))})
		default:
			d.Settings = SettingsFromEnv(nil, "none found: no proxy variable in the running runtime's environment or its files")
			if d.Running == nil && d.Unit == "" {
				d.Settings.Origin = "none found: no running runtime and no runtime unit file seen"
			}
		}
	}
	d.Warnings = append(d.Warnings, d.Settings.Warnings(vars)...)
	d.override(o)
	return d, nil
}

// override applies the flags on top.
func (d *ProxyDiscovery) override(o ProxyDiscoveryOptions) {
	set := func(v *ProxyValue, flag string, val *string) {
		if val == nil {
			return
		}
		*v = ProxyValue{Value: *val, Var: flag, From: "flag " + flag}
		d.Settings.Origin = strings.TrimSuffix(d.Settings.Origin, ", with flags") + ", with flags"
	}
	set(&d.Settings.HTTPS, "--https-proxy", o.HTTPSProxy)
	set(&d.Settings.HTTP, "--http-proxy", o.HTTPProxy)
	set(&d.Settings.NoProxy, "--no-proxy", o.NoProxy)
}

// readIntent reads the unit files of unit (or of the first runtime unit
// that has a unit file) and computes the environment they give the
// runtime: for k3s and rke2, their CONTAINERD_ variables renamed.
func (d *ProxyDiscovery) readIntent(root, unit, runtime string) {
	units, _ := unitsOf(runtime)
	if unit != "" {
		units = []string{unit}
	}
	for _, u := range units {
		ue := readUnitEnv(root, u)
		if ue.Fragment == "" && len(ue.Files) == 0 {
			continue
		}
		if ue.Fragment == "" && unit == "" {
			continue // only manager configuration: not this runtime's unit
		}
		d.Unit = u
		d.Files = ue.Files
		d.Notes = append(d.Notes, ue.Notes...)
		d.Intent = runtimeEnvOf(u, ue.Vars)
		d.noteEtcEnvironment(root, ue)
		return
	}
}

// noteEtcEnvironment says when /etc/environment sets proxy variables that
// the runtime never reads: systemd services see /etc/environment only
// through an EnvironmentFile= that names it (pam_env reads it for login
// sessions, not for services).
func (d *ProxyDiscovery) noteEtcEnvironment(root string, ue *unitEnv) {
	const etcEnv = "/etc/environment"
	for _, f := range ue.Files {
		if f == etcEnv {
			return
		}
	}
	b, err := readBounded(filepath.Join(root, etcEnv), 1<<20)
	if err != nil {
		return
	}
	var set []string
	for _, e := range parseEnvFile(string(b)) {
		if e.Ignored == "" && IsProxyVar(e.Name) && e.Value != "" {
			set = append(set, e.Name)
		}
	}
	if len(set) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%s sets %s, but %s does not read it (no EnvironmentFile=%s): systemd services do not see /etc/environment, login shells do", etcEnv, strings.Join(set, ", "), ue.Unit, etcEnv))
	}
}

// runtimeEnvOf is the part of a unit's environment the runtime's Go
// client reads: the proxy variables, and for a k3s or rke2 unit its
// CONTAINERD_-prefixed ones renamed (they win over the plain ones: k3s
// appends them last, and Go's exec keeps the last of a duplicate).
func runtimeEnvOf(unit string, vars map[string]EnvVar) map[string]EnvVar {
	out := map[string]EnvVar{}
	for k, v := range vars {
		if IsProxyVar(k) {
			out[k] = v
		}
	}
	if strings.HasPrefix(unit, "k3s") || strings.HasPrefix(unit, "rke2") {
		for k, v := range vars {
			if name, ok := strings.CutPrefix(k, "CONTAINERD_"); ok && IsProxyVar(name) {
				v.Name = name
				v.From += " as " + k
				out[name] = v
			}
		}
	}
	return out
}

// restartPending compares the running process's proxy variables with the
// files' and warns when they differ.
func (d *ProxyDiscovery) restartPending() {
	if d.Running == nil || d.Unit == "" {
		return
	}
	names := map[string]bool{}
	for k := range d.Running.Vars {
		names[k] = true
	}
	for k := range d.Intent {
		names[k] = true
	}
	var diffs []string
	for _, n := range sortedKeys(names) {
		run, file := d.Running.Vars[n], d.Intent[n]
		if run.Value == file.Value {
			continue
		}
		describe := func(v EnvVar, where string) string {
			if v.From == "" {
				return "unset " + where
			}
			return fmt.Sprintf("%q in %s", RedactProxyValue(v.Value), v.From)
		}
		diffs = append(diffs, fmt.Sprintf("%s is %s, but %s", n, describe(run, "in the running process"), describe(file, "in the files of "+d.Unit)))
	}
	if len(diffs) > 0 {
		d.Warnings = append(d.Warnings, ProxyWarning{Code: verdict.ProxyRestartPending, Message: fmt.Sprintf(
			"%s's files changed after the running runtime (pid %d) started: %s. The walk follows the running process; after a restart the runtime would use the files' values",
			d.Unit, d.Running.PID, strings.Join(diffs, "; "))})
	}
}

// findRuntimeProcess finds the containerd process in the probe's network
// namespace and reads its proxy variables. notes say what was skipped.
func findRuntimeProcess(o ProxyDiscoveryOptions) (*RuntimeProcess, []string) {
	self := o.SelfNetNS
	if self == "" {
		self, _ = os.Readlink("/proc/self/ns/net")
	}
	ents, err := os.ReadDir(o.ProcRoot)
	if err != nil {
		return nil, []string{fmt.Sprintf("cannot list %s: %v", o.ProcRoot, unwrapPathError(err))}
	}
	var notes []string
	var candidates []*RuntimeProcess
	otherNS := 0
	_, name := unitsOf(o.Runtime)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(o.ProcRoot, e.Name())
		comm, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != name {
			continue
		}
		if same, gone, note := sameNetNS(dir, self, name, pid); gone {
			continue
		} else if note != "" {
			notes = append(notes, note)
			continue
		} else if !same {
			otherNS++
			continue
		}
		env, err := readBounded(filepath.Join(dir, "environ"), 1<<20)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s pid %d: cannot read /proc/%d/environ (%v): run as root", name, pid, pid, err))
			continue
		}
		unit := cgroupUnit(filepath.Join(dir, "cgroup"))
		if !isRuntimeUnit(unit) && !strings.Contains(unit, name) {
			unit = "" // a process started by hand, or under another service: not a runtime unit's
		}
		p := &RuntimeProcess{PID: pid, Comm: name, Unit: unit, Vars: map[string]EnvVar{}}
		for _, kv := range strings.Split(string(env), "\x00") {
			k, v, ok := strings.Cut(kv, "=")
			if ok && IsProxyVar(k) {
				p.Vars[k] = EnvVar{Name: k, Value: v, From: fmt.Sprintf("/proc/%d/environ", pid)}
			}
		}
		candidates = append(candidates, p)
	}
	if otherNS > 0 {
		notes = append(notes, fmt.Sprintf("%d %s process(es) in other network namespaces were not considered", otherNS, name))
	}
	if len(candidates) == 0 {
		if len(notes) == 0 {
			notes = append(notes, "no "+name+" process in this network namespace")
		}
		return nil, notes
	}
	// A runtime unit's process first (docker's own containerd is not the
	// kubelet's), then the oldest (lowest pid).
	sort.SliceStable(candidates, func(i, j int) bool {
		ri, rj := isRuntimeUnit(candidates[i].Unit), isRuntimeUnit(candidates[j].Unit)
		if ri != rj {
			return ri
		}
		return candidates[i].PID < candidates[j].PID
	})
	if len(candidates) > 1 {
		notes = append(notes, fmt.Sprintf("%d containerd processes in this network namespace: read pid %d", len(candidates), candidates[0].PID))
	}
	return candidates[0], notes
}

func isRuntimeUnit(u string) bool {
	for _, r := range append(runtimeUnits, crioUnits...) {
		if u == r {
			return true
		}
	}
	return false
}

// cgroupUnit is the systemd service a process's cgroup names
// ("0::/system.slice/containerd.service" is containerd.service), "" when
// none.
func cgroupUnit(path string) string {
	b, err := readBounded(path, 64<<10)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		segs := strings.Split(parts[2], "/")
		for i := len(segs) - 1; i >= 0; i-- {
			if strings.HasSuffix(segs[i], ".service") {
				return segs[i]
			}
		}
	}
	return ""
}

// readRuntimeEnvFile reads --runtime-env: a copy of /proc/PID/environ
// (NUL-separated) or KEY=VALUE lines read as an environment file.
func readRuntimeEnvFile(path string) (map[string]EnvVar, error) {
	b, err := readBounded(path, 1<<20)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--runtime-env %s: no such file (want the runtime's environment: a copy of /proc/PID/environ or KEY=VALUE lines)", path)
		}
		return nil, fmt.Errorf("--runtime-env %s: %v", path, err)
	}
	out := map[string]EnvVar{}
	if strings.Contains(string(b), "\x00") {
		for _, kv := range strings.Split(string(b), "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok && IsProxyVar(k) {
				out[k] = EnvVar{Name: k, Value: v, From: path}
			}
		}
		return out, nil
	}
	for _, e := range parseEnvFile(string(b)) {
		if e.Ignored == "" && IsProxyVar(e.Name) {
			out[e.Name] = EnvVar{Name: e.Name, Value: e.Value, From: fmt.Sprintf("%s:%d", path, e.Line)}
		}
	}
	return out, nil
}
