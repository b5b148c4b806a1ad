package report

import (
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// DiagnoseReport is what `pullpath diagnose` returns: one answer first (the
// broken link, the repair direction, the objects to change and the command
// that proves the fix), then the steps that were run or skipped and the
// reports they produced, as evidence.
type DiagnoseReport struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`  // DiagnoseReport
	Scope      string         `json:"scope"` // "deployment shop/web", "namespace shop", "all namespaces"
	Image      string         `json:"image,omitempty"`
	Answer     DiagnoseAnswer `json:"answer"`
	Steps      []DiagnoseStep `json:"steps"`
	Explain    *ExplainReport `json:"explain,omitempty"`
	Sweep      *SweepReport   `json:"sweep,omitempty"`
	Audit      *AuditReport   `json:"audit,omitempty"`
	StartedAt  time.Time      `json:"startedAt"`
	DurationMS float64        `json:"durationMs"`
	BudgetMS   float64        `json:"budgetMs"`

	// Identity is the pull identity the kubelet builds for the failing
	// Pods; IdentityWalk the walk that used it (--use-pull-secrets).
	Identity     *PullIdentity `json:"identity,omitempty"`
	IdentityWalk *SweepReport  `json:"identityWalk,omitempty"`
}

// AnswerStatus is what a diagnosis found.
type AnswerStatus string

const (
	AnswerBroken  AnswerStatus = "broken" // a broken link was found
	AnswerOK      AnswerStatus = "ok"     // nothing fails, and the walk says the path works
	AnswerNothing AnswerStatus = "nothing-failing"
	AnswerUnknown AnswerStatus = "unknown" // pulls fail but no step could say where
)

// DiagnoseAnswer is the one answer, read first.
type DiagnoseAnswer struct {
	Status    AnswerStatus      `json:"status"` // broken | ok | nothing-failing | unknown
	Condition verdict.Condition `json:"condition,omitempty"`
	Cause     verdict.Cause     `json:"cause,omitempty"`
	Code      verdict.Code      `json:"code,omitempty"`
	// Link is the broken link: host, role, address, step.
	Link *BrokenLink `json:"link,omitempty"`
	// Where says which nodes fail: "only nodes of subnet 10.0.30.0/24",
	// "every node alike: identity or the registry, not the network".
	Where   string `json:"where,omitempty"`
	Summary string `json:"summary"`
	// Source is the step whose evidence decided the answer: walk, read or audit.
	Source  string   `json:"source,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	// Look lists where to look when no object could be named (no cloud
	// audit): the advice of the verdict.
	Look []string `json:"look,omitempty"`
	// Prove is the command that proves the fix, and the hint that goes with it.
	Prove []string `json:"prove"`
	// Exit is the process exit code the answer maps to (internal/exitcode).
	Exit int `json:"exitCode"`
}

// BrokenLink is the first link of the pull that fails.
type BrokenLink struct {
	Host    string       `json:"host"`
	Role    verdict.Role `json:"role,omitempty"`
	Address string       `json:"address,omitempty"`
	Step    string       `json:"step,omitempty"`
	Code    verdict.Code `json:"code"`
	// Nodes are the nodes where it was seen failing (walked or read).
	Nodes []string `json:"nodes,omitempty"`
}

// DiagnoseStepStatus is whether a step of a diagnosis ran.
type DiagnoseStepStatus string

const (
	DiagnoseRan     DiagnoseStepStatus = "ran"
	DiagnoseSkipped DiagnoseStepStatus = "skipped"
	DiagnoseFailed  DiagnoseStepStatus = "failed" // the step could not run (an error, a permission)
)

// DiagnoseStep is one step of the method, in order: read, walk, audit.
type DiagnoseStep struct {
	Name       string             `json:"name"` // read | walk | audit
	Status     DiagnoseStepStatus `json:"status"`
	Summary    string             `json:"summary"`
	Reason     string             `json:"reason,omitempty"` // why skipped or failed
	Next       string             `json:"next,omitempty"`   // the command that would do it by hand
	DurationMS float64            `json:"durationMs"`
}

// PullIdentity is the pull identity the kubelet builds for the diagnosed
// Pods (pkg/kubelet getPullSecretsForPod, pkg/credentialprovider): the
// Pod's imagePullSecrets in order (the ServiceAccount admission copies its
// ServiceAccount's when the Pod names none), then the nodes' credential
// provider plugins. Secrets are named, never read.
type PullIdentity struct {
	Namespace      string          `json:"namespace"`
	ServiceAccount string          `json:"serviceAccount,omitempty"`
	Secrets        []PullSecretRef `json:"secrets,omitempty"`
	// From says where the Pod's secrets came from: "pod" (its spec or
	// template), "serviceaccount" (they are its ServiceAccount's), or ""
	// when the ServiceAccount could not be read.
	From string `json:"from,omitempty"`
	// Pods are the failing Pods with this identity; Others counts the
	// failing Pods with another one.
	Pods   []string `json:"pods"`
	Others int      `json:"others,omitempty"`
	// Walked: the walk ran Pods with it, in its namespace
	// (--use-pull-secrets); WalkNote says otherwise what the walk used and
	// why.
	Walked   bool     `json:"walked"`
	WalkNote string   `json:"walkNote,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// WalkUsed names the credentials of the main walk ("secret
	// pullpath-sweep/registry-creds"), to tell them apart from these.
	WalkUsed string `json:"walkUsed,omitempty"`
}

// PullSecretRef is one imagePullSecret of a Pod.
type PullSecretRef struct {
	Name string `json:"name"`
	// Missing: the kubelet could not read it (its FailedToRetrieveImagePullSecret
	// event) and pulls without it.
	Missing bool `json:"missing,omitempty"`
}
