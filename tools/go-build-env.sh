# Shared by tools/kube/build.sh and tools/capi/build.sh (sourced, not run):
# the Go build environment, --force, and timing helpers.
#
#   go_build_env SCRIPT_NAME "$@"   # sets force=0|1; exits 2 when Go is missing
#   now; elapsed T0                  # seconds since T0, one decimal

go_build_env() {
  local script="$1"
  shift
  force=0
  [ "${1:-}" = "--force" ] && force=1
  command -v go >/dev/null || { echo "$script: go is not installed (needs Go >= 1.24)" >&2; exit 2; }
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -trimpath"
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
