package verdict

import (
	"fmt"
	"strings"
)

// Markdown renders docs/verdicts.md from the Codes table and the CLI's
// exit-code table (rendered by internal/cli, which decides exit codes).
func Markdown(exitTable string) string {
	var b strings.Builder
	b.WriteString(`# Verdict codes

Every finding pullpath reports has a stable code. ` + "`probe`" + `, ` + "`explain`" + ` and ` + "`lab`" + ` share them.
This page is generated from ` + "`internal/verdict/codes.go`" + ` and ` + "`internal/exitcode`" + `, and a test keeps them
equal (` + "`go test ./internal/cli -run TestDocs -update`" + ` rewrites it).

A verdict carries a **stage** (where the pull failed: reference, registry, auth, blob), a
**cause** (the innermost reason), a **condition** (the repair direction) and a **code**.

A **repair direction** is the kind of change that fixes a failure, and so the objects and the
team to look at: ` + "`route`" + ` (routes, security groups, NACLs, firewalls, NAT: the path there and
back), ` + "`dns`" + ` (the node's resolver and the zones it can see), ` + "`endpoint-set`" + ` (the token and blob
hosts the registry hands out, which need the same path as the registry), ` + "`tls-identity`" + `
(certificate trust and names, credentials and permissions), ` + "`image`" + ` (the reference, the
repository, the platform) and ` + "`registry`" + ` (the registry service itself). Failures with different
codes but the same direction are fixed in the same place; the diagnosis method sorts its tables by it,
and each direction has its own exit code.

A network failure (route or dns condition) on a token or blob host, while the registry host
itself answered, becomes condition ` + "`endpoint-set`" + `: every host the registry hands out needs
the same path from the node.

## Exit codes

` + "`pullpath`" + ` exits with the code of the report's dominant condition, so that a script or a Job
can act on the repair direction without parsing output (the table lives in
` + "`internal/exitcode`" + `):

`)
	b.WriteString(exitTable)
	b.WriteString("\n## Codes\n\n| code | cause | condition | kind | meaning | where to look |\n|---|---|---|---|---|---|\n")
	for _, i := range Codes {
		kind := "failure"
		if i.Warning {
			kind = "warning"
		}
		if i.Code == OK {
			kind = "success"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", i.Code, i.Cause, i.Condition, kind, esc(i.Meaning), esc(i.Where))
	}
	b.WriteString(IdentityDocs)
	b.WriteString(ProbeLimits)
	return b.String()
}

func esc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
