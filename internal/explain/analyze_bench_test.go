package explain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusMessages is every real message shape the tests know: the classify
// table, the runtime fixtures recorded in the lab and the held-out set.
func corpusMessages(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, tc := range classifyCases {
		out = append(out, tc.msg)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "runtime", "*.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var msg []string
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "#") {
				msg = append(msg, line)
			}
		}
		if m := strings.TrimSpace(strings.Join(msg, "\n")); m != "" {
			out = append(out, m)
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "valid-heldout.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, msg, ok := strings.Cut(line, "\t"); ok {
			out = append(out, msg)
		}
	}
	if len(out) < 50 {
		tb.Fatalf("corpus has %d messages, want at least 50", len(out))
	}
	return out
}

// clusterMessages is the event stream of bench/clusterscale's cluster: n
// events of n pods over 20 services x 3 tags, one pod in ten on the broken
// pool (Failed with containerd's blob-timeout message, BackOff, Error:
// ErrImagePull), the rest Pulled / Pulling / Started.
func clusterMessages(n int) []Message {
	const reg = "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com"
	out := make([]Message, 0, n)
	for j := 0; j < n; j++ {
		p := j
		img := fmt.Sprintf("%s/shop/svc-%02d:1.4.%d", reg, p%20, p%3)
		node := fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", p%10, (p/250)%250, p%250+1)
		failing := p%10 == 9
		var reason, msg string
		switch k := (p / 10) % 3; {
		case failing && k == 0:
			reason = "Failed"
			msg = fmt.Sprintf("Failed to pull image %q: rpc error: code = DeadlineExceeded desc = failed to pull and unpack image %q: failed to copy: httpReadSeeker: failed open: failed to do request: Get \"https://prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com/docker/registry/v2/blobs/sha256/4f/4f1c/data\": dial tcp 10.0.20.10:443: i/o timeout", img, img)
		case failing && k == 1:
			reason, msg = "BackOff", fmt.Sprintf("Back-off pulling image %q", img)
		case failing:
			reason, msg = "Failed", "Error: ErrImagePull"
		case k == 0:
			reason, msg = "Pulled", fmt.Sprintf("Successfully pulled image %q in 1.184s (1.184s including waiting). Image size: 125829120 bytes.", img)
		case k == 1:
			reason, msg = "Pulling", fmt.Sprintf("Pulling image %q", img)
		default:
			reason, msg = "Started", "Started container app"
		}
		out = append(out, Message{
			Ref: fmt.Sprintf("team-%02d/svc-%06d.%x", p%50, p, j), Namespace: fmt.Sprintf("team-%02d", p%50),
			Kind: "Pod", Object: fmt.Sprintf("svc-%02d-%06d", p%20, p), Node: node, Reason: reason, Count: 1 + j%7, Text: msg,
		})
	}
	return out
}

// distinctMessages is n messages, no two alike: the corpus with the image
// tag (or a kubelet wrapper naming an image) made unique per message, so
// that no memo can help.
func distinctMessages(tb testing.TB, n int) []Message {
	corpus := corpusMessages(tb)
	out := make([]Message, 0, n)
	for j := 0; j < n; j++ {
		msg := corpus[j%len(corpus)]
		if strings.Contains(msg, "1.4.2") {
			msg = strings.ReplaceAll(msg, "1.4.2", fmt.Sprintf("1.%d.2", j))
		} else {
			msg = fmt.Sprintf("Failed to pull image \"registry.example/app-%d:v1\": %s", j, msg)
		}
		out = append(out, Message{Ref: fmt.Sprintf("line %d", j+1), Node: fmt.Sprintf("node-%d", j%500), Text: msg})
	}
	return out
}

// BenchmarkAnalyze50k is explain's offline analysis of 50,000 events:
// "cluster" is bench/clusterscale's stream (a few distinct texts repeated,
// as in a real cluster), "distinct" makes every message unique.
//
//	go test -run '^$' -bench Analyze50k -benchtime 3x -cpuprofile /tmp/an.cpu ./internal/explain/
func BenchmarkAnalyze50k(b *testing.B) {
	for _, bc := range []struct {
		name string
		msgs []Message
	}{
		{"cluster", clusterMessages(50000)},
		{"distinct", distinctMessages(b, 50000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r := Analyze(bc.msgs)
				if r.Summary.Failures == 0 {
					b.Fatal("Analyze found no failure")
				}
			}
		})
	}
}

// BenchmarkClassifyCorpus is one Classify call per corpus message.
func BenchmarkClassifyCorpus(b *testing.B) {
	corpus := corpusMessages(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		Classify(corpus[i%len(corpus)])
	}
}

// BenchmarkParse50k is Parse over `kubectl get events -A -o json` of the
// cluster stream (4-space indent, as kubectl writes it).
func BenchmarkParse50k(b *testing.B) {
	data := eventsJSON(b, clusterMessages(50000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_, msgs, err := Parse(bytes.NewReader(data), "events.json")
		if err != nil {
			b.Fatal(err)
		}
		if len(msgs) != 50000 {
			b.Fatalf("Parse read %d messages, want 50000", len(msgs))
		}
	}
}

// eventsJSON writes messages as a v1 List of Events.
func eventsJSON(tb testing.TB, msgs []Message) []byte {
	type ev struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		InvolvedObject struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			Namespace  string `json:"namespace"`
			FieldPath  string `json:"fieldPath"`
		} `json:"involvedObject"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Source  struct {
			Component string `json:"component"`
			Host      string `json:"host"`
		} `json:"source"`
		Count          int    `json:"count"`
		FirstTimestamp string `json:"firstTimestamp"`
		LastTimestamp  string `json:"lastTimestamp"`
		Type           string `json:"type"`
	}
	items := make([]ev, len(msgs))
	for i, m := range msgs {
		e := &items[i]
		e.APIVersion, e.Kind = "v1", "Event"
		e.Metadata.Namespace = m.Namespace
		e.Metadata.Name = strings.TrimPrefix(m.Ref, m.Namespace+"/")
		e.InvolvedObject.APIVersion, e.InvolvedObject.Kind = "v1", m.Kind
		e.InvolvedObject.Name, e.InvolvedObject.Namespace = m.Object, m.Namespace
		e.InvolvedObject.FieldPath = "spec.containers{app}"
		e.Reason, e.Message, e.Count, e.Type = m.Reason, m.Text, m.Count, "Normal"
		e.Source.Component, e.Source.Host = "kubelet", m.Node
		e.FirstTimestamp, e.LastTimestamp = "2026-11-29T18:00:00Z", "2026-11-29T18:00:00Z"
	}
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]string{"resourceVersion": ""}}, "", "    ")
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
