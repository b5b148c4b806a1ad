package controlplane

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before it is
// killed.
const stopGrace = 10 * time.Second

// process is one child binary with its captured output.
type process struct {
	name string
	cmd  *exec.Cmd
	logs *logBuffer
	done chan struct{} // closed when the process has exited and been reaped
	err  error         // Wait's result, valid once done is closed
}

// startProcess runs bin with args, its stdout and stderr going to logs. The
// child is put in its own process group and is killed if the calling thread
// dies, so a crashed test leaves nothing behind.
func startProcess(name, bin string, args []string, logs *logBuffer) (*process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logs
	cmd.Stderr = logs
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, logs: logs, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// pid returns the child's process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM to the process group, waits up to stopGrace, then sends
// SIGKILL and waits for the process to be reaped. An exit caused by the
// signal is not an error.
func (p *process) stop() error {
	if done, _ := p.exited(); done {
		return nil
	}
	pgid := p.pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.name, pgid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
		return fmt.Errorf("%s (pid %d) did not exit %s after SIGKILL", p.name, pgid, stopGrace)
	}
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
