#!/usr/bin/env bash
# Issue 26 on the upstream Cluster API managers (test/upstream/rollouts.test.ts): the paused-scale scenario
# and HCS_TESTBED_UPSTREAM_GENERATED generated rollouts (default here 3), each on upstream and on the model.
# Needs HCS_TESTBED_KUBE_BIN / HCS_TESTBED_CAPI_BIN (tools/kube/build.sh, tools/capi/build.sh) and unshare -n
# (the managers' webhook servers bind every interface). Skips, saying why, when a prerequisite is missing;
# exits non-zero only when a test fails. Measured: see docs/capi.md "Generated rollouts".
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${HCS_TESTBED_KUBE_BIN:-}" ] || [ -z "${HCS_TESTBED_CAPI_BIN:-}" ]; then
  echo "== issue 26 rollouts on upstream: SKIPPED (HCS_TESTBED_KUBE_BIN / HCS_TESTBED_CAPI_BIN not set: no real binaries)"
  exit 0
fi
if ! unshare -n true 2>/dev/null; then
  echo "== issue 26 rollouts on upstream: SKIPPED (no unshare -n here)"
  exit 0
fi
export HCS_TESTBED_UPSTREAM_GENERATED="${HCS_TESTBED_UPSTREAM_GENERATED:-3}"
echo "== issue 26 rollouts on upstream: paused-scale + ${HCS_TESTBED_UPSTREAM_GENERATED} generated rollouts (seeds from ${HCS_TESTBED_UPSTREAM_GENERATED_SEED:-2601})"
exec unshare -n sh -c 'ip link set lo up && exec npx vitest run test/upstream/rollouts.test.ts'
