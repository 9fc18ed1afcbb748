#!/usr/bin/env bash
# Builds if needed, installs into <build>/install, then runs every test: ctest (C++) and pytest
# (the CLI and the out-of-tree plugin example, against the installed tree).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${MXPLUG_BUILD_DIR:-build}"
export MXPLUG_BUILD_DIR="$build"

[[ -f "$build/CMakeCache.txt" ]] || tools/configure.sh "$build"
cmake --build "$build"
cmake --install "$build" > /dev/null

echo "== C++ tests (ctest) =="
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

echo "== Python tests (pytest) =="
# Debian's interpreter: it is the one that sees python3-numpy and python3-pytest.
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python
