//go:build linux

package lab

import "syscall"

// needLinux is nil here: labs run on Linux.
func needLinux() error { return nil }

// setPdeathsig makes the child die with us.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
