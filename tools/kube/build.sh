#!/usr/bin/env bash
# Build the real control-plane binaries (kube-apiserver, etcd) from the Go
# module proxy into a cache directory, once. Prints the directory on the last
# line of stdout.
#
#   tools/kube/build.sh                 # build or reuse
#   HCS_TESTBED_KUBE_CACHE=/dir tools/kube/build.sh
#   tools/kube/build.sh --force         # rebuild
#
# Output: ${HCS_TESTBED_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/kube}/<KUBE_VERSION>/
#   kube-apiserver, etcd, and <binary>.stamp (the versions they were built from).
# src/realcluster/binaries.ts looks there (or in $HCS_TESTBED_KUBE_BIN).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck disable=SC1091
source "$here/versions.env"
# shellcheck disable=SC1091
source "$here/../go-build-env.sh"
go_build_env tools/kube/build.sh "$@"

cache_root="${HCS_TESTBED_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/kube}"
out="$cache_root/${KUBE_VERSION}"
mkdir -p "$out"


# build NAME MODULE_DIR PACKAGE STAMP LDFLAGS
build() {
  local name="$1" dir="$2" pkg="$3" stamp="$4" ldflags="$5" t0
  t0="$(now)"
  if [ "$force" = 0 ] && [ -x "$out/$name" ] && [ "$(cat "$out/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$name: cached ($(elapsed "$t0") s) $out/$name" >&2
    return
  fi
  echo "$name: building $pkg ($stamp) ..." >&2
  local tmp="$out/.$name.tmp.$$"
  (cd "$here/$dir" && go build -ldflags="$ldflags" -o "$tmp" "$pkg")
  mv -f "$tmp" "$out/$name"
  echo "$stamp" > "$out/$name.stamp"
  echo "$name: built in $(elapsed "$t0") s ($(du -h "$out/$name" | cut -f1)) $out/$name" >&2
}

major="${KUBE_VERSION#v}"; major="${major%%.*}"
minor="${KUBE_VERSION#v*.}"; minor="${minor%%.*}"
kv=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kv+=" -X $p.gitVersion=${KUBE_VERSION} -X $p.gitMajor=${major} -X $p.gitMinor=${minor}"
  kv+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
build kube-apiserver apiserver k8s.io/kubernetes/cmd/kube-apiserver \
  "k8s.io/kubernetes ${KUBE_VERSION} go $(go env GOVERSION)" "-s -w${kv}"
build etcd etcd go.etcd.io/etcd/server/v3 \
  "go.etcd.io/etcd/server/v3 ${ETCD_VERSION} go $(go env GOVERSION)" "-s -w"
echo "$out"
