#!/usr/bin/env bash
# Build the upstream Cluster API managers (core, kubeadm bootstrap = CABPK,
# kubeadm control plane = KCP) and clusterctl from the Go module proxy into a
# cache directory, once, and extract the version's CRDs beside them. Prints
# the directory on the last line of stdout. Same layout and stamp scheme as
# tools/kube/build.sh.
#
#   tools/capi/build.sh                 # build or reuse
#   HCS_TESTBED_CAPI_CACHE=/dir tools/capi/build.sh
#   tools/capi/build.sh --force         # rebuild
#
# Output: ${HCS_TESTBED_CAPI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/capi}/<CAPI_VERSION>/
#   cluster-api-manager, kubeadm-bootstrap-manager,
#   kubeadm-control-plane-manager, clusterctl, <binary>.stamp, and
#   crds/*.yaml (the upstream CRD bases; the CABPK and KCP ones carry the
#   contract label cluster.x-k8s.io/v1beta1: v1beta1 that upstream's
#   kustomization adds), webhooks/{core,bootstrap,controlplane}.yaml (each
#   manager's config/webhook/manifests.yaml). src/harness/realcluster/upstream/capi-binaries.ts looks there (or in
#   $HCS_TESTBED_CAPI_BIN).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck disable=SC1091
source "$here/versions.env"
# shellcheck disable=SC1091
source "$here/../go-build-env.sh"
go_build_env tools/capi/build.sh "$@"

cache_root="${HCS_TESTBED_CAPI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/capi}"
out="$cache_root/${CAPI_VERSION}"
mkdir -p "$out"

t_all="$(now)"

# build NAME PACKAGE
build() {
  local name="$1" pkg="$2" t0 stamp
  t0="$(now)"
  stamp="sigs.k8s.io/cluster-api ${CAPI_VERSION} ${pkg} go $(go env GOVERSION)"
  if [ "$force" = 0 ] && [ -x "$out/$name" ] && [ "$(cat "$out/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$name: cached ($(elapsed "$t0") s) $out/$name" >&2
    return
  fi
  echo "$name: building $pkg ($stamp) ..." >&2
  local tmp="$out/.$name.tmp.$$" major minor v="sigs.k8s.io/cluster-api/version"
  major="${CAPI_VERSION#v}"; major="${major%%.*}"
  minor="${CAPI_VERSION#v*.}"; minor="${minor%%.*}"
  (cd "$here/managers" && go build -o "$tmp" \
    -ldflags="-s -w -X $v.gitVersion=${CAPI_VERSION} -X $v.gitMajor=${major} -X $v.gitMinor=${minor} -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z" \
    "$pkg")
  mv -f "$tmp" "$out/$name"
  echo "$stamp" > "$out/$name.stamp"
  echo "$name: built in $(elapsed "$t0") s ($(du -h "$out/$name" | cut -f1)) $out/$name" >&2
}

build cluster-api-manager sigs.k8s.io/cluster-api
build kubeadm-bootstrap-manager sigs.k8s.io/cluster-api/bootstrap/kubeadm
build kubeadm-control-plane-manager sigs.k8s.io/cluster-api/controlplane/kubeadm
build clusterctl sigs.k8s.io/cluster-api/cmd/clusterctl

# The CRDs of the same version, from the module cache (the build above has
# downloaded the module). Upstream installs them through kustomize, whose
# bootstrap/kubeadm and controlplane/kubeadm config/crd/kustomization.yaml add
# the label cluster.x-k8s.io/v1beta1: v1beta1: the core controllers find a
# provider's API version for the v1beta1 contract through that label. The
# core CRDs carry no such label upstream.
t0="$(now)"
crd_stamp="sigs.k8s.io/cluster-api ${CAPI_VERSION} crds webhooks"
if [ "$force" = 0 ] && [ "$(cat "$out/crds.stamp" 2>/dev/null)" = "$crd_stamp" ] && [ -d "$out/crds" ] && [ -d "$out/webhooks" ]; then
  echo "crds: cached ($(elapsed "$t0") s) $out/crds" >&2
else
  src="$(cd "$here/managers" && go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)"
  [ -d "$src/config/crd/bases" ] || { echo "tools/capi/build.sh: no CRDs in $src" >&2; exit 1; }
  tmpd="$out/.crds.tmp.$$"
  rm -rf "$tmpd" && mkdir -p "$tmpd"
  cp "$src"/config/crd/bases/*.yaml "$tmpd/"
  for f in "$src"/bootstrap/kubeadm/config/crd/bases/*.yaml "$src"/controlplane/kubeadm/config/crd/bases/*.yaml; do
    # insert the label block right under the top-level metadata: line
    awk 'done == 0 && /^metadata:$/ { print; print "  labels:"; print "    cluster.x-k8s.io/v1beta1: v1beta1"; done = 1; next } { print }' \
      "$f" > "$tmpd/$(basename "$f")"
    grep -q '^    cluster.x-k8s.io/v1beta1: v1beta1$' "$tmpd/$(basename "$f")" \
      || { echo "tools/capi/build.sh: could not label $f" >&2; exit 1; }
  done
  chmod 0644 "$tmpd"/*.yaml
  rm -rf "$out/crds" && mv "$tmpd" "$out/crds"
  # The managers' webhook configurations (clientConfig.service is rewritten to a URL when installed).
  rm -rf "$out/webhooks" && mkdir -p "$out/webhooks"
  cp "$src/config/webhook/manifests.yaml" "$out/webhooks/core.yaml"
  cp "$src/bootstrap/kubeadm/config/webhook/manifests.yaml" "$out/webhooks/bootstrap.yaml"
  cp "$src/controlplane/kubeadm/config/webhook/manifests.yaml" "$out/webhooks/controlplane.yaml"
  chmod 0644 "$out/webhooks"/*.yaml
  echo "$crd_stamp" > "$out/crds.stamp"
  echo "crds: extracted $(ls "$out/crds" | wc -l) files in $(elapsed "$t0") s $out/crds" >&2
fi
echo "all: $(elapsed "$t_all") s" >&2
echo "$out"
