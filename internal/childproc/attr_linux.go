//go:build linux

package childproc

import "syscall"

// setPdeathsig makes the child die with the thread that started it.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
