package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/probesummary"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
)

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := Run(ctx, append([]string{"pullpath"}, args...), Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func nodeFlags(st *labsvc.Stack) []string {
	return []string{"--nameserver", st.Nameserver(), "--hosts-file", st.Files.Hosts, "--certs-dir", st.Files.CertsDir,
		"--connect-timeout", "2s", "--platform", "linux/amd64", "--no-progress"}
}

func TestProbeCommandExitCodes(t *testing.T) {
	healthy := testenv.StartStack(t, labsvc.StackConfig{})
	blobDown := testenv.StartStack(t, labsvc.StackConfig{BlobHostDown: true, Addrs: labsvc.StackAddrs{DNS: "127.0.1.53", Registry: "127.0.1.10", Token: "127.0.1.11", Blob: "127.0.1.12", Blob2: "127.0.1.13"}})
	tests := []struct {
		name     string
		st       *labsvc.Stack
		args     []string
		stdin    string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"healthy pull exits 0", healthy, []string{"--docker-config", healthy.Files.DockerConfig}, "", 0, "VERDICT  OK", ""},
		{"blob host down exits 5 (endpoint-set)", blobDown, []string{"--docker-config", blobDown.Files.DockerConfig}, "", 5, "CONNECT_REFUSED", ""},
		{"wrong password from stdin exits 6 (tls-identity)", healthy, []string{"--username", "puller", "--password-stdin"}, "not-the-password\n", 6, "AUTH_UNAUTHORIZED", ""},
		{"right password from stdin", healthy, []string{"--username", "puller", "--password-stdin"}, healthy.Password + "\n", 0, "VERDICT  OK", ""},
		{"username without password-stdin is a usage error", healthy, []string{"--username", "puller"}, "", 1, "", "--username needs --password-stdin"},
		{"empty stdin is a usage error", healthy, []string{"--username", "puller", "--password-stdin"}, "", 1, "", "standard input is empty"},
		{"bad output format", healthy, []string{"-o", "xml"}, "", 1, "", `unknown output format "xml"`},
		{"bad duration", healthy, []string{"--connect-timeout", "-1s"}, "", 1, "", "--connect-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"probe", tt.st.Ref()}, nodeFlags(tt.st)...)
			args = append(args, tt.args...)
			code, out, errOut := runCLI(t, tt.stdin, args...)
			if code != tt.wantCode {
				t.Fatalf("pullpath %v = exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", out, tt.wantOut)
			}
			if tt.wantErr != "" && (!strings.Contains(errOut, tt.wantErr) || strings.Count(strings.TrimSpace(errOut), "\n") != 0) {
				t.Errorf("stderr = %q, want one line containing %q", errOut, tt.wantErr)
			}
			if strings.Contains(out+errOut, tt.st.Password) {
				t.Errorf("output contains the password")
			}
		})
	}
}

func TestProbeCommandJSON(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.2.53", Registry: "127.0.2.10", Token: "127.0.2.11", Blob: "127.0.2.12", Blob2: "127.0.2.13"}})
	args := append([]string{"probe", st.Ref(), "-o", "json", "--docker-config", st.Files.DockerConfig}, nodeFlags(st)...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var rep report.ProbeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("-o json output does not parse: %v\n%s", err, out)
	}
	if rep.APIVersion != "pullpath/v1" || rep.Kind != "ProbeReport" || rep.Verdict.Code != "OK" || len(rep.Endpoints) != 3 {
		t.Errorf("report = %s %s verdict %s with %d endpoints, want pullpath/v1 ProbeReport OK with 3", rep.APIVersion, rep.Kind, rep.Verdict.Code, len(rep.Endpoints))
	}
}

func TestKubectlPluginName(t *testing.T) {
	var out bytes.Buffer
	code := Run(context.Background(), []string{"/usr/local/bin/kubectl-pullpath", "--help"}, Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	if code != 0 || !strings.Contains(out.String(), "kubectl pullpath") {
		t.Errorf("kubectl-pullpath --help = exit %d, %q; want usage naming kubectl pullpath", code, out.String())
	}
}

// TestProbeVerdictFile: what a sweep Pod leaves in its termination message
// is the compact verdict of the same walk, under the kubelet's 4 KiB.
func TestProbeVerdictFile(t *testing.T) {
	blobDown := testenv.StartStack(t, labsvc.StackConfig{BlobHostDown: true, Addrs: labsvc.StackAddrs{DNS: "127.0.3.53", Registry: "127.0.3.10", Token: "127.0.3.11", Blob: "127.0.3.12", Blob2: "127.0.3.13"}})
	file := t.TempDir() + "/termination-log"
	args := append([]string{"probe", blobDown.Ref(), "-o", "json", "--docker-config", blobDown.Files.DockerConfig, "--verdict-file", file}, nodeFlags(blobDown)...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 5 {
		t.Fatalf("probe = exit %d, stderr %q, want 5", code, errOut)
	}
	var full report.ProbeReport
	if err := json.Unmarshal([]byte(out), &full); err != nil {
		t.Fatalf("stdout is not the report: %v", err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= probesummary.MaxTerminationMessage {
		t.Errorf("verdict file is %d bytes, want < %d", len(b), probesummary.MaxTerminationMessage)
	}
	var s probesummary.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("verdict file is not JSON: %v: %q", err, b)
	}
	if s.V != probesummary.Version || s.Code != full.Verdict.Code || s.Endpoint != full.Verdict.Endpoint || len(s.Hops) != len(full.Endpoints) {
		t.Errorf("summary = %+v, want the report's verdict %s at %s and %d hops", s, full.Verdict.Code, full.Verdict.Endpoint, len(full.Endpoints))
	}
}
