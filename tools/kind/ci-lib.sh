# Shared by tools/kind/ci-prebuild.sh and tools/kind/ci-step.sh (sourced, not run).
# The sourcing script defines say() (its log prefix) before calling these.

# timed NAME CMD...: run CMD, print its time and result; return its exit code. A script that remembers
# failures defines on_timed_failure(), which is called after a failed command.
timed() {
  local what="$1" t0 rc
  shift
  t0=$(date +%s)
  say "== $what"
  "$@"
  rc=$?
  say "== $what: $([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)") in $(( $(date +%s) - t0 )) s"
  if [ $rc != 0 ] && declare -F on_timed_failure >/dev/null; then on_timed_failure; fi
  return $rc
}

# install_debootstrap: a fresh Debian machine has no debootstrap, which the node and base root filesystems
# need. Installs it with apt (bounded; the package index refreshed only when the first try fails); no-op
# where it is present. Returns non-zero when it could not be installed.
install_debootstrap() {
  command -v debootstrap >/dev/null && return 0
  timed "install debootstrap (apt)" bash -c 'export DEBIAN_FRONTEND=noninteractive;
    inst() { timeout 600 apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends debootstrap >/dev/null; }
    inst || { timeout 300 apt-get -o DPkg::Lock::Timeout=300 update -qq && inst; }'
}
