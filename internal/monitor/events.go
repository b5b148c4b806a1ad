package monitor

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Event reasons on the Node. `kubectl describe node` shows them and
// `pullpath monitor status` reads them back.
const (
	ReasonBroken   = "PullPathBroken"   // Warning: the walk failed from this node
	ReasonOK       = "PullPathOK"       // Normal: the walk passes (first verdict, or restored)
	EventComponent = "pullpath-monitor" // source.component and reportingComponent
)

// event is a core/v1 Event, the fields the agent writes.
type event struct {
	APIVersion     string     `json:"apiVersion"`
	Kind           string     `json:"kind"`
	Metadata       objectMeta `json:"metadata"`
	InvolvedObject struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		UID        string `json:"uid,omitempty"`
	} `json:"involvedObject"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	Type               string `json:"type"`
	FirstTimestamp     string `json:"firstTimestamp"`
	LastTimestamp      string `json:"lastTimestamp"`
	Count              int    `json:"count"`
	ReportingComponent string `json:"reportingComponent"`
	ReportingInstance  string `json:"reportingInstance"`
	Source             struct {
		Component string `json:"component"`
		Host      string `json:"host"`
	} `json:"source"`
}

// Annotations on the Event carry the verdict as data, for `pullpath
// monitor status` and scripts.
const (
	AnnotationCode      = "pullpath.io/code"
	AnnotationCondition = "pullpath.io/condition"
	AnnotationImageHost = "pullpath.io/image-host"
	AnnotationImage     = "pullpath.io/image"
)

// postNodeEvent writes one Event on the Node, in the namespace the
// kubelet uses for Node events (default).
func (k *kubeClient) postNodeEvent(ctx context.Context, ns, nodeName, nodeUID, reason, typ, msg string, ann map[string]string, at time.Time) error {
	e := event{APIVersion: "v1", Kind: "Event", Reason: reason, Message: msg, Type: typ, Count: 1,
		ReportingComponent: EventComponent, ReportingInstance: nodeName}
	e.Metadata = objectMeta{Name: nodeName + ".pullpath." + strconv.FormatInt(at.UnixNano(), 16), Namespace: ns, Annotations: ann}
	e.InvolvedObject.APIVersion, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.InvolvedObject.UID = "v1", "Node", nodeName, nodeUID
	e.FirstTimestamp = at.UTC().Format(time.RFC3339)
	e.LastTimestamp = e.FirstTimestamp
	e.Source.Component, e.Source.Host = EventComponent, nodeName
	if len(e.Message) > 1024 {
		e.Message = e.Message[:1021] + "..."
	}
	path := fmt.Sprintf("/api/v1/namespaces/%s/events", url.PathEscape(ns))
	return k.do(ctx, "POST", path, nil, e, nil)
}
