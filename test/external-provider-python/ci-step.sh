#!/usr/bin/env bash
# CI step (issue 22): the minimal Python provider through `hcs-testbed conformance` on the real kube-apiserver.
#  1. scale-out-workers, worker-infra-upgrade, maxsurge-disk-reuse pass the contract (exit 0, no FAIL row),
#     although the provider writes none of the reference provider's log lines, messages or annotations;
#  2. with PYHCS_BUG_FRESH_VOLUME (a replacement gets a fresh volume) worker-infra-upgrade fails naming DISK-8;
#  3. with PYHCS_BUG_DELETE_VOLUMES (servers deleted with their persistent volumes) scale-out-workers fails
#     naming DISK-9.
# Skips (exit 0, with the reason) when python3 / venv or the kube-apiserver binaries are missing.
# Safe in a clean clone; ~5-8 min on 2 shared cores.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
skip() { echo "external-provider-python: SKIP: $*"; exit 0; }
command -v python3 >/dev/null || skip "python3 not found"
python3 -c 'import venv, ensurepip' 2>/dev/null || skip "python3 has no venv/ensurepip (apt-get install python3-venv)"
kube_cache=${HCS_TESTBED_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/kube}
ls "$kube_cache"/*/kube-apiserver >/dev/null 2>&1 || [ -n "${HCS_TESTBED_KUBE_BIN:-}" ] || skip "no kube-apiserver/etcd (tools/kube/build.sh; src/harness/realcluster/apiserver/binaries.ts)"
venv=$("$here/setup.sh") || { echo "external-provider-python: FAIL: the venv could not be built"; exit 1; }
export PROVIDER_VENV="$venv"
fail=0
check() { # name, expected exit, output file, pattern that must appear, pattern that must not
  local name=$1 want=$2 file=$3 must=$4 mustnot=${5:-}
  local got; got=$(sed -n 's/^exit=//p' "$file")
  if [ "$got" != "$want" ] || ! grep -Eq "$must" "$file" || { [ -n "$mustnot" ] && grep -Eq "$mustnot" "$file"; }; then
    echo "external-provider-python: FAIL: $name (exit $got, expected $want; /$must/ ${mustnot:+and not /$mustnot/})"; tail -40 "$file"; fail=1
  else echo "external-provider-python: ok: $name"; fi
}
tmp=$(mktemp -d)
t0=$(date +%s)
"$here/run.sh" "$root/scenarios/scale-out-workers.yaml" "$root/scenarios/worker-infra-upgrade.yaml" "$root/scenarios/maxsurge-disk-reuse.yaml" > "$tmp/pass.out" 2>&1; echo "exit=$?" >> "$tmp/pass.out"
check "the worker scenarios pass the contract; the provider stopped on the run's stop file, no tracebacks" 0 "$tmp/pass.out" '^conformance: [0-9]+ rules pass, 0 fail' '^[A-Z]+-[0-9]+ .* FAIL|did not stop on the stop file| [1-9][0-9]* tracebacks'
"$here/run.sh" --bug fresh-volume "$root/scenarios/worker-infra-upgrade.yaml" > "$tmp/fresh.out" 2>&1; echo "exit=$?" >> "$tmp/fresh.out"
check "a fresh volume on replacement fails DISK-8" 1 "$tmp/fresh.out" '^DISK-8 .*FAIL'
"$here/run.sh" --bug delete-volumes "$root/scenarios/scale-out-workers.yaml" > "$tmp/delete.out" 2>&1; echo "exit=$?" >> "$tmp/delete.out"
check "persistent volumes deleted with the server fail DISK-9" 1 "$tmp/delete.out" '^DISK-9 .*FAIL'
echo "external-provider-python: $(( $(date +%s) - t0 )) s wall"
exit $fail
