package explain

import (
	"fmt"
	"regexp"
	"strings"
)

// What a runtime says when it gives up on a pull that made no progress,
// and the progress it had seen:
//
//   - containerd >= 1.7 (internal/cri/server/images/image_pull.go, the pull
//     progress reporter): log.Errorf("cancel pulling image %s because of no
//     progress in %v", ref, timeout), then Infof("stop pulling image %s:
//     active requests=%v, bytes read=%v"), and the CRI answers
//     codes.Canceled: "failed to pull and unpack image %q: ... context
//     canceled". The kubelet's PullImage has no deadline of its own
//     (cri-client remote_image.go: context.WithCancel).
//   - dockershim (kube_docker_client.go, kubernetes#26677): "Cancel pulling
//     image %q because of no progress for %v, latest progress: %q".
//   - CRI-O (server/image_pull.go consumeImagePullProgress): "Timed out on
//     waiting up to %s for image pull progress updates".
var (
	reProgressTimeout = regexp.MustCompile(`(?i)because of no progress (?:in|for) ([0-9][0-9a-zµ.]*)|waiting up to ([0-9][0-9a-zµ.]*) for image pull progress`)
	reLatestProgress  = regexp.MustCompile(`(?i)latest progress: "([^"]{0,256})"`)
	reProgressCounts  = regexp.MustCompile(`(?i)active requests=(\d{1,9}), bytes read=(\d{1,20})`)
)

// progressOf is the timeout and the last progress a message carries, or
// "" when it carries none.
func progressOf(v textView) string {
	if !v.may("no progress", "progress updates", "latest progress", "bytes read=") {
		return ""
	}
	var parts []string
	if m := reProgressTimeout.FindStringSubmatch(v.msg); m != nil {
		d := m[1] + m[2]
		who := "containerd's image_pull_progress_timeout"
		switch {
		case strings.Contains(v.lower, "latest progress"):
			who = "the kubelet's image-pull-progress-deadline (dockershim)"
		case m[2] != "":
			who = "CRI-O's pull_progress_timeout"
		}
		parts = append(parts, fmt.Sprintf("no progress for %s (%s)", d, who))
	}
	if m := reLatestProgress.FindStringSubmatch(v.msg); m != nil {
		parts = append(parts, fmt.Sprintf("latest progress %q", strings.TrimSpace(m[1])))
	}
	if m := reProgressCounts.FindStringSubmatch(v.msg); m != nil {
		parts = append(parts, fmt.Sprintf("%s requests still open, %s bytes read", m[1], m[2]))
	}
	return strings.Join(parts, "; ")
}
