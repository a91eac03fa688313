#!/usr/bin/env bash
# Issue 26 on the upstream Cluster API managers (test/upstream/rollouts.test.ts): the paused-scale scenario
# and HCS_TESTBED_UPSTREAM_GENERATED generated rollouts (default 2: the CI share; bench/upstream-generated.ts
# runs 20 or more), each on upstream and on the model, against one apiserver + managers.
# Needs HCS_TESTBED_KUBE_BIN / HCS_TESTBED_CAPI_BIN (tools/kube/build.sh, tools/capi/build.sh) and unshare -n
# (the managers' webhook servers bind every interface). Skips, saying why, when a prerequisite is missing.
#
# Budget: HCS_TESTBED_CI_SECONDS_LEFT (seconds CI has left; unset: no limit). Paused-scale alone needs
# ~EST_BASE s; each generated rollout ~EST_EACH s more. Fewer generated rollouts are run when not all fit
# (saying so), none at all when paused-scale does not fit (SKIPPED, with the reason). Every run is bounded
# by a watchdog at 3x its estimate (HCS_TESTBED_ROLLOUTS_WATCHDOG_S overrides it; it then stops the processes
# this script started, by their ids).
# Prints the pass count and the wall time. Exits non-zero only when a test failed or the watchdog fired.
# Measured: see docs/capi.md "Generated rollouts".
#
#   HCS_TESTBED_CI_SECONDS_LEFT=1800 test/upstream/run-rollouts.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
say() { echo "== issue 26 rollouts on upstream: $*"; }
if [ -z "${HCS_TESTBED_KUBE_BIN:-}" ] || [ -z "${HCS_TESTBED_CAPI_BIN:-}" ]; then
  say "SKIPPED (HCS_TESTBED_KUBE_BIN / HCS_TESTBED_CAPI_BIN not set: no real binaries)"
  exit 0
fi
if ! unshare -n true 2>/dev/null; then
  say "SKIPPED (no unshare -n here)"
  exit 0
fi
# Estimates (s) on 2 shared cores at load average 7-25 (docs/capi.md): apiserver + managers 10-30, paused-scale
# 165-300 on upstream + ~5 on the model; a generated rollout 24-147 on upstream + its model runs.
EST_BASE=360
EST_EACH=180
generated="${HCS_TESTBED_UPSTREAM_GENERATED:-2}"
if [ -n "${HCS_TESTBED_CI_SECONDS_LEFT:-}" ]; then
  left="$HCS_TESTBED_CI_SECONDS_LEFT"
  if [ "$left" -lt "$EST_BASE" ]; then
    say "SKIPPED (paused-scale needs ~${EST_BASE} s, ${left} s left in the CI budget)"
    exit 0
  fi
  fit=$(( (left - EST_BASE) / EST_EACH ))
  if [ "$fit" -lt "$generated" ]; then
    say "${generated} generated rollouts asked, ${fit} fit in the ${left} s left (~${EST_EACH} s each): running ${fit}"
    generated="$fit"
  fi
fi
export HCS_TESTBED_UPSTREAM_GENERATED="$generated"
cap="${HCS_TESTBED_ROLLOUTS_WATCHDOG_S:-$(( 3 * (EST_BASE + generated * EST_EACH) ))}"
out="$(mktemp -d "${TMPDIR:-/tmp}/hcs-rollouts-ci.XXXXXX")"
say "paused-scale + ${generated} generated rollouts (seeds from ${HCS_TESTBED_UPSTREAM_GENERATED_SEED:-2601}); watchdog at ${cap} s"

# The processes this script started, deepest first (the apiserver and managers run detached, in their own
# process groups, so a process-group kill would miss them).
descendants() {
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    descendants "$c"
    echo "$c"
  done
}
t0=$SECONDS
unshare -n sh -c 'ip link set lo up && exec npx vitest run test/upstream/rollouts.test.ts --reporter=default --reporter=json --outputFile.json="$1"' sh "$out/vitest.json" &
pid=$!
(
  end=$(( SECONDS + cap ))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$end" ]; then
      echo "== issue 26 rollouts on upstream: WATCHDOG after ${cap} s, stopping the run"
      pids="$(descendants "$pid") $pid"
      # shellcheck disable=SC2086
      kill -TERM $pids 2>/dev/null
      sleep 10
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null
      exit 0
    fi
    sleep 5
  done
) &
watchdog=$!
wait "$pid"
rc=$?
wait "$watchdog"
wall=$(( SECONDS - t0 ))
summary="$(node -e '
  try {
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(`${r.numPassedTests} of ${r.numTotalTests} passed (${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped)`);
  } catch (e) { console.log(`no test report (${e.message})`); }
' "$out/vitest.json")"
say "${summary} in ${wall} s wall (paused-scale + ${generated} generated; exit ${rc})"
rm -rf "$out"
exit "$rc"
