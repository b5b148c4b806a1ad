package nodecli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/nodecli"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/testenv"
)

func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := nodecli.Run(ctx, append([]string{"/pullpath-agent"}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func nodeFlags(st *labsvc.Stack) []string {
	return []string{"--nameserver", st.Nameserver(), "--hosts-file", st.Files.Hosts, "--certs-dir", st.Files.CertsDir,
		"--connect-timeout", "2s", "--platform", "linux/amd64", "--no-progress", "--docker-config", st.Files.DockerConfig}
}

// TestProbeAsTheCLI: the node-side probe takes the arguments sweep gives
// `pullpath probe` and answers what the CLI answers: the same report (but
// for timings) and the same exit code, for a healthy pull and a broken one.
func TestProbeAsTheCLI(t *testing.T) {
	pullpath, err := testenv.PullpathBinary(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	healthy := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.4.53", Registry: "127.0.4.10", Token: "127.0.4.11", Blob: "127.0.4.12", Blob2: "127.0.4.13"}})
	blobDown := testenv.StartStack(t, labsvc.StackConfig{BlobHostDown: true, Addrs: labsvc.StackAddrs{DNS: "127.0.5.53", Registry: "127.0.5.10", Token: "127.0.5.11", Blob: "127.0.5.12", Blob2: "127.0.5.13"}})
	for _, tt := range []struct {
		name     string
		st       *labsvc.Stack
		wantCode int
	}{
		{"healthy", healthy, 0},
		{"blob host down", blobDown, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// One blob at a time: the order of the blobs, and so of the
			// exchanges, is then the same in both runs.
			args := append([]string{"probe", tt.st.Ref(), "-o", "json", "--node", "node-a", "--concurrency", "1"}, nodeFlags(tt.st)...)
			code, out, errOut := run(t, "", args...)
			if code != tt.wantCode {
				t.Fatalf("pullpath-agent %v = exit %d, want %d; stderr %q", args, code, tt.wantCode, errOut)
			}
			cliCode, cliOut, _ := testenv.Run(t, pullpath, args...)
			if cliCode != code {
				t.Errorf("pullpath %v = exit %d, pullpath-agent %d: want the same", args, cliCode, code)
			}
			if got, want := shape(t, out), shape(t, cliOut); got != want {
				t.Errorf("pullpath-agent probe's report differs from pullpath probe -o json's (timings aside):\nagent: %s\ncli:   %s", got, want)
			}
			if strings.Contains(out+errOut, tt.st.Password) {
				t.Error("output contains the registry password")
			}
		})
	}
}

// shape is a report without what changes from run to run: durations,
// rates, ports and times.
func shape(t *testing.T, out string) string {
	t.Helper()
	var rep report.ProbeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, out)
	}
	if rep.Kind != "ProbeReport" || len(rep.Steps) == 0 {
		t.Fatalf("report = kind %q with %d steps, want a ProbeReport that walked", rep.Kind, len(rep.Steps))
	}
	if rc := rep.RuntimeConfig; rc != nil {
		// Runtimes in other network namespaces (a lab's, another test's)
		// come and go between the two runs; the walk does not count them.
		rc.Notes = slices.DeleteFunc(rc.Notes, func(n string) bool {
			return strings.HasSuffix(n, "in other network namespaces were not considered")
		})
	}
	b, _ := json.Marshal(rep)
	varying := regexp.MustCompile(`"[A-Za-z]*(Ms|MS|[Mm][Bb]ps|At|Time|time|Duration)":[^,}]*|:\d{2,5}\b|\d+(\.\d+)?ms|\d{4}-\d\d-\d\dT[^"]*`)
	return varying.ReplaceAllString(string(b), "_")
}

func TestProbeBadInput(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"probe"}, "", "exactly one IMAGE argument, got 0"},
		{[]string{"probe", "a:1", "b:1"}, "", "exactly one IMAGE argument, got 2"},
		{[]string{"probe", "nginx:1", "-o", "yaml"}, "", `-o "yaml": the node-side binary prints json only`},
		{[]string{"probe", "nginx:1", "--bogus"}, "", "unknown flag: --bogus"},
		{[]string{"probe", "nginx:1", "--concurrency", "0"}, "", "--concurrency 0: want 1 to 32"},
		{[]string{"probe", "nginx:1", "--timeout", "0s"}, "", "--timeout 0s: want a positive duration"},
		{[]string{"probe", "nginx:1", "--username", "u"}, "", "--username needs --password-stdin"},
		{[]string{"probe", "nginx:1", "--username", "u", "--password-stdin"}, "", "standard input is empty"},
		{[]string{"probe", "nginx:1", "--kubelet-credentials", "yes"}, "", `--kubelet-credentials "yes": want auto`},
		{[]string{"version", "extra"}, "", `unexpected argument "extra"`},
	} {
		code, out, errOut := run(t, tt.stdin, tt.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("pullpath-agent %v = exit %d, stdout %q, stderr %q; want exit 1 and one line containing %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	code, out, errOut := run(t, "", "version")
	shape := regexp.MustCompile(`^pullpath-agent \S+ \(commit (unknown|[0-9a-f]{1,12}(\+dirty)?), go\S+, [a-z0-9]+/[a-z0-9]+\)\n$`)
	if code != 0 || !shape.MatchString(out) || !strings.Contains(out, runtime.Version()) {
		t.Errorf("pullpath-agent version = exit %d, %q (stderr %q), want %s", code, out, errOut, shape)
	}
	code, _, errOut = run(t, "", "--help")
	for _, want := range []string{"probe IMAGE", "version", "--image"} {
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("pullpath-agent --help = exit %d, %q; want exit 0 and %q", code, errOut, want)
		}
	}
	// Anything else is the agent's, as in the DaemonSet.
	code, _, errOut = run(t, "", "--interval", "1s")
	if code != 1 || !strings.Contains(errOut, "--image") {
		t.Errorf("pullpath-agent --interval 1s = exit %d, %q; want the agent's one-line error asking for --image", code, errOut)
	}
}

// TestSweepsProbePodArgs: the arguments sweep (and so diagnose) gives its
// probe Pods are what the node-side binary reads, flag by flag.
func TestSweepsProbePodArgs(t *testing.T) {
	o := sweep.PodOptions{RunID: "r1", Namespace: "ns", Image: "reg.example/app:1", ProbeImage: "reg.example/pullpath-agent:1",
		Deadline: 600, PullSecrets: []string{"creds"}, ProbeArgs: []string{"--connect-timeout", "3s", "--quick"}}
	// The Secret volume the kubelet mounts at /pull-secrets/creds, here.
	secrets := t.TempDir()
	if err := os.MkdirAll(filepath.Join(secrets, "creds"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "creds", ".dockerconfigjson"), []byte(`{"auths":{"reg.example":{"auth":"dTpw"}}}`), 0o444); err != nil {
		t.Fatal(err)
	}
	for _, resolved := range []bool{false, true} {
		c := o.ProbePod("p", report.PlannedNode{Name: "node-1", Resolved: resolved}).Spec.Containers[0]
		args := slices.Clone(c.Args)
		for i, a := range args { // what the kubelet expands, and where it mounts the Secret
			args[i] = strings.ReplaceAll(a, "$(NODE_NAME)", "node-1")
			if strings.HasPrefix(a, "/pull-secrets/") {
				args[i] = filepath.Join(secrets, strings.TrimPrefix(a, "/pull-secrets/"))
			}
		}
		if args[0] != "probe" {
			t.Fatalf("probe Pod args %v do not start with the probe command", c.Args)
		}
		p, err := nodecli.ParseProbe(args[1:])
		if err != nil {
			t.Fatalf("pullpath-agent does not read the probe Pod's args %v: %v", c.Args, err)
		}
		if p.Pull.Image != o.Image || p.Pull.Node != "node-1" || p.VerdictFile != "/dev/termination-log" || p.Pull.DockerConfig != "" ||
			p.Pull.Net.HostsFile != "/host/etc/hosts" || p.Pull.Net.ConnectTimeout != 3*time.Second || !p.Pull.Quick ||
			// the runtime's own registry configuration, found under --host-root: no folder by hand
			p.Pull.Runtime == nil || p.Pull.Runtime.Override != "" || p.Pull.Runtime.Root != "/node" {
			t.Errorf("pullpath-agent read %v as %+v", c.Args, p)
		}
		if ps := p.PullSecrets(); len(ps) != 1 || ps[0].Name != "creds" || ps[0].Skipped != "" {
			t.Errorf("pullpath-agent read the pull secrets of %v as %+v, want the Secret volume creds", c.Args, ps)
		}
	}
}
