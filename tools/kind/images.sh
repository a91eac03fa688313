#!/usr/bin/env bash
# Images for running the management cluster's controllers in kind, built
# without a container registry:
#
#  * the upstream Cluster API managers (core, kubeadm bootstrap, kubeadm
#    control plane) from tools/capi/build.sh's static binaries: a root
#    filesystem holding only /manager (plus /tmp and a passwd entry for the
#    non-root user 65532 the manifests run as), `docker import`ed with
#    ENTRYPOINT /manager. Named as the release's manifests name them
#    (registry.k8s.io/cluster-api/<controller>:<CAPI_VERSION>), so kubelet
#    finds them without pulling;
#  * the HCS provider (the project's Dockerfile) on the base image
#    tools/docker/base-image.sh builds from Debian's packages
#    (hcs-testbed/provider:<hash of the sources>);
#  * the managers' manifests, rendered from upstream's kustomizations.
#
# A binary that is not static is refused (a minimal root filesystem has no
# libc). Cached: a manager image is rebuilt when its binary's stamp changes;
# the provider image when the tree changes (or --force).
#
#   tools/kind/images.sh [--force] [--skip-provider]
# Prints one image name per line on stdout (managers, then the provider).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck disable=SC1091
source "$here/../capi/versions.env"
force=0; skip_provider=0
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    --skip-provider) skip_provider=1 ;;
    *) echo "kind/images: unknown argument $a" >&2; exit 2 ;;
  esac
done
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
timeout 20 docker info >/dev/null 2>&1 || { echo "kind/images: no Docker engine; start one with tools/docker/start.sh" >&2; exit 2; }

capi_dir="${HCS_TESTBED_CAPI_BIN:-${HCS_TESTBED_CAPI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/capi}/${CAPI_VERSION}}"
[ -x "$capi_dir/cluster-api-manager" ] || { echo "kind/images: no Cluster API managers in $capi_dir; build them with tools/capi/build.sh" >&2; exit 2; }

# static FILE: true when FILE is an ELF executable without a program interpreter (no dynamic loader, no libc needed)
static() {
  local hdr
  hdr="$(od -An -c -N4 "$1" | tr -d ' ')"
  [ "$hdr" = '177ELF' ] || return 1
  ! grep -q 'Requesting program interpreter' <(readelf -l "$1" 2>/dev/null) && readelf -h "$1" >/dev/null 2>&1
}

# manager BINARY IMAGE
manager() {
  local bin="$capi_dir/$1" image="$2" t0 stamp dir
  t0="$(now)"
  static "$bin" || { echo "kind/images: $bin is not a static executable (readelf -l shows a program interpreter); a minimal image has no libc" >&2; exit 1; }
  stamp="$(cat "$bin.stamp" 2>/dev/null); $(sha256sum "$bin" | cut -c1-16)"
  if [ "$force" = 0 ] && [ "$(docker image inspect -f '{{index .Config.Labels "hcs-testbed.stamp"}}' "$image" 2>/dev/null)" = "$stamp" ]; then
    echo "kind/images: $image cached ($(elapsed "$t0") s)" >&2
  else
    dir="$(mktemp -d)"
    mkdir -p "$dir/tmp" "$dir/etc"
    chmod 1777 "$dir/tmp"
    install -m 0755 "$bin" "$dir/manager"
    printf 'root:x:0:0:root:/:/manager\nnonroot:x:65532:65532:nonroot:/:/manager\n' > "$dir/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' > "$dir/etc/group"
    tar -C "$dir" --owner=0 --group=0 -c . | docker import \
      --change 'ENTRYPOINT ["/manager"]' --change 'USER 65532:65532' \
      --change "LABEL hcs-testbed.stamp=\"$stamp\"" - "$image" >/dev/null
    rm -rf "$dir"
    echo "kind/images: $image built in $(elapsed "$t0") s ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))" >&2
  fi
  echo "$image"
}

# The managers' manifests as `clusterctl init` gets them: upstream's own config/default kustomizations of the
# same version (from the Go module cache, where tools/capi/build.sh's build put the module), rendered with
# `kubectl kustomize` (offline) into $capi_dir/config/{core,bootstrap,controlplane}.yaml. src/harness/realcluster/kind/capi-incluster.ts
# then does what clusterctl and cert-manager would (variables, images, certificates, caBundles).
t0="$(now)"
# shellcheck disable=SC1091
source "$here/versions.env"
# shellcheck disable=SC1091
source "$here/../kube/versions.env"
kubectl="${HCS_TESTBED_KIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/kind}/${KIND_VERSION}-${KUBE_VERSION}/bin/kubectl"
command -v "$kubectl" >/dev/null 2>&1 || kubectl="$(command -v kubectl || true)"
[ -n "$kubectl" ] || { echo "kind/images: no kubectl (tools/kind/build.sh builds one)" >&2; exit 2; }
cfg_stamp="sigs.k8s.io/cluster-api ${CAPI_VERSION} config/default kustomize"
if [ "$force" = 0 ] && [ "$(cat "$capi_dir/config.stamp" 2>/dev/null)" = "$cfg_stamp" ] && [ -s "$capi_dir/config/controlplane.yaml" ]; then
  echo "kind/images: manifests cached ($(elapsed "$t0") s) $capi_dir/config" >&2
else
  command -v go >/dev/null || { echo "kind/images: go is needed to find sigs.k8s.io/cluster-api ${CAPI_VERSION} in the module cache" >&2; exit 2; }
  src="$(cd "$here/../capi/managers" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)"
  [ -d "$src/config/default" ] || { echo "kind/images: no config/default in $src (run tools/capi/build.sh)" >&2; exit 1; }
  tmpd="$capi_dir/.config.tmp.$$"
  rm -rf "$tmpd" && mkdir -p "$tmpd"
  "$kubectl" kustomize "$src/config/default" > "$tmpd/core.yaml"
  "$kubectl" kustomize "$src/bootstrap/kubeadm/config/default" > "$tmpd/bootstrap.yaml"
  "$kubectl" kustomize "$src/controlplane/kubeadm/config/default" > "$tmpd/controlplane.yaml"
  chmod 0644 "$tmpd"/*.yaml
  rm -rf "$capi_dir/config" && mv "$tmpd" "$capi_dir/config"
  echo "$cfg_stamp" > "$capi_dir/config.stamp"
  echo "kind/images: manifests rendered from $src in $(elapsed "$t0") s: $capi_dir/config" >&2
fi

manager cluster-api-manager "registry.k8s.io/cluster-api/cluster-api-controller:${CAPI_VERSION}"
manager kubeadm-bootstrap-manager "registry.k8s.io/cluster-api/kubeadm-bootstrap-controller:${CAPI_VERSION}"
manager kubeadm-control-plane-manager "registry.k8s.io/cluster-api/kubeadm-control-plane-controller:${CAPI_VERSION}"

[ "$skip_provider" = 1 ] && exit 0

# The provider: the project's Dockerfile on the local base image, kubectl from tools/kind's cache.
t0="$(now)"
base="$("$root/tools/docker/base-image.sh" | tail -n 1)"
tree="$(cd "$root" && { git rev-parse HEAD:src 2>/dev/null; git rev-parse HEAD:mock-hcs 2>/dev/null; git diff HEAD -- src mock-hcs package.json package-lock.json Dockerfile bin | sha256sum; } | sha256sum | cut -c1-12)"
image="hcs-testbed/provider:$tree"
if [ "$force" = 0 ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "kind/images: $image cached ($(elapsed "$t0") s)" >&2
else
  mkdir -p "$root/.kubectl" && cp "$kubectl" "$root/.kubectl/kubectl"
  if ! nice -n 10 docker build -q --build-arg BASE_IMAGE="$base" --build-arg KUBECTL_SOURCE=context -t "$image" "$root" > /tmp/hcs-testbed-provider-build.$$.log 2>&1; then
    echo "kind/images: docker build of the provider image failed; last lines:" >&2
    tail -n 30 /tmp/hcs-testbed-provider-build.$$.log >&2
    rm -f /tmp/hcs-testbed-provider-build.$$.log
    exit 1
  fi
  rm -f /tmp/hcs-testbed-provider-build.$$.log
  echo "kind/images: $image built on $base in $(elapsed "$t0") s" >&2
fi
echo "$image"
