package gcp_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const (
	imageAR     = "us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2"
	imageGCR    = "gcr.io/shop-prod/web:1.4.2"
	imageShared = "europe-west1-docker.pkg.dev/shared-artifacts/base/runtime:3.2"
	imageOther  = "us-central1-docker.pkg.dev/shop-artifacts/apps/web:1.4.2"
	imageRemote = "us-central1-docker.pkg.dev/shop-prod/dockerhub/library/nginx:1.27"
)

type fixture struct {
	dir, image string
	// want is "check id" -> the subnets where it does not pass (fail, or
	// warn for the checks that can only warn); every other check on every
	// subnet passes or does not apply.
	want   map[string][]string
	status report.StepStatus
	cond   verdict.Condition
	// missing are contract files the folder leaves out on purpose: the
	// warnings naming them (and, live, the refused calls) are expected.
	missing []string
}

var fixtures = []fixture{
	{dir: "valid-healthy", image: imageAR},
	{dir: "valid-nat", image: imageAR},
	{dir: "valid-shared-vpc", image: imageShared},
	{dir: "valid-gcr", image: imageGCR},
	{dir: "valid-vpc-sc-both-inside", image: imageOther},
	{dir: "invalid-dns-zone-no-wildcard", image: imageAR, want: map[string][]string{gcpaudit.CheckDNSZone: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionDNS},
	{dir: "invalid-dns-zone-public-answer", image: imageAR, want: map[string][]string{gcpaudit.CheckDNSZone: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionDNS},
	{dir: "invalid-gcr-storage-no-wildcard", image: imageGCR, want: map[string][]string{gcpaudit.CheckDNSZone: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionDNS},
	{dir: "invalid-dns-policy-alternative-servers", image: imageAR, want: map[string][]string{gcpaudit.CheckDNSPolicy: {"nodes-a", "nodes-b"}}, status: report.StepWarn},
	{dir: "invalid-pga-off", image: imageAR, want: map[string][]string{gcpaudit.CheckPGA: {"nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-pga-off-no-nat", image: imageAR, want: map[string][]string{gcpaudit.CheckPGA: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-route-no-vip-route", image: imageAR, want: map[string][]string{gcpaudit.CheckRoute: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-route-appliance", image: imageAR, want: map[string][]string{gcpaudit.CheckRoute: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-firewall-deny-443", image: imageAR, want: map[string][]string{gcpaudit.CheckFirewall: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-nat-not-covering", image: imageAR, want: map[string][]string{gcpaudit.CheckNAT: {"nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-nat-ports", image: imageAR, want: map[string][]string{gcpaudit.CheckNAT: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-access-scopes", image: imageAR, want: map[string][]string{gcpaudit.CheckScopes: {"nodes-b"}}, status: report.StepFail, cond: verdict.ConditionTLSIdentity},
	{dir: "invalid-identity-no-reader", image: imageAR, want: map[string][]string{gcpaudit.CheckIdentity: {"nodes-b"}}, status: report.StepFail, cond: verdict.ConditionTLSIdentity},
	{dir: "valid-dualstack", image: imageAR},
	{dir: "warn-ipv6-pga-off", image: imageAR, want: map[string][]string{gcpaudit.CheckIPv6: {"nodes-b"}}, status: report.StepWarn},
	{dir: "warn-ipv6-no-route", image: imageAR, want: map[string][]string{gcpaudit.CheckIPv6: {"nodes-a", "nodes-b"}}, status: report.StepWarn},
	{dir: "warn-ipv6-firewall-deny", image: imageAR, want: map[string][]string{gcpaudit.CheckIPv6: {"nodes-a", "nodes-b"}}, status: report.StepWarn},
	{dir: "invalid-identity-group-only", image: imageAR, want: map[string][]string{gcpaudit.CheckIdentity: {"nodes-b"}}, status: report.StepFail, cond: verdict.ConditionTLSIdentity},
	{dir: "warn-identity-conditional", image: imageAR, want: map[string][]string{gcpaudit.CheckIdentity: {"nodes-b"}}, status: report.StepWarn},
	{dir: "invalid-firewall-allow-misses-pool-sa", image: imageAR, want: map[string][]string{gcpaudit.CheckFirewall: {"nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-firewall-allow-misses-pool-tag", image: imageAR, want: map[string][]string{gcpaudit.CheckFirewall: {"nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "valid-vpc-sc-number-from-project", image: imageOther},
	{dir: "invalid-vpc-sc-outside-number-unknown", image: imageOther, want: map[string][]string{gcpaudit.CheckVPCSC: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionTLSIdentity,
		missing: []string{gcpaudit.FileNodeProject("shop-prod")}},
	{dir: "warn-vpc-sc-number-unknown", image: imageOther, want: map[string][]string{gcpaudit.CheckVPCSC: {"nodes-a", "nodes-b"}}, status: report.StepWarn,
		missing: []string{gcpaudit.FileNodeProject("shop-prod")}},
	{dir: "invalid-dns-zone-not-bound", image: imageShared, want: map[string][]string{gcpaudit.CheckRoute: {"gke-team-a", "gke-team-a-batch"}, gcpaudit.CheckFirewall: {"gke-team-a", "gke-team-a-batch"}}, status: report.StepFail, cond: verdict.ConditionRoute},
	{dir: "invalid-dns-zone-not-bound-no-records", image: imageShared, want: map[string][]string{gcpaudit.CheckRoute: {"gke-team-a", "gke-team-a-batch"}, gcpaudit.CheckFirewall: {"gke-team-a", "gke-team-a-batch"}}, status: report.StepFail, cond: verdict.ConditionRoute,
		missing: []string{gcpaudit.FileRecords("pkg-dev")}},
	{dir: "valid-remote-dockerhub", image: imageRemote},
	{dir: "valid-remote-vpcsc-allow", image: imageRemote},
	{dir: "invalid-remote-secret-no-accessor", image: imageRemote, want: map[string][]string{gcpaudit.CheckRemoteCreds: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRegistry},
	{dir: "warn-remote-secret-conditional", image: imageRemote, want: map[string][]string{gcpaudit.CheckRemoteCreds: {"nodes-a", "nodes-b"}}, status: report.StepWarn},
	{dir: "invalid-remote-vpcsc-deny", image: imageRemote, want: map[string][]string{gcpaudit.CheckRemoteVPCSC: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionRegistry},
	{dir: "invalid-vpc-sc-outside-perimeter", image: imageOther, want: map[string][]string{gcpaudit.CheckVPCSC: {"nodes-a", "nodes-b"}}, status: report.StepFail, cond: verdict.ConditionTLSIdentity},
}

func loadDir(t *testing.T, dir string) *gcpaudit.Model {
	t.Helper()
	m, err := gcpaudit.Load(os.DirFS(filepath.Join("testdata", dir)))
	if err != nil {
		t.Fatalf("Load(%s) = %v", dir, err)
	}
	return m
}

func auditFixture(t *testing.T, f fixture) *report.AuditReport {
	t.Helper()
	r, err := gcpaudit.Audit(loadDir(t, f.dir), f.dir, audit.Focus{Image: f.image})
	if err != nil {
		t.Fatalf("Audit(%s) = %v", f.dir, err)
	}
	return r
}

// Every check has a fixture that fails (or, for the server policy, warns)
// it alone, on the subnets it names; the healthy fixtures pass everything.
func TestFixtures(t *testing.T) {
	covered := map[string]bool{}
	for _, f := range fixtures {
		t.Run(f.dir, func(t *testing.T) {
			r := auditFixture(t, f)
			if len(r.Subnets) != 2 {
				t.Fatalf("%d subnets, want 2", len(r.Subnets))
			}
			for _, w := range r.Warnings {
				if !slices.Contains(f.missing, w.File) {
					t.Errorf("warning %q", w.Message)
				}
			}
			for _, s := range r.Subnets {
				for _, c := range s.Checks {
					bad := c.Status == report.StepFail || c.Status == report.StepWarn
					wantBad := slices.Contains(f.want[c.ID], s.ID)
					switch {
					case wantBad && c.Status != f.status:
						t.Errorf("%s %s = %s (%s), want %s", s.ID, c.ID, c.Status, c.Summary, f.status)
					case wantBad && c.Status == report.StepFail && c.Condition != f.cond:
						t.Errorf("%s %s condition %q, want %q", s.ID, c.ID, c.Condition, f.cond)
					case wantBad && c.Status == report.StepFail && len(c.Changes) == 0:
						t.Errorf("%s %s fails with no change", s.ID, c.ID)
					case !wantBad && bad:
						t.Errorf("%s %s = %s: %s", s.ID, c.ID, c.Status, c.Summary)
					}
					if wantBad {
						covered[c.ID] = true
					}
				}
			}
			if len(f.want) == 0 && r.Verdict.Status != report.StepPass {
				t.Errorf("verdict %s: %s", r.Verdict.Status, r.Verdict.Summary)
			}
			if f.status == report.StepFail && r.Verdict.Condition != f.cond {
				t.Errorf("verdict condition %q, want %q (%s)", r.Verdict.Condition, f.cond, r.Verdict.Summary)
			}
			if t.Failed() {
				for _, s := range r.Subnets {
					for _, c := range s.Checks {
						t.Logf("%s %-22s %-4s %s", s.ID, c.ID, c.Status, c.Summary)
					}
				}
			}
		})
	}
	for _, id := range gcpaudit.CheckIDs() {
		if !covered[id] {
			t.Errorf("check %s has no fixture that fails it", id)
		}
	}
}

// A failing subnet is set beside a healthy one, and the changes carry the
// gcloud command that fixes the failing one.
func TestFailingBesideHealthy(t *testing.T) {
	cases := map[string]struct{ check, command string }{
		"invalid-pga-off":                        {gcpaudit.CheckPGA, "gcloud compute networks subnets update nodes-b --region us-central1 --project shop-prod --enable-private-ip-google-access"},
		"invalid-nat-not-covering":               {gcpaudit.CheckNAT, "gcloud compute routers nats update prod-nat --router prod-vpc-router --region us-central1 --project shop-prod --nat-custom-subnet-ip-ranges nodes-a,nodes-b"},
		"invalid-access-scopes":                  {gcpaudit.CheckScopes, "gcloud container node-pools create batch-v2 --cluster prod --location us-central1 --project shop-prod --service-account 412345678901-compute@developer.gserviceaccount.com --scopes https://www.googleapis.com/auth/cloud-platform"},
		"invalid-identity-group-only":            {gcpaudit.CheckIdentity, "gcloud artifacts repositories add-iam-policy-binding apps --location us-central1 --project shop-prod --member=serviceAccount:batch-nodes@shop-prod.iam.gserviceaccount.com --role=roles/artifactregistry.reader"},
		"invalid-firewall-allow-misses-pool-sa":  {gcpaudit.CheckFirewall, "gcloud compute firewall-rules update allow-egress-googleapis-443 --project shop-prod --target-service-accounts 412345678901-compute@developer.gserviceaccount.com,batch-nodes@shop-prod.iam.gserviceaccount.com"},
		"invalid-firewall-allow-misses-pool-tag": {gcpaudit.CheckFirewall, "gcloud compute firewall-rules update allow-egress-googleapis-443 --project shop-prod --target-tags egress-google,gke-prod-4f2a9c1e-node"},
		"invalid-identity-no-reader":             {gcpaudit.CheckIdentity, "gcloud artifacts repositories add-iam-policy-binding apps --location us-central1 --project shop-prod --member=serviceAccount:batch-nodes@shop-prod.iam.gserviceaccount.com --role=roles/artifactregistry.reader"},
	}
	for _, f := range fixtures {
		want, ok := cases[f.dir]
		if !ok {
			continue
		}
		t.Run(f.dir, func(t *testing.T) {
			r := auditFixture(t, f)
			if r.Comparison == nil || r.Comparison.Failing != "nodes-b" || r.Comparison.Healthy != "nodes-a" {
				t.Fatalf("comparison = %+v, want nodes-b beside nodes-a", r.Comparison)
			}
			var differs []string
			for _, row := range r.Comparison.Rows {
				if row.Differs {
					differs = append(differs, row.Check)
				}
			}
			if len(differs) != 1 || differs[0] != want.check {
				t.Errorf("rows that differ = %v, want [%s]", differs, want.check)
			}
			if r.Verdict.Scope != "some-subnets" {
				t.Errorf("scope %q: %s", r.Verdict.Scope, r.Verdict.Summary)
			}
			var cmds []string
			for _, c := range r.Changes {
				cmds = append(cmds, c.Command)
				if c.Check == want.check && c.Command == want.command && len(c.Subnets) == 1 && c.Subnets[0] == "nodes-b" {
					return
				}
			}
			sort.Strings(cmds)
			t.Errorf("changes = \n%s\nwant %s for nodes-b", strings.Join(cmds, "\n"), want.command)
		})
	}
}

// Issue 39 (3): a node account with no reader role by name fails for its
// pool alone, naming the group the role goes to (the audit cannot expand
// it) and the command that answers whether the account is in it; the same
// account granted the role by name under a condition is a warn naming the
// condition.
func TestIdentityThroughGroupsFailsThePool(t *testing.T) {
	const sa = "batch-nodes@shop-prod.iam.gserviceaccount.com"
	check := func(dir string) report.CheckResult {
		r := auditFixture(t, fixture{dir: dir, image: imageAR})
		for _, s := range r.Subnets {
			for _, c := range s.Checks {
				if c.ID == gcpaudit.CheckIdentity && s.ID == "nodes-b" {
					return c
				}
			}
		}
		t.Fatalf("%s: no %s on nodes-b", dir, gcpaudit.CheckIdentity)
		return report.CheckResult{}
	}
	c := check("invalid-identity-group-only")
	for _, want := range []string{sa, "pool batch", "group:gke-pullers@example.com", "roles/artifactregistry.reader on project shop-prod"} {
		if !strings.Contains(c.Summary, want) {
			t.Errorf("fail summary %q lacks %q", c.Summary, want)
		}
	}
	if want := "check: gcloud identity groups memberships check-transitive-membership --group-email=gke-pullers@example.com --member-email=" + sa; !slices.Contains(c.Evidence, want) {
		t.Errorf("evidence %q lacks %q", c.Evidence, want)
	}
	c = check("warn-identity-conditional")
	if c.Status != report.StepWarn || !strings.Contains(c.Summary, "until-2027") || !strings.Contains(c.Summary, sa) {
		t.Errorf("conditional: %s %q, want a warn naming the account and the condition until-2027", c.Status, c.Summary)
	}
}

// Issue 39 (2): a deny that drops a pool's 443 while an allow written for
// that path precedes it but targets other tags or accounts names that allow
// rule and the pool's tag (or account) as the change, never a new rule; the
// pool it reaches passes.
func TestAllowRuleMissingAPoolIsNamed(t *testing.T) {
	for _, dir := range []string{"invalid-firewall-allow-misses-pool-sa", "invalid-firewall-allow-misses-pool-tag"} {
		r := auditFixture(t, fixture{dir: dir, image: imageAR})
		for _, s := range r.Subnets {
			for _, c := range s.Checks {
				if c.ID != gcpaudit.CheckFirewall || s.ID != "nodes-b" {
					continue
				}
				if !strings.Contains(c.Summary, "rule allow-egress-googleapis-443 (priority 1000) allows it") || !strings.Contains(c.Summary, "pool batch") {
					t.Errorf("%s: summary %q does not name the allow rule that misses pool batch", dir, c.Summary)
				}
				if len(c.Changes) != 1 || c.Changes[0].Resource != "allow-egress-googleapis-443" || strings.Contains(c.Changes[0].Command, "firewall-rules create") {
					t.Errorf("%s: changes %+v, want the one update of allow-egress-googleapis-443", dir, c.Changes)
				}
			}
		}
	}
}

// Issue 39 (4): a perimeter whose listed projects the folder names decides
// that the nodes' project, whose number is not given, is outside (and the
// change puts it in by the number gcloud looks up); one listing a number
// no file names is undecided; the nodes' project's own describe gives its
// number when no node runs as its default compute account.
func TestPerimeterDecidesWithoutTheNodesNumber(t *testing.T) {
	vpcsc := func(dir string) report.CheckResult {
		r := auditFixture(t, fixture{dir: dir, image: imageOther})
		for _, c := range r.Subnets[0].Checks {
			if c.ID == gcpaudit.CheckVPCSC {
				return c
			}
		}
		t.Fatalf("%s: no %s", dir, gcpaudit.CheckVPCSC)
		return report.CheckResult{}
	}
	c := vpcsc("invalid-vpc-sc-outside-number-unknown")
	if c.Status != report.StepFail || !strings.Contains(c.Summary, "holds the registry's project shop-artifacts but not the nodes' project shop-prod") {
		t.Errorf("fail: %s %q", c.Status, c.Summary)
	}
	if len(c.Evidence) == 0 || !strings.Contains(c.Evidence[0], "projects/512345678902 = shop-artifacts") {
		t.Errorf("evidence %q does not say which projects the perimeter lists", c.Evidence)
	}
	if want := "gcloud access-context-manager perimeters update artifacts_perimeter --policy 987654321098 --add-resources projects/$(gcloud projects describe shop-prod --format='value(projectNumber)')"; len(c.Changes) != 1 || c.Changes[0].Command != want {
		t.Errorf("changes %+v, want %s", c.Changes, want)
	}
	if c := vpcsc("warn-vpc-sc-number-unknown"); c.Status != report.StepWarn || !strings.Contains(c.Summary, "projects/998877665544") || !strings.Contains(c.Summary, gcpaudit.FileNodeProject("shop-prod")) {
		t.Errorf("warn: %s %q, want the unnamed number and the file that would name the nodes' project", c.Status, c.Summary)
	}
	if c := vpcsc("valid-vpc-sc-number-from-project"); c.Status != report.StepPass {
		t.Errorf("pass: %s %q", c.Status, c.Summary)
	}
}

// Issue 39 (1): a private zone for the registry's domain that the network's
// project holds, bound to another network: the nodes get Google's public
// addresses, which a network built without a default route does not reach;
// the one change is binding the zone (its networks repeated), never a
// default route or an egress rule to the internet: the route and the
// firewall checks both fail on it and both ask for that binding.
func TestUnboundZoneChangeIsTheBinding(t *testing.T) {
	const bind = "gcloud dns managed-zones update pkg-dev --project net-host --networks https://www.googleapis.com/compute/v1/projects/net-host/global/networks/legacy-vpc,https://www.googleapis.com/compute/v1/projects/net-host/global/networks/shared-vpc"
	for _, dir := range []string{"invalid-dns-zone-not-bound", "invalid-dns-zone-not-bound-no-records"} {
		r := auditFixture(t, fixture{dir: dir, image: imageShared})
		var checks []string
		for _, c := range r.Changes {
			checks = append(checks, c.Check)
			if c.Command != bind || len(c.Subnets) != 2 {
				t.Errorf("%s: change for %s on %v: %s, want the binding on both subnets: %s", dir, c.Check, c.Subnets, c.Command, bind)
			}
		}
		if !slices.Equal(checks, []string{gcpaudit.CheckRoute, gcpaudit.CheckFirewall}) {
			t.Errorf("%s: changes for %v, want route and firewall-egress-443", dir, checks)
		}
		for _, c := range r.Subnets[0].Checks {
			if c.ID == gcpaudit.CheckRoute && !strings.Contains(c.Summary, "private zone pkg-dev (pkg.dev., bound to legacy-vpc)") {
				t.Errorf("%s: route summary %q does not name the unbound zone", dir, c.Summary)
			}
		}
	}
	r := auditFixture(t, fixture{dir: "invalid-dns-zone-not-bound", image: imageShared})
	if !strings.Contains(r.Changes[0].Action, "199.36.153.8/30") {
		t.Errorf("action %q does not say what the zone answers once bound", r.Changes[0].Action)
	}
}

// Issue 39, remote repositories: the Artifact Registry service agent that
// cannot read the upstream credentials' secret is named with the secret and
// the grant; a perimeter with the project's VPC-SC config at DENY names the
// config and `gcloud artifacts vpcsc-config allow`; a standard repository
// skips both.
func TestRemoteRepository(t *testing.T) {
	result := func(dir, image, id string) report.CheckResult {
		r := auditFixture(t, fixture{dir: dir, image: image})
		for _, c := range r.Subnets[0].Checks {
			if c.ID == id {
				return c
			}
		}
		t.Fatalf("%s: no %s", dir, id)
		return report.CheckResult{}
	}
	c := result("invalid-remote-secret-no-accessor", imageRemote, gcpaudit.CheckRemoteCreds)
	for _, want := range []string{"service-412345678901@gcp-sa-artifactregistry.iam.gserviceaccount.com", "secret dockerhub-token", "DOCKER_HUB", "shopbot", "upstream credentials are invalid"} {
		if !strings.Contains(c.Summary, want) {
			t.Errorf("secret: summary %q lacks %q", c.Summary, want)
		}
	}
	if want := "gcloud secrets add-iam-policy-binding dockerhub-token --project shop-prod --member=serviceAccount:service-412345678901@gcp-sa-artifactregistry.iam.gserviceaccount.com --role=roles/secretmanager.secretAccessor"; len(c.Changes) != 1 || c.Changes[0].Command != want {
		t.Errorf("secret: changes %+v, want %s", c.Changes, want)
	}
	c = result("invalid-remote-vpcsc-deny", imageRemote, gcpaudit.CheckRemoteVPCSC)
	if !strings.Contains(c.Summary, "prod_perimeter") || !strings.Contains(c.Summary, "DENY") || len(c.Changes) != 1 || c.Changes[0].Command != "gcloud artifacts vpcsc-config allow --project shop-prod --location us-central1" {
		t.Errorf("vpcsc: %q %+v", c.Summary, c.Changes)
	}
	if c := result("warn-remote-secret-conditional", imageRemote, gcpaudit.CheckRemoteCreds); !strings.Contains(c.Summary, "token-rotation-window") {
		t.Errorf("conditional: %q", c.Summary)
	}
	for _, id := range []string{gcpaudit.CheckRemoteCreds, gcpaudit.CheckRemoteVPCSC} {
		if c := result("valid-healthy", imageAR, id); c.Status != report.StepSkip || !strings.Contains(c.Summary, "STANDARD_REPOSITORY") {
			t.Errorf("standard repository: %s %s %q", id, c.Status, c.Summary)
		}
	}
}
