#!/usr/bin/env bash
# Builds the Python package (python/) into a virtual environment under
# target/ and runs its tests. Needs python3 with venv and pip, and the
# Rust toolchain; maturin, cffi, numpy and pytest come from PyPI, and so
# do torch and executorch (the package's `executorch` extra, ~4 GB the
# first time: pip keeps the wheels in its cache). MINIMALLOC_SKIP_EXECUTORCH=1
# leaves the extra out; its tests then say they were skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
venv=target/python-venv
if [[ ! -x $venv/bin/python ]]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
if [[ ${MINIMALLOC_SKIP_EXECUTORCH:-0} == 1 ]]; then
  "$venv/bin/python" -m pip install --quiet ./python pytest
else
  "$venv/bin/python" -m pip install --quiet "./python[executorch]" pytest mypy
  # The package is typed (py.typed): its sources, ExecuTorch's module
  # included, stay clean under mypy --strict.
  "$venv/bin/python" -m mypy --strict python/src/minimalloc
fi
# From outside the source tree, so that the installed package is tested.
cd python/tests
exec "../../$venv/bin/python" -m pytest -q -rs "$@"
