package farpath

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/lab/scenario"
)

func TestMeasureRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{{Config{Rounds: 1}, "PullpathBin"}, {Config{PullpathBin: "/bin/true"}, "Rounds 0"}} {
		if _, err := Measure(context.Background(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Measure(%+v) = %v, want an error naming %q", tc.cfg, err, tc.want)
		}
	}
}

// TestToggleTurnsTheStepOff: the scenarios' own flags are what the
// "without" run changes: vpn-no-route-back loses its --trace,
// vpn-mtu-blackhole gains --mtu-budget=0.
func TestToggleTurnsTheStepOff(t *testing.T) {
	for _, c := range costs {
		sc, err := scenario.LoadBuiltin(c.name)
		if err != nil {
			t.Fatal(err)
		}
		had := slices.Contains(sc.Probe.Args, c.off)
		toggle(sc, c.off)
		if slices.Contains(sc.Probe.Args, c.off) == had {
			t.Errorf("%s: toggle(%s) left args %q", c.name, c.off, sc.Probe.Args)
		}
	}
	if sc, _ := scenario.LoadBuiltin("vpn-no-route-back"); !slices.Contains(sc.Probe.Args, "--trace") {
		t.Errorf("vpn-no-route-back runs without --trace: the trace's cost would be measured off")
	}
}

func TestMarkdownRatios(t *testing.T) {
	r := &Result{
		Costs: []Cost{{Scenario: "vpn-mtu-blackhole", Round: 1, WithSec: 6, WithCode: "PATH_MTU_BLACKHOLE", StepSec: 1, WithoutSec: 5, Without: "TLS_HANDSHAKE_TIMEOUT", RuntimeSec: 15, Timed: true, RuntimeMsg: "a | b"}},
		Paces: []Pace{{Scenario: "vpn-slow-link", Round: 1, ProjectedMS: 6000, RuntimeMS: 6600, RuntimeOK: true, MBps: 0.5}},
	}
	md := r.Markdown()
	for _, want := range []string{"| `vpn-mtu-blackhole` (mtu) | 6.00 | PATH_MTU_BLACKHOLE | 1.00 | 5.00 | TLS_HANDSHAKE_TIMEOUT | 1.20x | 15.00 (crictl's deadline) | 0.40 |",
		"| `vpn-slow-link` | 6.00 | 6.60 | 1.10x |", `a \| b`} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown() lacks %q:\n%s", want, md)
		}
	}
}
