//go:build linux

package lab

// needLinux is nil here: labs run on Linux.
func needLinux() error { return nil }
