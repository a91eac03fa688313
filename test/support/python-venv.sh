#!/usr/bin/env bash
# Create (or reuse) a venv for a pinned requirements file and print its path (shared by
# test/sdk-python/setup.sh and test/external-provider-python/setup.sh).
#   test/support/python-venv.sh REQUIREMENTS NAME PYTHON PYTHON_VAR   (PYTHON_VAR: the variable that chose PYTHON, for the error)
# The venv lives in ${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/NAME-<hash>, keyed by the
# requirements file and the interpreter version, so a changed pin or Python makes a new one
# and a warm run costs nothing. Everything comes from PyPI through pip (pinned versions,
# --only-binary to avoid builds). Progress goes to stderr; only the path to stdout.
set -euo pipefail
req=$1 name=$2 py=$3 var=$4
if ! command -v "$py" >/dev/null; then echo "setup.sh: $py not found (set $var)" >&2; exit 1; fi
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
key=$( (cat "$req"; echo "$ver") | sha256sum | cut -c1-12)
venv="${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/$name-$key"
if [ -x "$venv/bin/python" ] && [ -f "$venv/.complete" ]; then echo "$venv"; exit 0; fi
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
if ! "$py" -m venv "$venv" >&2; then
  echo "setup.sh: '$py -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
  exit 1
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --only-binary=:all: -r "$req" >&2
touch "$venv/.complete"
echo "$venv"
