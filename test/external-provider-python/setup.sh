#!/usr/bin/env bash
# Create (or reuse) the venv of the minimal external provider and print its path
# (${XDG_CACHE_HOME:-$HOME/.cache}/hcs-testbed/provider-python-<hash>; test/support/python-venv.sh).
#   PROVIDER_PYTHON=python3.11 test/external-provider-python/setup.sh   (interpreter; default python3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../support/python-venv.sh" "$here/requirements.txt" provider-python "${PROVIDER_PYTHON:-python3}" PROVIDER_PYTHON
