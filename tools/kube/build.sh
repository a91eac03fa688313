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
# src/harness/realcluster/apiserver/binaries.ts looks there (or in $HCS_TESTBED_KUBE_BIN).
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


kv="$(kube_version_ldflags "$KUBE_VERSION")"
go_cached_build "$out" kube-apiserver "$here/apiserver" k8s.io/kubernetes/cmd/kube-apiserver \
  "k8s.io/kubernetes ${KUBE_VERSION} go $(go env GOVERSION)" "-s -w${kv}"
go_cached_build "$out" etcd "$here/etcd" go.etcd.io/etcd/server/v3 \
  "go.etcd.io/etcd/server/v3 ${ETCD_VERSION} go $(go env GOVERSION)" "-s -w"
echo "$out"
