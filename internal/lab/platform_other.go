//go:build !linux

package lab

import (
	"context"
	"errors"
	"net"
)

// ErrNeedsLinux is what every lab entry point returns off Linux: labs are
// built from network namespaces, mounts and setns.
var ErrNeedsLinux = errors.New("pullpath lab needs Linux: network namespaces")

func needLinux() error { return ErrNeedsLinux }

// DialInNamespace needs setns(2).
func DialInNamespace(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	return nil, ErrNeedsLinux
}
