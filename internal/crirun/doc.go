// Package crirun drives the real container runtime (containerd, through its
// CRI plugin, with crictl as the client) inside a network namespace that
// plays a Kubernetes node, the way the kubelet drives it, and records what
// the runtime says.
//
// The order a lab run follows:
//
//  1. Start writes a containerd config (version 2) whose root, state,
//     sockets and plugin folders all live in a private WorkDir, with the
//     node's certs.d as the CRI registry config_path, and starts
//     `ip netns exec NETNS containerd --config FILE`. The caller writes
//     /etc/netns/NETNS/resolv.conf and hosts BEFORE Start: ip netns exec
//     binds them only when it starts a process.
//  2. RemoveAll clears the k8s.io image store, so the next pull is cold.
//  3. Pull runs `crictl pull` against the private socket (credentials go
//     through crictl's environment, never argv) and returns the runtime's
//     verbatim error, its gRPC code and the wall time.
//  4. Stop kills containerd and anything left that names WorkDir, unmounts
//     whatever is mounted under WorkDir and removes it.
//
// Nothing here prints; containerd's own log goes to Options.Log.
package crirun
