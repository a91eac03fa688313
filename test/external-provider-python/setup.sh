#!/usr/bin/env bash
# Create (or reuse) the venv of the minimal external provider and print its path (as test/sdk-python/setup.sh:
# keyed by requirements.txt and the interpreter version; pinned versions from PyPI, wheels only).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py=${PROVIDER_PYTHON:-python3}
if ! command -v "$py" >/dev/null; then echo "setup.sh: $py not found (set PROVIDER_PYTHON)" >&2; exit 1; fi
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
key=$( (cat "$here/requirements.txt"; echo "$ver") | sha256sum | cut -c1-12)
venv="${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/provider-python-$key"
if [ -x "$venv/bin/python" ] && [ -f "$venv/.complete" ]; then echo "$venv"; exit 0; fi
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
if ! "$py" -m venv "$venv" >&2; then
  echo "setup.sh: '$py -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
  exit 1
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --only-binary=:all: -r "$here/requirements.txt" >&2
touch "$venv/.complete"
echo "$venv"
