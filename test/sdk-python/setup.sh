#!/usr/bin/env bash
# Create (or reuse) the venv of the Python SDK suite and print its path.
# The venv lives in ${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/sdk-python-<hash>,
# keyed by requirements.txt and the interpreter version, so a changed pin or
# Python makes a new one and a warm run costs nothing. Everything comes
# from PyPI through pip (pinned versions, --only-binary to avoid builds).
#   SDK_PYTHON=python3.11 test/sdk-python/setup.sh   (interpreter; default python3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py=${SDK_PYTHON:-python3}
if ! command -v "$py" >/dev/null; then echo "setup.sh: $py not found (set SDK_PYTHON)" >&2; exit 1; fi
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
key=$( (cat "$here/requirements.txt"; echo "$ver") | sha256sum | cut -c1-12)
venv="${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/sdk-python-$key"
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
