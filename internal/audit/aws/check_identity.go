package aws

import (
	"fmt"
	"strings"

	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// checkIdentity: the node role's simulated decision for each of the four
// ECR actions must be "allowed". The role is the same for every subnet, so
// a fault here fails them all alike (identity, not network).
func checkIdentity(m *Model, ns *NodeSubnet) report.CheckResult {
	if m.Simulate == nil && !m.Have[FileSimulate] {
		return m.missing(FileSimulate)
	}
	role := m.NodeRoleARN
	if role == "" {
		role = "the node role"
	}
	byAction := map[string]iamtypes.EvaluationResult{}
	for _, r := range m.Simulate {
		a := str(r.EvalActionName)
		if _, ok := byAction[strings.ToLower(a)]; !ok {
			byAction[strings.ToLower(a)] = r
		}
	}
	var bad, missing, ev []string
	explicit := ""
	for _, a := range ECRActions {
		r, ok := byAction[strings.ToLower(a)]
		if !ok {
			missing = append(missing, a)
			continue
		}
		ev = append(ev, fmt.Sprintf("%s: %s", a, r.EvalDecision))
		if r.EvalDecision == iamtypes.PolicyEvaluationDecisionTypeAllowed {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s is %s", a, r.EvalDecision))
		if r.EvalDecision == iamtypes.PolicyEvaluationDecisionTypeExplicitDeny {
			for _, s := range r.MatchedStatements {
				explicit = str(s.SourcePolicyId)
				break
			}
		}
	}
	if len(m.NodeRoles) > 1 {
		ev = append(ev, fmt.Sprintf("%s simulates %s only; the other node roles (%s) are not covered", FileSimulate, role, strings.Join(m.NodeRoles[1:], ", ")))
	}
	roleName := role
	if i := strings.LastIndexByte(role, '/'); i >= 0 {
		roleName = role[i+1:]
	}
	if len(bad) > 0 {
		c := audit.Fail(verdict.ConditionTLSIdentity, fmt.Sprintf("%s may not pull: %s", role, strings.Join(bad, ", ")), ev...)
		ch := report.Change{Resource: role, Kind: "iam-role", Action: "attach AmazonEC2ContainerRegistryReadOnly (or allow the four ECR actions)",
			Command: fmt.Sprintf("aws iam attach-role-policy --role-name %s --policy-arn arn:%s:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly", roleName, m.Partition)}
		if explicit != "" {
			ch = report.Change{Resource: role, Kind: "iam-role", Action: "remove the Deny of the ECR actions in " + explicit + " (an explicit Deny wins over every Allow)",
				Command: fmt.Sprintf("aws iam list-attached-role-policies --role-name %s && aws iam list-role-policies --role-name %s", roleName, roleName)}
		}
		return audit.WithChange(c, ch)
	}
	if len(missing) > 0 {
		return audit.WithResources(audit.Warn(verdict.ConditionTLSIdentity, fmt.Sprintf("%s holds no result for %s (%s)", FileSimulate, strings.Join(missing, ", "), m.command(FileSimulate)), ev...), role)
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("%s is allowed the four ECR actions", role), ev...), role)
}
