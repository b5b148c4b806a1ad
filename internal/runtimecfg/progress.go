package runtimecfg

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ProgressLimit is the progress timeout a node's containerd applies to a
// pull: it cancels the whole pull when requests are open and no byte
// arrived for this long (pkg/cri/server/image_pull.go, pullProgressReporter:
// any byte counts as progress). None in 1.6; image_pull_progress_timeout
// from 1.7, by default 1 minute in 1.7.0 to 1.7.9 and 5 minutes from
// 1.7.10 and in 2.x; "0s" in the config turns it off.
type ProgressLimit struct {
	Timeout time.Duration // 0: none
	Known   bool          // the version (or the config) decides it
	Why     string        // in words: the version and where the value came from
}

// EffectiveProgressTimeout is the progress timeout of containerd version
// (as runtimecfg reads it: "1.6.20~ds1-1+deb12u3", "2.1.4", "" unknown)
// with the limits read from its config.
func EffectiveProgressTimeout(version string, l PullLimits) ProgressLimit {
	major, minor, patch, ok := containerdVersion(version)
	switch {
	case ok && major == 1 && minor <= 6:
		return ProgressLimit{Known: true, Why: "containerd " + version + " has no progress timeout: a pull without a byte waits until the caller gives up (the kubelet sets no deadline)"}
	case l.ProgressTimeoutSet && l.ProgressTimeout == 0:
		return ProgressLimit{Known: true, Why: l.ConfigFile + " sets image_pull_progress_timeout = \"0s\": no progress timeout"}
	case l.ProgressTimeoutSet:
		who := "containerd"
		if ok {
			who += " " + version
		}
		return ProgressLimit{Timeout: l.ProgressTimeout, Known: true, Why: fmt.Sprintf("%s cancels a pull after %s without a byte (image_pull_progress_timeout in %s)", who, l.ProgressTimeout, l.ConfigFile)}
	case !ok:
		return ProgressLimit{Why: "containerd's version is unknown: " + ProgressTimeoutDefaults}
	case major == 1 && minor == 7 && patch < 10:
		return ProgressLimit{Timeout: time.Minute, Known: true, Why: "containerd " + version + " cancels a pull after 1m without a byte (image_pull_progress_timeout's default in 1.7.0 to 1.7.9)"}
	}
	return ProgressLimit{Timeout: 5 * time.Minute, Known: true, Why: "containerd " + version + " cancels a pull after 5m without a byte (image_pull_progress_timeout's default from 1.7.10)"}
}

// containerdVersion reads major.minor.patch from a version as runtimecfg
// reports it ("v2.1.4", "1.6.20~ds1-1+deb12u3", "1.7.13-0ubuntu1").
func containerdVersion(v string) (major, minor, patch int, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "~-+ "); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return 0, 0, 0, false
	}
	nums := make([]int, 3)
	for i := 0; i < len(parts) && i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return 0, 0, 0, false
		}
		nums[i] = n
	}
	return nums[0], nums[1], nums[2], true
}
