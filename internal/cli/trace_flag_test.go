package cli

import (
	"slices"
	"testing"
)

// TestTraceReachesTheProbes: sweep --trace and diagnose --trace pass
// --trace to each node's probe, after the operator's own --probe-arg.
func TestTraceReachesTheProbes(t *testing.T) {
	cmds := commands(t)
	for _, c := range []string{"sweep", "diagnose"} {
		if f := cmds[c].Flags().Lookup("trace"); f == nil || f.Value.Type() != "bool" {
			t.Errorf("pullpath %s has no bool --trace", c)
		}
	}
	s := &sweepOptions{probeArgs: []string{"--expect-private"}, quick: true, trace: true}
	if err := s.Complete(nil, []string{"nginx:1"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"--expect-private", "--quick", "--trace"}; !slices.Equal(s.o.ProbeArgs, want) {
		t.Errorf("sweep --quick --trace: probe args %q, want %q", s.o.ProbeArgs, want)
	}
	s = &sweepOptions{}
	if err := s.Complete(nil, []string{"nginx:1"}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(s.o.ProbeArgs, "--trace") {
		t.Errorf("sweep without --trace: probe args %q", s.o.ProbeArgs)
	}
	d := &diagnoseOptions{trace: true}
	if err := d.Complete(nil, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(d.o.Sweep.ProbeArgs, "--trace") {
		t.Errorf("diagnose --trace: the walk's probe args %q lack --trace", d.o.Sweep.ProbeArgs)
	}
}
