package azure

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The artifact cache's error strings, as ACR answers a pull that misses
// (Azure/acr #754, #599, #893): the node's path is fine, the cache's
// access to its source is not.
const (
	cacheAuthMessage = "authentication required with source registry for cache rule"
	cacheRateMessage = "too many requests to source registry for cache rule"
)

// Key Vault's built-in roles that read secret values
// (Microsoft.KeyVault/vaults/secrets/getSecret/action), by definition id.
var vaultSecretRoles = map[string]string{
	"4633458b-17de-408a-b874-0445c86b69e6": "Key Vault Secrets User",
	"b86a8fe4-44ce-4948-aee5-eccb2c155cd7": "Key Vault Secrets Officer",
	"00482a5a-887f-4fb3-b363-3b7fe8e74483": "Key Vault Administrator",
}

// vaultNoSecretRoles are Key Vault's built-in roles known not to read
// secret values (the management plane, or metadata only).
var vaultNoSecretRoles = map[string]string{
	"21090545-7ca7-4776-b22c-e363652d74d2": "Key Vault Reader",
	"f25e0fa2-a7c8-4377-a976-54943a77a395": "Key Vault Contributor",
}

// cacheSkip says why the cache checks do not apply: no image, no rules
// read, no rule serving the image's repository.
func (m *Model) cacheSkip() (*servedRule, *report.CheckResult) {
	skip := func(s string) (*servedRule, *report.CheckResult) {
		r := audit.Skip(s)
		return nil, &r
	}
	switch {
	case m.image == nil:
		return skip("no image of this registry named: the cache rules are checked for the image's repository (pullpath azure audit IMAGE)")
	case !m.CacheRulesKnown:
		r := audit.MissingResult(FileCacheRules, " whether a cache rule serves "+m.image.Repository, cmdCacheRules(m.RegistryName()))
		return nil, &r
	}
	s := m.served()
	if s == nil {
		var targets []string
		for _, r := range m.CacheRules {
			if r != nil && r.Properties != nil {
				targets = append(targets, str(r.Properties.TargetRepository))
			}
		}
		what := "the registry has no cache rule"
		if len(targets) > 0 {
			what = "no cache rule's target covers it (" + strings.Join(targets, ", ") + ")"
		}
		return skip(fmt.Sprintf("%s is not served by the artifact cache: %s", m.image.Repository, what))
	}
	return s, nil
}

func ruleLine(s *servedRule) string {
	return fmt.Sprintf("%s (%s -> %s)", str(s.rule.Name), str(s.rule.Properties.TargetRepository), str(s.rule.Properties.SourceRepository))
}

// checkCacheCredentials: the rule's credential set exists, holds
// credentials for the rule's source, names both secrets, and ACR reports
// it healthy; a rule with no credential set pulls anonymously, which on
// Docker Hub meets its per-address pull limit (ACR's troubleshooting
// guide recommends a credential set for Docker Hub).
func checkCacheCredentials(m *Model, _ *nodeSubnet) report.CheckResult {
	s, r := m.cacheSkip()
	if r != nil {
		return *r
	}
	reg, host := m.RegistryName(), sourceHost(s.source)
	rid := str(s.rule.ID)
	ev := []string{fmt.Sprintf("cache rule %s serves %s from %s", ruleLine(s), m.image.Repository, s.source)}
	createSet := func(name string) string {
		return fmt.Sprintf("az acr credential-set create -r %s -n %s -l %s -u https://VAULT.vault.azure.net/secrets/USERNAME_SECRET -p https://VAULT.vault.azure.net/secrets/PASSWORD_SECRET && az acr cache update -r %s -n %s -c %s", reg, name, host, reg, str(s.rule.Name), name)
	}
	if s.credID == "" {
		if !dockerHub(host) {
			return audit.WithResources(audit.Pass(fmt.Sprintf("cache rule %s pulls %s anonymously", ruleLine(s), host), ev...), rid)
		}
		c := audit.Warn(verdict.ConditionRegistry, fmt.Sprintf("cache rule %s pulls Docker Hub anonymously: Docker Hub limits anonymous pulls by source address, and a miss over the limit fails with `%s`; give the rule a credential set", ruleLine(s), cacheRateMessage), ev...)
		return audit.WithChange(audit.WithResources(c, rid), report.Change{Resource: rid, Kind: typeCacheRule,
			Action: "store a Docker Hub user name and access token as Key Vault secrets, create a credential set for docker.io and give the rule it (then grant the set's identity the secrets: az keyvault set-policy or Key Vault Secrets User)", Command: createSet("dockerhub")})
	}
	name := lastName(s.credID)
	if !m.CredSetsKnown {
		return audit.MissingResult(FileCredSets, " cache rule "+str(s.rule.Name)+"'s credential set "+name, cmdCredSets(reg))
	}
	cs := s.credSet
	if cs == nil {
		c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("cache rule %s names credential set %s, which registry %s does not have: a miss fails with `%s`", ruleLine(s), name, reg, cacheAuthMessage), ev...)
		return audit.WithChange(audit.WithResources(c, rid, s.credID), report.Change{Resource: rid, Kind: typeCacheRule,
			Action: "create the credential set for " + host + " and point the rule at it", Command: createSet(name)})
	}
	csID := cmp.Or(str(cs.ID), s.credID)
	p := cs.Properties
	if p == nil {
		p = &armcontainerregistry.CredentialSetProperties{}
	}
	ls := strings.ToLower(str(p.LoginServer))
	ev = append(ev, fmt.Sprintf("credential set %s: login server %s, %d credential(s)", name, cmp.Or(ls, "none"), len(p.AuthCredentials)))
	if ls != host && !(dockerHub(ls) && dockerHub(host)) {
		c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("cache rule %s authenticates to %s with credential set %s, which holds credentials for %s: a miss fails with `%s`", ruleLine(s), host, name, cmp.Or(ls, "no login server"), cacheAuthMessage), ev...)
		return audit.WithChange(audit.WithResources(c, rid, csID), report.Change{Resource: rid, Kind: typeCacheRule,
			Action: "give the rule a credential set for " + host, Command: createSet(strings.ReplaceAll(host, ".", "-"))})
	}
	var incomplete, unhealthy []string
	for _, ac := range p.AuthCredentials {
		if ac == nil {
			continue
		}
		cn := string(ptrOr(ac.Name, "Credential1"))
		if str(ac.UsernameSecretIdentifier) == "" || str(ac.PasswordSecretIdentifier) == "" {
			incomplete = append(incomplete, cn)
		}
		if h := ac.CredentialHealth; h != nil && h.Status != nil && *h.Status == armcontainerregistry.CredentialHealthStatusUnhealthy {
			why := strings.Trim(str(h.ErrorCode)+": "+str(h.ErrorMessage), ": ")
			if why != "" {
				why = " (" + why + ")"
			}
			unhealthy = append(unhealthy, cn+" Unhealthy"+why)
		}
	}
	switch {
	case len(p.AuthCredentials) == 0 || len(incomplete) > 0:
		c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("credential set %s of cache rule %s names no username and password secret (%s): a miss fails with `%s`", name, ruleLine(s), cmp.Or(strings.Join(incomplete, ", "), "no credentials"), cacheAuthMessage), ev...)
		return audit.WithChange(audit.WithResources(c, csID, rid), report.Change{Resource: csID, Kind: typeCredSet, Action: "name the Key Vault secrets of the upstream's user name and password",
			Command: fmt.Sprintf("az acr credential-set update -r %s -n %s -u https://VAULT.vault.azure.net/secrets/USERNAME_SECRET -p https://VAULT.vault.azure.net/secrets/PASSWORD_SECRET", reg, name)})
	case len(unhealthy) > 0:
		c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("credential set %s of cache rule %s is %s: ACR cannot sign in to %s with it, and a miss fails with `%s`", name, ruleLine(s), strings.Join(unhealthy, "; "), host, cacheAuthMessage), ev...)
		var cmds []string
		for _, sr := range secretsOf(cs) {
			cmds = append(cmds, "az keyvault secret show --id "+sr.URI+" --query attributes")
		}
		cmds = append(cmds, fmt.Sprintf("az acr credential-set update -r %s -n %s -p NEW_PASSWORD_SECRET_URI", reg, name))
		return audit.WithChange(audit.WithResources(c, csID, rid), report.Change{Resource: csID, Kind: typeCredSet,
			Action:  "check the secrets are enabled and unexpired (their attributes, never their values) and that the set's identity may read them; store a valid access token and update the set",
			Command: strings.Join(cmds, " && ")})
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("cache rule %s authenticates to %s with credential set %s (healthy)", ruleLine(s), host, name), ev...), rid, csID)
}

func ptrOr[T ~string](p *T, def T) T {
	if p == nil || *p == "" {
		return def
	}
	return *p
}

// checkCacheKeyVault: ACR reads the credential set's secrets as the set's
// own managed identity, so each vault must let that identity get secrets:
// on a vault with Azure RBAC a role that reads secret values (Key Vault
// Secrets User, Officer or Administrator) at the vault, the secret or
// above; on a vault with access policies a policy for the identity with
// the secrets permission get.
func checkCacheKeyVault(m *Model, _ *nodeSubnet) report.CheckResult {
	s, r := m.cacheSkip()
	if r != nil {
		return *r
	}
	if s.credID == "" {
		return audit.Skip(fmt.Sprintf("cache rule %s has no credential set: no Key Vault secret is read", ruleLine(s)))
	}
	if !m.CredSetsKnown {
		return audit.MissingResult(FileCredSets, " cache rule "+str(s.rule.Name)+"'s credential set", cmdCredSets(m.RegistryName()))
	}
	cs := s.credSet
	if cs == nil {
		return audit.Skip("credential set " + lastName(s.credID) + " does not exist (cache-credential-set)")
	}
	name, csID := str(cs.Name), cmp.Or(str(cs.ID), s.credID)
	principal := principalOf(cs)
	if principal == "" {
		c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("credential set %s has no managed identity: ACR reads its Key Vault secrets as that identity, and a miss fails with `%s`", name, cacheAuthMessage))
		return audit.WithChange(audit.WithResources(c, csID), report.Change{Resource: csID, Kind: typeCredSet, Action: "recreate the credential set (az acr credential-set create gives it a system-assigned identity) and grant that identity the secrets",
			Command: fmt.Sprintf("az acr credential-set show -r %s -n %s --query identity", m.RegistryName(), name)})
	}
	var ev, undecided []string
	for _, v := range vaultsOf(cs) {
		kv := m.Vaults[v]
		if kv == nil {
			undecided = append(undecided, fmt.Sprintf("vault %s is not described (%s: %s)", v, FileVault(v), cmdVault(v)))
			continue
		}
		ok, line, res := m.vaultAllows(kv, v, principal)
		ev = append(ev, line)
		switch {
		case res != nil:
			return *res
		case ok:
		default:
			c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("credential set %s's identity %s may not read its secrets in vault %s (%s): ACR cannot sign in to the source, and a miss fails with `%s`", name, principal, v, line, cacheAuthMessage), ev...)
			return audit.WithChange(audit.WithResources(c, str(kv.ID), csID), vaultChange(kv, v, principal))
		}
	}
	if len(undecided) > 0 {
		return audit.WithResources(audit.Warn(verdict.ConditionRegistry, fmt.Sprintf("credential set %s: %s", name, strings.Join(undecided, "; ")), ev...), csID)
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("credential set %s's identity %s may read its secrets (%s)", name, principal, strings.Join(ev, "; ")), ev...), csID)
}

// vaultAllows says whether the principal may get the vault's secrets, the
// line that says why, or the result when it cannot be decided.
func (m *Model) vaultAllows(kv *KeyVault, v, principal string) (bool, string, *report.CheckResult) {
	vid := str(kv.ID)
	if !rbacVault(kv) {
		if kv.Properties != nil {
			for _, ap := range kv.Properties.AccessPolicies {
				if ap == nil || !strings.EqualFold(str(ap.ObjectID), principal) || ap.Permissions == nil {
					continue
				}
				for _, p := range ap.Permissions.Secrets {
					if strings.EqualFold(p, "get") || strings.EqualFold(p, "all") {
						return true, fmt.Sprintf("vault %s: an access policy gives it secrets %s", v, strings.Join(ap.Permissions.Secrets, ", ")), nil
					}
				}
				return false, fmt.Sprintf("vault %s: its access policy gives secrets %s, without get", v, cmp.Or(strings.Join(ap.Permissions.Secrets, ", "), "nothing")), nil
			}
		}
		return false, fmt.Sprintf("vault %s uses access policies and none is for the identity", v), nil
	}
	roles, known := m.VaultRoles[v]
	if !known {
		r := audit.MissingResult(FileVaultRoles(v), " whether the credential set's identity may read vault "+v+"'s secrets", cmdVaultRoles(vid, principal))
		return false, "", &r
	}
	var custom []string
	for _, ra := range roles {
		p := ra.Properties
		if p == nil || !strings.EqualFold(str(p.PrincipalID), principal) || !scopeCovers(str(p.Scope), vid) && !strings.HasPrefix(strings.ToLower(str(p.Scope)), strings.ToLower(vid)+"/secrets/") {
			continue
		}
		id := strings.ToLower(lastName(str(p.RoleDefinitionID)))
		if rn, ok := vaultSecretRoles[id]; ok || nameIn(vaultSecretRoles, ra.DefinitionName) {
			return true, fmt.Sprintf("vault %s (Azure RBAC): %s at %s", v, cmp.Or(rn, ra.DefinitionName), str(p.Scope)), nil
		}
		_, noSecrets := vaultNoSecretRoles[id]
		if !noSecrets && !nameIn(vaultNoSecretRoles, ra.DefinitionName) && (ra.DefinitionName == "" || !knownNames[strings.ToLower(ra.DefinitionName)]) {
			custom = append(custom, cmp.Or(ra.DefinitionName, id)+" at "+str(p.Scope))
		}
	}
	if len(custom) > 0 {
		r := audit.Warn(verdict.ConditionRegistry, fmt.Sprintf("vault %s (Azure RBAC): the credential set's identity %s holds only role(s) pullpath cannot read (%s): confirm one includes Microsoft.KeyVault/vaults/secrets/getSecret/action", v, principal, strings.Join(custom, "; ")))
		return false, "", &r
	}
	return false, fmt.Sprintf("vault %s uses Azure RBAC and the identity holds no Key Vault secrets role on it", v), nil
}

func vaultChange(kv *KeyVault, v, principal string) report.Change {
	vid := str(kv.ID)
	if rbacVault(kv) {
		return report.Change{Resource: vid, Kind: typeVault, Action: "grant the credential set's identity Key Vault Secrets User on the vault",
			Command: fmt.Sprintf("az role assignment create --assignee-object-id %s --assignee-principal-type ServicePrincipal --role \"Key Vault Secrets User\" --scope %s", principal, vid)}
	}
	return report.Change{Resource: vid, Kind: typeVault, Action: "give the credential set's identity an access policy with secrets get",
		Command: fmt.Sprintf("az keyvault set-policy --name %s --object-id %s --secret-permissions get", v, principal)}
}
