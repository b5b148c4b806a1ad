package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

func parseFile(t *testing.T, name string) (Format, []Message, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Parse(f, name)
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		file      string
		format    Format
		messages  int
		failures  int
		dominant  verdict.Condition
		codes     map[verdict.Code]int
		firstNode string
	}{
		// 7 events: Scheduled (not pull news), 2 NXDOMAIN, ErrImagePull and BackOff (no cause), Pulled (cached), not found.
		{"valid-events.json", FormatEvents, 7, 5, verdict.ConditionDNS, map[verdict.Code]int{verdict.DNSNXDomain: 2, verdict.Other: 2, verdict.ManifestNotFound: 1}, "aks-new-12345-vmss000007"},
		// describe: 6 rows; the S3 timeout, ErrImagePull, BackOff and ImagePullBackOff are failures.
		{"valid-describe.txt", FormatDescribe, 6, 4, verdict.ConditionEndpointSet, map[verdict.Code]int{verdict.ConnectTimeout: 1, verdict.Other: 3}, "ip-10-0-3-17.eu-west-1.compute.internal"},
		{"valid-lines.txt", FormatLines, 3, 2, verdict.ConditionTLSIdentity, map[verdict.Code]int{verdict.TLSUnknownAuthority: 1, verdict.RegistryUnauthorized: 1}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			format, msgs, err := parseFile(t, tc.file)
			if err != nil {
				t.Fatalf("Parse(%s) error: %v", tc.file, err)
			}
			if format != tc.format {
				t.Errorf("Parse(%s) format = %s, want %s", tc.file, format, tc.format)
			}
			if len(msgs) != tc.messages {
				t.Errorf("Parse(%s) = %d messages, want %d", tc.file, len(msgs), tc.messages)
			}
			r := Analyze(msgs)
			if r.Summary.Failures != tc.failures {
				t.Errorf("Analyze(%s) failures = %d, want %d", tc.file, r.Summary.Failures, tc.failures)
			}
			if r.Summary.DominantCondition != tc.dominant {
				t.Errorf("Analyze(%s) dominant condition = %q, want %q", tc.file, r.Summary.DominantCondition, tc.dominant)
			}
			for c, n := range tc.codes {
				if r.Summary.ByCode[c] != n {
					t.Errorf("Analyze(%s) ByCode[%s] = %d, want %d (all %v)", tc.file, c, r.Summary.ByCode[c], n, r.Summary.ByCode)
				}
			}
			if tc.firstNode != "" && (len(r.Findings) == 0 || r.Findings[0].Node != tc.firstNode) {
				t.Errorf("Analyze(%s) first finding node = %+v, want %s", tc.file, r.Findings, tc.firstNode)
			}
			for _, f := range r.Findings {
				if f.Event == "" || f.Rule == "" || f.Code == "" {
					t.Errorf("Analyze(%s) finding without event/rule/code: %+v", tc.file, f)
				}
				for _, secret := range []string{"SECRETTOKEN", "abc123"} {
					if strings.Contains(f.Message, secret) || strings.Contains(f.URL, secret) {
						t.Errorf("Analyze(%s) leaks %q in %+v", tc.file, secret, f)
					}
				}
			}
		})
	}
}

func TestParseDescribeJoinsPodFacts(t *testing.T) {
	_, msgs, err := parseFile(t, "valid-describe.txt")
	if err != nil {
		t.Fatal(err)
	}
	f, ok := Finding(msgs[2])
	if !ok {
		t.Fatalf("Finding(%q) not a failure", msgs[2].Text)
	}
	if f.Pod != "shop/web-7c9f-abcde" || f.Count != 4 || f.Stage != verdict.StageBlob || f.Condition != verdict.ConditionEndpointSet {
		t.Errorf("Finding(describe row 3) = pod %q count %d stage %s condition %s, want shop/web-7c9f-abcde 4 blob endpoint-set", f.Pod, f.Count, f.Stage, f.Condition)
	}
}

func TestAnalyzeEventsGroups(t *testing.T) {
	_, msgs, err := parseFile(t, "valid-events.json")
	if err != nil {
		t.Fatal(err)
	}
	r := Analyze(msgs)
	var web *struct{ pattern string }
	for _, g := range r.Groups {
		if g.Image == "myacr.azurecr.io/shop/web:2.3.1" {
			web = &struct{ pattern string }{g.Pattern}
			if g.Code != verdict.DNSNXDomain {
				t.Errorf("group web code = %s, want %s", g.Code, verdict.DNSNXDomain)
			}
			var failing, healthy int
			for _, n := range g.Nodes {
				if n.Status == "failing" {
					failing++
				} else {
					healthy++
					if n.Evidence != "cached: evidence of nothing" {
						t.Errorf("healthy node %s evidence = %q, want cached", n.Name, n.Evidence)
					}
				}
			}
			if failing != 2 || healthy != 1 {
				t.Errorf("group web: %d failing, %d healthy nodes, want 2 and 1: %+v", failing, healthy, g.Nodes)
			}
			if len(g.Next) == 0 || !strings.Contains(g.Next[0], "pullpath probe myacr.azurecr.io/shop/web:2.3.1") {
				t.Errorf("group web next = %v, want a probe command", g.Next)
			}
		}
	}
	if web == nil {
		t.Fatalf("no group for the web image in %+v", r.Groups)
	}
	if web.pattern != "cache-only" {
		t.Errorf("group web pattern = %q, want cache-only (offline: no node facts, healthy node cached)", web.pattern)
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"invalid-kind.json", `JSON of kind "PodList"`},
		{"invalid-truncated.json", "not valid JSON"},
		{"invalid-empty.txt", "empty input"},
		{"invalid-describe-norows.txt", "no event rows"},
		{"invalid-binary.txt", "binary data"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, _, err := parseFile(t, tc.file)
			if err == nil {
				t.Fatalf("Parse(%s) = nil error, want %q", tc.file, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.file+":") || strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse(%s) error = %q, want one line naming the file and %q", tc.file, err, tc.want)
			}
		})
	}
}
