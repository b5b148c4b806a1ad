package runtimecfg

import (
	"strings"
	"testing"
	"time"
)

func TestEffectiveProgressTimeout(t *testing.T) {
	none := PullLimits{}
	set := func(d time.Duration) PullLimits {
		return PullLimits{ConfigFile: "/etc/containerd/config.toml", ProgressTimeout: d, ProgressTimeoutSet: true}
	}
	tests := []struct {
		version string
		limits  PullLimits
		want    time.Duration
		known   bool
		why     string
	}{
		{"1.6.20~ds1-1+deb12u3", none, 0, true, "has no progress timeout"},
		{"1.6.20~ds1-1+deb12u3", set(30 * time.Second), 0, true, "has no progress timeout"}, // 1.6 does not read the key
		{"1.7.2", none, time.Minute, true, "1m"},
		{"1.7.9-0ubuntu1", none, time.Minute, true, "1.7.0 to 1.7.9"},
		{"1.7.10", none, 5 * time.Minute, true, "from 1.7.10"},
		{"v2.4.2", none, 5 * time.Minute, true, "5m"},
		{"2.1.4", set(10 * time.Second), 10 * time.Second, true, "image_pull_progress_timeout in /etc/containerd/config.toml"},
		{"2.1.4", set(0), 0, true, `"0s"`},
		{"", none, 0, false, "unknown"},
		{"", set(2 * time.Minute), 2 * time.Minute, true, "cancels a pull after 2m0s"},
	}
	for _, tt := range tests {
		got := EffectiveProgressTimeout(tt.version, tt.limits)
		if got.Timeout != tt.want || got.Known != tt.known || !strings.Contains(got.Why, tt.why) {
			t.Errorf("EffectiveProgressTimeout(%q, %+v) = %+v, want %s known %v saying %q", tt.version, tt.limits, got, tt.want, tt.known, tt.why)
		}
	}
}
