package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// services are the `lab serve` processes of one run, one per host that runs
// a service.
type services struct {
	procs []*svcProc
}

type svcProc struct {
	host string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// startServices writes each host's serve config and starts `SELF lab serve`
// in the host's namespace with a clean environment, then waits until every
// one has written its ready file. keep leaves them running after this
// process exits (lab up); otherwise they die with it.
func startServices(ctx context.Context, n *Network, self, runDir string, configs map[string]*ServeConfig, keep bool) (*services, error) {
	s := &services{}
	for _, host := range sortedKeys(configs) {
		c := configs[host]
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return s, err
		}
		cf := filepath.Join(runDir, "serve", host+".json")
		rf := filepath.Join(runDir, "serve", host+".ready")
		lf := filepath.Join(runDir, "logs", host+".log")
		if err := os.WriteFile(cf, b, 0o600); err != nil {
			return s, err
		}
		log, err := os.OpenFile(lf, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return s, err
		}
		cmd := exec.Command("ip", "netns", "exec", n.NS[host], self, "lab", "serve", "--config", cf, "--ready", rf)
		cmd.Env = cleanEnv()
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if !keep {
			setPdeathsig(cmd.SysProcAttr)
		}
		if err := cmd.Start(); err != nil {
			log.Close()
			return s, fmt.Errorf("start services of %s: %v", host, err)
		}
		log.Close()
		p := &svcProc{host: host, cmd: cmd, done: make(chan struct{}), log: lf}
		go func() { cmd.Wait(); close(p.done) }()
		s.procs = append(s.procs, p)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, p := range s.procs {
		rf := filepath.Join(runDir, "serve", p.host+".ready")
		for {
			if _, err := os.Stat(rf); err == nil {
				break
			}
			select {
			case <-p.done:
				return s, fmt.Errorf("services of host %s exited: %s", p.host, tail(p.log))
			case <-ctx.Done():
				return s, fmt.Errorf("starting services: %v", ctx.Err())
			case <-time.After(15 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return s, fmt.Errorf("services of host %s not ready after 20s: %s", p.host, tail(p.log))
			}
		}
	}
	return s, nil
}

// tail is the last line of a log file.
func tail(file string) string {
	b, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return oneLine(l)
	}
	return "no log"
}

// stop kills every service process group and reaps it.
func (s *services) stop() {
	if s == nil {
		return
	}
	for _, p := range s.procs {
		if p.cmd.Process != nil {
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	for _, p := range s.procs {
		select {
		case <-p.done:
		case <-time.After(3 * time.Second):
		}
	}
}

// detach lets the processes outlive this one (lab up).
func (s *services) detach() {
	for _, p := range s.procs {
		if p.cmd.Process != nil {
			p.cmd.Process.Release()
		}
	}
}
