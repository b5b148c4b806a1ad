package explain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClassifierMemoChangesNothing: the memo (one Classify per distinct
// text) gives exactly what Classify gives, first call and remembered call.
func TestClassifierMemoChangesNothing(t *testing.T) {
	k := NewClassifier()
	for _, m := range corpusMessages(t) {
		for range 2 { // the second call comes from the memo
			if d := cmp.Diff(Classify(m), k.Classify(m)); d != "" {
				t.Errorf("Classifier.Classify(%q) differs from Classify (-want +got):\n%s", m, d)
			}
		}
	}
	msgs := clusterMessages(3000)
	r := Analyze(msgs)
	if r.Summary.Failures == 0 || len(r.Groups) == 0 {
		t.Fatalf("Analyze(3000 cluster messages) = %d failures, %d groups; want both", r.Summary.Failures, len(r.Groups))
	}
	var nilK *Classifier // a nil Classifier classifies without a memo
	if d := cmp.Diff(Classify(msgs[0].Text), nilK.Classify(msgs[0].Text)); d != "" {
		t.Errorf("nil Classifier differs from Classify (-want +got):\n%s", d)
	}
}
