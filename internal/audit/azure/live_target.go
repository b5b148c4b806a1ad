package azure

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/units"
)

// LiveTarget is what a live audit reads, found from the nodes: who the
// credential is, and the AKS cluster whose node resource group holds the
// nodes' scale sets.
type LiveTarget struct {
	Identity      string // from the token's claims: a user, an application or a managed identity
	Subscription  string
	ResourceGroup string // the cluster's, not the node resource group
	Cluster       string
	// Credential is the one whose token was checked: Live takes it.
	Credential azcore.TokenCredential
}

// Chain names what DefaultAzureCredential looks at.
const Chain = "DefaultAzureCredential (environment, workload identity, managed identity, Azure CLI, Azure Developer CLI)"

// Permissions is what the live audit reads with (docs/azure.md).
const Permissions = "Reader on the cluster's, its node resource group's, the VNet's, the private DNS zone's and the registry's resource groups, and Microsoft.Network/networkInterfaces/effectiveRouteTable/action"

const tokenTimeout = 15 * time.Second

var actionRE = regexp.MustCompile(`(?i)perform action '([^']+)'`)

// FindTarget checks that the credential (o.Credential, else
// DefaultAzureCredential) gives a Resource Manager token and reads who it
// is from the token's claims, then finds the AKS cluster whose node
// resource group is nodeRG among the subscription's clusters (AKS names
// it MC_RG_CLUSTER_REGION by default, but any name can be set: the list
// decides, not the name). With o.ResourceGroup and o.Cluster set it lists
// nothing. No credential, or one Entra ID refuses, is a
// *audit.NoCredentialsError; a refused list a *audit.DeniedError.
func FindTarget(ctx context.Context, o LiveOptions, nodeRG string) (LiveTarget, error) {
	t := LiveTarget{Subscription: o.Subscription, ResourceGroup: o.ResourceGroup, Cluster: o.Cluster, Credential: o.Credential}
	if t.Credential == nil {
		dc, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return t, &audit.NoCredentialsError{Cloud: nodeplace.Azure, Chain: Chain, Reason: units.Clip(err.Error(), 160)}
		}
		t.Credential = dc
	}
	tctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	tok, err := t.Credential.GetToken(tctx, policy.TokenRequestOptions{Scopes: []string{armAudience(o.ClientOptions) + "/.default"}})
	cancel()
	if err != nil {
		return t, &audit.NoCredentialsError{Cloud: nodeplace.Azure, Chain: Chain, Reason: units.Clip(err.Error(), 160)}
	}
	t.Identity = tokenIdentity(tok.Token)
	if t.ResourceGroup != "" && t.Cluster != "" {
		return t, nil
	}
	if t.Subscription == "" {
		return t, errors.New("no subscription: the nodes' providerID names none")
	}
	f, err := armcontainerservice.NewClientFactory(t.Subscription, t.Credential, o.ClientOptions)
	if err != nil {
		return t, err
	}
	call := "az aks list --subscription " + t.Subscription
	pager := f.NewManagedClustersClient().NewListPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return t, deniedOr(err, call, "Microsoft.ContainerService/managedClusters/read", t.Identity)
		}
		for _, mc := range page.Value {
			if mc == nil || mc.ID == nil || mc.Name == nil || mc.Properties == nil || mc.Properties.NodeResourceGroup == nil {
				continue
			}
			if strings.EqualFold(*mc.Properties.NodeResourceGroup, nodeRG) {
				t.ResourceGroup, t.Cluster = resourceGroupOf(*mc.ID), *mc.Name
				return t, nil
			}
		}
	}
	return t, fmt.Errorf("%s: no AKS cluster has the node resource group %s (the credential sees another tenant or subscription?)", call, nodeRG)
}

// armAudience is the Resource Manager audience of the client options'
// cloud (public Azure by default).
func armAudience(o *arm.ClientOptions) string {
	c := cloud.AzurePublic
	if o != nil && o.Cloud.Services != nil {
		c = o.Cloud
	}
	if s, ok := c.Services[cloud.ResourceManager]; ok && s.Audience != "" {
		return strings.TrimSuffix(s.Audience, "/")
	}
	return "https://management.azure.com"
}

// tokenIdentity names who a token is for from its claims (read, not
// verified: ARM verifies it): a user's upn, an application's appid, a
// managed identity's object id, with the tenant. The token itself is never
// kept or printed.
func tokenIdentity(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "an identity whose token names none"
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "an identity whose token names none"
	}
	var c struct {
		UPN        string `json:"upn"`
		UniqueName string `json:"unique_name"`
		AppID      string `json:"appid"`
		AzpID      string `json:"azp"`
		OID        string `json:"oid"`
		TID        string `json:"tid"`
		IDType     string `json:"idtyp"`
	}
	if json.Unmarshal(b, &c) != nil {
		return "an identity whose token names none"
	}
	who := ""
	switch {
	case c.UPN != "":
		who = "user " + c.UPN
	case c.UniqueName != "" && !strings.Contains(c.UniqueName, "/"):
		who = "user " + c.UniqueName
	case c.AppID != "" || c.AzpID != "":
		who = "application " + firstOf(c.AppID, c.AzpID)
		if c.OID != "" {
			who += " (object " + c.OID + ")"
		}
	case c.OID != "":
		who = "object " + c.OID
	default:
		return "an identity whose token names none"
	}
	if c.TID != "" {
		who += " in tenant " + c.TID
	}
	return who
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// deniedOr is a *audit.DeniedError when ARM refused the call for want of
// a role (the action as ARM names it, else action), a
// *audit.NoCredentialsError when it refused the token, else the call's
// one-line error.
func deniedOr(err error, call, action, identity string) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		switch {
		case re.StatusCode == 403 || re.ErrorCode == "AuthorizationFailed":
			if m := actionRE.FindStringSubmatch(err.Error()); m != nil {
				action = m[1]
			}
			return &audit.DeniedError{Cloud: nodeplace.Azure, Call: call, Permission: action, Identity: identity, Reason: armError(err)}
		case re.StatusCode == 401:
			return &audit.NoCredentialsError{Cloud: nodeplace.Azure, Chain: Chain, Reason: "Resource Manager refuses the token: " + armError(err)}
		}
	}
	return fmt.Errorf("%s: %s", call, armError(err))
}
