#!/usr/bin/env bash
# Build (or reuse from the cache) real binaries from the Go module proxy and hand their directory to later
# steps: tools/kube (kube-apiserver + etcd) or tools/capi (the upstream Cluster API managers and CRDs).
#   .ci/steps.d/build.sh kube HCS_TESTBED_KUBE_BIN
#   .ci/steps.d/build.sh capi HCS_TESTBED_CAPI_BIN
# A failed build (e.g. the module proxy unreachable) is reported; the tests that need the binaries skip,
# saying why. Cold: kube ~4-9 min, capi ~2-4 min on 2 cores; cached: < 1 s.
set -uo pipefail
cd "$(dirname "$0")/../.."
tool="$1" var="$2"
dir="$(tools/"$tool"/build.sh | tail -n 1)" || { echo "build of tools/$tool FAILED"; exit 1; }
[ -n "$dir" ] && [ -d "$dir" ] || { echo "build of tools/$tool gave no directory"; exit 1; }
echo "$var=$dir" >> "${CI_ENV:-/dev/null}"
echo "tools/$tool ready: $dir"
