package diagnoselab_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit/aws/fakeaws"
	"github.com/pullpath/pullpath/internal/lab/cluster"
)

const awsFolder = "../testdata/aws-scale-up-new-subnet"

// diagnoseCmd runs `pullpath diagnose deployment NAME -n NS` against the
// lab cluster as its own process (the test binary is pullpath:
// labtest.Main), with env as the whole AWS part of its environment: the
// SDK's default chain reads the process's environment, not options. It
// returns the text output and the exit code.
func diagnoseCmd(t *testing.T, c *cluster.Cluster, env []string, extra ...string) (string, int) {
	t.Helper()
	ns, name := c.WorkloadName()
	args := append([]string{"diagnose", "deployment", name, "-n", ns, "--kubeconfig", c.Kubeconfig, "--budget", "2m",
		"--sweep-namespace", sweepNS, "--image-for-probe", probeImage, "--node-docker-certs-dir", "/etc/containerd/docker-certs.d"}, extra...)
	if c.Scenario().Node.Credentials != nil {
		args = append(args, "--pull-secret", secretName)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = fakeaws.ChildEnv(env)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("pullpath diagnose: %v", err)
	}
	t.Logf("pullpath %s: exit %d\n%s%s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), out.String(), errOut.String())
	return out.String(), cmd.ProcessState.ExitCode()
}

// changeLines are the answer's CHANGE lines with their commands.
func changeLines(text string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(answer(text), "\n") {
		switch {
		case strings.HasPrefix(l, "CHANGE"):
			in = true
		case in && strings.HasPrefix(strings.TrimSpace(l), "$ "):
		default:
			in = false
		}
		if in {
			out = append(out, l)
		}
	}
	return out
}

// Seed 003 on real kubelets with the AWS fake live: the lab's providerIDs
// name the fake account's instances. `pullpath diagnose deployment
// checkout -n shop` with the fake's credentials in the environment and no
// folder prints the same CHANGE lines as with the folder (the S3 gateway
// endpoint and subnet C's route table), and says who it read as; with no
// credentials, the answer comes from the events and the walk, and one line
// names the collect command with the missing permissions. The fake's
// secret key never appears.
func TestDiagnoseLiveAWSOnLab(t *testing.T) {
	t.Parallel()
	c := story(t, "scale-up-new-subnet", true)
	srv := fakeaws.New(awsFolder)
	t.Cleanup(srv.Close)

	folder, _ := diagnoseCmd(t, c, fakeaws.NoCredentials(), "--from-aws", awsFolder)
	want := changeLines(folder)
	if len(want) == 0 || !strings.Contains(want[0], "vpce-05335335335335335") || !strings.Contains(strings.Join(want, "\n"), "rtb-0c0c0c0c0c0c0c0c0") {
		t.Fatalf("with the folder, CHANGE = %q: want the S3 gateway endpoint and subnet C's route table", want)
	}

	live, _ := diagnoseCmd(t, c, srv.Environ())
	if got := changeLines(live); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("live CHANGE lines differ from the folder's:\nlive:\n%s\nfolder:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(live, "live as arn:aws:iam::123456789012:user/pullpath-fake, cluster prod in ap-northeast-2") {
		t.Errorf("the audit step does not say who it read as, the cluster and the region")
	}
	var described bool
	for _, call := range srv.Calls() {
		described = described || (call.Action == "DescribeInstances" && call.Params.Get("InstanceId.1") == "i-0c0e8cd69b234a89")
	}
	if !described {
		t.Errorf("no describe-instances of node-c's instance (from its providerID)")
	}

	none, _ := diagnoseCmd(t, c, fakeaws.NoCredentials())
	a := answer(none)
	if !strings.HasPrefix(a, "BROKEN   "+s3Host) || len(changeLines(none)) != 0 {
		t.Errorf("without credentials the answer =\n%s\nwant the broken S3 link from the walk, no CHANGE", a)
	}
	var collect []string
	for _, l := range strings.Split(a, "\n") {
		if strings.Contains(l, "pullpath aws collect") {
			collect = append(collect, l)
		}
	}
	if len(collect) != 1 || !strings.Contains(collect[0], "--region ap-northeast-2") || !strings.Contains(collect[0], "eks:DescribeCluster") || !strings.Contains(collect[0], "no usable aws credentials") {
		t.Errorf("collect lines %q: want one, with the region, the permissions and why none were used", collect)
	}
	if !strings.Contains(none, "no usable aws credentials") {
		t.Errorf("the audit step does not say there were no credentials")
	}
	for _, text := range []string{folder, live, none} {
		if strings.Contains(text, "pullpath-fake-secret-key-not-a-real-one") {
			t.Errorf("the output holds the secret access key")
		}
	}
}
