// Package runtimecfg answers what the node's container runtime would answer
// before it sends a single packet: which image a reference names
// (reference.go), which hosts the runtime contacts for its registry and with
// which TLS trust (hosts.go, tls.go: containerd's registry config_path with
// hosts.toml, and the Docker certs.d layout), and which credentials it
// presents (creds.go, helper.go: a docker config.json and its credential
// helpers).
//
// The name says whose configuration it is: the container runtime's (the
// node's /etc/hosts is read by netcheck, etchosts.go).
//
// Nothing here touches the network. Errors are one line, name the input and
// never carry a secret.
package runtimecfg
