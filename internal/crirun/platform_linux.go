//go:build linux

package crirun

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func needLinux() error { return nil }

// setPdeathsig makes the runtime die with us.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// unmountDetach lazily unmounts m (umount -l).
func unmountDetach(m string) error { return unix.Unmount(m, unix.MNT_DETACH) }
