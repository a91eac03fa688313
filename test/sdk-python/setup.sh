#!/usr/bin/env bash
# Create (or reuse) the venv of the Python SDK suite and print its path
# (${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/sdk-python-<hash>; test/support/python-venv.sh).
#   SDK_PYTHON=python3.11 test/sdk-python/setup.sh   (interpreter; default python3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../support/python-venv.sh" "$here/requirements.txt" sdk-python "${SDK_PYTHON:-python3}" SDK_PYTHON
