#!/usr/bin/env bash
# The project's test command: installs what the tests need, then runs every
# test (unit, real services on loopback, network-namespace lab, containerd
# cross-check, real kube-apiserver) and a short fuzz of every parser.
#
#   sudo bash hack/test.sh          # everything (root: network namespaces)
#   FUZZTIME=0 bash hack/test.sh    # skip the fuzz pass (FUZZTIME=30s or 100000x: longer)
#
# With CI=true a test that cannot run (no root, no containerd) fails.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '== %s\n' "$*" >&2; }

# 1. Debian packages: nftables and iproute2 for the lab, containerd for the
#    runtime cross-check, time for peak-RSS figures.
if [ "$(id -u)" = 0 ]; then
  missing=()
  for p in nftables iproute2 containerd time; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

# 2. crictl, the kubelet's way of asking containerd for a pull.
GOBIN="$(go env GOPATH)/bin"
if [ ! -x "$GOBIN/crictl" ]; then
  log "go install crictl"
  go install sigs.k8s.io/cri-tools/cmd/crictl@v1.37.0
fi
export PATH="$GOBIN:$PATH"

# 3. A real kube-apiserver and etcd, built from Go modules (cached).
bash hack/controlplane.sh

# 4. Every test.
log "go test ./..."
go test -count=1 -timeout 40m -p 2 ./...

# 5. A short fuzz of every parser that reads untrusted input. The budget is
#    a count of executions, not a duration: Go 1.26's fuzz coordinator can
#    report a spurious "context deadline exceeded" when a duration expires
#    on a loaded machine (golang/go#75804, fixed in Go 1.27). A real finding
#    still fails the run and writes its input to testdata/fuzz/.
FUZZTIME="${FUZZTIME:-20000x}"
if [ "$FUZZTIME" != 0 ]; then
  while read -r pkg target; do
    [ -n "$pkg" ] || continue
    log "fuzz $target ($FUZZTIME)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
  done < <(grep -rl --include='*_test.go' '^func Fuzz' internal | while read -r f; do
      for t in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
        echo "./$(dirname "$f") $t"
      done
    done)
fi
log "all tests passed"
