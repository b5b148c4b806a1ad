package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StateDir holds the lab's locks, kept-run state and per-run folders.
var StateDir = "/run/pullpath-lab"

// prefixRE matches the names of everything a run creates: "ppl" + 6 hex
// digits + "-".
var prefixRE = regexp.MustCompile(`^(ppl[0-9a-f]{6}-)`)

// Session is one run's claim on a unique name prefix. It holds a lock file
// for as long as the run lives, so a sweep by another run (or process)
// never touches it; a run killed with SIGKILL drops the lock and its
// leftovers are swept by the next session.
type Session struct {
	Prefix string
	RunDir string // StateDir/PREFIX: certificates, configs, logs, storage
	lock   *os.File
}

// NewSession sweeps leftovers of dead runs and claims a fresh prefix. It
// needs root.
func NewSession(ctx context.Context) (*Session, error) {
	if err := needLinux(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("lab state folder %s: %v", StateDir, errors.Unwrap(err))
	}
	g, err := lockFile(filepath.Join(StateDir, ".lock"), true)
	if err != nil {
		return nil, err
	}
	defer g.Close() // releases the global lock
	if _, err := sweep(ctx); err != nil {
		return nil, err
	}
	for i := 0; i < 16; i++ {
		b := make([]byte, 3)
		_, _ = rand.Read(b)
		prefix := "ppl" + hex.EncodeToString(b) + "-"
		lp := filepath.Join(StateDir, prefix+"lock")
		f, err := os.OpenFile(lp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
		if err != nil {
			continue
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			continue
		}
		fmt.Fprintf(f, "%d\n", os.Getpid())
		s := &Session{Prefix: prefix, RunDir: filepath.Join(StateDir, strings.TrimSuffix(prefix, "-")), lock: f}
		if err := os.MkdirAll(s.RunDir, 0o755); err != nil {
			s.release()
			return nil, err
		}
		return s, nil
	}
	return nil, errors.New("lab: could not claim a run prefix")
}

func lockFile(path string, block bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %v", path, errors.Unwrap(err))
	}
	how := syscall.LOCK_EX
	if !block {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Close tears down everything under the session's prefix and releases it.
func (s *Session) Close() error {
	err := TeardownPrefix(s.Prefix)
	removeCgroupParentLocked()
	if rerr := os.RemoveAll(s.RunDir); err == nil && rerr != nil {
		err = rerr
	}
	s.release()
	return err
}

// Keep marks the session as kept (lab up): the lock is released but sweeps
// leave it alone until `lab down`.
func (s *Session) Keep(st *KeptRun) error {
	st.Prefix = s.Prefix
	st.RunDir = s.RunDir
	if err := SaveKept(st); err != nil {
		return err
	}
	s.release()
	return nil
}

// SaveKept records (again) the state of a kept run, e.g. the nodes a
// cluster scenario's scale-up added.
func SaveKept(k *KeptRun) error {
	b, _ := json.MarshalIndent(k, "", "  ")
	return os.WriteFile(filepath.Join(StateDir, k.Prefix+"up"), b, 0o600)
}

func (s *Session) release() {
	if s.lock != nil {
		os.Remove(s.lock.Name())
		s.lock.Close()
		s.lock = nil
	}
}

// KeptRun is the state of a run left up by `lab up`.
type KeptRun struct {
	Name      string            `json:"name"`
	Source    string            `json:"source"`
	Prefix    string            `json:"prefix"`
	RunDir    string            `json:"runDir"`
	NodeNS    string            `json:"nodeNamespace"`
	Namespace map[string]string `json:"namespaces"`
	Started   time.Time         `json:"started"`
	// Kubeconfig and Nodes are set for a cluster scenario.
	Kubeconfig string   `json:"kubeconfig,omitempty"`
	Nodes      []string `json:"nodes,omitempty"`
}

// KeptRuns lists the runs left up by `lab up`.
func KeptRuns() ([]KeptRun, error) {
	if err := needLinux(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(StateDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []KeptRun
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), "-up") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(StateDir, e.Name()))
		if err != nil {
			continue
		}
		var k KeptRun
		if json.Unmarshal(b, &k) == nil && prefixRE.MatchString(k.Prefix) {
			out = append(out, k)
		}
	}
	return out, nil
}

// Down tears down a kept run.
func Down(k KeptRun) error {
	if err := needLinux(); err != nil {
		return err
	}
	g, err := lockFile(filepath.Join(StateDir, ".lock"), true)
	if err != nil {
		return err
	}
	defer g.Close()
	err = TeardownPrefix(k.Prefix)
	removeCgroupParent() // under the global lock
	os.RemoveAll(filepath.Join(StateDir, strings.TrimSuffix(k.Prefix, "-")))
	os.Remove(filepath.Join(StateDir, k.Prefix+"up"))
	return err
}

// Sweep tears down the leftovers of runs that died without cleaning up
// (their lock is free and they were not kept by `lab up`), and returns the
// prefixes it removed.
func Sweep(ctx context.Context) ([]string, error) {
	if err := needLinux(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(StateDir, 0o700); err != nil {
		return nil, err
	}
	g, err := lockFile(filepath.Join(StateDir, ".lock"), true)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	return sweep(ctx)
}

// sweep runs under the global lock.
func sweep(ctx context.Context) ([]string, error) {
	prefixes := map[string]bool{}
	for _, dir := range []string{netnsRunDir, netnsEtcDir, StateDir} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			n := e.Name()
			if dir == StateDir && !strings.HasSuffix(n, "-lock") && !strings.HasSuffix(n, "-up") {
				n += "-" // run folder
			}
			if m := prefixRE.FindStringSubmatch(n); m != nil {
				prefixes[m[1]] = true
			}
		}
	}
	var swept []string
	var firstErr error
	for p := range prefixes {
		if ctx.Err() != nil {
			break
		}
		if _, err := os.Stat(filepath.Join(StateDir, p+"up")); err == nil {
			continue // kept by lab up
		}
		lp := filepath.Join(StateDir, p+"lock")
		if _, err := os.Stat(lp); err == nil {
			f, err := lockFile(lp, false)
			if err != nil {
				continue // alive
			}
			f.Close()
		}
		if err := TeardownPrefix(p); err != nil && firstErr == nil {
			firstErr = err
		}
		os.RemoveAll(filepath.Join(StateDir, strings.TrimSuffix(p, "-")))
		os.Remove(lp)
		swept = append(swept, p)
	}
	removeCgroupParent() // under the global lock
	sort.Strings(swept)
	return swept, firstErr
}

// Leftovers lists what exists under a prefix ("" for any lab prefix):
// namespaces, /etc/netns folders, netns mounts and processes in lab
// namespaces. Tests use it to prove a teardown left nothing.
func Leftovers(prefix string) []string {
	match := func(n string) bool {
		if prefix == "" {
			return prefixRE.MatchString(n)
		}
		return strings.HasPrefix(n, prefix)
	}
	var out []string
	for _, dir := range []string{netnsRunDir, netnsEtcDir} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if match(e.Name()) {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			fs := strings.Fields(l)
			if len(fs) > 4 && strings.HasPrefix(fs[4], netnsRunDir+"/") && match(filepath.Base(fs[4])) {
				out = append(out, "mount "+fs[4])
			}
			// anything mounted in a run folder (a cluster's nodes mount only
			// in their own mount namespaces)
			if len(fs) > 4 && strings.HasPrefix(fs[4], StateDir+"/") {
				if rest := strings.TrimPrefix(fs[4], StateDir+"/"); match(strings.SplitN(rest, "/", 2)[0] + "-") {
					out = append(out, "mount "+fs[4])
				}
			}
		}
	}
	for _, pid := range labPids(match) {
		out = append(out, fmt.Sprintf("process %d", pid))
	}
	p := prefix
	if p == "" {
		p = "ppl"
	}
	for _, d := range cgroupDirs(p) {
		out = append(out, "cgroup "+d)
	}
	return out
}

// labPids finds processes whose network namespace is a lab namespace, by
// comparing /proc/PID/ns/net with the namespaces' bind mounts.
func labPids(match func(string) bool) []int {
	inodes := map[uint64]bool{}
	ents, _ := os.ReadDir(netnsRunDir)
	for _, e := range ents {
		if !match(e.Name()) {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(netnsRunDir, e.Name()), &st) == nil {
			inodes[st.Ino] = true
		}
	}
	if len(inodes) == 0 {
		return nil
	}
	procs, _ := os.ReadDir("/proc")
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", p.Name(), "ns/net"), &st) == nil && inodes[st.Ino] {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

// TeardownPrefix removes every namespace (with its veths, bridges and nft
// table), process, /etc/netns folder and netns mount under prefix. It does
// not depend on a context: it must finish after Ctrl-C.
func TeardownPrefix(prefix string) error {
	if !prefixRE.MatchString(prefix) {
		return fmt.Errorf("lab teardown: refusing prefix %q", prefix)
	}
	match := func(n string) bool { return strings.HasPrefix(n, prefix) }
	// 0. a cluster's processes outside the namespaces: forwarders of lab
	// up and containerd shims name the run folder.
	killNamingRunDir(prefix)
	// 1. processes in the namespaces: kill, then wait until they are gone.
	for try := 0; try < 50; try++ {
		pids := labPids(match)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(40 * time.Millisecond)
	}
	// 1a. squid's folder: outside the run folder, which squid's user
	// cannot enter (proxy.go).
	removeProxyDir(filepath.Join(StateDir, strings.TrimSuffix(prefix, "-")))
	// 1b. a cluster's cgroups (v1 hierarchies and unified) and the
	// containers in them, which live in pod namespaces of their own.
	var errs []string
	if err := removeCgroups(prefix); err != nil {
		errs = append(errs, err.Error())
	}
	// 2. namespaces: deleting one deletes its veths, bridges and tables.
	ents, _ := os.ReadDir(netnsRunDir)
	var names []string
	for _, e := range ents {
		if match(e.Name()) {
			names = append(names, e.Name())
		}
	}
	if len(names) > 0 {
		lines := make([]string, len(names))
		for i, n := range names {
			lines[i] = "netns del " + n
		}
		if err := ipBatch(context.Background(), "", lines); err != nil {
			// one by one, so one stuck namespace does not keep the others
			for _, n := range names {
				if _, err := run(context.Background(), "", "ip", "netns", "del", n); err != nil {
					if _, serr := os.Stat(filepath.Join(netnsRunDir, n)); serr == nil {
						errs = append(errs, err.Error())
					}
				}
			}
		}
	}
	// 3. the node's resolv.conf and hosts.
	ents, _ = os.ReadDir(netnsEtcDir)
	for _, e := range ents {
		if match(e.Name()) {
			if err := os.RemoveAll(filepath.Join(netnsEtcDir, e.Name())); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab teardown %s: %s", prefix, strings.Join(errs, "; "))
	}
	return nil
}
