package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestExplainFromFile(t *testing.T) {
	tests := []struct {
		args     []string
		stdin    string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{args: []string{"explain", "--from", "../explain/testdata/valid-events.json", "-o", "json"}, wantCode: 4, wantOut: `"kind": "ExplainReport"`},
		{args: []string{"explain", "--from", "../explain/testdata/valid-describe.txt"}, wantCode: 5, wantOut: "CONNECT_TIMEOUT"},
		{args: []string{"explain", "--from", "-", "-o", "yaml"}, stdin: "Started container web\n", wantCode: 0, wantOut: "kind: ExplainReport"},
		{args: []string{"explain", "--from", "-"}, stdin: `Failed to pull image "x.io/a:1": failed to pull and unpack image "x.io/a:1": failed to resolve reference "x.io/a:1": pulling from host x.io failed with status code [manifests 1]: 401 Unauthorized` + "\n", wantCode: 6, wantOut: "REGISTRY_UNAUTHORIZED"},
		{args: []string{"explain", "--from", "../explain/testdata/invalid-kind.json"}, wantCode: 1, wantErr: `JSON of kind "PodList"`},
		{args: []string{"explain", "--from", "/nonexistent/events.json"}, wantCode: 1, wantErr: "--from /nonexistent/events.json"},
		{args: []string{"explain", "--from", "x.json", "pod", "web"}, wantCode: 1, wantErr: "--from reads offline input"},
		{args: []string{"explain", "cronjob", "x"}, wantCode: 1, wantErr: "unknown kind"},
		{args: []string{"explain", "--from", "-", "-o", "xml"}, stdin: "x\n", wantCode: 1, wantErr: "unknown output format"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(context.Background(), append([]string{"pullpath"}, tc.args...), Streams{In: strings.NewReader(tc.stdin), Out: &out, ErrOut: &errOut})
			if code != tc.wantCode {
				t.Errorf("Run(%v) = %d, want %d; stderr %q", tc.args, code, tc.wantCode, errOut.String())
			}
			if tc.wantOut != "" && !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("Run(%v) stdout does not contain %q:\n%s", tc.args, tc.wantOut, out.String())
			}
			if tc.wantErr != "" {
				e := errOut.String()
				if !strings.Contains(e, tc.wantErr) || strings.Count(e, "\n") != 1 {
					t.Errorf("Run(%v) stderr = %q, want one line containing %q", tc.args, e, tc.wantErr)
				}
			}
		})
	}
}

func TestExplainJSONShape(t *testing.T) {
	var out, errOut bytes.Buffer
	Run(context.Background(), []string{"pullpath", "explain", "--from", "../explain/testdata/valid-events.json", "-o", "json"}, Streams{Out: &out, ErrOut: &errOut})
	var r struct {
		APIVersion string `json:"apiVersion"`
		Findings   []struct {
			Event, Image, Registry, Endpoint, Stage, Cause, Code, Condition string
			Advice                                                          []string
		} `json:"findings"`
		Groups []struct{ Image, Pattern string } `json:"groups"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("explain -o json: %v\n%s", err, out.String())
	}
	if r.APIVersion != "pullpath/v1" || len(r.Findings) != 5 || len(r.Groups) != 2 {
		t.Fatalf("explain -o json: apiVersion %q, %d findings, %d groups; want pullpath/v1, 5, 2", r.APIVersion, len(r.Findings), len(r.Groups))
	}
	f := r.Findings[0]
	if f.Event != "shop/web-7c9f-abcde.17a2" || f.Code != "DNS_NXDOMAIN" || f.Stage != "registry" || f.Condition != "dns" || f.Endpoint != "myacr.azurecr.io" || len(f.Advice) == 0 {
		t.Errorf("first finding = %+v", f)
	}
}
