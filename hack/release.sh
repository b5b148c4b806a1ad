#!/usr/bin/env bash
# hack/release.sh builds pullpath's release archives into dist/ (git-ignored):
# two static binaries per platform (CGO off, -trimpath, version and commit
# stamped with -ldflags -X): pullpath, the CLI with every command, and, for
# Linux, pullpath-agent, what runs on nodes (probe, the monitor agent; the
# image of the walk's Pods), in pullpath_VERSION_OS_ARCH.tar.gz with the
# README, checksums.txt (sha256sum format) over the archives, and, when every
# platform of plugins/pullpath.yaml was built, the rendered krew manifest
# dist/pullpath.yaml.
#
# Usage: hack/release.sh [--version V] [--platform OS/ARCH]... [--out DIR] [--dev]
#   --version   default: git describe --tags --always --dirty
#   --platform  default: linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
#               (the platforms of plugins/pullpath.yaml; on darwin every
#               command but lab runs, lab says it needs Linux)
#   --out       default: dist
#   --dev       build as go test does (cgo as the environment has it, no
#               -trimpath), so the build cache of the tests is reused and
#               only the link runs: for cmd/pullpath's release test, never
#               for a release
#
# A plain go build loop: no goreleaser, nothing to install but Go. The
# archives are reproducible (sorted names, fixed mtime and owner), so the
# same commit gives the same checksums.
set -euo pipefail
cd "$(dirname "$0")/.."

version=""
out=dist
platforms=()
dev=0
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="$2"; shift 2 ;;
    --platform) platforms+=("$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --dev) dev=1; shift ;;
    *) echo "hack/release.sh: unknown argument $1 (want --version V, --platform OS/ARCH, --out DIR)" >&2; exit 1 ;;
  esac
done
[ -n "$version" ] || version="$(git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)"
[ "${#platforms[@]}" -gt 0 ] || platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
pkg=github.com/pullpath/pullpath/internal/buildinfo
mtime="$(git log -1 --format=%cI 2>/dev/null || echo 2026-01-01T00:00:00Z)"

mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for p in "${platforms[@]}"; do
  os="${p%/*}" arch="${p#*/}"
  case "$p" in */*) ;; *) echo "hack/release.sh: --platform $p: want OS/ARCH, e.g. linux/amd64" >&2; exit 1 ;; esac
  echo "== build $os/$arch $version" >&2
  dir="$work/${os}_${arch}"
  mkdir -p "$dir"
  # The CLI, and on Linux the node-side binary beside it (nodes are
  # Linux: a darwin archive has no use for it).
  bins=(pullpath)
  if [ "$os" = linux ]; then bins+=(pullpath-agent); fi
  for b in "${bins[@]}"; do
    if [ "$dev" = 1 ]; then
      GOOS="$os" GOARCH="$arch" go build \
        -ldflags "-s -w -X $pkg.Version=$version -X $pkg.Commit=$commit" -o "$dir/$b" "./cmd/$b"
    else
      CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath \
        -ldflags "-s -w -X $pkg.Version=$version -X $pkg.Commit=$commit" -o "$dir/$b" "./cmd/$b"
    fi
  done
  files=(README.md "${bins[@]}")
  cp README.md "$dir/"
  if [ -f LICENSE ]; then cp LICENSE "$dir/"; files=(LICENSE "${files[@]}"); fi
  tar -C "$dir" --sort=name --mtime="$mtime" --owner=0 --group=0 --numeric-owner \
    -cf - "${files[@]}" | gzip -n > "$out/pullpath_${version}_${os}_${arch}.tar.gz"
done
(cd "$out" && sha256sum pullpath_"${version}"_*.tar.gz > checksums.txt)

# The krew manifest, once every platform it names has its archive.
manifest="$(cat plugins/pullpath.yaml)"
manifest="${manifest//\$\{VERSION\}/$version}"
for p in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  os="${p%/*}" arch="${p#*/}"
  a="$out/pullpath_${version}_${os}_${arch}.tar.gz"
  if [ ! -f "$a" ]; then
    echo "== no $os/$arch archive: dist/pullpath.yaml not written" >&2
    exit 0
  fi
  sum="$(sha256sum "$a" | cut -d' ' -f1)"
  manifest="${manifest//\$\{SHA256_${os}_${arch}\}/$sum}"
done
printf '%s\n' "$manifest" > "$out/pullpath.yaml"
echo "== $out/pullpath.yaml" >&2
