#!/usr/bin/env bash
# Make a Docker engine usable on this machine, idempotently:
#   1. install Debian's docker.io where dockerd is missing (root, apt);
#   2. where the capability bounding set lacks CAP_SYS_RESOURCE (a VM that
#      dropped it: `docker run --privileged` then fails with "unable to apply
#      caps: operation not permitted"), build tools/docker/runc-wrap and make it
#      dockerd's default runtime in /etc/docker/daemon.json. On a normal machine
#      nothing is written (and the wrapper would change nothing anyway);
#   3. start dockerd (systemctl where systemd runs, else in the background with
#      its log in $HCS_TESTBED_DOCKERD_LOG) and wait, bounded, for `docker info`.
# Says what it did on stderr. Exit: 0 usable, 1 failed, 2 cannot (not root,
# no Go for the wrapper).
#
#   tools/docker/start.sh [--timeout SECONDS]     (default 90)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
timeout_s=90
[ "${1:-}" = "--timeout" ] && timeout_s="${2:?--timeout needs seconds}"
log="${HCS_TESTBED_DOCKERD_LOG:-/var/log/hcs-testbed-dockerd.log}"
wrap_bin=/usr/local/sbin/hcs-testbed-runc-wrap
say() { echo "docker/start: $*" >&2; }
t0=$(date +%s)

docker_ok() { timeout 20 docker info --format '{{.ServerVersion}} {{.DefaultRuntime}}' 2>/dev/null; }

# CAP_SYS_RESOURCE is bit 24 of CapBnd.
needs_wrapper() {
  local bnd
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  [ -n "$bnd" ] && [ $(( 0x$bnd >> 24 & 1 )) = 0 ]
}

# The runtime wrapper, only where the capability is missing: built (or
# refreshed: runc execs it per container, so a new binary takes effect at
# once) even when dockerd already runs; daemon.json is written when missing.
wrapper() {
  if ! needs_wrapper; then
    say "CapBnd has CAP_SYS_RESOURCE: no runtime wrapper needed"
    return
  fi
  command -v go >/dev/null || { say "this machine lacks CAP_SYS_RESOURCE, so dockerd needs tools/docker/runc-wrap, which needs Go (>= 1.24) to build"; exit 2; }
  local stamp
  stamp="$(sha256sum "$here/runc-wrap/main.go" | cut -c1-16) $(go env GOVERSION)"
  if [ -x "$wrap_bin" ] && [ "$(cat "$wrap_bin.stamp" 2>/dev/null)" = "$stamp" ]; then
    say "CapBnd lacks CAP_SYS_RESOURCE: runtime wrapper $wrap_bin is current"
  else
    [ "$(id -u)" = 0 ] || { say "this machine lacks CAP_SYS_RESOURCE and the runtime wrapper must be installed as root"; exit 2; }
    (cd "$here/runc-wrap" && GOTOOLCHAIN=local CGO_ENABLED=0 timeout 300 nice -n 15 go build -trimpath -ldflags='-s -w' -o "$wrap_bin.tmp" .)
    mv -f "$wrap_bin.tmp" "$wrap_bin"
    echo "$stamp" > "$wrap_bin.stamp"
    say "CapBnd lacks CAP_SYS_RESOURCE: built the runtime wrapper $wrap_bin (drops CAP_SYS_RESOURCE and a negative oomScoreAdj from each container's spec and exec process, then execs runc)"
  fi
}

write_daemon_json() {
  needs_wrapper || return 0
  mkdir -p /etc/docker
  local cfg=/etc/docker/daemon.json want
  [ -s "$cfg" ] || echo '{}' > "$cfg"
  want=$(jq --arg p "$wrap_bin" '.runtimes["hcs-runc-wrap"] = {path: $p} | .["default-runtime"] = "hcs-runc-wrap"' "$cfg")
  if [ "$want" != "$(jq . "$cfg")" ]; then
    echo "$want" > "$cfg"
    say "wrote $cfg: default-runtime hcs-runc-wrap"
  fi
}

wrapper
if v=$(docker_ok); then
  say "dockerd already running (version, default runtime: $v)"
  if needs_wrapper && [ "${v#* }" != hcs-runc-wrap ]; then
    say "warning: this machine lacks CAP_SYS_RESOURCE but dockerd's default runtime is not hcs-runc-wrap: --privileged containers (kind nodes) will fail; stop dockerd and rerun"
  fi
  exit 0
fi

# 1. docker.io
if ! command -v dockerd >/dev/null; then
  [ "$(id -u)" = 0 ] || { say "dockerd is not installed and this is not root: install docker.io (Debian/Ubuntu) or Docker Engine"; exit 2; }
  command -v apt-get >/dev/null || { say "dockerd is not installed and there is no apt-get: install a Docker engine"; exit 2; }
  say "installing docker.io (apt) ..."
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { timeout 900 apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends docker.io iptables >&2; }
  apt_install || { timeout 300 apt-get -o DPkg::Lock::Timeout=300 update >&2 && apt_install; } \
    || { say "apt-get install docker.io failed"; exit 1; }
fi
[ "$(id -u)" = 0 ] || { say "dockerd is not running and this is not root: start it (sudo systemctl start docker)"; exit 2; }
write_daemon_json

# 3. start dockerd, bounded
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
  say "starting docker with systemctl"
  timeout 120 systemctl start docker || { say "systemctl start docker failed: journalctl -u docker"; exit 1; }
else
  say "starting dockerd in the background (log: $log)"
  mkdir -p "$(dirname "$log")"
  setsid nohup dockerd >>"$log" 2>&1 < /dev/null &
fi
deadline=$(( $(date +%s) + timeout_s ))
until v=$(docker_ok); do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    say "dockerd did not answer \`docker info\` within ${timeout_s} s; last log lines:"
    tail -n 20 "$log" >&2 2>/dev/null || true
    exit 1
  fi
  sleep 1
done
say "dockerd ready in $(( $(date +%s) - t0 )) s (version, default runtime: $v)"
