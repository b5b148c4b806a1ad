package explain

import (
	"strings"
	"testing"
)

// events builds an EventList of kubelet events: pod, node, reason,
// lastTimestamp and message per line.
func queueEvents(rows ...[5]string) string {
	var b strings.Builder
	b.WriteString(`{"kind":"EventList","apiVersion":"v1","items":[`)
	for i, r := range rows {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"kind":"Event","metadata":{"name":"` + r[0] + `.` + r[2] + `","namespace":"shop"},"involvedObject":{"kind":"Pod","name":"` + r[0] + `","namespace":"shop"},"source":{"component":"kubelet","host":"` + r[1] + `"},"reason":"` + r[2] + `","lastTimestamp":"` + r[3] + `","message":` + jsonString(r[4]) + `}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

func jsonString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

func TestPullQueueOffline(t *testing.T) {
	in := queueEvents(
		[5]string{"trainer", "n1", "Pulling", "2026-12-07T10:00:00Z", `Pulling image "registry.example.com/ml/trainer:7"`},
		[5]string{"web", "n1", "Pulling", "2026-12-07T10:00:30Z", `Pulling image "nginx:1.27"`},
		[5]string{"cron", "n1", "Pulling", "2026-12-07T10:01:00Z", `Pulling image "busybox"`},
		[5]string{"api", "n1", "Pulled", "2026-12-07T09:58:00Z", `Successfully pulled image "registry.example.com/shop/api:1" in 1.2s (45.3s including waiting). Image size: 1234 bytes.`},
		// an older kubelet's Pulled says nothing of the queue
		[5]string{"old", "n2", "Pulled", "2026-12-07T09:58:00Z", `Successfully pulled image "registry.example.com/shop/api:1" in 1m2.3s`},
		// a short difference is the kubelet's bookkeeping, not a queue
		[5]string{"quick", "n2", "Pulled", "2026-12-07T09:58:00Z", `Successfully pulled image "registry.example.com/shop/api:1" in 2.1s (2.4s including waiting). Image size: 1234 bytes.`},
		// n3: the first pull finished before the second was asked for
		[5]string{"a", "n3", "Pulling", "2026-12-07T10:00:00Z", `Pulling image "busybox"`},
		[5]string{"a", "n3", "Pulled", "2026-12-07T10:00:05Z", `Successfully pulled image "busybox" in 4.9s (4.9s including waiting). Image size: 1234 bytes.`},
		[5]string{"b", "n3", "Pulling", "2026-12-07T10:00:30Z", `Pulling image "nginx:1.27"`},
	)
	_, msgs, err := Parse(strings.NewReader(in), "queue.json")
	if err != nil {
		t.Fatal(err)
	}
	r := Analyze(msgs)
	var got []string
	for _, w := range r.Waits {
		got = append(got, w.Node+" "+w.Pod+" "+w.Image+" waited="+w.Waited+" behind="+strings.Join(w.Behind, ";"))
	}
	want := []string{
		"n1 shop/api registry.example.com/shop/api:1 waited=44.1s behind=",
		"n1 shop/web docker.io/library/nginx:1.27 waited= behind=shop/trainer registry.example.com/ml/trainer:7 since 2026-12-07T10:00:00Z",
		"n1 shop/cron docker.io/library/busybox:latest waited= behind=shop/trainer registry.example.com/ml/trainer:7 since 2026-12-07T10:00:00Z;shop/web docker.io/library/nginx:1.27 since 2026-12-07T10:00:30Z",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("waits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Summary.Failures != 0 || r.Summary.ExitCode != 0 {
		t.Errorf("waiting pulls are no failure: failures %d exit %d", r.Summary.Failures, r.Summary.ExitCode)
	}
}
