#!/usr/bin/env bash
# Builds if needed, installs into <build>/install, then runs every test: ctest (C++) and pytest
# (the CLI, Python and the out-of-tree plugin example, against the installed tree); then the C++
# tests again under AddressSanitizer and UndefinedBehaviorSanitizer (<build>-asan), and the engine
# and NDArray tests under ThreadSanitizer (<build>-tsan), then fuzzes the .params and symbol
# JSON loaders and the RecordIO and image readers for 30 s each (libFuzzer, <build>-fuzz,
# MXPLUG_FUZZ_SECONDS). Skip all three with MXPLUG_TEST_SANITIZERS=0.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys objects by paths relative to the checkout, so every clone shares the cache; with -g
# it would also key them by the build folder unless told not to (the debug info then names the
# folder the object was first compiled in).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
build="${MXPLUG_BUILD_DIR:-build}"
export MXPLUG_BUILD_DIR="$build"

[[ -f "$build/CMakeCache.txt" ]] || tools/configure.sh "$build"
cmake --build "$build"
cmake --install "$build" > /dev/null

echo "== C++ tests (ctest) =="
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

echo "== Python tests (pytest) =="
# Debian's interpreter: it is the one that sees python3-numpy and python3-pytest.
/usr/bin/python3 -m pytest -q -p no:cacheprovider --durations=20 tests/python

echo "== Python tests and the op conformance suite on the asynchronous test device (mx.gpu is testdev) =="
# tests/plugins/test_device.cc: streams that run every copy and kernel later, on threads of their
# own. These fail if the engine lets a function complete before its stream (docs/engine.md).
MXPLUG_TEST_DEVICE=testdev /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_ndarray.py tests/python/test_executor.py tests/python/test_module.py \
  tests/python/test_kvstore.py tests/python/test_conformance.py

if grep -q '"cuda": *true' "$build/components.json"; then
  echo "== The GPU machine's one command, rehearsed on the test device (docs/gpu.md) =="
  # What tools/gpu/run.sh does on a GPU machine (unpack the pack, build the Python extension on
  # its own against the unpacked install, run the suites with mx.gpu as the device), done here on
  # the asynchronous test device and a subset of the suites, so that the scripts keep working.
  tools/gpu/pack.sh | tail -1
  PYTHON=/usr/bin/python3 tools/gpu/run.sh --device=testdev --quick cpp ops python
fi

# The ASan and TSan trees compile at -O0 and the fuzz tree at -O2 (CMakeLists.txt says why).
# The sanitizer builds leave oneDNN out: TSan cannot see into its OpenMP runtime, and
# LeakSanitizer's tracer crashed (signal 11) at the exit of a test process that had run oneDNN
# primitives. The oneDNN path is tested in the main build (tests/python/test_onednn.py). They
# leave the CUDA and HIP plugins out too: the sanitizers do not instrument device code, and the
# main build compiles them once.
if [[ "${MXPLUG_TEST_SANITIZERS:-1}" != 0 ]]; then
  echo "== C++ tests under AddressSanitizer and UndefinedBehaviorSanitizer =="
  asan="$build-asan"
  [[ -f "$asan/CMakeCache.txt" ]] ||
    tools/configure.sh "$asan" -DMXPLUG_SANITIZE=address,undefined -DMXPLUG_WITH_PYTHON=OFF -DMXPLUG_WITH_ONEDNN=OFF \
      -DMXPLUG_WITH_CUDA=OFF -DMXPLUG_WITH_HIP=OFF
  cmake --build "$asan"
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --test-dir "$asan" --output-on-failure -j "$(nproc)"
fi

if [[ "${MXPLUG_TEST_SANITIZERS:-1}" != 0 ]]; then
  echo "== Engine (event completion included) and NDArray tests under ThreadSanitizer =="
  tsan="$build-tsan"
  [[ -f "$tsan/CMakeCache.txt" ]] ||
    tools/configure.sh "$tsan" -DMXPLUG_SANITIZE=thread -DMXPLUG_WITH_PYTHON=OFF -DMXPLUG_WITH_ONEDNN=OFF \
      -DMXPLUG_WITH_CUDA=OFF -DMXPLUG_WITH_HIP=OFF
  cmake --build "$tsan" --target mxplug_tests
  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir "$tsan" --output-on-failure -R 'Engine|EventCompletion|Profiler|NDArray|Prefetcher|DataIter'

  fuzz="$build-fuzz"
  [[ -f "$fuzz/CMakeCache.txt" ]] ||
    tools/configure.sh "$fuzz" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DMXPLUG_SANITIZE=address,undefined,fuzzer-no-link -DMXPLUG_WITH_PYTHON=OFF -DMXPLUG_BUILD_TESTS=OFF \
      -DMXPLUG_WITH_CUDA=OFF -DMXPLUG_WITH_HIP=OFF
  # Seeds in tests/fuzz/corpus/<target>: MXNet 1.9.1's own files; for recordio, files in the
  # format tests/python/test_recordio.py checks against MXNet's; and, made here, inputs nested
  # 200,000 deep or megabytes large (make_large_seeds.py). No input cap below 8 MiB, so that
  # nesting and size bugs are not hidden.
  max_len=$((8 << 20))
  for target in ndarray_file symbol_json recordio; do
    mkdir -p "$fuzz/fuzz-corpus/$target"
  done
  /usr/bin/python3 tests/fuzz/make_large_seeds.py "$fuzz/fuzz-corpus/symbol_json" \
    "$fuzz/fuzz-corpus/ndarray_file" "$fuzz/fuzz-corpus/recordio"
  for target in ndarray_file symbol_json recordio; do
    echo "== Fuzzing the $target loader (libFuzzer under ASan and UBSan, ${MXPLUG_FUZZ_SECONDS:-30} s) =="
    cmake --build "$fuzz" --target "mxplug_fuzz_$target"
    corpus="$fuzz/fuzz-corpus/$target"
    cp "tests/fuzz/corpus/$target"/* "$corpus/"
    log="$fuzz/fuzz-$target.log"
    if ! UBSAN_OPTIONS=halt_on_error=1 "$fuzz/bin/mxplug_fuzz_$target" \
        -max_total_time="${MXPLUG_FUZZ_SECONDS:-30}" -max_len="$max_len" -rss_limit_mb=2048 \
        -print_final_stats=1 "$corpus" >"$log" 2>&1; then
      cat "$log"  # the crash report and the input that caused it
      exit 1
    fi
    grep -E "^Done|stat::number_of_executed_units" "$log"
  done
fi
