#!/usr/bin/env bash
# Builds if needed, installs into <build>/install, then runs every test: ctest (C++) and pytest
# (the CLI, Python and the out-of-tree plugin example, against the installed tree); then the C++
# tests again under AddressSanitizer and UndefinedBehaviorSanitizer (<build>-asan), and the engine
# and NDArray tests under ThreadSanitizer (<build>-tsan). Skip both with MXPLUG_TEST_SANITIZERS=0.
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

if [[ "${MXPLUG_TEST_SANITIZERS:-1}" != 0 ]]; then
  echo "== C++ tests under AddressSanitizer and UndefinedBehaviorSanitizer =="
  asan="$build-asan"
  [[ -f "$asan/CMakeCache.txt" ]] ||
    tools/configure.sh "$asan" -DMXPLUG_SANITIZE=address,undefined -DMXPLUG_WITH_PYTHON=OFF
  cmake --build "$asan"
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --test-dir "$asan" --output-on-failure -j "$(nproc)"
fi

if [[ "${MXPLUG_TEST_SANITIZERS:-1}" != 0 ]]; then
  echo "== Engine and NDArray tests under ThreadSanitizer =="
  tsan="$build-tsan"
  [[ -f "$tsan/CMakeCache.txt" ]] ||
    tools/configure.sh "$tsan" -DMXPLUG_SANITIZE=thread -DMXPLUG_WITH_PYTHON=OFF
  cmake --build "$tsan" --target mxplug_tests
  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir "$tsan" --output-on-failure -R 'Engine|Profiler|NDArray'
fi
