package explain

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/report"
)

// The kubelet pulls one image at a time unless serializeImagePulls is
// false (pkg/kubelet/images/puller.go: serialImagePuller, a queue of up to
// 10 requests served by one goroutine; parallelImagePuller with
// maxParallelImagePulls tokens otherwise). image_manager.go
// EnsureImageExists logs the Pulling event BEFORE the request enters that
// queue, and the Pulled event as "Successfully pulled image %q in %v (%v
// including waiting). Image size: %v bytes.": the first duration is the
// runtime's pull, the second the time since the Pulling event. So the
// kubelet's events carry the queue:
//
//   - a Pulled event whose total exceeds its pull time by more than a few
//     seconds waited behind other pulls;
//   - a Pulling event with no Pulled or Failed after it, asked for while
//     another pull of the node was still open, waits behind that one when
//     the node pulls serially (the default).
//
// PullQueue reads both from the events it is given, node by node.
type PullQueue struct {
	nodes map[string]*nodePulls
}

type podImage struct{ pod, image string }

type nodePulls struct {
	asked map[podImage]time.Time // the last Pulling event
	done  map[podImage]time.Time // the last Pulled, Failed or back-off after it
	waits []report.ExplainWait   // finished pulls that waited
}

// MinQueueWait is the shortest queue wait a finished pull reports: below
// it the difference is the kubelet's own bookkeeping (the image size
// lookup after the pull), not a queue.
const MinQueueWait = 10 * time.Second

// rePulledWaiting reads image_manager.go's Pulled message.
var rePulledWaiting = regexp.MustCompile(`(?i)successfully pulled image "([^"\s]{1,512})" in ([0-9][0-9a-zµ.]{0,31}) \(([0-9][0-9a-zµ.]{0,31}) including waiting\)`)

// Note reads one message (and its classification) into the queue: Pulling,
// Pulled and failure events of pods on a node. Messages without a node are
// ignored.
func (q *PullQueue) Note(m Message, c Classification) {
	if m.Node == "" || m.Object == "" {
		return
	}
	pod := joinNS(m.Namespace, m.Object)
	text := normalize(m.Text)
	lower := strings.ToLower(text)
	switch {
	case m.Reason == "Pulling" || strings.HasPrefix(lower, "pulling image \""):
		img := extractImage(newTextView(text, lower))
		if img == "" {
			return
		}
		n := q.node(m.Node)
		k := podImage{pod, NormalizeImage(img)}
		if m.Time.After(n.asked[k]) || n.asked[k].IsZero() {
			n.asked[k] = m.Time
		}
	case c.Rule != "" && c.Image != "":
		n := q.node(m.Node)
		k := podImage{pod, NormalizeImage(c.Image)}
		if m.Time.After(n.done[k]) || n.done[k].IsZero() {
			n.done[k] = m.Time
		}
		if c.Rule == "kubelet-pulled" {
			if w, ok := queueWait(m.Node, pod, text); ok {
				n.waits = append(n.waits, w)
			}
		}
	}
}

func (q *PullQueue) node(name string) *nodePulls {
	if q.nodes == nil {
		q.nodes = map[string]*nodePulls{}
	}
	n := q.nodes[name]
	if n == nil {
		n = &nodePulls{asked: map[podImage]time.Time{}, done: map[podImage]time.Time{}}
		q.nodes[name] = n
	}
	return n
}

// queueWait reads a Pulled message's queue wait, when it is one.
func queueWait(node, pod, text string) (report.ExplainWait, bool) {
	m := rePulledWaiting.FindStringSubmatch(text)
	if m == nil {
		return report.ExplainWait{}, false
	}
	pull, err1 := time.ParseDuration(m[2])
	total, err2 := time.ParseDuration(m[3])
	if err1 != nil || err2 != nil || total-pull < MinQueueWait {
		return report.ExplainWait{}, false
	}
	waited := (total - pull).Truncate(time.Millisecond)
	return report.ExplainWait{
		Node: node, Pod: pod, Image: m[1], Waited: waited.String(), Pulled: pull.String(),
		Summary: fmt.Sprintf("%s waited %s in the kubelet's queue on %s before its pull of %s began (the pull itself took %s): the node was pulling other images, one at a time unless serializeImagePulls is false", pod, waited, node, m[1], pull),
	}, true
}

// Waits are the pulls that waited, node by node: finished ones from their
// Pulled events, then the pulls still open behind an earlier open pull of
// the same node.
func (q *PullQueue) Waits() []report.ExplainWait {
	var out []report.ExplainWait
	names := make([]string, 0, len(q.nodes))
	for name := range q.nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := q.nodes[name]
		out = append(out, n.waits...)
		type open struct {
			k  podImage
			at time.Time
		}
		var opens []open
		for k, at := range n.asked {
			if at.IsZero() {
				continue // an event without a time cannot be ordered
			}
			if done, ok := n.done[k]; ok && !done.Before(at) {
				continue
			}
			opens = append(opens, open{k, at})
		}
		sort.Slice(opens, func(i, j int) bool {
			if !opens[i].at.Equal(opens[j].at) {
				return opens[i].at.Before(opens[j].at)
			}
			return opens[i].k.pod+opens[i].k.image < opens[j].k.pod+opens[j].k.image
		})
		serialized := ""
		if len(n.waits) > 0 {
			serialized = fmt.Sprintf(" This node's pulls are queued: %s waited %s before its pull began.", n.waits[0].Pod, n.waits[0].Waited)
		}
		for i := 1; i < len(opens); i++ {
			since := opens[i].at.UTC()
			var behind []string
			for _, o := range opens[:i] {
				behind = append(behind, fmt.Sprintf("%s %s since %s", o.k.pod, o.k.image, o.at.UTC().Format(time.RFC3339)))
			}
			head := opens[0]
			out = append(out, report.ExplainWait{
				Node: name, Pod: opens[i].k.pod, Image: opens[i].k.image, Since: &since, Behind: behind,
				Summary: fmt.Sprintf("%s asked for %s at %s and has no result yet, while %s's pull of %s, asked for at %s, is still open on %s: with serialized pulls (the kubelet's default) it waits behind %d pull(s); a slow pull holds every later one.%s",
					opens[i].k.pod, opens[i].k.image, since.Format(time.RFC3339), head.k.pod, head.k.image, head.at.UTC().Format(time.RFC3339), name, i, serialized),
			})
		}
	}
	return out
}
