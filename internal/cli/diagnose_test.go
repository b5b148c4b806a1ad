package cli

import (
	"strings"
	"testing"
)

func TestDiagnoseUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"kind without name", []string{"diagnose", "deployment"}, "deployment: a name is needed: diagnose deployment NAME"},
		{"unknown kind", []string{"diagnose", "cronjob", "x"}, `unknown kind "cronjob"`},
		{"one word", []string{"diagnose", "web"}, `"web": want KIND NAME`},
		{"kind with -A", []string{"diagnose", "pod", "x", "-A"}, "-A diagnoses every namespace: it takes no KIND NAME"},
		{"budget too small", []string{"diagnose", "-n", "shop", "--budget", "5s"}, "--budget 5s: want at least 15s"},
		{"bad image", []string{"diagnose", "--image", "Bad/UPPER:tag"}, `--image "Bad/UPPER:tag": `},
		{"missing aws folder", []string{"diagnose", "--from-aws", "/nonexistent/aws"}, "--from-aws /nonexistent/aws: want a folder written by `pullpath aws collect`"},
		{"bad output", []string{"diagnose", "-o", "xml"}, `unknown output format "xml"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.wantErr) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("%v = exit %d, stderr %q; want exit 1 and one line with %q", tc.args, code, errOut, tc.wantErr)
			}
		})
	}
}
