#!/usr/bin/env bash
# SDK conformance suites against a listening mock-hcs (issue 13, HCS-5):
# the official Go SDK (test/sdk-go, `go test`) and Python SDKs
# (test/sdk-python, pytest in a venv made by test/sdk-python/setup.sh), each
# against its own fresh mock-hcs on an ephemeral loopback port, over HTTPS
# (--tls-dir; the clients trust the CA through SSL_CERT_FILE /
# REQUESTS_CA_BUNDLE) with a sped-up clock.
#
#   test/sdk/run.sh [go|python|all]      (default all)
#
# Prints each suite's pass count and the per-call results (the SDK x call
# table of mock-hcs/README.md); exits non-zero when a suite fails or cannot
# run. Bounded: mock-hcs startup 60 s, Go 20 min (cold module download and
# compile included), Python 15 min (venv creation included).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
which=${1:-all}
case "$which" in go|python|all) ;; -h|--help) sed -n '2,15p' "$0"; exit 0 ;; *) echo "usage: $0 [go|python|all]" >&2; exit 2 ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/hcs-sdk.XXXXXX")
mock_pid=
stop_mock() {
  if [ -n "$mock_pid" ] && kill -0 "$mock_pid" 2>/dev/null; then
    kill "$mock_pid" 2>/dev/null || true
    wait "$mock_pid" 2>/dev/null || true
  fi
  mock_pid=
}
trap 'stop_mock; rm -rf "$work"' EXIT

# start_mock NAME: a fresh mock-hcs over TLS; sets MOCK_HCS_ENDPOINT and MOCK_HCS_CA.
start_mock() {
  local name=$1 out="$work/$1.mock.out"
  node "$root/mock-hcs/bin/mock-hcs.mjs" --port 0 --tls-dir "$work/tls" --speedup 200 --seed 1 >"$out" 2>"$work/$name.mock.err" &
  mock_pid=$!
  local i
  for i in $(seq 1 600); do
    if grep -q '^mock-hcs listening on ' "$out" 2>/dev/null; then break; fi
    if ! kill -0 "$mock_pid" 2>/dev/null; then echo "== mock-hcs failed to start:" >&2; cat "$work/$name.mock.err" >&2; return 1; fi
    sleep 0.1
  done
  MOCK_HCS_ENDPOINT=$(sed -n 's/^mock-hcs listening on //p' "$out")
  if [ -z "$MOCK_HCS_ENDPOINT" ]; then echo "== mock-hcs did not start within 60 s" >&2; return 1; fi
  # Not exported: only the suite commands trust mock-hcs's CA (pip and the Go proxy keep the system's).
  MOCK_HCS_CA="$work/tls/ca.crt"
  echo "== mock-hcs for $name: $MOCK_HCS_ENDPOINT (CA $MOCK_HCS_CA)"
}

status=0
summary=()

run_go() {
  if ! command -v go >/dev/null; then echo "== sdk-go: FAILED, no Go toolchain on this machine"; return 1; fi
  local t0=$SECONDS rc=0
  # Modules first, with the machine's own trust (GOFLAGS etc. as the environment sets them).
  (cd test/sdk-go && timeout 15m go mod download) || { echo "== sdk-go: FAILED to download the Go modules"; return 1; }
  echo "== go modules ready in $((SECONDS - t0)) s"
  start_mock go || return 1
  (cd test/sdk-go && MOCK_HCS_ENDPOINT="$MOCK_HCS_ENDPOINT" SSL_CERT_FILE="$MOCK_HCS_CA" SDK_RESULTS_FILE="$work/go.results" timeout 20m go test -count=1 -v ./... >"$work/go.log" 2>&1) || rc=$?
  stop_mock
  grep -E '^(--- FAIL|FAIL|panic|ok )|_test.go:[0-9]+:' "$work/go.log" | head -60 || true
  [ -f "$work/go.results" ] && sed 's/^/   /' "$work/go.results"
  local line
  line=$(grep '^sdk-go: ' "$work/go.log" || echo "sdk-go: did not run to the end (exit $rc)")
  echo "== $line in $((SECONDS - t0)) s (download, compile and run)"
  summary+=("$line")
  if [ "$rc" != 0 ]; then tail -n 40 "$work/go.log"; return 1; fi
}

run_python() {
  local t0=$SECONDS rc=0 venv
  venv=$(test/sdk-python/setup.sh) || { echo "== sdk-python: FAILED to create the venv"; return 1; }
  echo "== python venv ready in $((SECONDS - t0)) s: $venv"
  start_mock python || return 1
  MOCK_HCS_ENDPOINT="$MOCK_HCS_ENDPOINT" REQUESTS_CA_BUNDLE="$MOCK_HCS_CA" SSL_CERT_FILE="$MOCK_HCS_CA" PYTHONDONTWRITEBYTECODE=1 SDK_RESULTS_FILE="$work/py.results" timeout 15m "$venv/bin/python" -m pytest -p no:cacheprovider -q test/sdk-python >"$work/py.log" 2>&1 || rc=$?
  stop_mock
  tail -n 60 "$work/py.log"
  [ -f "$work/py.results" ] && sed 's/^/   /' "$work/py.results"
  local line
  line=$(grep '^sdk-python: ' "$work/py.log" || echo "sdk-python: did not run to the end (exit $rc)")
  # pytest exit 5 = no tests collected: a failure here, never a pass.
  [ "$rc" = 5 ] && line="sdk-python: no tests collected (pytest exit 5)"
  echo "== $line in $((SECONDS - t0)) s (venv and run)"
  summary+=("$line")
  [ "$rc" = 0 ]
}

if [ "$which" = go ] || [ "$which" = all ]; then run_go || status=1; fi
if [ "$which" = python ] || [ "$which" = all ]; then run_python || status=1; fi
echo "== SDK suites: ${summary[*]:-none}"
exit $status
