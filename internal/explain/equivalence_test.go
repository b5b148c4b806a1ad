package explain

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The fast paths (streamed JSON, literal-gated extractors, the memo) must
// conclude exactly what the reference code of reference_test.go concludes.

// errClass is the part of a Parse error both versions must agree on: the
// kind of failure (the decoder's own wording may differ for broken JSON),
// and the whole text for an item that is not an Event.
func errClass(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	for _, c := range []string{"larger than", "binary data", "empty input", "not valid JSON", "JSON of kind", "no event rows"} {
		if strings.Contains(s, c) {
			return c
		}
	}
	return s
}

func parseCorpus(t testing.TB) map[string][]byte {
	t.Helper()
	in := map[string][]byte{
		"cluster-2000":         eventsJSON(t, clusterMessages(2000)),
		"array":                []byte(`[{"metadata":{"name":"a","namespace":"b"},"message":"Back-off pulling image \"x\""}, null, {"note":"n","regarding":{"Kind":"Pod","Name":"p"},"deprecatedCount":3}]`),
		"empty-array":          []byte(`[]`),
		"empty-object":         []byte(`{}`),
		"list-no-items":        []byte(`{"kind":"List"}`),
		"list-null-items":      []byte(`{"items":null,"kind":"List"}`),
		"single-event":         []byte(`{"kind":"Event","message":"Failed to pull image \"x\": no such host","metadata":{"name":"a","namespace":"b"},"source":{"host":"n1"},"series":{"count":9},"count":2}`),
		"single-event-items":   []byte(`{"kind":"Event","items":[5],"message":"m"}`),
		"single-event-badtype": []byte(`{"kind":"Event","message":5}`),
		"item-kind":            []byte(`{"kind":"EventList","items":[{"kind":"Event"},{"kind":"Pod"},{"kind":"Node"}]}`),
		"item-number":          []byte(`{"items":[{"message":"a"},5],"kind":"List"}`),
		"item-bad-time":        []byte(`{"items":[{"lastTimestamp":"yesterday"}],"kind":"List"}`),
		"item-bad-count":       []byte(`{"items":[{"count":"x","message":"m"}],"kind":"List"}`),
		"kind-number":          []byte(`{"kind":5,"items":[]}`),
		"kind-null":            []byte(`{"kind":null,"items":[]}`),
		"kind-podlist":         []byte(`{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Pod"}]}`),
		"case-folded-names":    []byte(`{"Kind":"List","ITEMS":[{"Message":"x","Metadata":{"Name":"n"}}]}`),
		"duplicate-items":      []byte(`{"kind":"List","items":[{"message":"a"}],"items":[{"message":"b"}]}`),
		"items-object":         []byte(`{"items":{},"kind":"List"}`),
		"items-string":         []byte(`{"items":"x","kind":"List"}`),
		"trailing-garbage":     []byte(`{"kind":"List","items":[]} x`),
		"trailing-object":      []byte(`{"kind":"List","items":[]}{}`),
		"trailing-formfeed":    []byte("{\"kind\":\"List\",\"items\":[]}\f\v \u00a0\u0085\n"),
		"leading-nbsp":         []byte("\u00a0\u2028 {\"kind\":\"List\",\"items\":[{\"message\":\"m\"}]}"),
		"nul-trailing":         []byte("{\"kind\":\"List\",\"items\":[]}\x00"),
		"nul-in-string":        []byte("{\"kind\":\"List\",\"items\":[{\"message\":\"a\x00\"}]}"),
		"nul-after-error":      []byte("{\"kind\":\"List\",\"items\":[}\x00"),
		"truncated":            []byte(`{"kind":"List","items":[{"message":"a"`),
		"truncated-array":      []byte(`[{"message":"a"},`),
		"bare-scalar-array":    []byte(`[1,2]`),
		"not-json-brace":       []byte(`{not json at all`),
		"describe":             []byte("Name: p\nNamespace: ns\nNode: n1/10.0.0.1\nEvents:\n  Type     Reason  Age  From     Message\n  ----     ------  ---  ----     -------\n  Warning  Failed  1m   kubelet  Failed to pull image \"x\": no such host\n"),
		"lines":                []byte("# comment\nFailed to pull image \"x\": no such host\n\nsecond line\n"),
		"whitespace":           []byte(" \n\t\u00a0 "),
		"empty":                nil,
		"binary":               []byte("abc\x00def"),
		"invalid-utf8":         []byte("\xff{\"kind\":\"List\"}"),
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in[filepath.Base(f)] = data
	}
	return in
}

func checkParseSame(t *testing.T, name string, data []byte) {
	t.Helper()
	wf, wm, werr := refParse(bytes.NewReader(data), name)
	gf, gm, gerr := Parse(bytes.NewReader(data), name)
	if errClass(gerr) != errClass(werr) {
		t.Fatalf("Parse(%s) error = %v, want %v (the reference)", name, gerr, werr)
	}
	if gerr != nil {
		if !strings.HasPrefix(gerr.Error(), name+":") || strings.Contains(gerr.Error(), "\n") {
			t.Errorf("Parse(%s) error = %q, want one line naming the input", name, gerr)
		}
		return
	}
	if gf != wf {
		t.Errorf("Parse(%s) format = %s, want %s", name, gf, wf)
	}
	if d := cmp.Diff(wm, gm); d != "" {
		t.Errorf("Parse(%s) messages differ from the reference (-want +got):\n%s", name, d)
	}
}

func TestParseSameAsReference(t *testing.T) {
	for name, data := range parseCorpus(t) {
		t.Run(name, func(t *testing.T) { checkParseSame(t, name, data) })
	}
}

func FuzzParseSameAsReference(f *testing.F) {
	for name, data := range parseCorpus(f) {
		if name != "cluster-2000" {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParseSame(t, "fuzz", data)
	})
}

// refRule is the rule the table picks with the reference matching: Any,
// All and Re, no Hint.
func refRule(lower, msg string) string {
	for i := range Rules {
		r := &Rules[i]
		ok := len(r.Any) == 0
		for _, s := range r.Any {
			if strings.Contains(lower, s) {
				ok = true
				break
			}
		}
		for _, s := range r.All {
			if !strings.Contains(lower, s) {
				ok = false
			}
		}
		if r.Re != nil && !r.Re.MatchString(msg) {
			ok = false
		}
		if ok && (len(r.Any) > 0 || len(r.All) > 0 || r.Re != nil) {
			return r.ID
		}
	}
	return ""
}

func fastRule(tv textView) string {
	for i := range Rules {
		if Rules[i].match(tv) {
			return Rules[i].ID
		}
	}
	return ""
}

func requestString(r request) string {
	u := ""
	if r.URL != nil {
		u = r.URL.String()
	}
	return r.Method + " " + u + " host=" + r.Host + " path=" + r.Path
}

// checkExtractSame compares every fast path with its reference on one
// (raw) message.
func checkExtractSame(t *testing.T, raw string) {
	t.Helper()
	m := normalize(raw)
	lower := strings.ToLower(m)
	tv := newTextView(m, lower)
	if got, want := fastRule(tv), refRule(lower, m); got != want {
		t.Errorf("rule(%q) = %q, want %q (reference)", m, got, want)
	}
	if got, want := extractImage(tv), refExtractImage(m); got != want {
		t.Errorf("extractImage(%q) = %q, want %q (reference)", m, got, want)
	}
	if got, want := cmp.Diff(refReRequest.FindAllStringSubmatchIndex(m, 16), findRequests(m, 16)), ""; got != want {
		t.Errorf("findRequests(%q) differs from reRequest (-want +got):\n%s", m, got)
	}
	if got, want := requestString(extractRequest(tv)), requestString(refExtractRequest(m)); got != want {
		t.Errorf("extractRequest(%q) = %s, want %s (reference)", m, got, want)
	}
	if got, want := extractDial(m), refExtractDial(m); got != want {
		t.Errorf("extractDial(%q) = %q, want %q (reference)", m, got, want)
	}
	gh, gn := extractLookup(m)
	wh, wn := refExtractLookup(m)
	if gh != wh || gn != wn {
		t.Errorf("extractLookup(%q) = %q %q, want %q %q (reference)", m, gh, gn, wh, wn)
	}
}

// extractEdges are shapes made to sit on the edges of the patterns.
func extractEdges() []string {
	long := strings.Repeat("a", 600)
	hex := strings.Repeat("0123456789abcdef", 4)
	return []string{
		`Failed to pull image "` + long + `": x`,
		`Failed to pull image "` + long + `" then failed to pull image "reg.io/app:1": x`,
		`Failed to pull image "` + strings.Repeat("b", 512) + `": x`,
		`Failed to pull image "` + strings.Repeat("b", 513) + `": x`,
		`FAILED TO PULL IMAGE "REG.IO/APP:1": X`,
		`failed to pull image "": x`, `failed to pull image " x"`, `failed to pull image "x`,
		`Container image "nginx:1" is not present with pull policy of Never`,
		`Container image "nginx:1" is present`, `image "a" already present on machine`, `image "a"already present`,
		`failed to resolve reference "" failed to resolve image "r.io/x:1"`, `failed to resolve referenc "a"`,
		`initializing source docker://reg.io/app:tag@sha256:` + hex + `: x`,
		`initializing source docker://reg.io/app@sha256:` + hex,
		`initializing source docker://reg.io/app:@sha256:` + hex,
		`initializing source docker://reg.io/app:tag@SHA256:` + strings.ToUpper(hex),
		`initializing source docker://reg.io/app:tag@sha256:` + hex[:63] + "g",
		`initializing source docker://:x initializing source docker://ok:1`,
		`initializing source docker://` + long + `:tag`,
		`initializing source docker://a:` + long,
		`Error response from daemon: pull access denied for ` + long,
		`pull access denied for , pull access denied for team/app, repository does not exist`,
		`reading manifest 1.0 in reg.io/app: manifest unknown`, `error reading manifest ` + long + ` in x reading manifest v1 in reg.io/b:c`,
		`reading manifest 1.0 in :x`, `reading manifest 1.0 IN reg.io/app`,
		`Get https://a/Get https://b: x`, `Get "https://a" Get "https://b": dial tcp 1.2.3.4:443: i/o timeout`,
		`xGet https://a`, `_Get https://a`, `.Get https://a`, `Get  https://a`, `Get"https://a"`, `Get "https:// x`,
		`Get http://`, `Get https://"`, `GET https://a:443/v2/: EOF`, `Head "https://a/v2/x/manifests/1": 401 Unauthorized`,
		`Post "httpss://a" Put https://x/token?scope=a&service=b: 403`,
		strings.Repeat(`Get "https://h/v2/": x `, 20),
		`unexpected status from HEAD request to https://a.io/v2/x/manifests/1: 404 Not Found`,
		`unexpected status from GET request to https://a.io/v2/x/blobs/sha256:ab : 403`,
		`unexpected status code https://a.io/v2/x/manifests/1: 429 Too Many Requests`,
		`pulling from host a.io failed with status code [manifests 1.0]: 401 Unauthorized`,
		`pinging container registry a.io:5000: Get "https://a.io:5000/v2/": x509: certificate`,
		`error pinging docker registry a.io: x`,
		`dial tcp [fd00::1]:443: connect: no route to host`, `dial tcp 10.0.0.1:443: i/o timeout dial tcp 10.0.0.2:443: x`,
		`lookup a.io on 10.0.0.10:53: no such host`, `lookup a.io.: no such host`, `lookup : x`,
		`read tcp 10.0.0.5:1234->10.0.0.1:443: i/o timeout`, `unexpected EOF`, `x: EOF`, `eof`,
		"Failed to pull image \"reg.io/app:1\": manifeſt for x not found",
		"Failed to pull image \"reg.io/app:1\": MANIFEST FOR x NOT FOUND",
		"failed to pull image \"r\u212a.io/app:1\": not found",
		"Bac\u212a-off pulling image \"a:1\"", "back-off pulling image \"\u00e9:1\"",
		"pinging container regiſtry a.io: x", "unexpected ſtatus code https://a: x",
		"İ Failed to pull image \"a:1\": lookup a on 1.1.1.1:53: i/o timeout",
	}
}

func extractCorpus(tb testing.TB) []string {
	out := append(corpusMessages(tb), extractEdges()...)
	// Cuts of every corpus message: the patterns' ends meet the text's.
	for _, m := range corpusMessages(tb) {
		for i := 0; i < len(m); i += 13 {
			out = append(out, m[:i], m[i:])
		}
	}
	return out
}

func TestExtractSameAsReference(t *testing.T) {
	for _, m := range extractCorpus(t) {
		checkExtractSame(t, m)
	}
}

func FuzzExtractSameAsReference(f *testing.F) {
	for _, m := range corpusMessages(f) {
		f.Add(m)
	}
	for _, m := range extractEdges() {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		checkExtractSame(t, msg)
	})
}

// refAnalyze is Analyze as it was: Finding, then Classify again for a
// message that is not a failure, no memo.
func refAnalyze(msgs []Message) *report.ExplainReport {
	r := NewReport()
	facts := Facts{}
	for _, m := range msgs {
		if f, ok := Finding(m); ok {
			r.Findings = append(r.Findings, f)
			continue
		}
		if c := Classify(m.Text); c.Rule != "" && c.Code == verdict.OK && m.Node != "" && c.Image != "" {
			facts.notePull(m.Node, c.Image, c.Rule == "kubelet-pulled")
			facts.Observations = append(facts.Observations, Observation{Pod: joinNS(m.Namespace, m.Object), Node: m.Node, Image: c.Image, Running: true})
		}
	}
	r.Summary.Messages = len(msgs)
	r.Groups = Correlate(facts, r.Findings)
	Summarize(r)
	return r
}

// TestAnalyzeSameWithMemo: the memo (one Classify per distinct text, one
// redaction per kept text) changes nothing in the report.
func TestAnalyzeSameWithMemo(t *testing.T) {
	for name, msgs := range map[string][]Message{
		"cluster":  clusterMessages(3000),
		"distinct": distinctMessages(t, 600),
	} {
		t.Run(name, func(t *testing.T) {
			want := refAnalyze(msgs)
			if want.Summary.Failures == 0 {
				t.Fatal("refAnalyze found no failure: the messages are wrong")
			}
			if d := cmp.Diff(want, Analyze(msgs)); d != "" {
				t.Errorf("Analyze differs from the reference (-want +got):\n%s", d)
			}
		})
	}
	k := NewClassifier()
	for _, m := range corpusMessages(t) {
		for range 2 { // the second call comes from the memo
			if d := cmp.Diff(Classify(m), k.Classify(m)); d != "" {
				t.Errorf("Classifier.Classify(%q) differs from Classify (-want +got):\n%s", m, d)
			}
		}
	}
}
