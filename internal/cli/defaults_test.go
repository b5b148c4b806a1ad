package cli

import (
	"strconv"
	"testing"

	"github.com/pullpath/pullpath/internal/pull"
)

// The probe's flags show and use pull.Defaults: one source for every budget.
func TestProbeFlagDefaultsArePullDefaults(t *testing.T) {
	cmd := newProbeCommand(Streams{})
	d := pull.Defaults
	for flag, want := range map[string]string{
		"dns-timeout": d.DNS.String(), "connect-timeout": d.Connect.String(), "tls-timeout": d.TLS.String(),
		"http-timeout": d.HTTP.String(), "stall-timeout": d.Stall.String(), "timeout": d.Probe.String(),
		"concurrency": strconv.Itoa(d.Concurrency),
	} {
		f := cmd.Flags().Lookup(flag)
		if f == nil {
			t.Errorf("--%s: no such flag", flag)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s default = %s, want pull.Defaults' %s", flag, f.DefValue, want)
		}
	}
}
