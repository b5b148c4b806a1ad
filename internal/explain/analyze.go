package explain

import (
	"sort"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Finding reads one message into a report finding. ok is false when the
// message is not a pull failure.
func Finding(m Message) (f report.ExplainFinding, ok bool) {
	f, _, ok = (*Classifier)(nil).Finding(m)
	return f, ok
}

// Analyze reads offline messages: one finding per pull failure, grouped by
// image with the nodes the messages name, and the summary.
func Analyze(msgs []Message) *report.ExplainReport {
	r := NewReport()
	facts := Facts{}
	k := NewClassifier()
	var q PullQueue
	for _, m := range msgs {
		f, c, ok := k.Finding(m)
		q.Note(m, c)
		if ok {
			r.Findings = append(r.Findings, f)
			continue
		}
		// A Pulled event says where the image came from on that node.
		if c.Rule != "" && c.Code == verdict.OK && m.Node != "" && c.Image != "" {
			facts.notePull(m.Node, c.Image, c.Rule == "kubelet-pulled")
			facts.Observations = append(facts.Observations, Observation{Pod: joinNS(m.Namespace, m.Object), Node: m.Node, Image: c.Image, Running: true})
		}
	}
	r.Summary.Messages = len(msgs)
	r.Groups = Correlate(facts, r.Findings)
	r.Waits = q.Waits()
	Summarize(r)
	return r
}

// NewReport returns an empty ExplainReport with its apiVersion and kind.
func NewReport() *report.ExplainReport {
	return &report.ExplainReport{APIVersion: report.APIVersion, Kind: report.ExplainKind, Findings: []report.ExplainFinding{}}
}

// Summarize counts the findings and sets the dominant condition: the one
// most findings share ("" when no finding has one), and the exit code it
// implies (internal/exitcode).
func Summarize(r *report.ExplainReport) {
	s := &r.Summary
	s.Failures = 0
	s.ByCode = map[verdict.Code]int{}
	s.ByCondition = map[verdict.Condition]int{}
	for _, f := range r.Findings {
		s.Failures++
		s.ByCode[f.Code]++
		if f.Condition != verdict.ConditionNone {
			s.ByCondition[f.Condition]++
		}
	}
	s.DominantCondition = dominantCondition(s.ByCondition)
	s.ExitCode = exitcode.ForFailures(s.Failures, s.DominantCondition)
	if len(s.ByCode) == 0 {
		s.ByCode = nil
	}
	if len(s.ByCondition) == 0 {
		s.ByCondition = nil
	}
}

func dominantCondition(by map[verdict.Condition]int) verdict.Condition {
	best, n := verdict.ConditionNone, 0
	for _, c := range verdict.Conditions { // stable order breaks ties
		if by[c] > n {
			best, n = c, by[c]
		}
	}
	return best
}

// NormalizeImage names an image the way the runtime does
// (nginx -> docker.io/library/nginx:latest), so that a Pod spec, an event and
// node.status.images agree; an unparsable name is returned as it is.
func NormalizeImage(image string) string {
	return normalizedImages.get(image, normalizeImage)
}

func normalizeImage(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return image
	}
	return reference.TagNameOnly(named).String()
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
