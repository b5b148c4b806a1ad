// Package childproc starts, watches and stops the long-running child
// processes of the lab (its services, control plane, nodes and forwarder)
// and of the tests' control plane (internal/testenv/controlplane), and finds
// the Kubernetes binaries hack/controlplane.sh builds (bindir.go).
//
// Every child runs in its own process group, so a stop reaches what it
// started too; unless kept, it gets SIGKILL when the thread that started it
// dies (Linux's parent-death signal), so a crashed caller leaves nothing
// running; one goroutine reaps it.
package childproc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Options tune Start.
type Options struct {
	// Env is the child's environment; nil gives it this process's.
	Env []string
	// Output receives the child's stdout and stderr; nil discards them.
	Output io.Writer
	// Keep lets the child outlive this process (lab up): no parent-death
	// signal.
	Keep bool
}

// Proc is one running (or exited) child.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	// Log is the file the child's output goes to (StartLogged).
	Log  string
	done chan struct{} // closed once the child has exited and been reaped
	err  error         // Wait's result, valid once done is closed
}

// SysProcAttr puts a child in its own process group and, unless keep,
// kills it when the thread that started it dies.
func SysProcAttr(keep bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if !keep {
		setPdeathsig(a)
	}
	return a
}

// Start starts argv as the child name.
func Start(name string, argv []string, o Options) (*Proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = o.Env
	cmd.Stdout, cmd.Stderr = o.Output, o.Output
	cmd.SysProcAttr = SysProcAttr(o.Keep)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// StartLogged is Start with the child's output appended to logFile.
func StartLogged(name, logFile string, argv []string, o Options) (*Proc, error) {
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer lf.Close() // the child has its own copy
	o.Output = lf
	p, err := Start(name, argv, o)
	if p != nil {
		p.Log = logFile
	}
	return p, err
}

// Done is closed once the child has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the child has exited, and Wait's error if so.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Running reports whether the child has not exited yet.
func (p *Proc) Running() bool {
	done, _ := p.Exited()
	return !done
}

// Pid is the child's process id (and its process group's).
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Kill sends SIGKILL to the child's process group and waits, at most wait,
// until the child is reaped; it reports whether it was.
func (p *Proc) Kill(wait time.Duration) bool {
	if p == nil || p.Cmd.Process == nil {
		return true
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	select {
	case <-p.done:
		return true
	case <-time.After(wait):
		return false
	}
}

// Stop sends SIGTERM to the child's process group, waits up to grace, then
// sends SIGKILL and waits up to grace again. An exit the signal caused is
// not an error.
func (p *Proc) Stop(grace time.Duration) error {
	if done, _ := p.Exited(); done {
		return nil
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(-p.Pid(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.Name, p.Pid(), err)
	}
	if !p.Kill(grace) {
		return fmt.Errorf("%s (pid %d) did not exit %s after SIGKILL", p.Name, p.Pid(), grace)
	}
	return nil
}

// Release lets the child outlive this process (lab up): nothing waits for
// it any more.
func (p *Proc) Release() {
	if p.Cmd.Process != nil {
		_ = p.Cmd.Process.Release()
	}
}

// LastLines is the end of a log file (its last n lines), on one line, for
// an error message; "no log" when the file is empty or missing.
func LastLines(file string, n int) string {
	b, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(strings.Fields(strings.Join(lines, " | ")), " ")
	if s == "" {
		return "no log"
	}
	return s
}
