package lab

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupMounts lists the mount points of the cgroup hierarchies: every v1
// hierarchy and the unified (v2) one.
func cgroupMounts() (v1 []string, all []string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		i := 0
		for i < len(fs) && fs[i] != "-" {
			i++
		}
		if i+1 >= len(fs) || len(fs) < 5 {
			continue
		}
		mp, typ := fs[4], fs[i+1]
		if (typ != "cgroup" && typ != "cgroup2") || seen[mp] {
			continue
		}
		seen[mp] = true
		all = append(all, mp)
		if typ == "cgroup" {
			v1 = append(v1, mp)
		}
	}
	sort.Strings(all)
	sort.Strings(v1)
	return v1, all
}

// CgroupParent is the folder, in every cgroup hierarchy, under which each
// lab node gets its own cgroup root (its kubelet's cgroupRoot):
// /pullpath-lab/PREFIX+HOST. A teardown removes everything of its prefix
// there.
const CgroupParent = "pullpath-lab"

// MakeNodeCgroup creates a cluster node's cgroup root, CgroupParent/name
// (name starts with the run's prefix), in every v1 hierarchy (the kubelet
// requires it to exist), copying cpuset's cpus and mems down. It holds the
// lab's global lock meanwhile: teardowns remove the shared parent when it
// is empty only under that lock (removeCgroupParent), so it cannot vanish
// between its mkdir and the node's.
func MakeNodeCgroup(name string) error {
	g, err := lockFile(filepath.Join(StateDir, ".lock"), true)
	if err != nil {
		return err
	}
	defer g.Close()
	return makeNodeCgroupOnce(name)
}

func makeNodeCgroupOnce(name string) error {
	v1, _ := cgroupMounts()
	if len(v1) == 0 {
		return fmt.Errorf("no cgroup v1 hierarchy is mounted: the lab's kubelets need the machine's cgroup v1 hierarchies")
	}
	for _, mp := range v1 {
		dir := mp
		for _, part := range []string{CgroupParent, name} {
			parent := dir
			dir = filepath.Join(dir, part)
			if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
				return fmt.Errorf("cgroup %s: %w", dir, err)
			}
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				if b, err := os.ReadFile(filepath.Join(parent, f)); err == nil {
					if cur, _ := os.ReadFile(filepath.Join(dir, f)); strings.TrimSpace(string(cur)) == "" {
						if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
							return fmt.Errorf("cgroup %s/%s: %v", dir, f, err)
						}
					}
				}
			}
		}
	}
	return nil
}

// cgroupDirs lists the cgroups (every hierarchy) of a prefix, deepest
// first; with parent, also the shared parent folder when it exists.
func cgroupDirs(prefix string) []string {
	_, all := cgroupMounts()
	var out []string
	for _, mp := range all {
		base := filepath.Join(mp, CgroupParent)
		ents, err := os.ReadDir(base)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
				continue
			}
			filepath.WalkDir(filepath.Join(base, e.Name()), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					out = append(out, p)
				}
				return nil
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Count(out[i], "/") > strings.Count(out[j], "/") })
	return out
}

// removeCgroups kills every process in the prefix's cgroups (containers
// that live in pod network namespaces the lab did not make) and removes the
// cgroups, in every v1 hierarchy and the unified one.
func removeCgroups(prefix string) error {
	var errs []string
	for try := 0; try < 50; try++ {
		n := 0
		for _, d := range cgroupDirs(prefix) {
			b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
					syscall.Kill(pid, syscall.SIGKILL)
					n++
				}
			}
		}
		if n == 0 {
			break
		}
		time.Sleep(40 * time.Millisecond)
	}
	for _, d := range cgroupDirs(prefix) {
		var err error
		for try := 0; try < 25; try++ {
			if err = syscall.Rmdir(d); err == nil || os.IsNotExist(err) {
				err = nil
				break
			}
			time.Sleep(40 * time.Millisecond) // a frozen or dying task
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("rmdir %s: %v", d, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// removeCgroupParent removes the shared parent, CgroupParent, from every
// hierarchy where no run uses it (rmdir fails while it has a node's
// cgroup). Call it under the lab's global lock: MakeNodeCgroup holds that
// lock between creating the parent and the node's cgroup in it, so the
// parent is never removed in between.
func removeCgroupParent() {
	_, all := cgroupMounts()
	removeCgroupParentIn(all)
}

func removeCgroupParentIn(hierarchies []string) {
	for _, mp := range hierarchies {
		syscall.Rmdir(filepath.Join(mp, CgroupParent))
	}
}

// removeCgroupParentLocked is removeCgroupParent under the global lock,
// for a teardown that does not hold it (a Session's Close).
func removeCgroupParentLocked() {
	_, all := cgroupMounts()
	removeCgroupParentInLocked(all)
}

func removeCgroupParentInLocked(hierarchies []string) {
	g, err := lockFile(filepath.Join(StateDir, ".lock"), true)
	if err != nil {
		return // the parent stays; the next teardown removes it
	}
	defer g.Close()
	removeCgroupParentIn(hierarchies)
}

// killNamingRunDir kills processes outside the lab's namespaces whose
// command line names the run folder (a `lab forward` of `lab up`).
func killNamingRunDir(prefix string) {
	dir := filepath.Join(StateDir, strings.TrimSuffix(prefix, "-"))
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == dir || strings.HasPrefix(a, dir+"/") || strings.Contains(a, "="+dir+"/") {
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}
