#!/usr/bin/env bash
# hack/controlplane.sh builds the real etcd and kube-apiserver that pullpath's
# cluster tests and benchmarks start (internal/testenv/controlplane), and
# kube-scheduler, kube-controller-manager, kubelet, kube-proxy and the pause binary of
# the lab's clusters (internal/lab/cluster), into
# test/controlplane/bin/ (git-ignored). Each binary is built from its own Go
# module under test/controlplane/ (etcd v3.6.16, kube-apiserver from
# k8s.io/kubernetes v1.37.2), apart from the project's go.mod, and only when
# it is missing or older than its module's go.mod, go.sum or tools.go.
#
# Usage: hack/controlplane.sh [--force]
#
# Cost, 2 cores: etcd about 45 s cold (5.5 min with other builds running),
# about 1 s warm; kube-apiserver about 3.5 min cold (longer under load),
# about 8 s warm, ~2.7 GB of build cache. After it, from the same module and
# with the same flags (so the cache is shared): kube-scheduler, the
# controller-manager and the kubelet (v1.37.2, for the lab's clusters) about
# 4 min more cold, seconds warm. Binaries: etcd 27 MB, kube-apiserver
# ~120 MB, kubelet ~88 MB, controller-manager ~101 MB (stripped).
# kube-proxy (same module and flags): 28 s after the others warm, 79 MB.
#
# How CI calls it (lines for .ci/run, before the tests):
#
#   bash hack/controlplane.sh
#   # optional, the default is found by walking up from the test's cwd to go.mod:
#   export PULLPATH_CONTROLPLANE_BIN="$PWD/test/controlplane/bin"
#   go test ./...          # CI=true: controlplane.Require FAILS when the
#                          # binaries are missing, instead of skipping
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
cp_dir="$root/test/controlplane"
bin="$cp_dir/bin"
mkdir -p "$bin"

# One build at a time per checkout.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin/.lock"
  flock 9
fi

export GOWORK=off   # the tool modules must not join any go.work
total_start=$(date +%s)

# build NAME MODULE_DIR PACKAGE GO_BUILD_FLAGS...
build() {
  local name=$1 mod=$2 pkg=$3
  shift 3
  local out="$bin/$name"
  local f stale=$force
  if [[ ! -x $out ]]; then
    stale=1
  else
    for f in "$mod/go.mod" "$mod/go.sum" "$mod/tools.go"; do
      if [[ $f -nt $out ]]; then stale=1; fi
    done
  fi
  if [[ $stale == 0 ]]; then
    echo "controlplane: $name up to date, skipped ($out)"
    return
  fi
  echo "controlplane: building $name from ${mod#"$root"/} ..."
  local start end
  start=$(date +%s)
  # Build beside the target and rename, so an interrupted build never
  # leaves a partial binary that looks newer than its sources.
  (cd "$mod" && go build "$@" -o "$out.tmp" "$pkg")
  mv -f "$out.tmp" "$out"
  end=$(date +%s)
  echo "controlplane: built $name in $((end - start)) s, $(du -m "$out" | cut -f1) MB ($out)"
}

build etcd "$cp_dir/etcd" go.etcd.io/etcd/server/v3 \
  -trimpath -ldflags='-s -w'

v=v1.37.2
# One module (test/controlplane/apiserver) and ONE flag set for every
# Kubernetes component: a different flag set (e.g. -trimpath) would throw
# away the shared build cache.
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
build kube-apiserver "$cp_dir/apiserver" k8s.io/kubernetes/cmd/kube-apiserver -ldflags "$k8s_ldflags"

# The lab's clusters (internal/lab/cluster) also start a scheduler,
# a controller-manager and one kubelet and kube-proxy per node. Skip them with
# PULLPATH_CONTROLPLANE_ONLY_APISERVER=1 (explain's tests need only the
# apiserver).
if [[ ${PULLPATH_CONTROLPLANE_ONLY_APISERVER:-} != 1 ]]; then
  build kube-scheduler "$cp_dir/apiserver" k8s.io/kubernetes/cmd/kube-scheduler -ldflags "$k8s_ldflags"
  build kube-controller-manager "$cp_dir/apiserver" k8s.io/kubernetes/cmd/kube-controller-manager -ldflags "$k8s_ldflags"
  build kubelet "$cp_dir/apiserver" k8s.io/kubernetes/cmd/kubelet -ldflags "$k8s_ldflags"
  # each lab node's Service networking (internal/lab/cluster/proxy.go)
  build kube-proxy "$cp_dir/apiserver" k8s.io/kubernetes/cmd/kube-proxy -ldflags "$k8s_ldflags"
fi

# helm, from its own module (test/helm, helm.sh/helm/v4), for the chart's
# tests (deploy/helm/pullpath: lint, template, install on the lab cluster).
build helm "$root/test/helm" helm.sh/helm/v4/cmd/helm \
  -trimpath -ldflags='-s -w -X helm.sh/helm/v4/internal/version.version=v4.3.1'

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
