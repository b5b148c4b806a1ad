// Package monitor is the node agent behind `pullpath monitor`: it walks the
// pull path of a few images from the node it runs on, on a schedule, and
// exports the verdicts as Prometheus metrics, as a small JSON status, and as
// Kubernetes Events on its Node when the verdict changes.
//
// It is node-side code: it links internal/pull, netcheck, runtimecfg and
// nodeplace and the Prometheus client, and talks to the Kubernetes API (its
// own Node, Events, the workload list for --from-cluster) with a small REST
// client over net/http and the service-account token, not client-go: the
// agent runs on every node, and what it maps is paid for on every node.
package monitor
