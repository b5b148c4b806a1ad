//go:build linux

package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// InNetns runs f on an OS thread switched into the named network namespace
// ns (created by `ip netns add`). The thread first unshares its filesystem
// attributes (CLONE_FS), so nothing f changes leaks to other threads, and
// is never handed back to the scheduler (it exits with the goroutine): no
// other goroutine ever runs in ns by accident. Sockets f opens stay in ns
// for their whole life.
func InNetns(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no Unlock: the thread dies with the goroutine
		fd, err := os.Open(filepath.Join(NetnsDir, ns))
		if err != nil {
			errc <- fmt.Errorf("network namespace %s: %w", ns, err)
			return
		}
		defer fd.Close()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- fmt.Errorf("unshare CLONE_FS: %w", err)
			return
		}
		if err := unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}
