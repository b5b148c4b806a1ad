package aws

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/audittest"
	"github.com/pullpath/pullpath/internal/report"
)

// Issue 42: a missing file never fails a subnet. For every file of the
// contract, removed from each healthy account (generated, and assembled
// from real recordings): no subnet fails, a warning names the file with
// its command; a required file is a one-line error naming it.
func TestMissingFileNeverFailsASubnet(t *testing.T) {
	for _, dir := range []string{"testdata/valid-healthy", "testdata/valid-healthy-nat", "testdata/valid-healthy-ipv6",
		"testdata/real-placebo/cross-az-nat", "testdata/real-placebo/multi-vpc"} {
		audittest.MissingFileNeverFails(t, audittest.Account{Dir: dir, From: FromFolder, Required: []string{FileCluster, FileSubnets}})
	}
}

// Defect 1 of issue 42: without the route tables, a default VPC with an
// internet gateway and no endpoints got "no interface endpoint and no
// internet path" on every subnet (exit 3).
func TestNoRouteTablesEndpointChecksWarn(t *testing.T) {
	d := copyDir(t, "testdata/valid-healthy-nat")
	os.Remove(filepath.Join(d, FileRouteTables))
	r := auditDir(t, d)
	for _, s := range r.Subnets {
		for _, id := range []string{CheckEndpointECRAPI, CheckEndpointECRDKR} {
			c := checkByID(t, s, id)
			if c.Status != report.StepWarn || !slices.Contains(c.Missing, FileRouteTables) || !strings.Contains(c.Summary, "cannot decide without "+FileRouteTables+" (aws ec2 describe-route-tables") {
				t.Errorf("%s %s = %s %v (%s), want warn missing %s with its command", s.ID, id, c.Status, c.Missing, c.Summary, FileRouteTables)
			}
		}
	}
	if _, failed := audit.Condition(r); failed || !slices.Contains(r.Verdict.Undecided, CheckEndpointECRAPI) || !slices.Contains(r.Verdict.Missing, FileRouteTables) {
		t.Errorf("verdict = %+v, want no failure, endpoint-ecr-api undecided for %s", r.Verdict, FileRouteTables)
	}
}

// Defects 1 and 2: without the endpoints file the route checks do not
// conclude "no endpoint carries the pull", and the S3 gateway endpoint is
// recognised by its pl- route to a vpce- target (no NAT, no cost note).
func TestNoEndpointsFileS3GatewayByRoute(t *testing.T) {
	d := copyDir(t, "testdata/valid-healthy")
	os.Remove(filepath.Join(d, FileEndpoints))
	r, err := FromFolder(d, audit.Focus{ImageBytes: 1 << 30, PullsPerDay: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Subnets {
		c := checkByID(t, s, CheckS3Route)
		if c.Status != report.StepPass || !strings.Contains(c.Summary, "to vpce-05335335335335335") || !strings.Contains(c.Summary, "its state and policy are unknown ("+FileEndpoints+" not given)") {
			t.Errorf("%s s3-route = %s: %s, want pass by the pl- route, details unknown", s.ID, c.Status, c.Summary)
		}
		if strings.Contains(c.Summary, "NAT") {
			t.Errorf("%s s3-route names a NAT: %s", s.ID, c.Summary)
		}
		if c := checkByID(t, s, CheckInternet); c.Status == report.StepFail {
			t.Errorf("%s route-internet fails without the endpoints file: %s", s.ID, c.Summary)
		}
	}
	if r.Cost == nil || !strings.Contains(r.Cost.Note, "no subnet pulls layers through a NAT gateway") {
		t.Errorf("cost note = %+v, want no subnet through a NAT", r.Cost)
	}
	// Without the prefix-list file too, the gateway could be DynamoDB's:
	// a warn that says so, never a NAT path.
	os.Remove(filepath.Join(d, FilePrefixLists))
	r = auditDir(t, d)
	c := checkByID(t, r.Subnets[0], CheckS3Route)
	if c.Status != report.StepWarn || !strings.Contains(c.Summary, "S3's or DynamoDB's") || !slices.Contains(c.Missing, FilePrefixLists) {
		t.Errorf("s3-route without prefix lists = %s %v: %s", c.Status, c.Missing, c.Summary)
	}
}

// Defect 3: instances without the cluster's tags are not its nodes.
func TestInstancesOfOtherClustersAreNotNodes(t *testing.T) {
	d := copyDir(t, "testdata/valid-healthy")
	p := filepath.Join(d, FileInstances)
	var v map[string]any
	data, _ := os.ReadFile(p)
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	// A bastion in a subnet of its own, with no EKS tag.
	v["Reservations"] = append(v["Reservations"].([]any), map[string]any{"Instances": []any{map[string]any{
		"InstanceId": "i-0bastion000000000", "SubnetId": "subnet-0e5e5e5e5e5e5e5e5", "PrivateIpAddress": "10.0.9.4",
		"State": map[string]any{"Name": "running"}, "Tags": []any{map[string]any{"Key": "Name", "Value": "bastion"}}}}})
	out, _ := json.Marshal(v)
	os.WriteFile(p, out, 0o644)
	r := auditDir(t, d)
	for _, s := range r.Subnets {
		if s.ID == "subnet-0e5e5e5e5e5e5e5e5" || slices.Contains(s.Pools, "self-managed") {
			t.Errorf("subnet %s (pools %v) audited: an untagged instance counted as a node", s.ID, s.Pools)
		}
	}
	found := false
	for _, w := range r.Warnings {
		found = found || w.File == FileInstances && strings.Contains(w.Message, "i-0bastion000000000")
	}
	if !found {
		t.Errorf("no warning names the instance left out: %+v", r.Warnings)
	}
}

// Defect 4: an EKS folder with no nodegroup and no instance checked
// nothing: it is nothing-checked (exit 11), naming what to collect.
func TestNoNodesIsNothingChecked(t *testing.T) {
	d := t.TempDir()
	for _, f := range []string{FileCluster, FileSubnets} {
		data, err := os.ReadFile(filepath.Join("testdata/valid-healthy", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, f), data, 0o644)
	}
	r := auditDir(t, d)
	if !audit.NothingChecked(r) || r.Verdict.Status == report.StepPass {
		t.Fatalf("verdict = %+v, want nothing-checked", r.Verdict)
	}
	named := map[string]bool{}
	for _, w := range r.Warnings {
		named[w.File] = w.Command != ""
	}
	for _, f := range []string{FileNodegroups, FileInstances} {
		if !named[f] {
			t.Errorf("no warning names %s with its command", f)
		}
	}
}

func checkByID(t *testing.T, s *report.AuditSubnet, id string) report.CheckResult {
	t.Helper()
	for _, c := range s.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("%s has no check %s", s.ID, id)
	return report.CheckResult{}
}
