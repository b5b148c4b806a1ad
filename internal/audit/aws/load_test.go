package aws

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// copyDir copies a fixture folder to a temporary one to spoil.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestLoadDirBadInput(t *testing.T) {
	healthy := "testdata/valid-healthy"
	tests := []struct {
		name  string
		spoil func(dir string) error
		want  []string // pieces of the one-line error
	}{
		{"not JSON", func(d string) error {
			return os.WriteFile(filepath.Join(d, FileRouteTables), []byte("RouteTables: rtb-1\n"), 0o644)
		}, []string{FileRouteTables, "not JSON", "aws ec2 describe-route-tables"}},
		{"empty file", func(d string) error {
			return os.WriteFile(filepath.Join(d, FileSecurityGroups), nil, 0o644)
		}, []string{FileSecurityGroups, "empty", "describe-security-groups"}},
		{"a JSON array", func(d string) error {
			return os.WriteFile(filepath.Join(d, FileNetworkACLs), []byte("[]"), 0o644)
		}, []string{FileNetworkACLs, "not a JSON object", "describe-network-acls"}},
		{"another command's output", func(d string) error {
			b, err := os.ReadFile(filepath.Join(d, FileSubnets))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(d, FileRouteTables), b, 0o644)
		}, []string{FileRouteTables, `no "RouteTables" member`, "holds Subnets", "aws ec2 describe-subnets"}},
		{"the right key, the wrong shape", func(d string) error {
			return os.WriteFile(filepath.Join(d, FileEndpoints), []byte(`{"VpcEndpoints": {"VpcEndpointId": "vpce-1"}}`), 0o644)
		}, []string{FileEndpoints, "not the shape of", "describe-vpc-endpoints"}},
		{"no cluster", func(d string) error { return os.Remove(filepath.Join(d, FileCluster)) },
			[]string{FileCluster, "is missing", "aws eks describe-cluster --name CLUSTER"}},
		{"no subnets", func(d string) error { return os.Remove(filepath.Join(d, FileSubnets)) },
			[]string{FileSubnets, "is missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := copyDir(t, healthy)
			if err := tt.spoil(d); err != nil {
				t.Fatal(err)
			}
			_, err := LoadDir(d)
			if err == nil {
				t.Fatalf("LoadDir = nil error, want one naming %v", tt.want)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("LoadDir error = %q, want it to hold %q", msg, w)
				}
			}
		})
	}
}

func TestLoadDirFolders(t *testing.T) {
	if _, err := LoadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no AWS CLI outputs") {
		t.Errorf("LoadDir(empty) = %v, want no AWS CLI outputs", err)
	}
	if _, err := LoadDir(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("LoadDir(missing) = %v, want no such file", err)
	}
	if _, err := LoadDir("testdata/fixtures.json"); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("LoadDir(file) = %v, want not a folder", err)
	}
}

func warningsHold(ws []report.AuditWarning, file, piece string) bool {
	for _, w := range ws {
		if w.File == file && strings.Contains(w.Message, piece) {
			return true
		}
	}
	return false
}

func TestDuplicatesAndUndescribedSubnetsWarn(t *testing.T) {
	d := copyDir(t, "testdata/valid-healthy")
	// A subnet listed twice (two pages pasted together).
	b, _ := os.ReadFile(filepath.Join(d, FileSubnets))
	s := string(b)
	first := strings.Index(s, "{\n            \"AvailabilityZone\"")
	end := strings.Index(s[first:], "\n        }") + first + len("\n        }")
	dup := strings.Replace(s, "\"Subnets\": [\n", "\"Subnets\": [\n        "+strings.TrimSpace(s[first:end])+",\n", 1)
	if err := os.WriteFile(filepath.Join(d, FileSubnets), []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	// A nodegroup naming a subnet that describe-subnets does not hold.
	ng := filepath.Join(d, NodegroupFile("spot-workers"))
	b, _ = os.ReadFile(ng)
	if err := os.WriteFile(ng, []byte(strings.Replace(string(b), "subnet-0c3c3c3c3c3c3c3c3", "subnet-0999999999999999a", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := auditDir(t, d)
	if !warningsHold(r.Warnings, FileSubnets, "duplicate subnet subnet-0a1a1a1a1a1a1a1a1") {
		t.Errorf("warnings = %+v, want the duplicate subnet named with its file", r.Warnings)
	}
	if !warningsHold(r.Warnings, FileSubnets, "subnet-0999999999999999a is referenced by eks-describe-nodegroup-spot-workers.json but not described") {
		t.Errorf("warnings = %+v, want the undescribed subnet named", r.Warnings)
	}
	var ghost *report.AuditSubnet
	for _, s := range r.Subnets {
		if s.ID == "subnet-0999999999999999a" {
			ghost = s
		}
	}
	if ghost == nil || ghost.Verdict != report.StepWarn || ghost.Checks[0].ID != CheckSubnetDescribed {
		t.Errorf("undescribed subnet = %+v, want one warn check %s", ghost, CheckSubnetDescribed)
	}
}

func TestMissingOptionalFileWarnsNeverPasses(t *testing.T) {
	d := copyDir(t, "testdata/valid-healthy")
	for _, f := range []string{FileSimulate, FileNetworkACLs, FileDHCPOptions} {
		if err := os.Remove(filepath.Join(d, f)); err != nil {
			t.Fatal(err)
		}
	}
	r := auditDir(t, d)
	for _, f := range []struct{ file, check, command string }{
		{FileSimulate, CheckIdentity, "aws iam simulate-principal-policy --policy-source-arn arn:aws:iam::111122223333:role/prod-node-role"},
		{FileNetworkACLs, CheckNACLNode, "aws ec2 describe-network-acls --filters Name=vpc-id,Values=vpc-0f1e2d3c4b5a69788"},
		{FileDHCPOptions, CheckDHCPOptions, "aws ec2 describe-dhcp-options"},
	} {
		found := false
		for _, w := range r.Warnings {
			if w.File == f.file && strings.Contains(w.Command, f.command) {
				found = true
			}
		}
		if !found {
			t.Errorf("warnings = %+v, want %s with the command %q", r.Warnings, f.file, f.command)
		}
		for _, s := range r.Subnets {
			for _, c := range s.Checks {
				if c.ID == f.check && c.Status != report.StepWarn {
					t.Errorf("%s %s = %s, want warn without %s", s.ID, c.ID, c.Status, f.file)
				}
			}
		}
	}
	if r.Verdict.Status != report.StepWarn {
		t.Errorf("verdict = %s, want warn", r.Verdict.Status)
	}
}

func TestTimestampShim(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"2026-10-20T08:01:15.913000+00:00"`, "2026-10-20T08:01:15.913Z"}, // CLI v2 (direct decode)
		{`1792483275.913`, "2026-10-20T08:01:15.913Z"},                     // cli_timestamp_format=none, EKS
		{`"2026-10-20T08:01:15"`, "2026-10-20T08:01:15Z"},                  // no offset
	}
	for _, tt := range tests {
		var v ClusterOutput
		doc := `{"cluster": {"name": "prod", "createdAt": ` + tt.in + `}}`
		if err := DecodeFile(FileCluster, []byte(doc), &v); err != nil {
			t.Errorf("DecodeFile(createdAt %s) = %v", tt.in, err)
			continue
		}
		if got := v.Cluster.CreatedAt.UTC().Format(time.RFC3339Nano); got != tt.want {
			t.Errorf("createdAt %s = %s, want %s", tt.in, got, tt.want)
		}
	}
	var v ClusterOutput
	if err := DecodeFile(FileCluster, []byte(`{"cluster": {"createdAt": "yesterday"}}`), &v); err == nil || !strings.Contains(err.Error(), "cluster.createdAt") {
		t.Errorf("DecodeFile(bad time) = %v, want an error naming cluster.createdAt", err)
	}
}

// FuzzDecodeFile: any bytes under any contract name decode or fail with an
// error; Build and the checks never panic on what decodes.
func FuzzDecodeFile(f *testing.F) {
	entries, _ := os.ReadDir("testdata/valid-healthy")
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join("testdata/valid-healthy", e.Name()))
		f.Add(e.Name(), b)
	}
	f.Add(FileRouteTables, []byte(`{"RouteTables":[{"Routes":[{"DestinationCidrBlock":"0.0.0.0/0","State":"blackhole"}]}]}`))
	f.Add(FileCluster, []byte(`{"cluster":{"createdAt":1e300}}`))
	base, err := LoadDir("testdata/valid-healthy")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		spec, ok := fileSpec(name)
		if !ok {
			return
		}
		raw := *base
		var err error
		switch spec.Key {
		case "cluster":
			v := &ClusterOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.Cluster = v
			}
		case "nodegroup":
			v := &NodegroupOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.NodegroupDetails = []*NodegroupOutput{v}
			}
		case "Reservations":
			v := &InstancesOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.Instances = v
			}
		case "Subnets":
			v := &SubnetsOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.Subnets = v
			}
		case "RouteTables":
			v := &RouteTablesOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.RouteTables = v
			}
		case "VpcEndpoints":
			v := &EndpointsOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.Endpoints = v
			}
		case "SecurityGroups":
			v := &SecurityGroupsOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.SecurityGroups = v
			}
		case "NetworkAcls":
			v := &NetworkACLsOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.NetworkACLs = v
			}
		case "NatGateways":
			v := &NATGatewaysOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.NATGateways = v
			}
		case "PrefixLists":
			v := &PrefixListsOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.PrefixLists = v
			}
		case "EvaluationResults":
			v := &SimulateOutput{}
			if err = DecodeFile(name, data, v); err == nil {
				raw.Simulate = v
			}
		default:
			return
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("DecodeFile(%s) error spans lines: %q", name, err)
			}
			return
		}
		if raw.Subnets == nil {
			return
		}
		if _, err := Audit(&raw, "fuzz", audit.Focus{}); err != nil && !strings.Contains(err.Error(), FileCluster) {
			t.Errorf("Audit after %s = %v", name, err)
		}
	})
}
