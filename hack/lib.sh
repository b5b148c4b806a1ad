# Shared by hack/test.sh and bench/run.sh: install what the tests and
# benchmarks need, only when it is missing. Source it; it defines functions.

log() { printf '== %s %s\n' "$(date +%T)" "$*" >&2; }

# apt_ensure PKG...: install the Debian packages that are missing (as root;
# without root it does nothing, and the tests that need them say so).
apt_ensure() {
  [ "$(id -u)" = 0 ] || return 0
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# apt_ensure_nostart PKG...: apt_ensure for packages that start a service
# on install (squid): service starts are denied for the install only
# (policy-rc.d exiting 101, removed after when it was not there), so nothing
# of the tests listens in the root namespace.
apt_ensure_nostart() {
  [ "$(id -u)" = 0 ] || return 0
  local made=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    made=1
  fi
  local rc=0
  apt_ensure "$@" || rc=$?
  [ "$made" = 1 ] && rm -f /usr/sbin/policy-rc.d
  return "$rc"
}

# crictl_ensure: crictl, the kubelet's way of asking containerd for a pull,
# in $(go env GOPATH)/bin, which goes on PATH. hack/controlplane.sh builds
# it there with the other tools (hack/test.sh runs that first); alone (the
# benchmarks), a go install of the same version.
crictl_ensure() {
  local gobin
  gobin="$(go env GOPATH)/bin"
  export PATH="$gobin:$PATH"
  if [ ! -x "$gobin/crictl" ]; then
    log "go install crictl"
    go install sigs.k8s.io/cri-tools/cmd/crictl@v1.37.0
  fi
}

# phase NAME: what runs from here to the next phase (or the end) is NAME;
# phase_times, run from an EXIT trap, prints each phase's wall time, so a
# CI log gives the figures whether the run passed or not (the phase a
# failure ended is marked). It keeps the exit status it was called with.
_phase_names=()
_phase_starts=()
phase() {
  _phase_names+=("$1")
  _phase_starts+=("$(date +%s)")
  log "phase $1"
}
phase_times() {
  local rc=$? end i n e total=0
  end=$(date +%s)
  n=${#_phase_names[@]}
  if [ "$n" -gt 0 ]; then
    printf '== phase times (wall clock, seconds)\n' >&2
    for ((i = 0; i < n; i++)); do
      e=$end
      if ((i + 1 < n)); then e=${_phase_starts[i + 1]}; fi
      printf '   %-22s %6d%s\n' "${_phase_names[i]}" "$((e - _phase_starts[i]))" \
        "$(if ((i + 1 == n && rc != 0)); then printf '  (ended by exit %d)' "$rc"; fi)" >&2
      total=$((total + e - _phase_starts[i]))
    done
    printf '   %-22s %6d\n' total "$total" >&2
  fi
  return "$rc"
}
