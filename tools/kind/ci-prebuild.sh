#!/usr/bin/env bash
# CI: build everything tools/kind/ci-step.sh needs, early and in the
# background. .ci/run starts this right after tools/capi/build.sh, so the
# CPU-bound Go compiles and the network-bound debootstraps overlap the tests
# that wait on the wall clock (the upstream managers at a speed factor idle
# about half of the 2 cores); the kind step at the end then finds it all
# cached. Every compile runs niced (tools/kind/build.sh), so the tests keep
# the CPU they ask for.
#
#   1. debootstrap (apt) where it is missing: the node and base root
#      filesystems need it (a fresh Debian machine does not have it);
#   2. a Docker engine (tools/docker/start.sh);
#   3. kind + the node image (tools/kind/build.sh);
#   4. the Cluster API manager images, their manifests and the provider image
#      on the local base image (tools/kind/images.sh).
#
# Writes a one-line status to $1 (default out/kind-prebuild.status):
# "ok <image>", "failed: <step>" or "skipped: <reason>". Exit 0 unless a
# step that ran failed. ci-step.sh does not depend on it: without it, it
# builds in the foreground when its budget allows.
#
#   tools/kind/ci-prebuild.sh [STATUS_FILE]
set -uo pipefail
cd "$(dirname "$0")/../.."
status="${1:-out/kind-prebuild.status}"
mkdir -p "$(dirname "$status")" out
t_start=$(date +%s)
say() { echo "kind-prebuild: $*"; }
finish() {
  echo "$1" > "$status"
  say "$1 ($(( $(date +%s) - t_start )) s)"
  case "$1" in failed:*) exit 1 ;; *) exit 0 ;; esac
}
# shellcheck source=.ci/lib.sh
. .ci/lib.sh
echo "running" > "$status"

[ "$(id -u)" = 0 ] || finish "skipped: not root (tools/docker/start.sh installs and starts dockerd)"
command -v go >/dev/null || finish "skipped: go is not installed"
install_debootstrap || finish "failed: apt-get install debootstrap"
timed "Docker engine (tools/docker/start.sh)" tools/docker/start.sh --timeout 120 || finish "failed: tools/docker/start.sh"
timed "kind + node image (tools/kind/build.sh)" bash -c 'tools/kind/build.sh > out/kind-ci-image.txt' \
  || finish "failed: tools/kind/build.sh"
image="$(tail -n 1 out/kind-ci-image.txt)"
timed "images: Cluster API managers + provider (tools/kind/images.sh)" bash -c 'tools/kind/images.sh > out/kind-ci-images.txt' \
  || finish "failed: tools/kind/images.sh"
finish "ok $image"
