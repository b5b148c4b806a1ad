// Package depguard holds no code: its test keeps node-side packages (the
// ones that run in a Pod on every node: the walk, the network checks, the
// runtime's configuration, the monitor agent) from linking what belongs on
// the cluster or cloud side: cobra, client-go and the Kubernetes API
// machinery, YAML, the printers, any cloud SDK; and keeps the Kubernetes
// client out of the lab's schema and runner (internal/lab/cluster is the
// lab's only client).
package depguard
