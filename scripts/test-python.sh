#!/usr/bin/env bash
# Builds the Python package (python/) into a virtual environment under
# target/ and runs its tests. Needs python3 with venv and pip, and the
# Rust toolchain; maturin, cffi, numpy and pytest come from PyPI, and so
# do tflite-micro (the `tflite` extra, always: its tests never skip) and
# torch and executorch (the `executorch` extra, ~4 GB the first time: pip
# keeps the wheels in its cache). MINIMALLOC_SKIP_EXECUTORCH=1 leaves the
# executorch extra out; its tests then say they were skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
venv=target/python-venv
if [[ ! -x $venv/bin/python ]]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
# pip names each package as it fetches it (no progress bars: logs stay
# readable), so a long first download shows what it is.
pip=("$venv/bin/python" -m pip install --progress-bar off)
if [[ ${MINIMALLOC_SKIP_EXECUTORCH:-0} == 1 ]]; then
  echo "test-python: installing the package (maturin, cffi, numpy), pytest and the tflite extra"
  echo "test-python: (tflite-micro, TFLite Micro's runtime, about 3 MB) from PyPI into $venv"
  "${pip[@]}" "./python[tflite]" pytest
else
  echo "test-python: installing the package (maturin, cffi, numpy), pytest and mypy, the tflite"
  echo "test-python: extra (tflite-micro, about 3 MB) and the executorch extra (torch and"
  echo "test-python: executorch: about 4-6 GB the first time, then pip's cache) from PyPI into"
  echo "test-python: $venv; MINIMALLOC_SKIP_EXECUTORCH=1 leaves executorch out"
  "${pip[@]}" "./python[executorch,tflite]" pytest mypy
  # The package is typed (py.typed): its sources, ExecuTorch's module
  # included, stay clean under mypy --strict.
  "$venv/bin/python" -m mypy --strict python/src/minimalloc
fi
# From outside the source tree, so that the installed package is tested.
cd python/tests
exec "../../$venv/bin/python" -m pytest -q -rs "$@"
