package clusterscale

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/explain"
)

// BenchmarkExplainOffline is explain --from in-process over the events the
// cluster benchmark loads (no apiserver), for CPU profiles:
//
//	PULLBENCH_EVENTS=50000 go test -run '^$' -bench ExplainOffline -benchtime 1x \
//	  -cpuprofile /tmp/explain.cpu ./bench/clusterscale/
//	go tool pprof -top -cum /tmp/explain.cpu
func BenchmarkExplainOffline(b *testing.B) {
	n := 5000
	if v := os.Getenv("PULLBENCH_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 1_000_000 {
			b.Fatalf("PULLBENCH_EVENTS=%q: want a count from 1 to 1000000", v)
		}
	}
	s := DefaultShape
	s.Events = n
	list := struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Items      []corev1.Event `json:"items"`
	}{APIVersion: "v1", Kind: "List"}
	for j := 0; j < n; j++ {
		e := s.event(j)
		e.APIVersion, e.Kind = "v1", "Event"
		list.Items = append(list.Items, *e)
	}
	data, err := json.Marshal(list)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		_, msgs, err := explain.Parse(bytes.NewReader(data), "events.json")
		if err != nil {
			b.Fatalf("Parse: %v", err)
		}
		r := explain.Analyze(msgs)
		if r.Summary.Failures == 0 {
			b.Fatalf("Analyze found no failure in %d events", n)
		}
	}
}
