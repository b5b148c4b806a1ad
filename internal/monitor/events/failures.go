package events

import (
	"time"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Label values where the message does not say.
const (
	unknownHost   = "unknown" // no image in the message or the Pod
	noneCondition = "none"    // a cause with no repair direction (other)
)

// counts reports whether a classified message is one failed pull: a
// failure with its cause. The kubelet's echoes ("Error: ErrImagePull",
// "Back-off pulling image") repeat a failure whose Failed event is
// counted already.
func counts(c explain.Classification) bool {
	return c.Failed() && c.Rule != "kubelet-backoff"
}

// event counts one Warning Event of a Pod. The kubelet's event recorder
// updates one Event per repeated message (count 2, 3, ...), so what is
// added is the count beyond what this Event added before: a watch
// resumed, or a List after a 410, never counts an Event twice. The first
// List is the baseline: failures from before the exporter started set the
// first-seen times and create their series, but add nothing (a restarted
// exporter would count them again).
func (x *Exporter) event(e *corev1.Event, first bool, gen int) {
	n := eventCount(e)
	prev, known := x.failures[e.UID]
	if known {
		prev.gen = gen
		x.failures[e.UID] = prev
		if n <= prev.count {
			return
		}
	}
	c := x.classifier.Classify(e.Message)
	if !counts(c) {
		return
	}
	node := e.Source.Host
	if node == "" {
		node = e.ReportingInstance
	}
	s := x.seriesOf(c, "", x.groupOfNode(node))
	x.failures[e.UID] = counted{count: n, gen: gen}
	ctr := x.m.failures.WithLabelValues(s.values()...)
	if !first {
		ctr.Add(float64(n - prev.count))
	}
	x.m.seenAt([4]string{s.Host, s.Cause, s.Pool, s.Zone}, eventTime(e))
}

// eventCount is how many times the Event's message occurred.
func eventCount(e *corev1.Event) int32 {
	n := e.Count
	if e.Series != nil && e.Series.Count > n {
		n = e.Series.Count
	}
	return max(n, 1)
}

// eventTime is when the Event's message first occurred, in Unix seconds.
func eventTime(e *corev1.Event) float64 {
	var t time.Time
	switch {
	case !e.FirstTimestamp.IsZero():
		t = e.FirstTimestamp.Time
	case !e.EventTime.IsZero():
		t = e.EventTime.Time
	default:
		t = e.CreationTimestamp.Time
	}
	return float64(t.UnixNano()) / 1e9
}

// seriesOf is the label set of a classified failure on a node of group g;
// image is the Pod's image when the message names none.
func (x *Exporter) seriesOf(c explain.Classification, image string, g group) series {
	host := c.Registry
	if host == "" {
		host = registryOf(image)
	}
	cause := string(c.Cause)
	if cause == "" {
		cause = string(verdict.CauseOther)
	}
	cond := string(c.Condition)
	if cond == "" {
		cond = noneCondition
	}
	return series{Host: x.m.host(host), Cause: cause, Condition: cond, group: g}
}

// registryOf is the registry host of an image reference as the runtime
// reads it (docker.io for Docker Hub), or unknownHost.
func registryOf(image string) string {
	if image == "" {
		return unknownHost
	}
	n, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return unknownHost
	}
	return reference.Domain(n)
}
