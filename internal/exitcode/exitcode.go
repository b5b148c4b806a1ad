// Package exitcode is pullpath's one exit-code table. A report's exit code
// is its dominant condition's (its repair direction), so that a script or
// a Job can act on it without parsing output:
//
//	0  ok: nothing failing       3  route         6  tls-identity
//	1  usage or internal error   4  dns           7  image
//	2  a failure outside the     5  endpoint-set  8  registry
//	   seven repair directions   9  lab: a verdict differs from expect
//	                             10 proxy
//	                             11 audit: nothing could be checked
//
// The engine that builds a report records its code from this table (the
// explain summary's, the sweep verdict's, the diagnosis answer's, the
// monitor fleet summary's, each lab run's), once, when the report is
// built; internal/cli exits with it and renders the table for --help and
// docs/verdicts.md. The condition rows take their numbers from
// verdict.Condition.ExitCode, which the node-side pullpath-agent exits
// with too. It is pure.
package exitcode

import "github.com/pullpath/pullpath/internal/verdict"

// Exit codes that are not a condition's.
const (
	OK       = 0 // the pull works, nothing failing, every scenario as expected
	Error    = 1 // usage error, bad input, internal error
	Other    = 2 // a failure that fits none of the repair directions
	Mismatch = 9 // lab run / lab test: a verdict differs from the scenario's expect
	// Undecided: a cloud audit that could check nothing (no node subnet
	// found, or every check lacked a file): not success.
	Undecided = 11
)

// Row is one row of the table.
type Row struct {
	Code      int
	Condition verdict.Condition // "" for the codes that are not a condition's
	Meaning   string
}

// Table is every exit code pullpath gives, in order.
var Table = []Row{
	{OK, "", "the pull works from this node (probe), nothing failing (explain), every scenario as expected (lab test)"},
	{Error, "", "usage error, bad input, internal error"},
	{Other, "", "a failure that fits none of the repair directions"},
	{verdict.ConditionRoute.ExitCode(), verdict.ConditionRoute, verdict.ConditionRoute.Meaning()},
	{verdict.ConditionDNS.ExitCode(), verdict.ConditionDNS, verdict.ConditionDNS.Meaning()},
	{verdict.ConditionEndpointSet.ExitCode(), verdict.ConditionEndpointSet, verdict.ConditionEndpointSet.Meaning()},
	{verdict.ConditionTLSIdentity.ExitCode(), verdict.ConditionTLSIdentity, verdict.ConditionTLSIdentity.Meaning()},
	{verdict.ConditionImage.ExitCode(), verdict.ConditionImage, verdict.ConditionImage.Meaning()},
	{verdict.ConditionRegistry.ExitCode(), verdict.ConditionRegistry, verdict.ConditionRegistry.Meaning()},
	{Mismatch, "", "`lab run` / `lab test`: a scenario's verdict differs from its `expect:` block"},
	{verdict.ConditionProxy.ExitCode(), verdict.ConditionProxy, verdict.ConditionProxy.Meaning()},
	{Undecided, "", "`aws|azure|gcp audit`: nothing could be checked (no node subnet found, or every check lacked a file): collect what the warnings name"},
}

// For is the exit code of a failure with condition c; a failure with no
// condition, or one the table does not know, gives Other.
func For(c verdict.Condition) int {
	for _, r := range Table {
		if r.Condition != "" && r.Condition == c {
			return r.Code
		}
	}
	return Other
}

// ForVerdict is the exit code of one verdict: OK when the pull works, else
// its condition's.
func ForVerdict(v verdict.Verdict) int {
	if v.Status == verdict.StatusOK {
		return OK
	}
	return For(v.Condition)
}

// ForFailures is the exit code of a report that counts failures and names
// their dominant condition (explain, monitor status): OK when nothing
// fails, else the condition's.
func ForFailures(failures int, dominant verdict.Condition) int {
	if failures == 0 {
		return OK
	}
	return For(dominant)
}
