//go:build !linux

package childproc

import "syscall"

// setPdeathsig does nothing: there is no parent-death signal here.
func setPdeathsig(*syscall.SysProcAttr) {}
