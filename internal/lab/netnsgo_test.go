package lab

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// inNetns runs f on an OS thread switched into namespace ns. The thread is
// never returned to the scheduler's pool (it exits with the goroutine).
func inNetns(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no Unlock: the thread dies with the goroutine
		fd, err := os.Open(netnsRunDir + "/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer fd.Close()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- err
			return
		}
		if err := unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %v", ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

func listenIn(ns, addr string) (net.Listener, error) {
	var l net.Listener
	err := inNetns(ns, func() (err error) { l, err = net.Listen("tcp4", addr); return })
	return l, err
}

func dialIn(ns, addr string, timeout time.Duration) error {
	return inNetns(ns, func() error {
		c, err := net.DialTimeout("tcp4", addr, timeout)
		if err == nil {
			c.Close()
		}
		return err
	})
}
