package azure

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// checkProxy reads the cluster's httpProxyConfig as the nodes' containerd
// gets it: AKS writes HTTP(S)_PROXY and NO_PROXY into the nodes' runtime
// environment (one config for every pool), and containerd, a Go program,
// decides each request with golang.org/x/net/http/httpproxy, the same
// function the probe's walk uses (runtimecfg.ProxySettings.Decide). AKS
// adds its own entries to noProxy (effectiveNoProxy: localhost, the
// cluster's CIDRs, .svc, the metadata and wire-server addresses), never a
// registry name, so noProxy alone decides the pull's hosts.
//
// A host with a private endpoint that goes through the proxy is a warning:
// the proxy resolves and connects it from its own network, so the private
// endpoint is used only if the proxy resolves privatelink.azurecr.io and
// routes to it, and publicNetworkAccess Disabled refuses it otherwise.
func checkProxy(m *Model, n *nodeSubnet) report.CheckResult {
	var pc struct{ http, https, noProxy, ca string }
	if p := m.Cluster.Properties; p != nil && p.HTTPProxyConfig != nil {
		cfg := p.HTTPProxyConfig
		pc.http, pc.https, pc.ca = str(cfg.HTTPProxy), str(cfg.HTTPSProxy), str(cfg.TrustedCa)
		var entries []string
		for _, e := range cfg.NoProxy {
			if e != nil && *e != "" {
				entries = append(entries, *e)
			}
		}
		pc.noProxy = strings.Join(entries, ",")
	}
	if pc.http == "" && pc.https == "" {
		return audit.Skip(fmt.Sprintf("cluster %s has no httpProxyConfig: containerd on the nodes connects to every host directly", str(m.Cluster.Name)))
	}
	s := runtimecfg.ProxySettings{
		HTTP:    runtimecfg.ProxyValue{Value: pc.http, Var: "HTTP_PROXY"},
		HTTPS:   runtimecfg.ProxyValue{Value: pc.https, Var: "HTTPS_PROXY"},
		NoProxy: runtimecfg.ProxyValue{Value: pc.noProxy, Var: "NO_PROXY"},
		Origin:  "httpProxyConfig of " + str(m.Cluster.Name),
	}
	clusterID := str(m.Cluster.ID)
	ev := []string{fmt.Sprintf("httpProxyConfig: httpsProxy %s, httpProxy %s, noProxy %s", proxyShown(pc.https), proxyShown(pc.http), cmp.Or(pc.noProxy, "unknown"))}
	if pc.https == "" {
		ev = append(ev, "only httpProxy is set: Go's httpproxy sends https requests (every request of a pull) direct")
	}
	if pc.ca != "" {
		ev = append(ev, "trustedCa is set: AKS installs it on the nodes, so a TLS-intercepting proxy's certificates verify")
	}
	var private, proxied []string
	for _, h := range n.Hosts {
		name := h.Name
		if name == BlobWildcard {
			name = "account.blob.core.windows.net"
		}
		d := s.Decide(&url.URL{Scheme: "https", Host: name})
		if d.Direct() {
			ev = append(ev, fmt.Sprintf("%s: direct (%s)", h.Name, d.Reason))
			continue
		}
		ev = append(ev, fmt.Sprintf("%s: through %s (%s)", h.Name, redact.ProxyURL(d.Proxy), d.Reason))
		if len(d.IPEntries) > 0 && h.private() {
			ev = append(ev, fmt.Sprintf("noProxy's IP and CIDR entries (%s) never match the name %s, whatever it resolves to", strings.Join(d.IPEntries, ", "), h.Name))
		}
		proxied = append(proxied, h.Name)
		if h.private() {
			private = append(private, h.Name)
		}
	}
	var c report.CheckResult
	switch {
	case len(private) > 0:
		c = audit.WithHost(audit.Warn(verdict.ConditionProxy, fmt.Sprintf("containerd sends %s through the cluster's proxy (no noProxy entry matches), although the registry has a private endpoint for it: the proxy resolves and connects from its own network, so the pull uses the private endpoint only if the proxy resolves privatelink.azurecr.io and routes to it", strings.Join(private, ", ")), ev...), private[0])
		c.Changes = []report.Change{{Resource: clusterID, Kind: "Microsoft.ContainerService/managedClusters",
			Action:  "add .azurecr.io to httpProxyConfig.noProxy (a leading dot covers the login server and every data endpoint; AKS does not support * wildcards there), so the nodes reach the private endpoint directly",
			Command: fmt.Sprintf("az aks update -g %s -n %s --http-proxy-config PROXY_CONFIG.json", resourceGroupOf(clusterID), str(m.Cluster.Name))}}
	case len(proxied) > 0:
		c = audit.Pass(fmt.Sprintf("containerd reaches %s through the cluster's proxy: the proxy must allow CONNECT to each on port 443 (a probe on a node walks it)", strings.Join(proxied, ", ")), ev...)
	default:
		c = audit.Pass("noProxy sends every host of the pull direct: the proxy is not on the pull's path", ev...)
	}
	c.Resources = []string{clusterID}
	return c
}

// proxyShown is a proxy URL without its credentials.
func proxyShown(raw string) string {
	if raw == "" {
		return "unset"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	return redact.ProxyURL(u)
}
