//go:build !linux

package controlplane

import "syscall"

// procAttr puts the child in its own process group (no parent-death signal
// off Linux).
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
