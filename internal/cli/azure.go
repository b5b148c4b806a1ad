package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/audit"
	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

var azureLong = `Audit the AKS node path to ACR, pool by pool, from the subscription's
configuration, and name the object to change.

An ACR pull uses several hosts: the login server REGISTRY.azurecr.io, and the
data endpoints REGISTRY.REGION.data.azurecr.io (one per region and
geo-replica) that serve the layers (or *.blob.core.windows.net when dedicated
data endpoints are off and there is no private endpoint). For every node
subnet (the distinct agentPoolProfiles[].vnetSubnetId) the audit checks, as
Azure evaluates them, in the order the pull needs them:

  route              the node NIC's effective routes, longest prefix first, to
                     each private endpoint address (VnetLocal, VNetPeering,
                     VirtualNetworkGateway, VirtualAppliance vs None; a route
                     table with disableBgpRoutePropagation hiding VPN routes)
  peering            Connected, useRemoteGateways, allowForwardedTraffic on the
                     cluster side (the hub side and the far side's return route
                     are named, since they are outside the contract)
  nsg-egress-443     outbound TCP 443 to each address, rules in priority order
                     with service tags and the default rules
  dns-servers        Azure-provided DNS, or custom servers the nodes can reach
  dns-zone-link      privatelink.azurecr.io linked to the VNet the nodes
                     resolve from
  dns-records        an A record for the registry and every data endpoint at
                     the private endpoint's address (customDnsConfigs)
  private-endpoint   connections Approved (Pending names both ends), covering
                     every host
  public-access      publicNetworkAccess and the network rule set when nodes
                     go public
  http-proxy         the cluster's httpProxyConfig, host by host as containerd
                     decides it (noProxy): a private endpoint's host sent
                     through the proxy warns
  identity-acrpull   the kubelet identity holds AcrPull (or a role that
                     includes pull; the repository reader on an ABAC registry)
                     at the registry's scope or above
  cache-credential-set  for an IMAGE an artifact cache rule serves: the rule's
                     credential set exists, holds credentials for its source
                     and is healthy (Docker Hub without one warns: its pull
                     limit answers "too many requests to source registry")
  cache-keyvault-access the credential set's identity may get its Key Vault
                     secrets (an access policy with get, or Key Vault Secrets
                     User on an RBAC vault)

A failing pool is shown beside a healthy one, check by check; a fault that
fails every pool alike (an identity, the registry) is called one cause.
docs/azure.md lists the files --from reads and the read-only role live mode
needs.

The registry is the image's (REGISTRY.azurecr.io/REPO:TAG); --registry
overrides it; with neither, the one the kubelet identity holds a role on.

Exit codes (audit): the dominant condition of the failing pools
` + exitHelp(exitRows(0, 1, 2, 3, 4, 6, 11)...)

const azureAuditExample = `  # live, with DefaultAzureCredential (env, workload identity, managed identity, az login)
  pullpath azure audit contosoacr.azurecr.io/shop/web:1.4 --resource-group rg-aks --name aks-prod
  pullpath azure audit -g rg-aks -n aks-prod --subscription 3f2b6c1e-... --registry contosoacr -o json

  # offline, from a folder of Azure CLI JSON (docs/azure.md lists the files)
  pullpath azure audit contosoacr.azurecr.io/shop/web:1.4 --from ./aks-prod-bundle

  # focus on the node and host a probe found failing
  pullpath probe contosoacr.azurecr.io/app:1 -o json > probe.json
  pullpath azure audit --from ./aks-prod-bundle --probe-report probe.json`

const azureCollectExample = `  # write the files --from reads, to replay offline or attach to a ticket
  pullpath azure collect contosoacr.azurecr.io/shop/web:1.4 -g rg-aks -n aks-prod --out ./aks-prod-bundle
  pullpath azure audit contosoacr.azurecr.io/shop/web:1.4 --from ./aks-prod-bundle`

func newAzureCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   string(nodeplace.Azure),
		Short: "Audit the AKS node path to ACR, pool by pool",
		Long:  azureLong,
	}
	cmd.AddCommand(newAzureAuditCommand(s), newAzureCollectCommand(s))
	return cmd
}

// azureConn are the live-mode flags shared by audit and collect.
type azureConn struct {
	resourceGroup, name, subscription, registry string
}

func (c *azureConn) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&c.resourceGroup, "resource-group", "g", "", "the AKS cluster's resource group")
	cmd.Flags().StringVarP(&c.name, "name", "n", "", "the AKS cluster's name")
	cmd.Flags().StringVar(&c.subscription, "subscription", "", "subscription id (default: $AZURE_SUBSCRIPTION_ID)")
	cmd.Flags().StringVar(&c.registry, "registry", "", "the ACR registry's name or login server (default: the IMAGE's, else the one the kubelet identity holds a role on, or the subscription's only one)")
}

func (c *azureConn) complete() {
	if c.subscription == "" {
		c.subscription = os.Getenv("AZURE_SUBSCRIPTION_ID")
	}
}

func (c *azureConn) set() bool {
	return c.resourceGroup != "" || c.name != "" || c.subscription != "" || c.registry != ""
}

func (c *azureConn) validate() error {
	switch {
	case c.resourceGroup == "" || c.name == "":
		return errors.New("want --resource-group RG and --name CLUSTER (live) or --from DIR (offline)")
	case c.subscription == "":
		return errors.New("want --subscription ID (or $AZURE_SUBSCRIPTION_ID)")
	}
	return nil
}

// azureARM points live mode elsewhere (tests: a loopback ARM server with a
// static credential); nil means Azure's public cloud and
// DefaultAzureCredential.
var azureARM struct {
	options    *arm.ClientOptions
	credential azcore.TokenCredential
}

// live is the live-mode options: azureARM's, or Azure's public cloud with
// DefaultAzureCredential (azaudit.Collect's default).
func (c *azureConn) live(image string) azaudit.LiveOptions {
	registry := c.registry
	if img, err := azaudit.ParseImage(image); err == nil && registry == "" {
		registry = img.LoginServer
	}
	return azaudit.LiveOptions{Subscription: c.subscription, ResourceGroup: c.resourceGroup, Cluster: c.name, Registry: registry,
		Image: image, Credential: azureARM.credential, ClientOptions: azureARM.options}
}

// azureImage reads the IMAGE argument, when given.
func azureImage(args []string) (string, error) {
	if len(args) == 0 {
		return "", nil
	}
	_, err := azaudit.ParseImage(args[0])
	return args[0], err
}

type azureAuditOptions struct {
	out         output
	conn        azureConn
	from        string
	probeReport string
	image       string
	stdout      io.Writer
	stderr      io.Writer
}

func newAzureAuditCommand(s Streams) *cobra.Command {
	o := &azureAuditOptions{stdout: s.Out, stderr: s.ErrOut}
	cmd := &cobra.Command{
		Use:     "audit [IMAGE]",
		Short:   "Check every pool's path to ACR and name the object to change",
		Long:    azureLong,
		Example: azureAuditExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runE(o),
	}
	o.out.addFlag(cmd)
	o.conn.addFlags(cmd)
	cmd.Flags().StringVar(&o.from, "from", "", "audit offline from a folder of Azure CLI JSON outputs (docs/azure.md)")
	cmd.Flags().StringVar(&o.probeReport, "probe-report", "", "`FILE` written by pullpath probe -o json: the probed node's pool first, beside the others, and the check that explains what the probe saw")
	return cmd
}

func (o *azureAuditOptions) Complete(_ *cobra.Command, args []string) error {
	var err error
	o.image, err = azureImage(args)
	if o.from == "" {
		o.conn.complete()
	}
	return err
}

func (o *azureAuditOptions) Validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	if o.from != "" {
		if o.conn.set() {
			return errors.New("--from audits a saved folder: it takes no --resource-group, --name, --subscription or --registry (the folder's acr-show.json is the registry)")
		}
		if st, err := os.Stat(o.from); err != nil || !st.IsDir() {
			return fmt.Errorf("--from %s: not a folder: want the folder `pullpath azure collect --out` wrote, or one of Azure CLI JSON files (docs/azure.md)", o.from)
		}
		return nil
	}
	return o.conn.validate()
}

func (o *azureAuditOptions) Run(ctx context.Context) error {
	f, err := probeFocus(o.probeReport, audit.Focus{Image: o.image})
	if err != nil {
		return err
	}
	var r *report.AuditReport
	if o.from != "" {
		r, err = azaudit.FromFolder(o.from, f)
	} else {
		r, err = azaudit.Live(ctx, o.conn.live(o.image), f)
	}
	if err != nil {
		return errors.New(oneLineErr(err))
	}
	return o.out.finish(o.stdout, r)
}

type azureCollectOptions struct {
	conn   azureConn
	out    string
	image  string
	stdout io.Writer
}

func newAzureCollectCommand(s Streams) *cobra.Command {
	o := &azureCollectOptions{stdout: s.Out}
	cmd := &cobra.Command{
		Use:     "collect [IMAGE]",
		Short:   "Write the Azure CLI JSON files that `azure audit --from` reads",
		Long:    "Call the audit's read-only ARM APIs once and write each answer as the Azure CLI prints it (one file per command, properties flattened, 2-space indent, sorted keys), so a live run can be replayed offline with `pullpath azure audit IMAGE --from DIR`. IMAGE's login server names the registry (--registry overrides it).",
		Example: azureCollectExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runE(o),
	}
	o.conn.addFlags(cmd)
	cmd.Flags().StringVar(&o.out, "out", "", "folder to write (created if missing)")
	return cmd
}

func (o *azureCollectOptions) Complete(_ *cobra.Command, args []string) error {
	var err error
	o.image, err = azureImage(args)
	o.conn.complete()
	return err
}

func (o *azureCollectOptions) Validate() error {
	if o.out == "" {
		return errors.New("want --out DIR")
	}
	return o.conn.validate()
}

func (o *azureCollectOptions) Run(ctx context.Context) error {
	return collect(ctx, o.stdout, nodeplace.Azure, o.conn.live(o.image), o.out, o.image)
}
