package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/addrscope"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/probesummary"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Waiting reasons of a container whose image could not be pulled.
var pullReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true,
	"InvalidImageName": true, "ImageInspectError": true, "RegistryUnavailable": true,
	"SignatureValidationFailed": true,
}

// Waiting reasons that come after a successful pull.
var pulledReasons = map[string]bool{
	"CreateContainerError": true, "CreateContainerConfigError": true, "RunContainerError": true,
	"CrashLoopBackOff": true, "StartError": true,
}

// outcome is what a Pod's state says so far.
type outcome int

const (
	pending     outcome = iota // nothing yet
	finished                   // a result is in
	needLogs                   // terminated, but the message is not the verdict JSON
	imageFailed                // the Pod's image could not be pulled: read its Events
	gone                       // ended without running (deadline, admission)
)

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// readProbe reads a probe Pod.
func readProbe(p *corev1.Pod) (outcome, *report.SweepResult) {
	res := &report.SweepResult{Pod: p.Name, Source: report.SourceProbe}
	cs := containerStatus(p, "probe")
	switch {
	case cs != nil && cs.State.Terminated != nil:
		s, err := probesummary.Parse(cs.State.Terminated.Message)
		if err != nil {
			res.Message = err.Error()
			return needLogs, res
		}
		fillFromSummary(res, s)
		return finished, res
	case cs != nil && cs.State.Waiting != nil && pullReasons[cs.State.Waiting.Reason]:
		res.Source = report.SourceProbeEvents
		res.Message = cs.State.Waiting.Message
		return imageFailed, res
	case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
		return gone, noAnswer(res, p)
	}
	return pending, res
}

// readCanary reads a canary Pod: a container that got past the pull was
// pulled, whatever happened to it next.
func readCanary(p *corev1.Pod) (outcome, *report.SweepResult) {
	res := &report.SweepResult{Pod: p.Name, Source: report.SourceCanary}
	cs := containerStatus(p, "canary")
	switch {
	case cs != nil && (cs.State.Terminated != nil || cs.State.Running != nil || cs.ImageID != "" ||
		(cs.State.Waiting != nil && pulledReasons[cs.State.Waiting.Reason])):
		res.Status = report.SweepOK
		res.Verdict = verdict.Verdict{Status: verdict.StatusOK, Cause: verdict.CauseOK, Code: verdict.OK, Summary: "the kubelet pulled the image"}
		return finished, res
	case cs != nil && cs.State.Waiting != nil && pullReasons[cs.State.Waiting.Reason]:
		res.Message = cs.State.Waiting.Message
		return imageFailed, res
	case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
		return gone, noAnswer(res, p)
	}
	return pending, res
}

func noAnswer(res *report.SweepResult, p *corev1.Pod) *report.SweepResult {
	res.Source = report.SourceNone
	res.Status = report.SweepNoAnswer
	why := p.Status.Reason
	if p.Status.Message != "" {
		why = strings.TrimSpace(why + " " + p.Status.Message)
	}
	if why == "" {
		why = "the Pod ended without running"
	}
	res.Message = why
	res.Verdict = verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "no answer from the node: " + why}
	return res
}

// ParseProbeLog reads the probe's whole report from its log (the JSON is
// the log's content; anything after it is ignored).
func ParseProbeLog(log []byte) (*report.ProbeReport, error) {
	i := bytes.IndexByte(log, '{')
	if i < 0 {
		return nil, fmt.Errorf("log holds no JSON report: %q", cutRunes(string(log), 80))
	}
	var r report.ProbeReport
	if err := json.NewDecoder(bytes.NewReader(log[i:])).Decode(&r); err != nil || r.Kind != report.ProbeKind {
		return nil, fmt.Errorf("log is not a ProbeReport: %q", cutRunes(string(log[i:]), 80))
	}
	return &r, nil
}

func fillFromSummary(res *report.SweepResult, s probesummary.Summary) {
	res.Verdict = s.Verdict()
	res.Hops = s.Hops
	res.Mirror = s.Mirror
	res.Warnings = s.Warnings
	res.Credentials = s.Credentials
	res.Proxy = s.Proxy
	res.Runtime, res.Mirrors = s.Runtime, s.Mirrors
	res.Traces = s.Traces
	res.DurationMS = s.MS
	res.Status = report.SweepFail
	if s.Status == verdict.StatusOK {
		res.Status = report.SweepOK
	}
}

// fromEvents reads the kubelet's pull-failure Events of a Pod (and its
// waiting message) with explain's classifier: the verdict of a node whose
// kubelet could not pull the image.
func fromEvents(k *explain.Classifier, res *report.SweepResult, p *corev1.Pod, image string, events []corev1.Event) {
	sort.SliceStable(events, func(i, j int) bool { return eventTime(&events[i]).Before(eventTime(&events[j])) })
	var best *report.ExplainFinding
	for i := range events {
		e := &events[i]
		m := explain.Message{Ref: e.Namespace + "/" + e.Name, Namespace: p.Namespace, Kind: "Pod", Object: p.Name, Node: p.Spec.NodeName, Reason: e.Reason, Text: e.Message}
		f, _, ok := k.Finding(m)
		if !ok {
			continue
		}
		if best == nil || (best.Rule == "kubelet-backoff" && f.Rule != "kubelet-backoff") || (f.Rule != "kubelet-backoff" && f.Code != verdict.Other) {
			ff := f
			best = &ff
		}
	}
	if best == nil || best.Rule == "kubelet-backoff" {
		text := res.Message
		if text != "" && !strings.Contains(text, image) {
			text = fmt.Sprintf("Failed to pull image %q: %s", image, text)
		}
		if text == "" {
			text = fmt.Sprintf("Back-off pulling image %q", image)
		}
		if f, _, ok := k.Finding(explain.Message{Ref: "pod " + p.Name, Kind: "Pod", Namespace: p.Namespace, Object: p.Name, Node: p.Spec.NodeName, Text: text}); ok && (best == nil || f.Rule != "kubelet-backoff") {
			best = &f
		}
	}
	res.Status = report.SweepFail
	if best == nil {
		res.Verdict = verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "the kubelet could not pull " + image}
		return
	}
	res.Message = best.Message
	res.Verdict = verdict.Verdict{
		Status: verdict.StatusFail, Stage: best.Stage, Cause: best.Cause, Condition: best.Condition, Code: best.Code,
		Endpoint: best.Endpoint, Role: best.Role, Summary: best.Summary, Advice: best.Advice,
	}
	if best.Endpoint != "" {
		res.Hops = []report.SweepHop{{Host: best.Endpoint, Role: best.Role, Address: addrscope.Host(best.Address), Status: report.StepFail, Step: best.Step, Code: best.Code}}
	}
}

// eventTime is when e last happened.
func eventTime(e *corev1.Event) time.Time {
	return nodeplace.EventTime(e.LastTimestamp.Time, e.EventTime.Time, e.CreationTimestamp.Time)
}

// cutRunes cuts s to n bytes on a rune boundary, redacted.
func cutRunes(s string, n int) string {
	s = redact.String(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
