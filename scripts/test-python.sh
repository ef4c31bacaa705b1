#!/usr/bin/env bash
# Builds the Python package (python/) into a virtual environment under
# target/ and runs its tests. Needs python3 with venv and pip, and the
# Rust toolchain; maturin, cffi, numpy and pytest come from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
venv=target/python-venv
if [[ ! -x $venv/bin/python ]]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet ./python pytest
# From outside the source tree, so that the installed package is tested.
cd python/tests
exec "../../$venv/bin/python" -m pytest -q "$@"
