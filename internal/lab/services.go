package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pullpath/pullpath/internal/childproc"
)

// services are the `lab serve` processes of one run, one per host that runs
// a service.
type services struct {
	procs []*childproc.Proc
	hosts []string // the host of each process
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
		p, err := childproc.StartLogged("services of "+host, lf,
			[]string{"ip", "netns", "exec", n.NS[host], self, "lab", "serve", "--config", cf, "--ready", rf},
			childproc.Options{Env: CleanEnv(), Keep: keep})
		if err != nil {
			return s, err
		}
		s.procs = append(s.procs, p)
		s.hosts = append(s.hosts, host)
	}
	deadline := time.Now().Add(20 * time.Second)
	for i, p := range s.procs {
		host := s.hosts[i]
		rf := filepath.Join(runDir, "serve", host+".ready")
		lf := filepath.Join(runDir, "logs", host+".log")
		for {
			if _, err := os.Stat(rf); err == nil {
				break
			}
			select {
			case <-p.Done():
				return s, fmt.Errorf("services of host %s exited: %s", host, childproc.LastLines(lf, 12))
			case <-ctx.Done():
				return s, fmt.Errorf("starting services: %v", ctx.Err())
			case <-time.After(15 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return s, fmt.Errorf("services of host %s not ready after 20s: %s", host, childproc.LastLines(lf, 12))
			}
		}
	}
	return s, nil
}

// stop kills every service process group and reaps it.
func (s *services) stop() {
	if s == nil {
		return
	}
	for _, p := range s.procs {
		p.Kill(3 * time.Second)
	}
}

// detach lets the processes outlive this one (lab up).
func (s *services) detach() {
	for _, p := range s.procs {
		p.Release()
	}
}
