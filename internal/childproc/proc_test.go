package childproc

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartKillReaps(t *testing.T) {
	log := filepath.Join(t.TempDir(), "child.log")
	// the child starts a grandchild in its process group: Kill must reach both
	p, err := StartLogged("sleeper", log, []string{"sh", "-c", "sleep 60 & echo started; wait"}, Options{Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Running() {
		t.Fatalf("Running() = false right after Start")
	}
	deadline := time.Now().Add(10 * time.Second)
	for LastLines(log, 1) != "started" {
		if time.Now().After(deadline) {
			t.Fatalf("LastLines(log, 1) = %q after 10s, want started", LastLines(log, 1))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p.Log != log {
		t.Errorf("Log = %q, want %q", p.Log, log)
	}
	pgid := p.Pid()
	if !p.Kill(5 * time.Second) {
		t.Fatalf("Kill did not reap the child within 5s")
	}
	if done, err := p.Exited(); !done || err == nil {
		t.Errorf("Exited() = %v, %v after Kill, want true and the signal", done, err)
	}
	// the group is gone too: no process of it is left to signal
	deadline = time.Now().Add(5 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has members 5s after Kill", pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStopTerm(t *testing.T) {
	p, err := Start("term", []string{"sleep", "60"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Stop took %v: SIGTERM should end sleep at once", d)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("second Stop = %v, want nil", err)
	}
}

func TestStartMissing(t *testing.T) {
	_, err := Start("ghost", []string{"/nonexistent/ghost"}, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "start ghost: ") {
		t.Errorf("Start(missing binary) = %v, want an error starting with %q", err, "start ghost: ")
	}
}

func TestLastLines(t *testing.T) {
	f := filepath.Join(t.TempDir(), "log")
	if got := LastLines(f, 2); got != "no log" {
		t.Errorf("LastLines(missing) = %q, want no log", got)
	}
	os.WriteFile(f, []byte("one\ntwo  words\nthree\n"), 0o644)
	if got, want := LastLines(f, 2), "two words | three"; got != want {
		t.Errorf("LastLines(f, 2) = %q, want %q", got, want)
	}
}

func TestBinDir(t *testing.T) {
	t.Setenv(BinDirEnv, "")
	got, err := BinDir("")
	if err != nil || !strings.HasSuffix(got, filepath.Join("test", "controlplane", "bin")) {
		t.Errorf("BinDir(\"\") = %q, %v; want a path ending in test/controlplane/bin", got, err)
	}
	t.Setenv(BinDirEnv, "/opt/cp")
	if got, _ := BinDir(""); got != "/opt/cp" {
		t.Errorf("BinDir with %s=/opt/cp = %q", BinDirEnv, got)
	}
	if got, _ := BinDir("/explicit"); got != "/explicit" {
		t.Errorf("BinDir(/explicit) = %q", got)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "data"), []byte("x"), 0o644)
	if got := MissingBinary(dir, "run"); got != "" {
		t.Errorf("MissingBinary(run) = %q, want none", got)
	}
	for _, name := range []string{"data", "absent"} {
		if got := MissingBinary(dir, "run", name); got != filepath.Join(dir, name) {
			t.Errorf("MissingBinary(run, %s) = %q, want %s", name, got, filepath.Join(dir, name))
		}
	}
}
