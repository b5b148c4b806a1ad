package events

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/verdict"
)

// pullWaiting are the kubelet's waiting reasons of a container whose image
// cannot be pulled.
var pullWaiting = map[string]bool{"ImagePullBackOff": true, "ErrImagePull": true, "ErrImageNeverPull": true, "InvalidImageName": true}

// pullWaitingOf is the first container of p (init containers first)
// waiting on its image, or nil.
func pullWaitingOf(p *corev1.Pod) (*corev1.ContainerStateWaiting, string) {
	for _, l := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range l {
			if w := l[i].State.Waiting; w != nil && pullWaiting[w.Reason] {
				return w, l[i].Image
			}
		}
	}
	return nil, ""
}

// pod keeps the backoff gauge: one Pod counts once, in the series of its
// first container waiting on a pull. The kubelet's waiting message is the
// runtime's error after a failed attempt (ErrImagePull) and, in recent
// kubelets, again behind "Back-off pulling image ...:" during the wait;
// when it names no cause, the Pod keeps the cause it had.
func (x *Exporter) pod(p *corev1.Pod, gen int) {
	w, image := pullWaitingOf(p)
	if w == nil {
		x.dropPod(p.UID)
		return
	}
	st, had := x.pods[p.UID]
	c := x.classifier.Classify(w.Message)
	if !counts(c) {
		switch {
		case had && st.c.Rule != "":
			c = st.c
		case w.Reason == "InvalidImageName":
			c = explain.Classification{Cause: verdict.CauseInvalidName, Condition: verdict.ConditionImage}
		case w.Reason == "ErrImageNeverPull":
			c = explain.Classification{Cause: verdict.CauseNeverPull, Condition: verdict.ConditionImage}
		default:
			c = explain.Classification{Cause: verdict.CauseOther}
		}
	}
	s := x.seriesOf(c, image, x.groupOfNode(p.Spec.NodeName))
	if had && st.s != s {
		x.addBackoff(st.s, -1)
	}
	if !had || st.s != s {
		x.addBackoff(s, 1)
	}
	keep := explain.Classification{}
	if counts(c) {
		keep = c
	}
	x.pods[p.UID] = podState{s: s, c: keep, gen: gen}
}

func (x *Exporter) dropPod(uid types.UID) {
	if st, had := x.pods[uid]; had {
		delete(x.pods, uid)
		x.addBackoff(st.s, -1)
	}
}

// addBackoff moves the gauge of s by d; a series at 0 stays (at 0), so a
// graph shows the recovery.
func (x *Exporter) addBackoff(s series, d int) {
	x.backoff[s] += d
	x.m.backoff.WithLabelValues(s.values()...).Set(float64(x.backoff[s]))
}
