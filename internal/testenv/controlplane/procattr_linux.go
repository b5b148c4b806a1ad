//go:build linux

package controlplane

import "syscall"

// procAttr puts the child in its own process group, killed if the thread
// that started it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
