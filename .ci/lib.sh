# Shell helpers shared by CI's scripts (sourced, not run): .ci/run, .ci/steps.d/*, tools/kind/ci-*.sh.
# The sourcing script may define say() (its log prefix) first; a default is given.
declare -F say >/dev/null || say() { echo "ci: $*"; }

# timed NAME CMD...: run CMD, print its time and result; return its exit code. A script that remembers
# failures defines on_timed_failure(), which is called after a failed command with NAME and the exit code.
timed() {
  local what="$1" t0 rc
  shift
  t0=$(date +%s)
  say "== $what"
  "$@"
  rc=$?
  say "== $what: $([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)") in $(( $(date +%s) - t0 )) s"
  if [ $rc != 0 ] && declare -F on_timed_failure >/dev/null; then on_timed_failure "$what" "$rc"; fi
  return $rc
}

# apt_install PKG...: install Debian packages, bounded (the package index refreshed only when the first
# try fails). Returns non-zero when they could not be installed.
apt_install() {
  local pkgs="$*"
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1 && return 0
  DEBIAN_FRONTEND=noninteractive timeout 300 apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null 2>&1 || return 1
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1
}

# install_debootstrap: a fresh Debian machine has no debootstrap, which the node and base root filesystems
# need. No-op where it is present. Returns non-zero when it could not be installed.
install_debootstrap() {
  command -v debootstrap >/dev/null && return 0
  timed "install debootstrap (apt)" apt_install debootstrap
}
