// Package runtimecfg answers what the node's container runtime would answer
// before it sends a single packet, from the files the runtime itself reads,
// by the runtime's own rules. Its files, by question:
//
//   - Which runtime, and where it keeps its configuration: runtime.go (the
//     known layouts: containerd, k3s's and rke2's containerd, CRI-O),
//     runtime_version.go (the version whose rules apply), regconfig.go (the
//     seam between finding the runtime and reading its registry settings).
//   - containerd's configuration as its loader reads it: containerd.go,
//     containerd_load.go (version, imports), containerd_registry.go and
//     containerd_inline.go (config_path folders, inline mirrors).
//   - CRI-O's: crio.go, crio_conf.go, crio_node.go, crio_policy.go, and
//     containers/image's registries.conf and drop-ins (registries_conf.go,
//     registries_match.go), its certs.d (containers_certs.go) and auth files
//     (containers_auth.go).
//   - Which image a reference names (reference.go), which hosts the runtime
//     contacts for it and in which order (hosts.go, chain.go), with which TLS
//     trust (tls.go: hosts.toml, the Docker and containers certs.d layouts).
//   - Which credentials it presents: creds.go, helper.go (a docker
//     config.json and its credential helpers), pullsecret.go (--pull-secret),
//     keyring.go and kubelet.go (the kubelet's keyring and identity),
//     credprovider.go and credplugin.go (kubelet credential provider
//     plugins).
//   - Which proxy it uses: proxy.go, proxy_discover.go, proxy_snapshot.go (the
//     running runtime's environment), systemd_unit.go, systemd_words.go and
//     envfile.go (its unit's Environment= and EnvironmentFile=).
//
// The name says whose configuration it is: the container runtime's (the
// node's /etc/hosts is read by netcheck, etchosts.go). Every setting in a
// report names the file it came from.
//
// Nothing here touches the network. Errors are one line, name the input and
// never carry a secret.
package runtimecfg
