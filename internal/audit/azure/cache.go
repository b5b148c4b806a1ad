package azure

import (
	"fmt"
	"io/fs"
	"net/url"
	"reflect"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"

	"github.com/pullpath/pullpath/internal/report"
)

// ACR's artifact cache (issue 39): a cache rule maps a source repository
// (docker.io/library/nginx, or a wildcard docker.io/library/*) to a
// target repository of the registry (nginx, library/*); a pull of the
// target that misses makes ACR fetch the source, with the rule's
// credential set when it has one: a username and a password held as Key
// Vault secrets that ACR reads as the credential set's own managed
// identity (its access policy or a Key Vault secrets role on the vault).
// The checks read these files only for an image a rule serves.
const (
	FileCacheRules = "acr-cache-list.json"
	FileCredSets   = "acr-credential-set-list.json"
	filePrefVault  = "keyvault-show-"
	filePrefVRoles = "role-assignment-list-keyvault-"
	typeCacheRule  = "Microsoft.ContainerRegistry/registries/cacheRules"
	typeCredSet    = "Microsoft.ContainerRegistry/registries/credentialSets"
	typeVault      = "Microsoft.KeyVault/vaults"
	// VaultAPIVersion is the Key Vault resource provider's API version
	// collect reads vaults with.
	VaultAPIVersion = "2023-07-01"
)

// FileVault is `az keyvault show -n VAULT`; FileVaultRoles the role
// assignments of a credential set's identity on that vault.
func FileVault(name string) string      { return filePrefVault + strings.ToLower(name) + ".json" }
func FileVaultRoles(name string) string { return filePrefVRoles + strings.ToLower(name) + ".json" }

func cmdCacheRules(reg string) string { return "az acr cache list -r " + reg }
func cmdCredSets(reg string) string   { return "az acr credential-set list -r " + reg }
func cmdVault(name string) string     { return "az keyvault show -n " + name }
func cmdVaultRoles(vaultID, principal string) string {
	if vaultID == "" {
		vaultID = "VAULT_ID"
	}
	return fmt.Sprintf("az role assignment list --scope %s --include-inherited --assignee %s", vaultID, principal)
}

// KeyVault is `az keyvault show`'s output (the vault's ARM resource,
// properties nested as the CLI prints it): what decides who may read its
// secrets. The module with Key Vault's management types is not among this
// build's, so the fields the audit reads are modelled here.
type KeyVault struct {
	ID         *string             `json:"id,omitempty"`
	Name       *string             `json:"name,omitempty"`
	Type       *string             `json:"type,omitempty"`
	Location   *string             `json:"location,omitempty"`
	Properties *KeyVaultProperties `json:"properties,omitempty"`
}

type KeyVaultProperties struct {
	VaultURI                *string         `json:"vaultUri,omitempty"`
	TenantID                *string         `json:"tenantId,omitempty"`
	EnableRbacAuthorization *bool           `json:"enableRbacAuthorization,omitempty"`
	AccessPolicies          []*AccessPolicy `json:"accessPolicies,omitempty"`
}

type AccessPolicy struct {
	TenantID      *string               `json:"tenantId,omitempty"`
	ObjectID      *string               `json:"objectId,omitempty"`
	ApplicationID *string               `json:"applicationId,omitempty"`
	Permissions   *AccessPolicyPermsSet `json:"permissions,omitempty"`
}

type AccessPolicyPermsSet struct {
	Secrets      []string `json:"secrets,omitempty"`
	Keys         []string `json:"keys,omitempty"`
	Certificates []string `json:"certificates,omitempty"`
}

// cacheModel is what the model holds of the artifact cache.
type cacheModel struct {
	CacheRules      []*armcontainerregistry.CacheRule
	CacheRulesKnown bool
	CredentialSets  []*armcontainerregistry.CredentialSet
	CredSetsKnown   bool
	Vaults          map[string]*KeyVault        // by lower-cased name
	VaultRoles      map[string][]RoleAssignment // by lower-cased vault name
	// image is the audit's image, when it is in this registry.
	image *Image
}

// matchRule is the cache rule whose target repository serves repo: the
// exact one, else the longest wildcard (TARGET/*), and the source
// repository the pull maps to.
func matchRule(rules []*armcontainerregistry.CacheRule, repo string) (*armcontainerregistry.CacheRule, string) {
	var best *armcontainerregistry.CacheRule
	bestLen, source := -1, ""
	for _, r := range rules {
		if r == nil || r.Properties == nil {
			continue
		}
		t := strings.ToLower(str(r.Properties.TargetRepository))
		s := str(r.Properties.SourceRepository)
		if t == strings.ToLower(repo) {
			return r, s
		}
		if p, ok := strings.CutSuffix(t, "*"); ok && strings.HasPrefix(strings.ToLower(repo), p) && len(p) > bestLen {
			best, bestLen = r, len(p)
			source = strings.TrimSuffix(s, "*") + repo[len(p):]
		}
	}
	return best, source
}

// sourceHost is the upstream registry of a source repository
// (docker.io/library/nginx -> docker.io).
func sourceHost(source string) string {
	h, _, _ := strings.Cut(source, "/")
	return strings.ToLower(h)
}

// dockerHub: the source is Docker Hub, whose anonymous pulls are rate
// limited by source address.
func dockerHub(host string) bool {
	switch host {
	case "docker.io", "registry-1.docker.io", "index.docker.io", "registry.hub.docker.com":
		return true
	}
	return false
}

// credentialSet is the credential set an id names, from the list.
func (m *Model) credentialSet(id string) *armcontainerregistry.CredentialSet {
	for _, cs := range m.CredentialSets {
		if cs != nil && (sameID(str(cs.ID), id) || str(cs.ID) == "" && strings.EqualFold(str(cs.Name), lastName(id))) {
			return cs
		}
	}
	return nil
}

// secretRef is one Key Vault secret a credential set names.
type secretRef struct {
	URI, Vault, Name, Role string // Role: username or password
}

// vaultOfSecret reads a Key Vault secret URI
// (https://VAULT.vault.azure.net/secrets/NAME[/VERSION]).
func vaultOfSecret(uri string) (vault, name string, ok bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return "", "", false
	}
	vault, _, _ = strings.Cut(strings.ToLower(u.Hostname()), ".")
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "secrets" || vault == "" {
		return "", "", false
	}
	return vault, parts[1], true
}

// secretsOf are the secrets of a credential set's credentials, in order.
func secretsOf(cs *armcontainerregistry.CredentialSet) []secretRef {
	var out []secretRef
	if cs == nil || cs.Properties == nil {
		return nil
	}
	for _, ac := range cs.Properties.AuthCredentials {
		if ac == nil {
			continue
		}
		for _, s := range []secretRef{{URI: str(ac.UsernameSecretIdentifier), Role: "username"}, {URI: str(ac.PasswordSecretIdentifier), Role: "password"}} {
			if v, n, ok := vaultOfSecret(s.URI); ok {
				s.Vault, s.Name = v, n
			}
			out = append(out, s)
		}
	}
	return out
}

// vaultsOf are the vault names a credential set's secrets live in.
func vaultsOf(cs *armcontainerregistry.CredentialSet) []string {
	var out []string
	for _, s := range secretsOf(cs) {
		if s.Vault != "" && !containsFold(out, s.Vault) {
			out = append(out, s.Vault)
		}
	}
	return out
}

func principalOf(cs *armcontainerregistry.CredentialSet) string {
	if cs == nil || cs.Identity == nil {
		return ""
	}
	return str(cs.Identity.PrincipalID)
}

// servedRule is the cache rule serving the audit's image and its source,
// with the rule's credential set when it names one.
type servedRule struct {
	rule    *armcontainerregistry.CacheRule
	source  string
	credSet *armcontainerregistry.CredentialSet
	credID  string
}

func (m *Model) served() *servedRule {
	if m.image == nil || !m.CacheRulesKnown {
		return nil
	}
	r, src := matchRule(m.CacheRules, m.image.Repository)
	if r == nil {
		return nil
	}
	s := &servedRule{rule: r, source: src, credID: str(r.Properties.CredentialSetResourceID)}
	if s.credID != "" {
		s.credSet = m.credentialSet(s.credID)
	}
	return s
}

// needsCache: the rules when an image is named; the credential sets when
// the rule names one; each vault of its secrets, and the identity's role
// assignments on it.
func needsCache(m *Model, _ *nodeSubnet) []string {
	if m.image == nil {
		return nil
	}
	out := []string{FileCacheRules}
	s := m.served()
	if s == nil || s.credID == "" {
		return out
	}
	out = append(out, FileCredSets)
	for _, v := range vaultsOf(s.credSet) {
		out = append(out, FileVault(v))
	}
	return out
}

func needsVaultRoles(m *Model, n *nodeSubnet) []string {
	out := needsCache(m, n)
	if s := m.served(); s != nil && s.credSet != nil {
		for _, v := range vaultsOf(s.credSet) {
			if kv := m.Vaults[v]; kv != nil && rbacVault(kv) {
				out = append(out, FileVaultRoles(v))
			}
		}
	}
	return out
}

func rbacVault(kv *KeyVault) bool {
	return kv.Properties != nil && kv.Properties.EnableRbacAuthorization != nil && *kv.Properties.EnableRbacAuthorization
}

// cache reads the artifact cache's files: the rules, the credential sets,
// and for each vault their secrets name the vault and its role
// assignments. None is required and none is warned about when absent: a
// check for an image a rule serves names what it lacks.
func (l *loader) cache() {
	m, reg := l.m, l.m.RegistryName()
	m.Vaults, m.VaultRoles = map[string]*KeyVault{}, map[string][]RoleAssignment{}
	present := func(name, cmd string) bool {
		if _, err := fs.Stat(l.fsys, name); err != nil {
			m.given[name], m.cmds[name] = false, cmd
			return false
		}
		return true
	}
	var rules []*armcontainerregistry.CacheRule
	if present(FileCacheRules, cmdCacheRules(reg)) {
		if ok, _ := l.list(FileCacheRules, typeCacheRule, cmdCacheRules(reg), reflect.TypeOf(rules), &rules); ok {
			m.CacheRules, m.CacheRulesKnown = rules, true
		}
	}
	var sets []*armcontainerregistry.CredentialSet
	if present(FileCredSets, cmdCredSets(reg)) {
		if ok, _ := l.list(FileCredSets, typeCredSet, cmdCredSets(reg), reflect.TypeOf(sets), &sets); ok {
			m.CredentialSets, m.CredSetsKnown = sets, true
		}
	}
	for _, cs := range m.CredentialSets {
		for _, v := range vaultsOf(cs) {
			if _, done := m.Vaults[v]; done {
				continue
			}
			m.Vaults[v] = nil
			var kv KeyVault
			if present(FileVault(v), cmdVault(v)) {
				if ok, _ := l.optional(FileVault(v), typeVault, cmdVault(v), &kv); ok {
					m.Vaults[v] = &kv
				}
			}
			cmd := cmdVaultRoles(str(kv.ID), principalOf(cs))
			if present(FileVaultRoles(v), cmd) {
				if ras, ok := l.roleFile(FileVaultRoles(v), cmd); ok {
					m.VaultRoles[v] = ras
				}
			}
		}
	}
	for v, kv := range m.Vaults {
		if kv == nil {
			delete(m.Vaults, v)
		}
	}
}

// cacheWarnings name, for an image, the cache's files its checks need and
// were not given, with their commands.
func (m *Model) cacheWarnings() []report.AuditWarning {
	var out []report.AuditWarning
	for _, f := range needsVaultRoles(m, nil) {
		if !m.Given(f) {
			out = append(out, report.AuditWarning{File: f, Command: m.Collect(f),
				Message: f + " not given: the artifact cache checks that read it warn instead of deciding"})
		}
	}
	return out
}
