package controlplane

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/pullpath/pullpath/internal/childproc"
)

// stopGrace is how long a process gets to exit after SIGTERM before it is
// killed.
const stopGrace = 10 * time.Second

// startProcess runs bin with args, its stdout and stderr going to logs, in
// its own process group, killed if the calling thread dies, so a crashed
// test leaves nothing behind.
func startProcess(name, bin string, args []string, logs *logBuffer) (*childproc.Proc, error) {
	return childproc.Start(name, append([]string{bin}, args...), childproc.Options{Output: logs})
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a
// moment ago. All listeners are held open until every port is chosen, so
// the n ports differ from one another.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// hostPort joins 127.0.0.1 and port.
func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
