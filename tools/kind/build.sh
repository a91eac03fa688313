#!/usr/bin/env bash
# Build kind and a kind node image from package registries alone (the Go
# module proxy and Debian's archive), once; later runs reuse the results.
# Needs Go >= 1.24, debootstrap, and a running Docker engine
# (tools/docker/start.sh). Prints the node image's name on the last line of
# stdout; progress and timings go to stderr.
#
#   tools/kind/build.sh             # build or reuse
#   tools/kind/build.sh --force     # rebuild everything
#   HCS_TESTBED_KIND_CACHE=/dir tools/kind/build.sh
#
# Output: ${HCS_TESTBED_KIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/kind}/<KIND_VERSION>-<KUBE_VERSION>/
#   bin/      kind, kubelet, kubeadm, kubectl, kube-controller-manager,
#             kube-scheduler, kube-proxy, etcd, coredns, pause, runc-wrap
#             (+ .stamp: module version and Go version; kube-apiserver comes
#             from tools/kube/build.sh)
#   images/   registry.k8s.io images as `docker save` archives, named as
#             `kubeadm config images list` prints them
#   rootfs-node/, rootfs-slim/   Debian root filesystems (debootstrap)
# and the Docker image hcs-testbed/kind-node:<KUBE_VERSION> (docker import).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck disable=SC1091
source "$here/../kube/versions.env"
# shellcheck disable=SC1091
source "$here/versions.env"
# shellcheck disable=SC1091
source "$here/../go-build-env.sh"
go_build_env tools/kind/build.sh "$@"
t_all="$(now)"

command -v debootstrap >/dev/null || { echo "tools/kind/build.sh: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
timeout 20 docker info >/dev/null 2>&1 || { echo "tools/kind/build.sh: no Docker engine (\`docker info\` failed); start one with tools/docker/start.sh" >&2; exit 2; }

cache_root="${HCS_TESTBED_KIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/kind}"
out="$cache_root/${KIND_VERSION}-${KUBE_VERSION}"
bin="$out/bin"
images="$out/images"
mkdir -p "$bin" "$images"
node_image="hcs-testbed/kind-node:${KUBE_VERSION}"
gover="$(go env GOVERSION)"

# ---- 1. Go binaries ---------------------------------------------------------
# gobuild NAME MODULE_DIR PACKAGE STAMP LDFLAGS (tools/go-build-env.sh), niced: it shares 2 cores with everything else
gobuild() { GO_BUILD_NICE="nice -n 15" go_cached_build "$bin" "$@"; }
kv="$(kube_version_ldflags "$KUBE_VERSION")"
for c in kubelet kubeadm kubectl kube-controller-manager kube-scheduler kube-proxy; do
  gobuild "$c" "$here/kubernetes" "k8s.io/kubernetes/cmd/$c" "k8s.io/kubernetes ${KUBE_VERSION} go ${gover}" "-s -w${kv}"
done
gobuild kind "$here/kind" sigs.k8s.io/kind "sigs.k8s.io/kind ${KIND_VERSION} go ${gover}" "-s -w"
gobuild etcd "$here/etcd" go.etcd.io/etcd/server/v3 "go.etcd.io/etcd/server/v3 ${ETCD_VERSION_KIND} go ${gover}" "-s -w"
gobuild coredns "$here/coredns" . "github.com/coredns/coredns ${COREDNS_VERSION} $(sha256sum "$here/coredns/main.go" | cut -c1-12) go ${gover}" \
  "-s -w -X github.com/coredns/coredns/coremain.GitCommit=${COREDNS_VERSION}"
gobuild pause "$here/pause" . "pause $(sha256sum "$here/pause/main.go" | cut -c1-12) go ${gover}" "-s -w"
gobuild runc-wrap "$here/../docker/runc-wrap" . "runc-wrap $(sha256sum "$here/../docker/runc-wrap/main.go" | cut -c1-12) go ${gover}" "-s -w"

# ---- 2. Debian root filesystems (debootstrap) -------------------------------
node_pkgs="systemd,systemd-sysv,dbus,iptables,iproute2,ethtool,socat,conntrack,kmod,util-linux,mount,ca-certificates,procps,containerd,runc,containernetworking-plugins,libseccomp2"
slim_pkgs="iptables,conntrack,ca-certificates"
# rootfs NAME PACKAGES
rootfs() {
  local name="$1" pkgs="$2" t0 dir stamp
  t0="$(now)"; dir="$out/rootfs-$name"
  stamp="debootstrap --variant=minbase ${DEBIAN_SUITE} ${pkgs}"
  if [ "$force" = 0 ] && [ -d "$dir" ] && [ "$(cat "$dir.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "rootfs-$name: cached ($(elapsed "$t0") s)" >&2
    return
  fi
  echo "rootfs-$name: debootstrap ${DEBIAN_SUITE} ($pkgs) ..." >&2
  rm -rf "$dir" "$dir.tmp"
  if ! nice -n 15 timeout 1800 debootstrap --variant=minbase --include="$pkgs" "$DEBIAN_SUITE" "$dir.tmp" "$DEBIAN_MIRROR" > "$out/debootstrap-$name.log" 2>&1; then
    echo "rootfs-$name: debootstrap failed; last lines of $out/debootstrap-$name.log:" >&2
    tail -n 20 "$out/debootstrap-$name.log" >&2
    exit 1
  fi
  rm -rf "$dir.tmp/var/cache/apt/archives/"*.deb "$dir.tmp/var/lib/apt/lists/"*
  mv "$dir.tmp" "$dir"
  echo "$stamp" > "$dir.stamp"
  echo "rootfs-$name: built in $(elapsed "$t0") s ($(du -sh "$dir" | cut -f1))" >&2
}
rootfs node "$node_pkgs"
rootfs slim "$slim_pkgs"

# kube-apiserver: tools/kube's build (cached there). If another run of it is
# still building, wait for it (bounded) instead of starting a second build.
for i in $(seq 1 180); do
  pgrep -f 'tools/kube/build\.sh' >/dev/null || break
  [ "$i" = 1 ] && echo "kube-apiserver: waiting for a running tools/kube/build.sh ..." >&2
  sleep 10
done
apiserver_dir="$("$here/../kube/build.sh" | tail -n 1)"
[ -x "$apiserver_dir/kube-apiserver" ] || { echo "tools/kind/build.sh: tools/kube/build.sh gave no kube-apiserver" >&2; exit 1; }

# ---- 3. component images (docker import of a root filesystem, docker save) --
# image REF STAMP BASE(empty|slim) ENTRYPOINT_JSON BINARY...
image() {
  local ref="$1" stamp="$2" base="$3" entry="$4" t0 file stage
  shift 4
  t0="$(now)"
  file="$images/$(echo "$ref" | tr '/:' '__').tar"
  if [ "$force" = 0 ] && [ -f "$file" ] && [ "$(cat "$file.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "image $ref: cached ($(elapsed "$t0") s)" >&2
    return
  fi
  stage="$(mktemp -d "$out/.stage.XXXXXX")"
  if [ "$base" = slim ]; then
    cp -a "$out/rootfs-slim/." "$stage/"
  else
    mkdir -p "$stage/etc/ssl/certs" "$stage/tmp"
    chmod 1777 "$stage/tmp"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > "$stage/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' > "$stage/etc/group"
    cp "$out/rootfs-slim/etc/ssl/certs/ca-certificates.crt" "$stage/etc/ssl/certs/"
  fi
  mkdir -p "$stage/usr/local/bin"
  local b
  for b in "$@"; do cp "$b" "$stage/usr/local/bin/"; done
  tar -C "$stage" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENTRYPOINT $entry" - "$ref" >/dev/null
  rm -rf "$stage"
  docker save -o "$file.tmp" "$ref"
  mv -f "$file.tmp" "$file"
  echo "$stamp" > "$file.stamp"
  echo "image $ref: built in $(elapsed "$t0") s ($(du -h "$file" | cut -f1))" >&2
}
st() { cat "$1.stamp"; }
image "registry.k8s.io/kube-apiserver:${KUBE_VERSION}" "$(st "$apiserver_dir/kube-apiserver")" "" '["/usr/local/bin/kube-apiserver"]' "$apiserver_dir/kube-apiserver"
image "registry.k8s.io/kube-controller-manager:${KUBE_VERSION}" "$(st "$bin/kube-controller-manager")" "" '["/usr/local/bin/kube-controller-manager"]' "$bin/kube-controller-manager"
image "registry.k8s.io/kube-scheduler:${KUBE_VERSION}" "$(st "$bin/kube-scheduler")" "" '["/usr/local/bin/kube-scheduler"]' "$bin/kube-scheduler"
image "registry.k8s.io/kube-proxy:${KUBE_VERSION}" "$(st "$bin/kube-proxy") $(cat "$out/rootfs-slim.stamp")" slim '["/usr/local/bin/kube-proxy"]' "$bin/kube-proxy"
image "registry.k8s.io/etcd:${ETCD_IMAGE_TAG}" "$(st "$bin/etcd")" "" '["/usr/local/bin/etcd"]' "$bin/etcd"
image "registry.k8s.io/coredns/coredns:${COREDNS_VERSION}" "$(st "$bin/coredns")" "" '["/usr/local/bin/coredns"]' "$bin/coredns"
image "registry.k8s.io/pause:${PAUSE_VERSION}" "$(st "$bin/pause")" "" '["/usr/local/bin/pause"]' "$bin/pause"

# ---- 4. the node image -------------------------------------------------------
t0="$(now)"
node_stamp="$( (cat "$out/rootfs-node.stamp" "$bin"/{kubelet,kubeadm,kubectl,runc-wrap}.stamp "$images"/*.stamp; \
  cd "$here/node" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)"
if [ "$force" = 0 ] && [ "$(cat "$out/node-image.stamp" 2>/dev/null)" = "$node_stamp" ] \
  && docker image inspect "$node_image" >/dev/null 2>&1; then
  echo "node image $node_image: cached ($(elapsed "$t0") s)" >&2
else
  stage="$(mktemp -d "$out/.stage.XXXXXX")"
  cp -a "$out/rootfs-node/." "$stage/"
  cp -a "$here/node/." "$stage/"
  install -m 0755 "$bin/kubelet" "$bin/kubeadm" "$bin/kubectl" "$stage/usr/bin/"
  install -m 0755 "$bin/runc-wrap" "$stage/usr/local/sbin/runc-wrap"
  mkdir -p "$stage/kind/images" "$stage/etc/kubernetes/manifests" "$stage/var/lib/kubelet"
  echo "${KUBE_VERSION}" > "$stage/kind/version"
  cp "$images"/*.tar "$stage/kind/images/"
  : > "$stage/etc/machine-id"
  # kind's images/base does the same: enable the units, mask what cannot run in a container
  chroot "$stage" systemctl enable containerd.service kubelet.service hcs-testbed-images.service >/dev/null 2>&1
  chroot "$stage" systemctl mask systemd-binfmt.service systemd-udevd.service getty@tty1.service >/dev/null 2>&1 || true
  chroot "$stage" systemctl set-default multi-user.target >/dev/null 2>&1
  # (kind's own image also sets STOPSIGNAL SIGRTMIN+3, which `docker import
  # --change` does not take; kind deletes nodes with `docker rm -f` anyway)
  tar -C "$stage" -c . | docker import \
    --change 'ENV container=docker' \
    --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
    - "$node_image" >/dev/null
  rm -rf "$stage"
  echo "$node_stamp" > "$out/node-image.stamp"
  echo "node image $node_image: built in $(elapsed "$t0") s ($(docker image inspect -f '{{.Size}}' "$node_image" | awk '{printf "%.0f MB", $1/1e6}'))" >&2
fi
echo "tools/kind/build.sh: done in $(elapsed "$t_all") s; kind at $bin/kind" >&2
echo "$node_image"
