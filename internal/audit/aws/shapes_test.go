package aws

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/audittest"
	"github.com/pullpath/pullpath/internal/report"
)

// listMember is the list a paged output holds its objects in (none: the
// command answers one object).
func listMember(t *testing.T, name string, data []byte) string {
	t.Helper()
	spec, ok := fileSpec(name)
	if !ok {
		t.Fatalf("%s is not a contract file", name)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if v, ok := top[spec.Key]; ok && len(v) > 0 && v[0] == '[' {
		return spec.Key
	}
	return ""
}

// withMembers is the file's object with members set (nil deletes one).
func withMembers(t *testing.T, data []byte, set map[string]any) map[string]any {
	t.Helper()
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(top, k)
		} else {
			top[k] = v
		}
	}
	return top
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// twoPages splits a list output in two pages, the first naming the next.
func twoPages(t *testing.T, data []byte, member string) (first, second map[string]any) {
	t.Helper()
	var top map[string]json.RawMessage
	json.Unmarshal(data, &top)
	var items []json.RawMessage
	json.Unmarshal(top[member], &items)
	half := len(items) / 2
	first = withMembers(t, data, map[string]any{member: items[:half], "NextToken": "eyJ2IjoyLCJjIjoiLi4uIn0="})
	second = withMembers(t, data, map[string]any{member: items[half:]})
	return first, second
}

var responseMetadata = map[string]any{"RequestId": "7f4c9d3e-1a2b-4c5d-8e9f-0a1b2c3d4e5f", "HTTPStatusCode": 200,
	"HTTPHeaders": map[string]any{"content-type": "text/xml;charset=UTF-8", "server": "AmazonEC2"}, "RetryAttempts": 0}

// The shapes every contract file is read in besides the CLI's (issue 42,
// item 4): boto3's response dict (ResponseMetadata beside the members),
// the Go SDK's output marshalled (ResultMetadata, a null NextToken), a
// placebo recording ({"status_code": 200, "data": ...}), and a listing in
// two pages, one after the other or in an array. Each file of every
// healthy account, one at a time, audits the same as the folder.
func TestEveryFileReadsInTheSDKsShapes(t *testing.T) {
	shapes := map[string]audittest.Reshape{
		"boto3": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			return mustJSON(t, withMembers(t, data, map[string]any{"ResponseMetadata": responseMetadata})), true
		},
		"go-sdk": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			return mustJSON(t, withMembers(t, data, map[string]any{"ResultMetadata": map[string]any{}})), true
		},
		"placebo": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			return mustJSON(t, map[string]any{"status_code": 200, "data": withMembers(t, data, map[string]any{"ResponseMetadata": responseMetadata})}), true
		},
		"pages-one-after-another": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			m := listMember(t, name, data)
			if m == "" {
				return nil, false
			}
			a, b := twoPages(t, data, m)
			return append(append(mustJSON(t, a), '\n'), mustJSON(t, b)...), true
		},
		"pages-in-an-array": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			m := listMember(t, name, data)
			if m == "" {
				return nil, false
			}
			a, b := twoPages(t, data, m)
			return mustJSON(t, []any{map[string]any{"status_code": 200, "data": a}, map[string]any{"status_code": 200, "data": b}}), true
		},
	}
	// the endpoints account and the NAT account with IPv6: every file of the contract
	for _, dir := range []string{"testdata/valid-healthy", "testdata/valid-healthy-ipv6"} {
		for shape, reshape := range shapes {
			audittest.ReadsReshaped(t, audittest.Account{Dir: dir, From: FromFolder}, shape, reshape)
		}
	}
	// and the pull-through cache's files, audited for an image the cache serves
	for shape, reshape := range shapes {
		audittest.ReadsReshaped(t, audittest.Account{Dir: "testdata/valid-pull-through-cache", From: FromFolder, Focus: audit.Focus{Image: ptcImage}}, shape, reshape)
	}
}

// A file whose last page names a next one holds part of the listing: a
// warning says so, naming the file and its command.
func TestTruncatedListingWarns(t *testing.T) {
	d := copyDir(t, "testdata/valid-healthy")
	data, _ := os.ReadFile(filepath.Join(d, FileRouteTables))
	first, _ := twoPages(t, data, "RouteTables")
	os.WriteFile(filepath.Join(d, FileRouteTables), mustJSON(t, first), 0o644)
	r := auditDir(t, d)
	if !warningsHold(r.Warnings, FileRouteTables, "last page names a next one") {
		t.Errorf("warnings %+v: want one saying %s is one page of several", r.Warnings, FileRouteTables)
	}
}

// A recording of a refused call (placebo's {"status_code": 403, "data":
// {"Error": ...}}) is that call failing, as live mode's refusals: the
// file is left out, a warning names the API's code and the IAM action,
// and no subnet fails for it.
func TestRecordedRefusalIsAFailedCall(t *testing.T) {
	d := copyDir(t, "testdata/valid-healthy")
	refusal := map[string]any{"status_code": 403, "data": map[string]any{
		"Error":            map[string]any{"Code": "UnauthorizedOperation", "Message": "You are not authorized to perform this operation."},
		"ResponseMetadata": responseMetadata}}
	os.WriteFile(filepath.Join(d, FileNetworkACLs), mustJSON(t, refusal), 0o644)
	r := auditDir(t, d)
	found := false
	for _, w := range r.Warnings {
		found = found || w.File == FileNetworkACLs && strings.Contains(w.Message, "UnauthorizedOperation") && w.Permission == "ec2:DescribeNetworkAcls"
	}
	if !found {
		t.Errorf("warnings %+v: want the refused call with its code and ec2:DescribeNetworkAcls", r.Warnings)
	}
	if _, failed := audit.Condition(r); failed {
		t.Errorf("a refused call fails the audit: %+v", r.Verdict)
	}
	// a refusal for a required file is the one-line error naming it
	os.WriteFile(filepath.Join(d, FileSubnets), mustJSON(t, refusal), 0o644)
	if _, err := FromFolder(d, audit.Focus{}); err == nil || !strings.Contains(err.Error(), FileSubnets) || !strings.Contains(err.Error(), "UnauthorizedOperation") {
		t.Errorf("a refused required call = %v, want one line naming the file and the code", err)
	}
}

// Accounts assembled from Cloud Custodian's placebo recordings of real
// AWS answers (testdata/real-placebo, README there): the recordings' own
// shape (wrapper, ResponseMetadata, datetime objects) is read, and the
// audit agrees with what the recordings show.
func TestRealRecordings(t *testing.T) {
	t.Run("cross-az-nat", func(t *testing.T) {
		// Custodian's own test of this recording (test_vpc.py,
		// test_cross_az_nat_gateway_route_filter) finds the tables of
		// subnet-01989283067fcc12f (us-west-2c) and subnet-06b85e2b5aac87c58
		// (us-west-2b) routing to nat-06e9acaa9c0ab8799 in us-west-2a.
		r := auditDir(t, "testdata/real-placebo/cross-az-nat")
		if _, failed := audit.Condition(r); failed || len(r.Subnets) != 3 {
			t.Fatalf("verdict %+v, %d subnets: want the three node subnets, none failing", r.Verdict, len(r.Subnets))
		}
		for _, tc := range []struct {
			subnet string
			status report.StepStatus
		}{{"subnet-0a57b9d3da96e4364", report.StepPass}, {"subnet-06b85e2b5aac87c58", report.StepWarn}, {"subnet-01989283067fcc12f", report.StepWarn}} {
			c := checkOn(t, r, tc.subnet, CheckInternet)
			if c.Status != tc.status || !strings.Contains(c.Summary, "nat-06e9acaa9c0ab8799") {
				t.Errorf("%s route-internet = %s %q, want %s naming nat-06e9acaa9c0ab8799", tc.subnet, c.Status, c.Summary, tc.status)
			}
			if tc.status == report.StepWarn && !strings.Contains(c.Summary, "not in the subnet's AZ") {
				t.Errorf("%s route-internet = %q, want the NAT in another AZ", tc.subnet, c.Summary)
			}
			s3 := checkOn(t, r, tc.subnet, CheckS3Route)
			if s3.Status != report.StepWarn || !strings.Contains(s3.Summary, "pl-00a54069 -> vpce-00cf599081019f56d and pl-68a54001 -> vpce-036452b71622c1bf8") {
				t.Errorf("%s s3-route = %s %q, want both gateway endpoint routes named, undecided", tc.subnet, s3.Status, s3.Summary)
			}
		}
		raw, err := LoadDir("testdata/real-placebo/cross-az-nat")
		if err != nil {
			t.Fatal(err)
		}
		if ca := raw.Cluster.Cluster.CreatedAt; ca == nil || ca.Year() != 2026 || ca.Nanosecond() != 891000000 {
			t.Errorf("createdAt = %v, want placebo's datetime 2026-03-30 12:02:31.891", ca)
		}
	})
	t.Run("multi-vpc", func(t *testing.T) {
		// Three VPCs in one unfiltered listing, each with its main table:
		// a subnet with no explicit association takes its own VPC's.
		r := auditDir(t, "testdata/real-placebo/multi-vpc")
		for _, id := range []string{"subnet-3f9e3d54", "subnet-389e3d53", "subnet-3e9e3d55"} {
			c := checkOn(t, r, id, CheckRouteTable)
			if c.Status != report.StepPass || !strings.Contains(c.Summary, "rtb-309e3d5b (the VPC's main table") {
				t.Errorf("%s route-table = %s %q, want vpc-399e3d52's main table rtb-309e3d5b", id, c.Status, c.Summary)
			}
			if c := checkOn(t, r, id, CheckInternet); c.Status != report.StepPass || !strings.Contains(c.Summary, "igw-3d9e3d56") {
				t.Errorf("%s route-internet = %s %q, want the internet gateway with public addresses (MapPublicIpOnLaunch)", id, c.Status, c.Summary)
			}
		}
		if len(r.Subnets) != 3 {
			t.Errorf("%d subnets audited, want the cluster's three of the listing's eleven", len(r.Subnets))
		}
	})
	// and both read in every shape above
	for _, dir := range []string{"testdata/real-placebo/cross-az-nat", "testdata/real-placebo/multi-vpc"} {
		audittest.ReadsReshaped(t, audittest.Account{Dir: dir, From: FromFolder}, "cli", func(t *testing.T, name string, data []byte) ([]byte, bool) {
			// the recording unwrapped: the CLI's object
			var rec struct{ Data json.RawMessage }
			if json.Unmarshal(data, &rec) != nil || len(rec.Data) == 0 {
				return nil, false
			}
			return bytes.TrimSpace(rec.Data), true
		})
	}
}
