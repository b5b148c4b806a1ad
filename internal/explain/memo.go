package explain

import (
	"slices"
	"strings"
	"sync"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
)

// Bounds of the memos. A cluster's events repeat a handful of texts (50,000
// events of 60 images make a few hundred distinct messages), so a memo by
// text does most of the work once; the bounds keep a stream of distinct
// texts from growing it without end (past them, messages are classified as
// if there were no memo).
const (
	// MemoEntries is the most distinct message texts a Classifier keeps.
	MemoEntries = 10000
	// memoMaxText: longer texts are classified but not kept (real events
	// are under 1 KiB; the bound caps the memo at about 40 MiB of keys).
	memoMaxText = 4 << 10
)

// Classifier is Classify with a memo of the results by message text, for
// one explain run: Classify is pure, so a text seen before gets the same
// Classification without the work. A Classifier is not safe for concurrent
// use; a nil *Classifier classifies without a memo.
type Classifier struct {
	memo map[string]*memoEntry
}

type memoEntry struct {
	c Classification
	// message is the text as a finding keeps it (normalized, redacted,
	// cut); set the first time a finding needs it.
	message string
	hasMsg  bool
}

// NewClassifier returns a Classifier with an empty memo.
func NewClassifier() *Classifier {
	return &Classifier{memo: map[string]*memoEntry{}}
}

func (k *Classifier) entry(text string) *memoEntry {
	if k != nil {
		if e, ok := k.memo[text]; ok {
			return e
		}
	}
	e := &memoEntry{c: Classify(text)}
	// Findings of one text share the Advice array: clipped, an append by
	// a reader copies instead of writing into the others.
	e.c.Advice = slices.Clip(e.c.Advice)
	if k != nil && len(text) <= memoMaxText && len(k.memo) < MemoEntries {
		k.memo[text] = e
	}
	return e
}

// Classify is the package's Classify, memoized by text.
func (k *Classifier) Classify(text string) Classification { return k.entry(text).c }

// Finding reads one message into a report finding, classifying its text
// once; it returns the Classification too, so that a message that is not a
// pull failure (a Pulled event) is not classified again. ok is false when
// the message is not a pull failure.
func (k *Classifier) Finding(m Message) (f report.ExplainFinding, c Classification, ok bool) {
	e := k.entry(m.Text)
	c = e.c
	if !c.Failed() {
		return f, c, false
	}
	if !e.hasMsg {
		// Only a kept finding pays for redaction.
		e.message, e.hasMsg = cut(redact.String(normalize(m.Text)), 1024), true
	}
	f = report.ExplainFinding{
		Event: m.Ref, Node: m.Node, Reason: m.Reason, Count: m.Count,
		Image: c.Image, Registry: c.Registry, Endpoint: c.Host, Address: c.Address,
		Role: c.Role, Method: c.Method, URL: c.URL, Step: c.Step,
		Stage: c.Stage, Cause: c.Cause, Code: c.Code, Condition: c.Condition,
		Ambiguous: c.Ambiguous, Rule: c.Rule, Summary: c.Summary, Advice: c.Advice,
		Progress: c.Progress, Message: e.message,
	}
	for _, a := range c.Attempts {
		f.Attempts = append(f.Attempts, report.ExplainAttempt{
			N: a.N, Credentials: a.Credentials, Source: a.Source, Code: a.Code, Cause: a.Cause, Stage: a.Stage,
			Condition: a.Condition, Endpoint: a.Host, Rule: a.Rule, Summary: a.Summary, Chosen: a.Chosen,
		})
	}
	if m.Kind == "Pod" || m.Kind == "" {
		f.Pod = joinNS(m.Namespace, m.Object)
		if m.Object == "" {
			f.Pod = ""
		}
	}
	return f, c, true
}

// stringCache memoizes a pure string function (image name normalization,
// the registry of an image) across runs and goroutines, up to max entries
// of keys up to maxKey bytes; past that it computes without keeping.
type stringCache struct {
	mu     sync.Mutex
	m      map[string]string
	max    int
	maxKey int
}

func (sc *stringCache) get(k string, f func(string) string) string {
	if len(k) > sc.maxKey {
		return f(k)
	}
	sc.mu.Lock()
	v, ok := sc.m[k]
	sc.mu.Unlock()
	if ok {
		return v
	}
	v = f(k)
	sc.mu.Lock()
	if sc.m == nil {
		sc.m = map[string]string{}
	}
	if len(sc.m) < sc.max {
		// A key may be a slice of a long message: keep a copy, not it.
		sc.m[strings.Clone(k)] = v
	}
	sc.mu.Unlock()
	return v
}

var (
	normalizedImages = stringCache{max: 8192, maxKey: 1024}
	imageRegistries  = stringCache{max: 8192, maxKey: 1024}
)
