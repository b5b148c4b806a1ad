//go:build linux

package lab

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// DialInNamespace dials addr from inside the network namespace ns (a name
// under /run/netns), on a locked OS thread that enters ns and comes back:
// the socket belongs to ns, the process stays in its own. This is how the
// root namespace reaches the apiserver with no interface, route or rule of
// its own.
func DialInNamespace(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// Never unlocked: if going back failed, the thread must die with
		// the goroutine instead of serving others in the wrong namespace.
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join(netnsRunDir, ns))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("namespace %s: %v", ns, err)}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("enter namespace %s: %v", ns, err)}
			return
		}
		// The dial's socket is created on this thread, in ns; the connect
		// itself may finish on any thread.
		var d net.Dialer
		c, derr := d.DialContext(ctx, network, addr)
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c, derr}
	}()
	r := <-ch
	return r.c, r.err
}
