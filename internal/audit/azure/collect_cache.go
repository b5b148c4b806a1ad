package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/authorization/armauthorization/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
)

// cache collects the artifact cache for the image (LiveOptions.Image) when
// it is in the registry: the cache rules; when a rule serves the image and
// names a credential set, the credential sets, each vault its secrets live
// in (the subscription's vaults, by name, as `az keyvault show -n` finds
// them) and the set's identity's role assignments on the vault. Secret
// values are never read.
func (c *collector) cache(ctx context.Context, reg armcontainerregistry.Registry) error {
	img, err := ParseImage(c.o.Image)
	if err != nil || reg.Properties == nil || !strings.EqualFold(str(reg.Properties.LoginServer), img.LoginServer) {
		return nil
	}
	regID, name := str(reg.ID), str(reg.Name)
	af, err := c.acrFactory(subscriptionOf(regID))
	if err != nil {
		return err
	}
	rules, err := allPages(ctx, af.NewCacheRulesClient().NewListPager(resourceGroupOf(regID), name, nil),
		func(p armcontainerregistry.CacheRulesClientListResponse) []*armcontainerregistry.CacheRule {
			return p.Value
		})
	if err != nil {
		c.warn("az acr cache list: "+armError(err), FileCacheRules, cmdCacheRules(name))
		return nil
	}
	if err := c.put(FileCacheRules, rules); err != nil {
		return err
	}
	rule, _ := matchRule(rules, img.Repository)
	if rule == nil || str(rule.Properties.CredentialSetResourceID) == "" {
		return nil
	}
	sets, err := allPages(ctx, af.NewCredentialSetsClient().NewListPager(resourceGroupOf(regID), name, nil),
		func(p armcontainerregistry.CredentialSetsClientListResponse) []*armcontainerregistry.CredentialSet {
			return p.Value
		})
	if err != nil {
		c.warn("az acr credential-set list: "+armError(err), FileCredSets, cmdCredSets(name))
		return nil
	}
	if err := c.put(FileCredSets, sets); err != nil {
		return err
	}
	m := &Model{cacheModel: cacheModel{CredentialSets: sets}}
	cs := m.credentialSet(str(rule.Properties.CredentialSetResourceID))
	if cs == nil {
		return nil
	}
	vaults, err := c.vaults(ctx, subscriptionOf(regID))
	if err != nil {
		for _, v := range vaultsOf(cs) {
			c.warn("az keyvault show: "+armError(err), FileVault(v), cmdVault(v))
		}
		return nil
	}
	for _, v := range vaultsOf(cs) {
		kv, ok := vaults[v]
		if !ok {
			continue // no such vault: the check says so
		}
		data, err := encodeCLI(kv) // az keyvault show prints properties nested
		if err != nil {
			return fmt.Errorf("%s: %v", FileVault(v), err)
		}
		c.files[FileVault(v)] = data
		if p := principalOf(cs); p != "" && rbacVault(kv) {
			// an access-policy vault holds its grants itself
			c.roleList(ctx, FileVaultRoles(v), str(kv.ID), p)
		}
	}
	return nil
}

// vaults lists the subscription's key vaults (Vaults_ListBySubscription)
// through the SDK's ARM pipeline, by lower-cased name.
func (c *collector) vaults(ctx context.Context, sub string) (map[string]*KeyVault, error) {
	cl, err := arm.NewClient("pullpath/keyvault", "v1.0.0", c.o.Credential, c.opts)
	if err != nil {
		return nil, err
	}
	out := map[string]*KeyVault{}
	next := runtime.JoinPaths(cl.Endpoint(), "/subscriptions/"+sub+"/providers/Microsoft.KeyVault/vaults") + "?api-version=" + VaultAPIVersion
	for page := 0; next != "" && page < 100; page++ {
		req, err := runtime.NewRequest(ctx, http.MethodGet, next)
		if err != nil {
			return nil, err
		}
		req.Raw().Header.Set("Accept", "application/json")
		resp, err := cl.Pipeline().Do(req)
		if err != nil {
			return nil, err
		}
		if !runtime.HasStatusCode(resp, http.StatusOK) {
			return nil, runtime.NewResponseError(resp)
		}
		var body struct {
			Value    []*KeyVault `json:"value"`
			NextLink string      `json:"nextLink"`
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxFile))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &body); err != nil {
			return nil, fmt.Errorf("vault list: %v", err)
		}
		for _, kv := range body.Value {
			if kv != nil && kv.Name != nil {
				out[strings.ToLower(*kv.Name)] = kv
			}
		}
		next = body.NextLink
	}
	return out, nil
}

// roleList writes one principal's role assignments at a scope and above,
// as `az role assignment list --scope S --include-inherited --assignee P`.
func (c *collector) roleList(ctx context.Context, file, scope, principal string) {
	f, err := c.authFactory(subscriptionOf(scope))
	if err != nil {
		return
	}
	var ras []*armauthorization.RoleAssignment
	pager := f.NewRoleAssignmentsClient().NewListForScopePager(scope, &armauthorization.RoleAssignmentsClientListForScopeOptions{Filter: to.Ptr(principalFilter(principal))})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			c.warn("az role assignment list: "+armError(err), file, cmdVaultRoles(scope, principal))
			return
		}
		ras = append(ras, page.Value...)
	}
	if data, err := c.roleItems(ctx, f, ras); err == nil {
		c.files[file] = data
	}
}

// allPages is every item of an SDK pager's pages.
func allPages[P, T any](ctx context.Context, pager *runtime.Pager[P], items func(P) []T) ([]T, error) {
	var out []T
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, items(page)...)
	}
	return out, nil
}
