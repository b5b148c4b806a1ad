// Package measure runs a command under GNU time and reads back what it
// used (wall time, peak RSS, CPU), and measures the machine's single-core
// sha256 rate. It is the benchmarks' only way of timing things, so every
// figure in BENCHMARKS.md is taken the same way.
package measure

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TimeBinary is GNU time (Debian package "time").
const TimeBinary = "/usr/bin/time"

// timeFormat makes GNU time write one line: elapsed s, max RSS KiB, user s,
// system s, exit status.
const timeFormat = "pullbench-time %e %M %U %S %x"

// Usage is what one command used.
type Usage struct {
	Wall      time.Duration // measured by the caller around the process
	PeakRSSKB int64         // maximum resident set size, KiB (GNU time %M)
	UserSec   float64
	SysSec    float64
	ExitCode  int
	// PeakAnonKB and PeakFileKB are the largest RssAnon (heap, stacks)
	// and RssFile (mapped pages of the binary and libraries) seen by
	// sampling /proc every 10 ms; 0 if the process ended before a sample.
	PeakAnonKB int64
	PeakFileKB int64
}

// CPUSec is user plus system CPU time.
func (u Usage) CPUSec() float64 { return u.UserSec + u.SysSec }

// PeakRSSMiB is the peak RSS in MiB.
func (u Usage) PeakRSSMiB() float64 { return float64(u.PeakRSSKB) / 1024 }

// Result is a finished command with its output.
type Result struct {
	Usage
	Stdout, Stderr []byte
}

// Cmd says what to run.
type Cmd struct {
	Argv    []string
	Env     []string // nil keeps the current environment
	Dir     string
	Timeout time.Duration // required: every run is bounded
	Stdin   []byte
}

// Run runs c.Argv under GNU time. A non-zero exit of the command is not an
// error (Usage.ExitCode says it); an error means it could not be run or
// measured, or ran out of its Timeout.
func Run(ctx context.Context, c Cmd) (*Result, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("measure: empty command")
	}
	if c.Timeout <= 0 {
		return nil, fmt.Errorf("measure %s: no timeout given, want a positive budget", c.Argv[0])
	}
	if _, err := os.Stat(TimeBinary); err != nil {
		return nil, fmt.Errorf("measure: %s not found (apt-get install time): %v", TimeBinary, err)
	}
	tf, err := os.CreateTemp("", "pullbench-time-*")
	if err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	tf.Close()
	defer os.Remove(tf.Name())

	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	argv := append([]string{"-f", timeFormat, "-o", tf.Name(), "--"}, c.Argv...)
	cmd := exec.CommandContext(ctx, TimeBinary, argv...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// Kill the whole group on timeout: time's child must not outlive us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("measure %s: %v", filepath.Base(c.Argv[0]), err)
	}
	samp := startSampler(cmd.Process.Pid)
	runErr := cmd.Wait()
	wall := time.Since(start)
	anon, file := samp.stop()
	res := &Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	if ctx.Err() != nil {
		return res, fmt.Errorf("measure %s: ran out of its %s budget: %v", filepath.Base(c.Argv[0]), c.Timeout, ctx.Err())
	}
	raw, err := os.ReadFile(tf.Name())
	if err != nil {
		return res, fmt.Errorf("measure %s: reading GNU time output: %v", filepath.Base(c.Argv[0]), err)
	}
	u, err := ParseTime(raw)
	if err != nil {
		return res, fmt.Errorf("measure %s: %v (run error: %v; stderr: %s)", filepath.Base(c.Argv[0]), err, runErr, lastLine(errb.Bytes()))
	}
	u.Wall = wall
	u.PeakAnonKB, u.PeakFileKB = anon, file
	res.Usage = u
	return res, nil
}

// ParseTime reads the line GNU time wrote with timeFormat. GNU time may
// put "Command exited with non-zero status N" or "Command terminated by
// signal N" before it.
func ParseTime(raw []byte) (Usage, error) {
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "pullbench-time" {
			continue
		}
		if len(f) != 6 {
			return Usage{}, fmt.Errorf("GNU time line %q has %d fields, want 6", line, len(f))
		}
		var u Usage
		var err error
		if u.PeakRSSKB, err = strconv.ParseInt(f[2], 10, 64); err != nil {
			return Usage{}, fmt.Errorf("GNU time max RSS %q is not a number", f[2])
		}
		if u.UserSec, err = strconv.ParseFloat(f[3], 64); err != nil {
			return Usage{}, fmt.Errorf("GNU time user seconds %q is not a number", f[3])
		}
		if u.SysSec, err = strconv.ParseFloat(f[4], 64); err != nil {
			return Usage{}, fmt.Errorf("GNU time system seconds %q is not a number", f[4])
		}
		code, err := strconv.Atoi(f[5])
		if err != nil {
			return Usage{}, fmt.Errorf("GNU time exit status %q is not a number", f[5])
		}
		u.ExitCode = code
		return u, nil
	}
	return Usage{}, fmt.Errorf("no %q line in GNU time output %q", "pullbench-time", lastLine(raw))
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// SHA256Rate hashes a buffer of size bytes on one goroutine (one core),
// runs times, and returns the median rate in MB/s (1e6 bytes per second).
func SHA256Rate(size int, runs int) (float64, error) {
	if size <= 0 || runs <= 0 {
		return 0, fmt.Errorf("sha256 rate: size %d and runs %d, want both positive", size, runs)
	}
	buf := make([]byte, size)
	if _, err := rand.Read(buf); err != nil {
		return 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rates := make([]float64, 0, runs)
	for range runs {
		h := sha256.New()
		start := time.Now()
		h.Write(buf)
		h.Sum(nil)
		rates = append(rates, float64(size)/1e6/time.Since(start).Seconds())
	}
	return Median(rates), nil
}

// Median of xs (0 for none); xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// SelfCPU returns this process's user+system CPU seconds so far (the
// in-process servers' share of a run is the difference around it).
func SelfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// Machine describes where the figures were taken.
type Machine struct {
	CPUModel string `json:"cpuModel"`
	Cores    int    `json:"cores"`
	MemMiB   int64  `json:"memMiB"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
	// LoadAvg is /proc/loadavg when the figures were taken: these
	// machines are shared, and a high load explains noisy figures.
	LoadAvg string `json:"loadAvg"`
}

// DescribeMachine reads /proc for the CPU model and memory.
func DescribeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				m.MemMiB = kb / 1024
			}
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// sampler polls /proc for the memory of the process GNU time started.
type sampler struct {
	done       chan struct{}
	finished   chan struct{}
	anon, file int64
}

func startSampler(timePid int) *sampler {
	s := &sampler{done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(s.finished)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		child := 0
		for {
			if child == 0 {
				child = firstChild(timePid)
			}
			if child != 0 {
				a, f := readRss(child)
				s.anon, s.file = max(s.anon, a), max(s.file, f)
			}
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) stop() (anon, file int64) {
	close(s.done)
	<-s.finished
	return s.anon, s.file
}

func firstChild(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// readRss returns RssAnon and RssFile in KiB from /proc/PID/status.
func readRss(pid int) (anon, file int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "RssAnon:":
			anon, _ = strconv.ParseInt(f[1], 10, 64)
		case "RssFile:":
			file, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return anon, file
}
