package report

import (
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// AuditReport is what `pullpath aws audit`, `pullpath azure audit` and `pullpath gcp audit`
// return: the node subnets (pools), each with its checks, and the changes
// that fix what failed.
type AuditReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"` // AWSAuditReport | AzureAuditReport
	// Source is where the configuration came from: "live" (the cloud's API)
	// or the folder given to --from.
	Source string      `json:"source"`
	Target AuditTarget `json:"target"`
	// Hosts are the hosts of a pull that the checks cover, by role.
	Hosts []AuditHost `json:"hosts"`
	// Subnets holds one entry per node subnet, failing ones first.
	Subnets []*AuditSubnet `json:"subnets"`
	// Comparison sets the first failing subnet beside a passing one, check
	// by check (the ECR subnet scenario's "compare the failing and working subnets top to bottom"); nil when
	// all subnets agree.
	Comparison *AuditComparison `json:"comparison,omitempty"`
	// Verdict is the audit's one answer: the dominant condition and a
	// sentence ("only subnet-0abc fails: ..." or "every subnet fails the
	// same way: identity, not network").
	Verdict AuditVerdict `json:"verdict"`
	Changes []Change     `json:"changes,omitempty"`
	// Warnings are facts that did not decide a check (a missing optional
	// file, with the command that produces it).
	Warnings []AuditWarning `json:"warnings,omitempty"`
	// Cost is the NAT-versus-endpoint estimate (AWS), when asked for.
	Cost       *CostEstimate `json:"cost,omitempty"`
	StartedAt  time.Time     `json:"startedAt"`
	DurationMS float64       `json:"durationMs"`
}

// AuditTarget names what was audited.
type AuditTarget struct {
	Cloud        string `json:"cloud"` // aws | azure | gcp (a nodeplace.Cloud)
	Cluster      string `json:"cluster"`
	Region       string `json:"region,omitempty"`
	Account      string `json:"account,omitempty"`       // AWS account id or Azure subscription id
	ResourceGrp  string `json:"resourceGroup,omitempty"` // Azure
	Network      string `json:"network,omitempty"`       // VPC id or VNet ARM id
	Registry     string `json:"registry,omitempty"`      // ACCOUNT.dkr.ecr.REGION.amazonaws.com, NAME.azurecr.io
	FocusSubnet  string `json:"focusSubnet,omitempty"`   // from --probe-report
	FocusHost    string `json:"focusHost,omitempty"`     // from --probe-report
	ProbeVerdict string `json:"probeVerdict,omitempty"`  // the probe's code the audit was focused on
}

// AuditHost is one host a pull from the audited cluster uses.
type AuditHost struct {
	Host string       `json:"host"`
	Role verdict.Role `json:"role"`
	// Via is how the nodes reach it by design: "ecr.dkr interface endpoint",
	// "S3 gateway endpoint", "private endpoint pe-acr", "NAT gateway".
	Via string `json:"via,omitempty"`
}

// AuditSubnet is one node subnet (an AKS pool's subnet, an EKS subnet with
// nodes) and its checks.
type AuditSubnet struct {
	ID      string     `json:"id"` // subnet-0abc..., or the full ARM subnet id
	Name    string     `json:"name,omitempty"`
	CIDR    string     `json:"cidr,omitempty"`
	Zone    string     `json:"zone,omitempty"`
	Pools   []string   `json:"pools,omitempty"` // nodegroups / agent pools with nodes here
	Nodes   int        `json:"nodes,omitempty"` // instances seen in the subnet
	Verdict StepStatus `json:"verdict"`         // worst of its checks
	// Unknown: the cloud names no node subnet (an AKS-managed VNet without
	// the node resource group's listing): only the cluster-wide checks
	// ran, and the others say what would name it.
	Unknown bool          `json:"unknown,omitempty"`
	Checks  []CheckResult `json:"checks"`
}

// CheckResult is one audit check's result on one subnet (the check itself is
// internal/audit.Check).
type CheckResult struct {
	ID        string            `json:"id"` // stable kebab-case: dns-private-dns, endpoint-ecr-dkr, s3-route, nacl-egress-443, identity-ecr-actions, ...
	Title     string            `json:"title,omitempty"`
	Status    StepStatus        `json:"status"`
	Condition verdict.Condition `json:"condition,omitempty"` // the repair direction a failure points to
	Host      string            `json:"host,omitempty"`      // the pull host it is about
	Summary   string            `json:"summary"`             // one line, naming the object: "rtb-0123 has no route to pl-63a5400a (S3 gateway endpoint vpce-0s3)"
	Evidence  []string          `json:"evidence,omitempty"`
	Resources []string          `json:"resources,omitempty"` // ids or ARNs involved
	// Missing are the contract files the check needed and was not given
	// (or whose live call failed): why it could not decide.
	Missing []string `json:"missing,omitempty"`
	// Changes are what this check asks for on this subnet; the report's
	// top-level Changes merges them over subnets (internal/audit.Finish),
	// so they are not repeated in the output.
	Changes []Change `json:"-"`
}

// AuditComparison is a failing subnet beside a healthy one.
type AuditComparison struct {
	Failing string          `json:"failing"`
	Healthy string          `json:"healthy"`
	Rows    []ComparisonRow `json:"rows"`
}

// ComparisonRow is one check on both subnets.
type ComparisonRow struct {
	Check   string     `json:"check"`
	Failing StepStatus `json:"failing"`
	Healthy StepStatus `json:"healthy"`
	Differs bool       `json:"differs"`
	// Summaries, failing subnet's first.
	FailingSummary string `json:"failingSummary,omitempty"`
	HealthySummary string `json:"healthySummary,omitempty"`
}

// AuditVerdict is the audit's one answer.
type AuditVerdict struct {
	Status    StepStatus        `json:"status"` // worst over subnets
	Condition verdict.Condition `json:"condition,omitempty"`
	// Scope says how far the failure reaches: "none", "some-subnets",
	// "every-subnet" (an identity or registry-wide fault), or
	// "nothing-checked" (no node subnet found, or no check could decide:
	// its own exit code).
	Scope   string   `json:"scope"`
	Summary string   `json:"summary"`
	Failing []string `json:"failing,omitempty"` // subnet ids
	Passing []string `json:"passing,omitempty"`
	// Undecided are the checks that could not decide on some subnet for a
	// file not given, and Missing those files: what to collect next.
	Undecided []string `json:"undecided,omitempty"`
	Missing   []string `json:"missing,omitempty"`
}

// Change is one object to change, and how.
type Change struct {
	Resource string `json:"resource"` // id or ARN / ARM id
	Kind     string `json:"kind,omitempty"`
	Action   string `json:"action"`            // what to do, one sentence
	Command  string `json:"command,omitempty"` // the CLI command that makes or shows it
	// Touches names the other objects the change touches: the dead target
	// of a route it replaces (a deleted NAT gateway, a detached appliance),
	// beside the table it edits.
	Touches []string `json:"touches,omitempty"`
	Check   string   `json:"check"` // the check id that asked for it
	Subnets []string `json:"subnets,omitempty"`
}

// AuditWarning is a fact that did not decide a check.
type AuditWarning struct {
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Command string `json:"command,omitempty"` // the command that would produce the missing input
	// Permission is the permission a live call was refused for
	// (ec2:DescribeRouteTables), when the warning is that refusal.
	Permission string `json:"permission,omitempty"`
}

// CostEstimate compares the monthly cost of pulling layers through a NAT
// gateway with the endpoints that avoid it.
type CostEstimate struct {
	Region      string     `json:"region"`
	ImageBytes  int64      `json:"imageBytes"`
	PullsPerDay int        `json:"pullsPerDay"`
	GBPerMonth  float64    `json:"gbPerMonth"`
	Options     []CostLine `json:"options"`
	PriceSource string     `json:"priceSource"`
	PriceAsOf   string     `json:"priceAsOf"`
	Note        string     `json:"note,omitempty"`
}

// CostLine is one way of carrying the layers, and its monthly cost in USD.
type CostLine struct {
	Path       string  `json:"path"` // nat-gateway | s3-gateway-endpoint | interface-endpoints
	MonthlyUSD float64 `json:"monthlyUsd"`
	Basis      string  `json:"basis"`
}
