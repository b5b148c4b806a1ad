package azure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/audittest"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// cacheImage is the image the cache fixtures' wildcard rule serves.
const cacheImage = "contosoacr.azurecr.io/library/nginx:1.27"

const (
	cacheRuleID = acrID + "/cacheRules/dockerhub-library"
	credSetID   = acrID + "/credentialSets/dockerhub"
	vaultID     = sub + "/resourceGroups/rg-security/providers/Microsoft.KeyVault/vaults/kv-contoso-acr"
	csPrincipal = "8c9d0e1f-2a3b-4c5d-9e6f-7a8b9c0d1e2f"
)

func auditImage(t *testing.T, dir, image string) *report.AuditReport {
	t.Helper()
	m, err := Load(os.DirFS(filepath.Join("testdata", dir)))
	if err != nil {
		t.Fatalf("Load(%s) = %v", dir, err)
	}
	return Audit(m, dir, audit.Focus{Image: image})
}

// Issue 39: the healthy cache accounts (an RBAC vault, an access-policy
// vault) pass every check for the image the rule serves, with no warning;
// another repository, no image, or an anonymous MCR rule skip or pass the
// cache checks saying why.
func TestCacheHealthy(t *testing.T) {
	for _, dir := range []string{"valid-cache-rule", "valid-cache-access-policy"} {
		r := auditImage(t, dir, cacheImage)
		if r.Verdict.Status != report.StepPass || len(r.Warnings) != 0 || len(r.Changes) != 0 {
			t.Errorf("%s: verdict %s (%s), warnings %v, changes %v: want pass, none", dir, r.Verdict.Status, r.Verdict.Summary, r.Warnings, r.Changes)
		}
		for _, s := range r.Subnets {
			for _, c := range s.Checks {
				if (c.ID == CheckCacheCredSet || c.ID == CheckCacheKeyVault) && c.Status != report.StepPass {
					t.Errorf("%s %s %s = %s %q, want pass", dir, s.Name, c.ID, c.Status, c.Summary)
				}
			}
		}
	}
	for _, tc := range []struct{ image, status, summary string }{
		{"contosoacr.azurecr.io/shop/checkout:1.4.2", "skip", "shop/checkout is not served by the artifact cache: no cache rule's target covers it (library/*, dotnet/runtime)"},
		{"", "skip", "no image of this registry named"},
		{"contosoacr.azurecr.io/dotnet/runtime:8.0", "pass", "pulls mcr.microsoft.com anonymously"},
	} {
		r := auditImage(t, "valid-cache-rule", tc.image)
		c := checkOf(t, r, CheckCacheCredSet)
		if string(c.Status) != tc.status || !strings.Contains(c.Summary, tc.summary) {
			t.Errorf("%q: %s %q, want %s %q", tc.image, c.Status, c.Summary, tc.status, tc.summary)
		}
	}
}

func checkOf(t *testing.T, r *report.AuditReport, id string) report.CheckResult {
	t.Helper()
	for _, c := range r.Subnets[0].Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s", id)
	return report.CheckResult{}
}

// Each cache fixture is the healthy cache account with one thing changed:
// its check, and only it, fails (warns) on every pool, naming the object
// and the change; the verdict is the registry's, not the network's.
func TestEachCacheFixtureFailsItsCheckAlone(t *testing.T) {
	for _, tt := range []struct {
		dir, check, summary, resource, command string
	}{
		{"invalid-cache-credential-set-missing", CheckCacheCredSet, "names credential set dockerhub, which registry contosoacr does not have: a miss fails with `authentication required with source registry for cache rule`",
			cacheRuleID, "az acr credential-set create -r contosoacr -n dockerhub -l docker.io"},
		{"invalid-cache-credential-set-login-server", CheckCacheCredSet, "authenticates to docker.io with credential set dockerhub, which holds credentials for ghcr.io",
			cacheRuleID, "az acr cache update -r contosoacr -n dockerhub-library -c docker-io"},
		{"invalid-cache-credentials-unhealthy", CheckCacheCredSet, "credential set dockerhub of cache rule dockerhub-library (library/* -> docker.io/library/*) is Credential1 Unhealthy",
			credSetID, "az keyvault secret show --id https://kv-contoso-acr.vault.azure.net/secrets/dockerhub-user --query attributes"},
		{"invalid-cache-keyvault-no-role", CheckCacheKeyVault, "credential set dockerhub's identity " + csPrincipal + " may not read its secrets in vault kv-contoso-acr (vault kv-contoso-acr uses Azure RBAC and the identity holds no Key Vault secrets role on it)",
			vaultID, `az role assignment create --assignee-object-id ` + csPrincipal + ` --assignee-principal-type ServicePrincipal --role "Key Vault Secrets User" --scope ` + vaultID},
		{"invalid-cache-access-policy-no-get", CheckCacheKeyVault, "its access policy gives secrets list, without get",
			vaultID, "az keyvault set-policy --name kv-contoso-acr --object-id " + csPrincipal + " --secret-permissions get"},
		{"warn-cache-docker-hub-anonymous", CheckCacheCredSet, "pulls Docker Hub anonymously: Docker Hub limits anonymous pulls by source address, and a miss over the limit fails with `too many requests to source registry for cache rule`",
			cacheRuleID, "az acr credential-set create -r contosoacr -n dockerhub -l docker.io"},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			r := auditImage(t, tt.dir, cacheImage)
			want := report.StepFail
			if strings.HasPrefix(tt.dir, "warn-") {
				want = report.StepWarn
			}
			for _, s := range r.Subnets {
				for _, c := range s.Checks {
					bad := c.Status == report.StepFail || c.Status == report.StepWarn
					switch {
					case c.ID == tt.check:
						if c.Status != want || !strings.Contains(c.Summary, tt.summary) {
							t.Errorf("%s %s = %s %q, want %s %q", s.Name, c.ID, c.Status, c.Summary, want, tt.summary)
						}
					case bad:
						t.Errorf("%s %s = %s (%s): only %s should", s.Name, c.ID, c.Status, c.Summary, tt.check)
					}
				}
			}
			found := false
			for _, ch := range r.Changes {
				found = found || ch.Check == tt.check && ch.Resource == tt.resource && strings.Contains(ch.Command, tt.command)
			}
			if !found {
				t.Errorf("changes = %+v, want one for %s on %s with %q", r.Changes, tt.check, tt.resource, tt.command)
			}
			if want == report.StepFail && (r.Verdict.Condition != verdict.ConditionRegistry || r.Verdict.Scope != audit.ScopeEverySubnet || exitCode(r) == 0) {
				t.Errorf("verdict %s %s %s exit %d, want fail registry every-subnet", r.Verdict.Status, r.Verdict.Condition, r.Verdict.Scope, exitCode(r))
			}
			for _, ch := range r.Changes {
				if strings.Contains(ch.Command, "secret show") && !strings.Contains(ch.Command, "--query attributes") {
					t.Errorf("change %q would print a secret's value", ch.Command)
				}
			}
		})
	}
}

// Issue 42 for the cache's files: each removed from the healthy cache
// account, audited for the image the rule serves, fails no pool and a
// warning names it with its command.
func TestCacheMissingFileNeverFails(t *testing.T) {
	for _, dir := range []string{"valid-cache-rule", "valid-cache-access-policy"} {
		audittest.MissingFileNeverFails(t, audittest.Account{Dir: filepath.Join("testdata", dir), From: FromFolder,
			Focus: audit.Focus{Image: cacheImage}, Required: []string{FileAKS, FileACR}})
	}
}

// The vault's roles decide by what they grant: Key Vault Reader reads a
// vault's metadata, never a secret (a fail); an unknown custom role is a
// warn naming the data action to confirm; a Secrets User at the secret's
// own scope is enough.
func TestCacheVaultRoles(t *testing.T) {
	for _, tc := range []struct{ roleID, roleName, scope, status, summary string }{
		{"21090545-7ca7-4776-b22c-e363652d74d2", "Key Vault Reader", vaultID, "fail", "holds no Key Vault secrets role on it"},
		{"0a1b2c3d-1111-2222-3333-444455556666", "acr-cache-secrets", vaultID, "warn", "Microsoft.KeyVault/vaults/secrets/getSecret/action"},
		{"4633458b-17de-408a-b874-0445c86b69e6", "Key Vault Secrets User", vaultID + "/secrets/dockerhub-token", "pass", "Key Vault Secrets User at " + vaultID + "/secrets/dockerhub-token"},
		{"4633458b-17de-408a-b874-0445c86b69e6", "Key Vault Secrets User", sub + "/resourceGroups/rg-other", "fail", "holds no Key Vault secrets role"},
	} {
		dir := t.TempDir()
		src := filepath.Join("testdata", "valid-cache-rule")
		entries, _ := os.ReadDir(src)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(src, e.Name()))
			_ = os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
		ra := `[{"id": "` + tc.scope + `/providers/Microsoft.Authorization/roleAssignments/r1", "principalId": "` + csPrincipal + `", "principalType": "ServicePrincipal",
			"roleDefinitionId": "` + sub + `/providers/Microsoft.Authorization/roleDefinitions/` + tc.roleID + `", "roleDefinitionName": "` + tc.roleName + `", "scope": "` + tc.scope + `", "type": "Microsoft.Authorization/roleAssignments"}]`
		if err := os.WriteFile(filepath.Join(dir, FileVaultRoles("kv-contoso-acr")), []byte(ra), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := FromFolder(dir, audit.Focus{Image: cacheImage})
		if err != nil {
			t.Fatal(err)
		}
		c := checkOf(t, r, CheckCacheKeyVault)
		if string(c.Status) != tc.status || !strings.Contains(c.Summary, tc.summary) {
			t.Errorf("%s at %s: %s %q, want %s %q", tc.roleName, tc.scope, c.Status, c.Summary, tc.status, tc.summary)
		}
	}
}
