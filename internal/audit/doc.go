// Package audit is the one shape of pullpath's cloud audits (`pullpath aws
// audit`, `pullpath azure audit`, `pullpath gcp audit`), in the manner
// of cluster-autoscaler's cloudprovider: this package owns what is the same
// for every cloud, and a cloud package (internal/audit/aws, .../azure, .../gcp) owns
// only its model and its checks. It imports no cloud SDK.
//
// # What a cloud package exports
//
// Three entry points, with these signatures, the first two returning a
// finished report (report.AuditReport, kind <Cloud>AuditReport):
//
//	// FromFolder audits the configuration saved in dir: the files
//	// `pullpath CLOUD collect` writes, or the cloud CLI's own outputs.
//	func FromFolder(dir string, f audit.Focus) (*report.AuditReport, error)
//
//	// Live reads the configuration through the cloud's API and audits it.
//	// LiveOptions are the cloud's own (cluster, region, credential, ...).
//	func Live(ctx context.Context, o LiveOptions, f audit.Focus) (*report.AuditReport, error)
//
//	// Collect reads the same configuration once and returns the folder's
//	// files and the calls it could go without (Collection).
//	func Collect(ctx context.Context, o LiveOptions) (*audit.Collection, error)
//
// LiveOptions implements Live (Open: find the target from the nodes and
// bind it into an Auditor; Collect; Target: what names the cluster in the
// commands that collect it by hand), and the package's Provider value
// holds it with FromFolder and the permissions. The list of providers,
// internal/audit/clouds, names each Provider once: the CLI and diagnose
// loop over it, and the cloud's name, title and command lines are
// nodeplace.Cloud's. Adding a cloud is its package, a line in that list
// and its facts in nodeplace.
//
// # What an entry point does, in order
//
//  1. Load the configuration into the cloud's model (no check calls an API).
//  2. Keep the node subnets Focus.Subnets names (Keep); place the focus's
//     nodes in their subnets where only the cloud can tell (Focus.Place: an
//     instance id, a pool named in the node's name).
//  3. Run the cloud's checks on each node subnet (RunAll) into one
//     report.AuditSubnet each; fill Target, Hosts, Warnings (and Cost).
//  4. Call Finish(report, focus) last. Finish owns each subnet's verdict, the
//     order (failing first, the focus's subnets before the rest), the audit
//     verdict and its scope (the identity rule: a fault that fails every
//     subnet alike is one cause, "identity, not network"), what the focused
//     subnet's checks say about the probe's code, the failing-beside-healthy
//     comparison and the merged changes. Nothing edits the report after it.
//
// # Checks
//
// A check is a small value (Check: ID, Title, Run(model, subnet)) built with
// New from a function. Its id is stable kebab-case, named by a constant in
// the cloud's checks.go ("const CheckRoute = \"route\""), used everywhere the
// cloud refers to the check (never a literal), and listed in the cloud's
// docs/CLOUD.md table. Checks are listed in the order of a pull: where packets
// go, names, the endpoints and their guards, the identity.
//
// A check returns a report.CheckResult made with the builders here (Pass,
// Skip, Warn, Fail, then WithHost, WithResources, WithChange): a failure names the
// object to change in Changes (its id, the action, the command); a change
// names every object it touches (Change.Touches: the dead target of a route
// it replaces, beside the table). A check that cannot decide (a file missing, a permission
// lacking) warns with what would decide it; RunAll turns a silent check into
// a warn, never a pass.
//
// # Focus
//
// Focus is what the audit looks at first, read from a probe report
// (ReadProbeReport), the CLI's flags, or diagnose's failing nodes and host.
// The zero Focus audits every node subnet alike.
package audit
