#!/usr/bin/env bash
# hack/controlplane.sh builds every outside program pullpath's tests and the
# lab run, into test/controlplane/bin/ (git-ignored), in ONE `go build` of
# ONE module (test/tools, apart from the project's go.mod):
#
#   etcd, kube-apiserver      the cluster tests (internal/testenv/controlplane)
#   kube-scheduler, kube-controller-manager, kubelet, kube-proxy
#                             the lab's clusters (internal/lab/cluster)
#   helm                      the chart's tests (deploy/)
#   crictl                    the kubelet's way of asking containerd for a
#                             pull (internal/crirun); also copied to
#                             $(go env GOPATH)/bin, where crirun finds it
#   typecheck                 hack/test.sh's darwin check (test/tools/typecheck)
#   cimagepull                containers/image's own pull, the reference beside the
#                             probe on a lab CRI-O node (test/tools/cimagepull)
#   containerd2               containerd 2 (github.com/containerd/containerd/v2,
#                             cgo off), the runtime of the lab's layout nodes with
#                             a version 3 config (internal/lab/labhook)
#   pause                     the lab clusters' sandbox, from pullpath's module
#
# One module and one build, because the programs share most of their
# dependencies (client-go, apimachinery, grpc, protobuf, otel, etcd's
# client): built from four modules, as before, with four version sets, a
# cold build compiled about 20% more source, one link at a time. They are
# rebuilt only when one is missing or older than test/tools' go.mod, go.sum
# or tools.go.
#
# Usage: hack/controlplane.sh [--force]
#
# Cost, 2 cores: see the figures in the note of the last cold CI
# (BENCHMARKS.md, "CI"). Warm, seconds. Binaries: etcd 27 MB, kube-apiserver
# ~114 MB, kubelet ~88 MB, controller-manager ~101 MB, helm ~82 MB (stripped).
#
# Needs only the Go toolchain and the Go module proxy: no Docker, no
# downloads of prebuilt binaries, no openssl (keys are made in Go).
set -euo pipefail

force=0
case "${1:-}" in
  "") ;;
  -f|--force) force=1 ;;
  *) echo "hack/controlplane.sh: unknown argument '$1' (expected nothing or --force)" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/test/tools"
bin="$root/test/controlplane/bin"
mkdir -p "$bin"

# One build at a time per checkout.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin/.lock"
  flock 9
fi

export GOWORK=off # the tools module must not join any go.work
# Static, as Kubernetes' release builds most of these; and the same cgo
# setting as hack/test.sh's test builds, so the packages the tools share with
# the project at the same version (test/tools/go.mod is aligned with the
# project's go.mod; internal/depguard tests it) are compiled once for both.
export CGO_ENABLED=0
total_start=$(date +%s)

# NAME PACKAGE, in test/tools. `go build -o DIR/` names a binary after its
# package path's last element (the major version dropped): etcd's is
# "server", renamed below.
programs=(
  "etcd go.etcd.io/etcd/server/v3"
  "kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver"
  "kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler"
  "kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager"
  "kubelet k8s.io/kubernetes/cmd/kubelet"
  "kube-proxy k8s.io/kubernetes/cmd/kube-proxy"
  "helm helm.sh/helm/v4/cmd/helm"
  "crictl sigs.k8s.io/cri-tools/cmd/crictl"
  "typecheck pullpath-tools/typecheck"
  "cimagepull pullpath-tools/cimagepull"
  "containerd2 github.com/containerd/containerd/v2/cmd/containerd"
)

stale=$force
for p in "${programs[@]}"; do
  name=${p%% *}
  out="$bin/$name"
  if [[ ! -x $out ]]; then stale=1; continue; fi
  for f in "$tools/go.mod" "$tools/go.sum" "$tools/tools.go" "$tools/typecheck/main.go" "$tools/cimagepull/main.go"; do
    if [[ $f -nt $out ]]; then stale=1; fi
  done
done

if [[ $stale == 0 ]]; then
  echo "controlplane: every program up to date, skipped (${bin#"$root"/})"
else
  pkgs=()
  for p in "${programs[@]}"; do pkgs+=("${p#* }"); done
  # ONE flag set for all (the build cache is keyed by flags): the -X of a
  # symbol a program lacks is ignored.
  v=v1.37.2
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
  ldflags+=" -X helm.sh/helm/v4/internal/version.version=v4.3.1"
  ldflags+=" -X sigs.k8s.io/cri-tools/pkg/version.Version=v1.37.0"
  ldflags+=" -X github.com/containerd/containerd/v2/version.Version=v2.4.2"
  echo "controlplane: building ${#pkgs[@]} programs from ${tools#"$root"/} in one go build ..."
  # Build into a fresh folder and rename, so an interrupted build never
  # leaves a partial binary that looks newer than its sources.
  tmp="$bin/.build"
  rm -rf "$tmp" && mkdir -p "$tmp"
  start=$(date +%s)
  (cd "$tools" && go build -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}")
  mv -f "$tmp/server" "$tmp/etcd"
  mv -f "$tmp/containerd" "$tmp/containerd2"
  for p in "${programs[@]}"; do
    name=${p%% *}
    mv -f "$tmp/$name" "$bin/$name"
    printf 'controlplane: built %s, %s MB\n' "$name" "$(du -m "$bin/$name" | cut -f1)"
  done
  rmdir "$tmp"
  echo "controlplane: one go build of ${#pkgs[@]} programs in $(( $(date +%s) - start )) s"
fi

# crictl where crirun (and a user) looks for it: $(go env GOPATH)/bin.
gobin="$(go env GOPATH)/bin"
mkdir -p "$gobin"
if ! cmp -s "$bin/crictl" "$gobin/crictl"; then
  cp -f "$bin/crictl" "$gobin/crictl.tmp" && mv -f "$gobin/crictl.tmp" "$gobin/crictl"
  echo "controlplane: crictl copied to $gobin"
fi

# The lab clusters' pause binary (sandbox image and runnable workload
# layer): static, from the project's own module.
pause="$bin/pause"
if [[ $force == 1 || ! -x $pause || $root/internal/lab/pause/main.go -nt $pause ]]; then
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$pause.tmp" ./internal/lab/pause)
  mv -f "$pause.tmp" "$pause"
  echo "controlplane: built pause ($(du -k "$pause" | cut -f1) KB)"
else
  echo "controlplane: pause up to date, skipped ($pause)"
fi

echo "controlplane: done in $(( $(date +%s) - total_start )) s; binaries in ${bin#"$root"/}"
