#!/usr/bin/env bash
# Build the base image of the project's Dockerfile without a container
# registry: a Debian root filesystem (debootstrap, minbase) with Node.js and
# npm from Debian's packages, imported into Docker as hcs-testbed/node-base:<suite>.
# Cached: the root filesystem under the cache directory, and the image while
# Docker has it (a stamp records what it was built from).
#
#   tools/docker/base-image.sh [--force]     # prints the image name last
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck disable=SC1091
source "$here/../kind/versions.env"
force=0; [ "${1:-}" = "--force" ] && force=1
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
t0="$(now)"
command -v debootstrap >/dev/null || { echo "docker/base-image: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
timeout 20 docker info >/dev/null 2>&1 || { echo "docker/base-image: no Docker engine; start one with tools/docker/start.sh" >&2; exit 2; }

image="hcs-testbed/node-base:${DEBIAN_SUITE}"
# npm goes in with apt inside the new root: debootstrap's own resolver leaves
# some of npm's dependencies out (node-gauge needs node-color-support).
pkgs="nodejs,ca-certificates"
apt_pkgs="npm"
dir="${HCS_TESTBED_DOCKER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/docker}/rootfs-node-base"
stamp="debootstrap --variant=minbase ${DEBIAN_SUITE} ${pkgs}; apt-get install ${apt_pkgs}"
mkdir -p "$(dirname "$dir")"
if [ "$force" = 1 ] || [ ! -d "$dir" ] || [ "$(cat "$dir.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "docker/base-image: debootstrap ${DEBIAN_SUITE} ($pkgs) ..." >&2
  rm -rf "$dir" "$dir.tmp"
  if ! nice -n 15 timeout 1800 debootstrap --variant=minbase --include="$pkgs" "$DEBIAN_SUITE" "$dir.tmp" "$DEBIAN_MIRROR" > "$dir.log" 2>&1; then
    echo "docker/base-image: debootstrap failed; last lines of $dir.log:" >&2
    tail -n 20 "$dir.log" >&2
    exit 1
  fi
  if ! { timeout 600 chroot "$dir.tmp" apt-get update -q \
      && DEBIAN_FRONTEND=noninteractive timeout 900 chroot "$dir.tmp" apt-get install -y -q --no-install-recommends $apt_pkgs; } >> "$dir.log" 2>&1; then
    echo "docker/base-image: apt-get install $apt_pkgs in the new root failed; last lines of $dir.log:" >&2
    tail -n 20 "$dir.log" >&2
    exit 1
  fi
  rm -rf "$dir.tmp/var/cache/apt/archives/"*.deb "$dir.tmp/var/lib/apt/lists/"*
  mv "$dir.tmp" "$dir"
  echo "$stamp" > "$dir.stamp"
  rm -f "$dir.image-stamp"
fi
# This machine's own extra CAs (/usr/local/share/ca-certificates, e.g. a
# TLS-inspecting egress proxy's): the image trusts what the host trusts, so
# `npm ci` in the Dockerfile reaches the registry the way the host's npm does.
# They are copied at build time only (never into the repository).
extra_cas="$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null | sha256sum | cut -c1-16)"
image_stamp="$stamp; extra CAs $extra_cas"
if [ "$force" = 0 ] && [ "$(cat "$dir.image-stamp" 2>/dev/null)" = "$image_stamp" ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "docker/base-image: $image cached ($(elapsed "$t0") s)" >&2
else
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    mkdir -p "$dir/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$dir/usr/local/share/ca-certificates/"
    chroot "$dir" update-ca-certificates >/dev/null 2>&1 || { echo "docker/base-image: update-ca-certificates failed in the root filesystem" >&2; exit 1; }
    echo "docker/base-image: added this machine's CAs from /usr/local/share/ca-certificates" >&2
  fi
  tar -C "$dir" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' - "$image" >/dev/null
  echo "$image_stamp" > "$dir.image-stamp"
  echo "docker/base-image: $image built in $(elapsed "$t0") s (node $(docker run --rm "$image" node --version))" >&2
fi
echo "$image"
