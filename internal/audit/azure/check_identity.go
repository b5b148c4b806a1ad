package azure

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Built-in role definition ids (the last segment of roleDefinitionId).
const (
	RoleAcrPull           = "7f951dda-4ed3-4680-a7ca-43fe172d538d"
	RoleAcrPush           = "8311e382-0749-4cb8-b61a-304f252e45ec"
	RoleOwner             = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"
	RoleContributor       = "b24988ac-6180-49a0-a6fe-da4a7fa8f6a6"
	RoleReader            = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
	RoleRepositoryReader  = "b93aa761-3e63-49ed-ac28-beffa264f7ac"
	RoleRepositoryWriter  = "2a1e307c-b015-4ebd-883e-5b7698a07328"
	RoleRepositoryContrib = "2efddaa5-3f1f-4df3-97df-af3f13818f4c"
	nameRepositoryReader  = "Container Registry Repository Reader"
	abacMode              = "AbacRepositoryPermissions"
)

// pullRoles are the roles whose permissions include pull, by registry mode.
// On a registry in "RBAC Registry + ABAC Repository Permissions" mode the
// legacy AcrPull/AcrPush roles are not honored and Owner, Contributor and
// Reader give the control plane only: the repository roles grant pull.
var (
	legacyPull = map[string]string{
		RoleAcrPull: "AcrPull", RoleAcrPush: "AcrPush", RoleOwner: "Owner", RoleContributor: "Contributor", RoleReader: "Reader",
	}
	abacPull = map[string]string{
		RoleRepositoryReader: nameRepositoryReader, RoleRepositoryWriter: "Container Registry Repository Writer", RoleRepositoryContrib: "Container Registry Repository Contributor",
	}
	// builtinNoPull are built-in names known not to pull, so they are not
	// taken for a custom role to confirm.
	knownNames = map[string]bool{}
)

func init() {
	for _, n := range legacyPull {
		knownNames[strings.ToLower(n)] = true
	}
	for _, n := range abacPull {
		knownNames[strings.ToLower(n)] = true
	}
}

// checkIdentity checks that the kubelet identity holds a role that
// includes pull at the registry's scope or above. An identity fault fails
// every pool alike.
func checkIdentity(m *Model, n *nodeSubnet) report.CheckResult {
	const cond = verdict.ConditionTLSIdentity
	host := m.LoginServer()
	var ev []string
	regID := m.RegistryID()
	obj := m.KubeletObjectID()
	abac := strings.EqualFold(m.RoleAssignmentMode, abacMode)
	if obj == "" {
		return audit.WithHost(audit.Warn(cond, "the cluster has no identityProfile.kubeletidentity (a service principal cluster?): the pull identity's role assignments cannot be matched"), host)
	}
	if !m.RolesKnown {
		return audit.WithHost(audit.Warn(cond, "the registry's role assignments are unknown: "+FileRoles+" is missing"), host)
	}
	want, wantName := legacyPull, "AcrPull"
	if abac {
		want, wantName = abacPull, nameRepositoryReader
		ev = append(ev, "registry role assignment mode: RBAC Registry + ABAC Repository Permissions (AcrPull, AcrPush and the Owner/Contributor/Reader data plane are not honored)")
	}
	var custom, notHonored []string
	for _, ra := range m.Roles {
		p := ra.Properties
		if p == nil || !strings.EqualFold(str(p.PrincipalID), obj) {
			continue
		}
		scope := str(p.Scope)
		roleID := strings.ToLower(lastName(str(p.RoleDefinitionID)))
		name := ra.DefinitionName
		if name == "" {
			name = legacyPull[roleID]
			if name == "" {
				name = abacPull[roleID]
			}
		}
		line := fmt.Sprintf("%s at %s", cmp.Or(name, roleID), scope)
		if !scopeCovers(scope, regID) {
			ev = append(ev, line+": not the registry's scope or above")
			continue
		}
		if rn, ok := want[roleID]; ok || nameIn(want, name) {
			if abacCond := str(p.Condition); abacCond != "" {
				ev = append(ev, "the assignment has an ABAC condition: pull is limited to the repositories it names: "+units.Clip(abacCond, 160))
			}
			c := audit.WithHost(audit.Pass(fmt.Sprintf("kubelet identity %s holds %s on %s", obj, cmp.Or(rn, name), scope), ev...), host)
			c.Resources = []string{str(ra.ID), regID}
			return c
		}
		other := legacyPull
		if !abac {
			other = abacPull
		}
		if _, ok := other[roleID]; ok || nameIn(other, name) {
			notHonored = append(notHonored, line)
			continue
		}
		if name == "" || !knownNames[strings.ToLower(name)] {
			custom = append(custom, line)
		}
		ev = append(ev, line)
	}
	cmd := fmt.Sprintf("az role assignment create --assignee-object-id %s --assignee-principal-type ServicePrincipal --role %q --scope %s", obj, wantName, regID)
	if len(custom) > 0 {
		return audit.WithHost(audit.Warn(cond, fmt.Sprintf("kubelet identity %s holds only role(s) pullpath cannot read (%s): confirm one includes Microsoft.ContainerRegistry/registries/pull/read", obj, strings.Join(custom, "; ")), ev...), host)
	}
	summary := fmt.Sprintf("kubelet identity %s has no %s on %s (nor a role that includes pull at its scope or above): every pool's pulls are refused (401/403)", obj, wantName, m.RegistryName())
	if len(notHonored) > 0 {
		summary = fmt.Sprintf("kubelet identity %s holds %s, which registry %s does not honor in its role assignment mode: it needs %s", obj, strings.Join(notHonored, "; "), m.RegistryName(), wantName)
	}
	c := audit.WithHost(audit.Fail(cond, summary, ev...), host)
	return audit.WithChange(audit.WithResources(c, regID, m.KubeletResourceID()), report.Change{Resource: regID, Kind: "Microsoft.ContainerRegistry/registries",
		Action:  fmt.Sprintf("grant the kubelet identity %s %s on the registry", obj, wantName),
		Command: cmd})
}

func nameIn(set map[string]string, name string) bool {
	if name == "" {
		return false
	}
	for _, n := range set {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
