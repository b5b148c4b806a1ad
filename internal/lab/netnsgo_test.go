package lab

import (
	"net"
	"time"

	"github.com/pullpath/pullpath/internal/testenv"
)

func listenIn(ns, addr string) (net.Listener, error) {
	var l net.Listener
	err := testenv.InNetns(ns, func() (err error) { l, err = net.Listen("tcp", addr); return })
	return l, err
}

func dialIn(ns, addr string, timeout time.Duration) error {
	return testenv.InNetns(ns, func() error {
		c, err := net.DialTimeout("tcp", addr, timeout)
		if err == nil {
			c.Close()
		}
		return err
	})
}
