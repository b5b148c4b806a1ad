//go:build !linux

package crirun

import (
	"errors"
	"syscall"
)

var errNeedsLinux = errors.New("pullpath lab needs Linux: network namespaces (containerd runs in a lab namespace)")

func needLinux() error { return errNeedsLinux }

func setPdeathsig(*syscall.SysProcAttr) {}

func unmountDetach(string) error { return errNeedsLinux }
