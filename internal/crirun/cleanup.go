package crirun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cleanup removes what a runtime with this WorkDir may have left, also one
// whose owner was killed: it SIGKILLs every process whose command line
// names dir (containerd, shims), unmounts everything mounted under dir and
// removes dir. Stop calls it; a lab runner may call it on a leftover folder
// before reusing its name.
func Cleanup(dir string) error {
	if err := checkPath("work folder", dir); err != nil {
		return err
	}
	dir = filepath.Clean(dir)
	var errs []error
	if err := killNaming(dir); err != nil {
		errs = append(errs, err)
	}
	mounts, err := MountsUnder(dir)
	if err != nil {
		errs = append(errs, err)
	}
	for _, m := range mounts {
		if err := unmountDetach(m); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("crirun: unmount %s: %w", m, err))
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, fmt.Errorf("crirun: remove %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// ProcessesNaming lists the pids (other than ours) whose command line
// contains dir as a path or path prefix.
func ProcessesNaming(dir string) ([]int, error) {
	dir = filepath.Clean(dir)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("crirun: read /proc: %w", err)
	}
	self := os.Getpid()
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue // gone, or a kernel thread
		}
		for _, arg := range bytes.Split(b, []byte{0}) {
			if namesPath(string(arg), dir) {
				pids = append(pids, pid)
				break
			}
		}
	}
	sort.Ints(pids)
	return pids, nil
}

// namesPath reports whether arg is dir, lies under it, or carries it as
// a flag value ("-address=DIR/x", "unix://DIR/x").
func namesPath(arg, dir string) bool {
	i := strings.Index(arg, dir)
	if i < 0 {
		return false
	}
	rest := arg[i+len(dir):]
	return rest == "" || rest[0] == '/'
}

// killNaming SIGKILLs the processes naming dir and waits, bounded, until
// they are gone.
func killNaming(dir string) error {
	pids, err := ProcessesNaming(dir)
	if err != nil {
		return err
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(pids) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if pids, err = ProcessesNaming(dir); err != nil {
			return err
		}
	}
	if len(pids) > 0 {
		return fmt.Errorf("crirun: processes %v naming %s survive SIGKILL", pids, dir)
	}
	return nil
}

// MountsUnder lists the mount points in our mount namespace at or under
// dir, deepest first (the order to unmount them in).
func MountsUnder(dir string) ([]string, error) {
	dir = filepath.Clean(dir)
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("crirun: read mountinfo: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("crirun: read mountinfo: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
