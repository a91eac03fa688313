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

# go_cached_build OUT NAME MODULE_DIR PACKAGE STAMP LDFLAGS: build PACKAGE (from MODULE_DIR) into
# OUT/NAME unless OUT/NAME exists with OUT/NAME.stamp == STAMP (or --force); atomic (temporary
# file + rename). $GO_BUILD_NICE (e.g. "nice -n 15") runs the compiler at a lower priority.
go_cached_build() {
  local out="$1" name="$2" dir="$3" pkg="$4" stamp="$5" ldflags="$6" t0 tmp
  t0="$(now)"
  if [ "$force" = 0 ] && [ -x "$out/$name" ] && [ "$(cat "$out/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$name: cached ($(elapsed "$t0") s) $out/$name" >&2
    return
  fi
  echo "$name: building $pkg ($stamp) ..." >&2
  tmp="$out/.$name.tmp.$$"
  # shellcheck disable=SC2086
  (cd "$dir" && ${GO_BUILD_NICE:-} go build -ldflags="$ldflags" -o "$tmp" "$pkg")
  mv -f "$tmp" "$out/$name"
  echo "$stamp" > "$out/$name.stamp"
  echo "$name: built in $(elapsed "$t0") s ($(du -h "$out/$name" | cut -f1)) $out/$name" >&2
}

# kube_version_ldflags VERSION: the -X flags that make a k8s.io/kubernetes binary report VERSION.
kube_version_ldflags() {
  local v="$1" major minor p kv=""
  major="${v#v}"; major="${major%%.*}"
  minor="${v#v*.}"; minor="${minor%%.*}"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    kv+=" -X $p.gitVersion=${v} -X $p.gitMajor=${major} -X $p.gitMinor=${minor}"
    kv+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$kv"
}
