#!/usr/bin/env bash
# One conformance run of the minimal Python provider (provider.py) as the run's external provider:
#   test/external-provider-python/run.sh [--bug fresh-volume|delete-volumes] SCENARIO.yaml...
#   (HCS_COMMAND=run: `hcs-testbed run` instead, i.e. with the reference checks too)
# Starts `hcs-testbed conformance --backend apiserver --provider external`, waits (bounded) for its ready
# marker, starts provider.py from provider.env, and returns the run's exit code; the run's output (the
# conformance table) is on stdout, the provider's log in $OUT/provider.log. The provider stops on the
# run's stop file (HCS_STOP_FILE); it is killed if it is still there after the run.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bug=""
if [ "${1:-}" = "--bug" ]; then bug="$2"; shift 2; fi
venv=${PROVIDER_VENV:-$("$here/setup.sh")} || exit 1
out=$(mktemp -d "${TMPDIR:-/tmp}/hcs-pyprovider-XXXXXX")
echo "run.sh: output in $out${bug:+ (planted bug: $bug)}" >&2
( cd "$root" && exec timeout "${RUN_TIMEOUT:-1500}" node bin/hcs-testbed.mjs "${HCS_COMMAND:-conformance}" "$@" --backend apiserver --provider external \
    --external-dir "$out/external" --provider-health auto --provider-wait 90s --provider-log "$out/provider.log" \
    --speed "${SPEED:-10}" --no-color ) &
run=$!
for _ in $(seq 1 600); do [ -f "$out/external/ready" ] && break; kill -0 $run 2>/dev/null || break; sleep 0.2; done
if [ ! -f "$out/external/ready" ]; then echo "run.sh: no ready marker after 120 s" >&2; kill $run 2>/dev/null; wait $run; exit 1; fi
(
  set -a; . "$out/external/provider.env"; set +a
  case "$bug" in
    fresh-volume) export PYHCS_BUG_FRESH_VOLUME=1 ;;
    delete-volumes) export PYHCS_BUG_DELETE_VOLUMES=1 ;;
    "") ;;
    *) echo "run.sh: unknown --bug $bug" >&2; exit 2 ;;
  esac
  exec "$venv/bin/python" "$here/provider.py" >> "$out/provider.log" 2>&1
) &
prov=$!
wait $run; code=$?
for _ in $(seq 1 50); do kill -0 $prov 2>/dev/null || break; sleep 0.2; done
if kill -0 $prov 2>/dev/null; then echo "run.sh: the provider did not stop on the stop file; killing it" >&2; kill $prov; fi
wait $prov 2>/dev/null
echo "run.sh: provider log $out/provider.log ($(wc -l < "$out/provider.log") lines, $(grep -c Traceback "$out/provider.log") tracebacks)" >&2
exit $code
