package verdict

import (
	"fmt"
	"strings"
)

// Markdown renders docs/verdicts.md from the Codes table.
func Markdown() string {
	var b strings.Builder
	b.WriteString(`# Verdict codes

Every finding pullpath reports has a stable code. ` + "`probe`" + `, ` + "`explain`" + ` and ` + "`lab`" + ` share them.
This page is generated from ` + "`internal/verdict/codes.go`" + ` and a test keeps the two equal
(` + "`go test ./internal/verdict -update`" + ` rewrites it).

A verdict carries a **stage** (where the pull failed: reference, registry, auth, blob), a
**cause** (the innermost reason), a **condition** (the repair direction) and a **code**.
A network failure (route or dns condition) on a token or blob host, while the registry host
itself answered, becomes condition ` + "`endpoint-set`" + `: every host the registry hands out needs
the same path from the node.

## Exit codes

| exit | condition | meaning |
|---|---|---|
| 0 | | the pull works from this node (probe), nothing failing (explain), every scenario as expected (lab test) |
| 1 | | usage error, bad input, internal error |
| 2 | | a failure that fits none of the six repair directions |
| 9 | | ` + "`lab run` / `lab test`" + `: a scenario's verdict differs from its ` + "`expect:`" + ` block |
`)
	desc := map[Condition]string{
		ConditionRoute:       "no path, or no return path: routes, security rules, NACLs, firewalls",
		ConditionDNS:         "the node's resolver cannot see the zone, or answers a public address",
		ConditionEndpointSet: "the registry host works, a token or blob host it hands out does not",
		ConditionTLSIdentity: "certificate trust or name, 401, 403: trust and pull identity",
		ConditionImage:       "the image: not found, no manifest for the platform, bad reference",
		ConditionRegistry:    "the registry: rate limit, server errors, corrupt content",
	}
	for _, c := range Conditions {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", ExitCodeFor(c), c, desc[c])
	}
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
	b.WriteString(ProbeLimits)
	return b.String()
}

func esc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
