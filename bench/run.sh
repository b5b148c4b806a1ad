#!/usr/bin/env bash
# bench/run.sh runs pullpath's benchmarks (BENCHMARKS.md) in one go, or any
# part alone:
#
#   sudo bash bench/run.sh                        # throughput (+ memory, start-up), deadpath, explain
#   sudo bash bench/run.sh throughput             # one part; several may be named
#   ROUNDS=5 OUT=/tmp/pullbench bash bench/run.sh throughput
#   PROFILE_DIR=/tmp/prof bash bench/run.sh throughput  # + a CPU profile per engine and peer run
#   NODES=1000 PODS=10000 EVENTS=10000 bash bench/run.sh explain
#   bash bench/run.sh aws azure agent sweep events northstar  # not run by default
#
# Parts: throughput, deadpath, explain (the default set, pullbench), and
#   images pullbench images: the node-side and CLI images, size and containerd's
#          pull through a lab registry (root; not yet in the default set)
#   farpath pullbench farpath: the MTU proof's and the trace's cost, the pace's
#          projection against containerd on slow links (root; VPN lab scenarios)
#   aws    bench/cmd/awsbench: `pullpath aws audit` offline + live API calls
#   azure  bench/cmd/azurebench: `pullpath azure audit` offline + ARM requests
#   gcp    bench/cmd/gcpbench: `pullpath gcp audit` offline + Google API calls
#   agent  bench/cmd/agentbench: the node agent's RSS/CPU, beside
#          prometheus-node-exporter when that is installed (not installed
#          here: its package brings a systemd unit)
#   sweep  bench/cmd/sweepbench: `pullpath sweep` over SWEEP_NODES (5000)
#          simulated nodes on the real apiserver (hack/controlplane.sh)
#   events bench/cmd/eventsbench: `pullpath monitor events` beside a
#          client-go informer, EVENTS_NODES (5000) Nodes and a burst of
#          EVENTS_BURST (50000) Events on the real apiserver
#   northstar bench/northstar: `pullpath diagnose deployment ...` on the
#          lab cluster (root) with the AWS fake live, to an answer naming
#          the endpoint and the route table, per step; beside `aws collect`
#          then `diagnose --from-aws`; the same on the AKS private-zone
#          cluster with the ARM fake live, to the zone's VNet link
#          (NORTHSTAR_ROUNDS, default 3)
#
# Each part prints its Markdown tables (also written to $OUT/PART.md) and
# every figure as JSON ($OUT/PART.json). It exits non-zero only when a run
# fails outright (a pull that does not complete, a lab that cannot be
# built, an apiserver that will not load); slow figures are data, never a
# failure.
#
# Needs: Go; GNU time (Debian "time"). deadpath: root, nftables, iproute2,
# containerd (Debian), crictl. explain: etcd and kube-apiserver built by
# hack/controlplane.sh. As root, missing Debian packages and crictl are
# installed the way hack/test.sh does it.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${ROUNDS:-3}"
OUT="${OUT:-${TMPDIR:-/tmp}/pullbench-results}"
parts=("$@")
if [ "${#parts[@]}" -eq 0 ]; then
  parts=(throughput deadpath explain)
fi
for p in "${parts[@]}"; do
  case "$p" in
    throughput|images|deadpath|farpath|explain|aws|azure|gcp|agent|sweep|events|northstar) ;;
    *) echo "bench/run.sh: unknown part \"$p\", want throughput, images, deadpath, farpath, explain, aws, azure, gcp, agent, sweep, events or northstar" >&2; exit 1 ;;
  esac
done

. hack/lib.sh
need_pkgs=(time)
for p in "${parts[@]}"; do
  case "$p" in deadpath|farpath|images) need_pkgs+=(nftables iproute2 containerd) ;; esac
done
apt_ensure "${need_pkgs[@]}"
for p in "${parts[@]}"; do
  case "$p" in
    deadpath|farpath|images)
      if [ "$(id -u)" != 0 ]; then
        echo "bench/run.sh: $p builds network namespaces and runs containerd: run it as root" >&2
        exit 1
      fi
      crictl_ensure ;;
    explain|sweep|events|northstar)
      bash hack/controlplane.sh ;;
  esac
done

bin="$(mktemp -d "${TMPDIR:-/tmp}/pullbench-run-XXXXXX")"
trap 'rm -rf "$bin"' EXIT
log "go build pullpath and pullbench"
# As hack/release.sh builds it: static and stripped.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/pullpath" ./cmd/pullpath
go build -o "$bin/pullbench" ./bench/cmd/pullbench
mkdir -p "$OUT"

for p in "${parts[@]}"; do
  case "$p" in
    aws|azure|gcp)
      log "${p}bench -pullpath $bin/pullpath -rounds ${ROUNDS}"
      go run "./bench/cmd/${p}bench" -pullpath "$bin/pullpath" -rounds "$ROUNDS" | tee "$OUT/$p.md"
      continue ;;
    agent)
      log "agentbench -rounds ${AGENT_ROUNDS:-20} -out $OUT/agent"
      go run ./bench/cmd/agentbench -rounds "${AGENT_ROUNDS:-20}" -out "$OUT/agent" | tee "$OUT/agent.md"
      continue ;;
    sweep)
      log "sweepbench --pullpath $bin/pullpath --nodes ${SWEEP_NODES:-5000}"
      go run ./bench/cmd/sweepbench --pullpath "$bin/pullpath" --nodes "${SWEEP_NODES:-5000}" | tee "$OUT/sweep.json"
      continue ;;
    northstar)
      log "go test ./bench/northstar -bench NorthStar -rounds=${NORTHSTAR_ROUNDS:-3}"
      go test ./bench/northstar/ -run '^$' -bench NorthStar -benchtime 1x -timeout 20m -args -rounds="${NORTHSTAR_ROUNDS:-3}" -pullpath="$bin/pullpath" | tee "$OUT/northstar.md"
      continue ;;
    events)
      log "eventsbench -pullpath $bin/pullpath -nodes ${EVENTS_NODES:-5000} -events ${EVENTS_BURST:-50000}"
      go run ./bench/cmd/eventsbench -pullpath "$bin/pullpath" -nodes "${EVENTS_NODES:-5000}" -events "${EVENTS_BURST:-50000}" -out "$OUT/events" | tee "$OUT/events.md"
      continue ;;
  esac
  args=(-rounds "$ROUNDS" -pullpath "$bin/pullpath" -json "$OUT/$p.json")
  case "$p" in
    throughput)
      [ -n "${LAYERS_MIB:-}" ] && args+=(-layers-mib "$LAYERS_MIB")
      [ -n "${PROFILE_DIR:-}" ] && args+=(-cpuprofile-dir "$PROFILE_DIR") ;;
    explain)
      args+=(-nodes "${NODES:-5000}" -pods "${PODS:-50000}" -events "${EVENTS:-50000}" -load-budget "${LOAD_BUDGET:-8m}" -deadline 40m) ;;
  esac
  log "pullbench $p ${args[*]}"
  "$bin/pullbench" "$p" "${args[@]}" | tee "$OUT/$p.md"
done
log "results in $OUT"
