package report

import "github.com/pullpath/pullpath/internal/verdict"

// ExplainAttempt is one attempt of a multi-attempt message (the kubelet's
// aggregate over its credentials, CRI-O's mirrors), classified; the
// finding is the attempt marked Chosen, the others are evidence.
type ExplainAttempt struct {
	N           int               `json:"n"`
	Credentials string            `json:"credentials,omitempty"` // "sent" | "anonymous" | "" (unknown)
	Source      string            `json:"source,omitempty"`      // the mirror or registry reference CRI-O names
	Code        verdict.Code      `json:"code,omitempty"`
	Cause       verdict.Cause     `json:"cause,omitempty"`
	Stage       verdict.Stage     `json:"stage,omitempty"`
	Condition   verdict.Condition `json:"condition,omitempty"`
	Endpoint    string            `json:"endpoint,omitempty"`
	Rule        string            `json:"rule,omitempty"`
	Summary     string            `json:"summary,omitempty"`
	Chosen      bool              `json:"chosen,omitempty"`
}
