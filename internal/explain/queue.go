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
	// asked and done are the last Pulling event, and the last Pulled,
	// Failed or back-off event, of a pod's image on a node.
	asked, done map[pullKey]time.Time
	waits       []report.ExplainWait // finished pulls that waited
	// texts caches what a message text says for the queue (its image, its
	// queue wait): a cluster repeats the same few texts on every pod.
	texts map[string]queueText
}

// queueText is what one Pulling or Pulled text says.
type queueText struct {
	image       string        // normalized for a Pulling text, as written for a Pulled one
	pull, total time.Duration // a Pulled text's pull time and total
	waited      bool          // total - pull >= MinQueueWait
}

// maxQueueTexts bounds the text cache.
const maxQueueTexts = 8192

type pullKey struct{ node, ns, pod, image string }

func (k pullKey) name() string { return joinNS(k.ns, k.pod) }

// MinQueueWait is the shortest queue wait a finished pull reports: below
// it the difference is the kubelet's own bookkeeping (the image size
// lookup after the pull), not a queue.
const MinQueueWait = 10 * time.Second

// rePulledWaiting reads image_manager.go's Pulled message.
var rePulledWaiting = regexp.MustCompile(`(?i)successfully pulled image "([^"\s]{1,512})" in ([0-9][0-9a-zµ.]{0,31}) \(([0-9][0-9a-zµ.]{0,31}) including waiting\)`)

// Note reads one message (and its classification) into the queue: Pulling,
// Pulled and failure events of pods on a node. Messages without a node are
// ignored, and so are events without a time but for a Pulled event's own
// wait: open pulls can only be ordered by time.
func (q *PullQueue) Note(m Message, c Classification) {
	if m.Node == "" || m.Object == "" {
		return
	}
	switch {
	case m.Reason == "Pulling" || strings.HasPrefix(m.Text, "Pulling image \""):
		if m.Time.IsZero() {
			return
		}
		t := q.text(m.Text, false)
		if t.image == "" {
			return
		}
		q.note(&q.asked, pullKey{m.Node, m.Namespace, m.Object, t.image}, m.Time)
	case c.Rule != "" && c.Image != "":
		if !m.Time.IsZero() {
			q.note(&q.done, pullKey{m.Node, m.Namespace, m.Object, NormalizeImage(c.Image)}, m.Time)
		}
		if c.Rule == "kubelet-pulled" && strings.Contains(m.Text, "including waiting") {
			if t := q.text(m.Text, true); t.waited {
				q.waits = append(q.waits, queueWait(m.Node, joinNS(m.Namespace, m.Object), t))
			}
		}
	}
}

// note keeps the latest time of k in *m.
func (q *PullQueue) note(m *map[pullKey]time.Time, k pullKey, at time.Time) {
	if *m == nil {
		*m = map[pullKey]time.Time{}
	}
	if prev, ok := (*m)[k]; !ok || at.After(prev) {
		(*m)[k] = at
	}
}

// text reads a Pulling text's image, or a Pulled text's durations (pulled),
// once per distinct text.
func (q *PullQueue) text(raw string, pulled bool) queueText {
	if t, ok := q.texts[raw]; ok {
		return t
	}
	var t queueText
	msg := normalize(raw)
	if pulled {
		if m := rePulledWaiting.FindStringSubmatch(msg); m != nil {
			pull, err1 := time.ParseDuration(m[2])
			total, err2 := time.ParseDuration(m[3])
			if err1 == nil && err2 == nil {
				t = queueText{image: m[1], pull: pull, total: total, waited: total-pull >= MinQueueWait}
			}
		}
	} else if img := extractImage(newTextView(msg, strings.ToLower(msg))); img != "" {
		t.image = NormalizeImage(img)
	}
	if q.texts == nil {
		q.texts = map[string]queueText{}
	}
	if len(q.texts) < maxQueueTexts {
		q.texts[raw] = t
	}
	return t
}

// queueWait is a finished pull's queue wait.
func queueWait(node, pod string, t queueText) report.ExplainWait {
	waited := (t.total - t.pull).Truncate(time.Millisecond)
	return report.ExplainWait{
		Node: node, Pod: pod, Image: t.image, Waited: waited.String(), Pulled: t.pull.String(),
		Summary: fmt.Sprintf("%s waited %s in the kubelet's queue on %s before its pull of %s began (the pull itself took %s): the node was pulling other images, one at a time unless serializeImagePulls is false", pod, waited, node, t.image, t.pull),
	}
}

// Waits are the pulls that waited, node by node: finished ones from their
// Pulled events, then the pulls still open behind an earlier open pull of
// the same node.
func (q *PullQueue) Waits() []report.ExplainWait {
	type open struct {
		k  pullKey
		at time.Time
	}
	opens := map[string][]open{}
	for k, at := range q.asked {
		if done, ok := q.done[k]; ok && !done.Before(at) {
			continue
		}
		opens[k.node] = append(opens[k.node], open{k, at})
	}
	queued := map[string]report.ExplainWait{} // a node's first finished pull that waited
	for _, w := range q.waits {
		if _, ok := queued[w.Node]; !ok {
			queued[w.Node] = w
		}
	}
	names := make([]string, 0, len(opens)+len(queued))
	for name := range opens {
		names = append(names, name)
	}
	for name := range queued {
		if _, ok := opens[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []report.ExplainWait
	for _, name := range names {
		for _, w := range q.waits {
			if w.Node == name {
				out = append(out, w)
			}
		}
		list := opens[name]
		if len(list) < 2 {
			continue
		}
		sort.Slice(list, func(i, j int) bool {
			if !list[i].at.Equal(list[j].at) {
				return list[i].at.Before(list[j].at)
			}
			return list[i].k.name()+list[i].k.image < list[j].k.name()+list[j].k.image
		})
		serialized := ""
		if w, ok := queued[name]; ok {
			serialized = fmt.Sprintf(" This node's pulls are queued: %s waited %s before its pull began.", w.Pod, w.Waited)
		}
		head := list[0]
		for i := 1; i < len(list); i++ {
			since := list[i].at.UTC()
			// The pulls before it: the first few by name, then how many more
			// (a long queue would make this quadratic).
			var behind []string
			for _, o := range list[:min(i, maxBehind)] {
				behind = append(behind, fmt.Sprintf("%s %s since %s", o.k.name(), o.k.image, o.at.UTC().Format(time.RFC3339)))
			}
			if i > maxBehind {
				behind = append(behind, fmt.Sprintf("and %d more", i-maxBehind))
			}
			out = append(out, report.ExplainWait{
				Node: name, Pod: list[i].k.name(), Image: list[i].k.image, Since: &since, Behind: behind,
				Summary: fmt.Sprintf("%s asked for %s at %s and has no result yet, while %s's pull of %s, asked for at %s, is still open on %s: with serialized pulls (the kubelet's default) it waits behind %d pull(s); a slow pull holds every later one.%s",
					list[i].k.name(), list[i].k.image, since.Format(time.RFC3339), head.k.name(), head.k.image, head.at.UTC().Format(time.RFC3339), name, i, serialized),
			})
		}
	}
	return out
}

// maxBehind is how many earlier pulls a wait names.
const maxBehind = 3
