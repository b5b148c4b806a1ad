// Package lab builds a lab scenario (internal/lab/scenario) out of Linux
// network namespaces on one machine and runs it: hosts, subnets, routes and
// firewall rules for real, the lab's services (registry, token service,
// blob host, DNS) run inside them by re-executing pullpath (`pullpath lab
// serve`), `pullpath probe` run in the node's namespace, its verdict judged
// against the scenario's `expect:` block, and everything torn down again.
//
// The lab is three packages, as kind keeps config, actions and providers
// apart:
//
//   - internal/lab/scenario: the scenario file as data (schema, extends:,
//     validation, the expect check, the built-in scenarios in
//     scenario/scenarios/). Pure: it builds and starts nothing and holds no
//     runtime state.
//   - internal/lab (this package): the plumbing and the runner. Build makes
//     the namespaces, veths, bridges, routes and nft rules (netns.go,
//     nft.go; route.go changes a route while the lab runs); prepare writes
//     the services' certificates, storage and configs and the node's files
//     (prepare.go, dnsprep.go, credprovider.go); startServices runs one
//     `lab serve` per host (services.go, serve.go); Start (lab.go) does all
//     of it inside a Session (session.go: the run's prefix and lock,
//     teardown, sweep, lab up's state). Run, Test and Up (runner.go,
//     matrix.go) probe and judge (Judge records each run's result and exit
//     code; ExitCode in exit.go is the lab commands' exit policy); Demo
//     (demo.go) is the rootless loopback demo; Forward and
//     DialInNamespace reach into a namespace from the root one without an
//     interface there.
//   - internal/lab/cluster: a scenario's `cluster:` section (a real control
//     plane, containerd and kubelets on lab hosts, the workload, explain's
//     reading); the lab's only Kubernetes client. Run here hands a
//     scenario with a cluster to Options.Cluster (the CLI passes
//     cluster.Run).
//
// Where new work goes:
//
//   - A new field of the scenario file: its type and doc comment in
//     scenario/scenario.go (scenario/cluster.go for `cluster:`), its check
//     in scenario/validate.go (a one-line error naming the field, and a
//     testdata/invalid-*.yaml case in scenario/load_test.go), its row in
//     docs/lab.md.
//   - A new kind of host that runs a service (a proxy, a mirror, another
//     registry): its schema in package scenario; its server in
//     internal/labsvc (a Config and a Start function); its field in
//     ServeConfig and its start in Serve (serve.go); its config written by
//     prepare (prepare.go: certificates from pki.leaf, addresses from
//     Scenario.ListenAddr); the node's files that point at it (certs.d,
//     hosts.toml, docker config) in prepare.go for the probe and in
//     cluster/node.go for the kubelets' containerd.
//   - A change of the network while the lab runs (the break, the heal): a
//     method of Network (route.go), which cluster.Cluster passes on.
//   - What a cluster node needs (kubelet flags or config, containerd's
//     config, a file, a per-node process): cluster/node.go.
//   - A built-in scenario: scenario/scenarios/NAME.yaml, extending a base
//     (_ecr-base, _eks-cluster-base, ...), with an expect block;
//     TestBuiltinScenarios (or internal/lab/cluster's tests) runs it.
//
// Safety rules the builder enforces: no veth end ever sits in the machine's
// own namespace (pairs are created directly between lab namespaces), no lab
// namespace has a default route, and every name carries a per-run prefix so
// leftovers of a killed run are swept by the next one. docs/lab.md documents
// the scenario format and the commands.
package lab
