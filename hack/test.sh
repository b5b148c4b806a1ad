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

. hack/lib.sh
trap phase_times EXIT # the wall time of each phase below, at the end of the log

# Every build of the run with cgo off: the tools (hack/controlplane.sh), the
# test binaries, and the static binaries the tests build for the lab's images
# (internal/selfimage). The build cache is keyed by the cgo setting, so with
# it on the tests compiled the CLI's whole dependency graph twice, once for
# their own binaries and once for the images; and the tools share their
# versions of client-go, grpc, protobuf and otel with the project (a test in
# internal/depguard keeps the two go.mod files aligned), so these compile
# once for the tools and are found in the cache by the tests.
export CGO_ENABLED=0
# And no DWARF in anything the run compiles: nobody debugs a CI's binaries
# (stack traces come from the symbol table, which stays), and the compiler
# does about a tenth less work. One setting for every build of the run, so
# the tools, the tests and the lab images still share the cache.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-gcflags=all=-dwarf=false"

# 1. Debian packages: nftables and iproute2 for the lab, containerd for the
#    runtime cross-check and the lab clusters' nodes, containernetworking-plugins
#    (bridge, host-local) for their pods, time for peak-RSS figures, prometheus
#    (promtool and a real Prometheus) for the monitor's metrics and alert rules.
phase apt
apt_ensure nftables iproute2 containerd containernetworking-plugins time prometheus
apt_ensure_nostart tayga # the lab's NAT64 (ipv6-only-nat64): userspace, a tun device in a lab namespace; its init script would start one in the root namespace
apt_ensure_nostart unbound # the lab's DNS64 (ipv6-only-nat64): started by the lab in a lab namespace with its own config; the package would start one in the root namespace
apt_ensure_nostart squid-openssl openssl # the node's egress proxy of the proxy tests and labs

# 2. Every outside program the tests run, in one go build of one module
#    (test/tools; cached): a real etcd and kube-apiserver, the lab clusters'
#    kubelet, kube-proxy, kube-controller-manager and kube-scheduler, helm,
#    crictl (the kubelet's way of asking containerd for a pull), and pause.
phase "tools build"
bash hack/controlplane.sh
crictl_ensure # on PATH (hack/controlplane.sh put it in the Go bin folder)

# 3. The CLI still type-checks where `lab` cannot run (release archives
#    and krew ship darwin): every package, dependencies included, from source
#    for darwin/arm64 without compiling them (a cross build compiled the
#    whole graph again: about 9 minutes of a cold CI). hack/release.sh
#    still cross-compiles. Then every test.
phase "darwin check"
log "typecheck ./cmd/pullpath for darwin/arm64"
tc=test/controlplane/bin/typecheck
GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 "$tc" ./cmd/pullpath
phase tests
# First every library package of the module in one go build (the compiles
# all test binaries share; the commands are left to the tests that link
# them, since a `go build ./...` links all 14 and throws the binaries
# away), then three lanes at once: the lab packages, whose tests wait
# minutes on clusters and namespaces with the CPU mostly idle; the rest;
# and the fuzz pass (step 5) at the lowest CPU priority, so it takes only
# the cycles the other two leave (before, it ran after the other lane, and
# its instrumented builds were the last minutes of every run). In one
# `go test -p 2 ./...` two waiting lab tests held both of its slots while
# compiles queued behind them.
t0=$(date +%s)
log "go build: the module's library packages"
go build $(go list -f '{{if and (ne .Name "main") .GoFiles}}{{.ImportPath}}{{end}}' ./...)
log "go build took $(($(date +%s) - t0)) s"

# 5. A short fuzz of every parser that reads untrusted input. The budget is
#    a count of executions, not a duration: Go 1.26's fuzz coordinator can
#    report a spurious "context deadline exceeded" when a duration expires
#    on a loaded machine (golang/go#75804, fixed in Go 1.27). A real
#    finding still fails the run and writes its input to testdata/fuzz/. A
#    target whose every execution is heavy (a whole cloud account per
#    input) names a smaller count in a comment line "// fuzz budget: Nx"
#    right above its func; FUZZTIME, when set, overrides every budget.
#    Built with -tags fuzzonly: the fuzzed packages' test files that start
#    registries and lab services say //go:build !fuzzonly, so the
#    instrumented build (every package of the test binary, compiled again
#    with coverage counters) covers 460 packages, not 818. And without the
#    optimizer (-N -l): the pass's cost is that instrumented build of each
#    fuzzed package's whole graph (std included), not its executions
#    (seconds), and the coverage counters the fuzzer follows are inserted
#    before optimization, so they are the same edges; the compiler does
#    about a third less work (the aws audit's target, empty caches, one
#    run: 217 CPU-s against 340).
FUZZTIME="${FUZZTIME:-}"
fuzz_targets() {
  grep -rl --include='*_test.go' '^func Fuzz' internal | while read -r f; do
    for t in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
      b=$(grep -B1 "^func $t(" "$f" | sed -n 's|^// fuzz budget: \([0-9]*x\)$|\1|p')
      echo "./$(dirname "$f") $t $b"
    done
  done
}
fuzz_pass() {
  local rc=0 t0 pkg target budget n
  t0=$(date +%s)
  while read -r pkg target budget; do
    [ -n "$pkg" ] || continue
    n="${FUZZTIME:-${budget:-20000x}}"
    log "fuzz $target ($n)"
    nice -n 19 go test -tags fuzzonly -gcflags='all=-dwarf=false -N -l' -run '^$' -fuzz "^${target}\$" -fuzztime "$n" -timeout 8m "$pkg" || { rc=$?; log "fuzz $target failed (exit $rc)"; }
  done < <(fuzz_targets)
  log "fuzz took $(($(date +%s) - t0)) s"
  return "$rc"
}

# The packages whose tests took a minute or more in a CI. go test starts
# them in this order, three at a time (two cores hold three lab clusters):
# sweeplab (7 minutes, its scenarios one after another) first, so the
# other seven (18 minutes together) share the other two slots beside it.
lab_lane=(
  ./internal/sweep/sweeplab
  ./deploy
  ./internal/lab/labhook
  ./internal/diagnose
  ./internal/diagnose/diagnoselab
  ./internal/lab
  ./internal/lab/cluster
  ./internal/monitor/monitorlab
)
mapfile -t rest_lane < <(go list ./... | grep -vxF -f <(go list "${lab_lane[@]}"))
rest_log=$(mktemp)
fuzz_log=$(mktemp)
log "go test: ${#lab_lane[@]} lab packages (live) beside the other ${#rest_lane[@]} (printed when they end), and the fuzz pass (printed at the end)"
t0=$(date +%s)
go test -count=1 -timeout 40m -p 3 "${lab_lane[@]}" &
lab_pid=$!
fuzz_pid=
if [ "$FUZZTIME" != 0 ]; then
  fuzz_pass >"$fuzz_log" 2>&1 &
  fuzz_pid=$!
fi
rest_rc=0
go test -count=1 -timeout 40m -p 2 "${rest_lane[@]}" >"$rest_log" 2>&1 || rest_rc=$?
log "the other packages (go test exit $rest_rc, $(($(date +%s) - t0)) s):"
cat "$rest_log"
rm -f "$rest_log"
lab_rc=0
wait "$lab_pid" || lab_rc=$?
log "lab lane ended (go test exit $lab_rc, $(($(date +%s) - t0)) s)"
fuzz_rc=0
if [ -n "$fuzz_pid" ]; then
  wait "$fuzz_pid" || fuzz_rc=$?
  log "the fuzz pass (exit $fuzz_rc, $(($(date +%s) - t0)) s):"
  cat "$fuzz_log"
fi
rm -f "$fuzz_log"
if [ "$lab_rc" != 0 ] || [ "$rest_rc" != 0 ] || [ "$fuzz_rc" != 0 ]; then
  log "failed: lab lane exit $lab_rc, other lane exit $rest_rc, fuzz exit $fuzz_rc"
  exit 1
fi
log "all tests passed"
