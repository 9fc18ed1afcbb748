#!/usr/bin/env bash
# The one command on a GPU machine (docs/gpu.md). From the root of a checkout that carries
# gpu-pack/mxplug-gpu.tar.xz (tools/gpu/pack.sh, run on the Debian build machine), it unpacks the
# build into build-gpu, builds the Python extension for this machine's Python and pybind11, and
# runs, on gpu(0):
#   cpp        the backend conformance suite (tests/cpp/test_device_conformance.cc)
#   ops        the op conformance suite (tests/python/test_conformance.py) and the CUDA plugin tests
#   python     the NDArray, executor, Module and kvstore tests with mx.gpu(0) as the default context,
#              and DLPack with PyTorch's CUDA tensors
#   sanitizer  compute-sanitizer memcheck over the backend suite and a representative op subset,
#              racecheck over the kernels that share memory
#   bench      the GPU benchmarks against PyTorch on the same GPU (tools/bench/gpu_bench.py)
# then writes summary.md, build.log and each step's log (at most 8 files, as the device tool
# returns) to $OUT if set, else build-gpu/gpu-run. It exits 0
# only if every step it ran passed; a machine without a CUDA device fails it, saying so.
#   tools/gpu/run.sh [--device=cuda|testdev] [--quick] [--time-limit=S] [--bench-rounds=N] [STEP...]
#   (default: every step; the benchmarks' median of 3 rounds)
# --device=testdev rehearses the run on a machine without a GPU (mx.gpu is the asynchronous test
# device, PyTorch's side of the benchmarks runs on the CPU, no sanitizer); --quick runs a subset
# of each suite. Every command has a time limit (a hung kernel costs one step, not the run), each
# test one too where pytest-timeout is present; --time-limit=S ends the whole run within S seconds
# (the device tool's limit per command), stopping the step it is in and skipping the rest.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
repo="$PWD"
device=cuda
quick=0
time_limit=0
bench_rounds=3
steps=()
for arg in "$@"; do
  case "$arg" in
    --device=cuda | --device=testdev) device="${arg#--device=}" ;;
    --quick) quick=1 ;;
    --time-limit=[0-9]*) time_limit="${arg#--time-limit=}" ;;
    --bench-rounds=[1-9]*) bench_rounds="${arg#--bench-rounds=}" ;;
    cpp | ops | python | sanitizer | bench) steps+=("$arg") ;;
    *) echo "usage: tools/gpu/run.sh [--device=cuda|testdev] [--quick] [--time-limit=S] [--bench-rounds=N] [cpp|ops|python|sanitizer|bench]..." >&2; exit 2 ;;
  esac
done
((${#steps[@]})) || steps=(cpp ops python sanitizer bench)
python="${PYTHON:-python3}"
build="build-gpu"
results="${OUT:-$build/gpu-run}"
mkdir -p "$results"
rm -f "$results"/{summary.md,build.log,cpp.log,ops.log,python.log,sanitizer.log,bench.log,bench.json}
summary="$results/summary.md"
failed=0
rows=()

step_row() {  # name, result, details; a failed step's log ends the output
  rows+=("| $1 | $2 | $3 |")
  echo "== $1: $2 ($3)"
  if [[ "$2" != passed && "$2" != skipped* ]]; then
    failed=1
    tail -60 "$log"
  fi
}
pytest_counts() {  # the last line of a pytest log: "N passed, M skipped in T s"
  grep -E "^(=+ )?[0-9]+ (passed|failed|error)" "$1" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//'
}
gtest_counts() {
  local passed skipped failed
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\./\1/p' "$1")
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?.*/\1/p' "$1")
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?.*/\1/p' "$1")
  echo "${passed:-0} passed, ${skipped:-0} skipped, ${failed:-0} failed"
}

# --- Unpack the build (once per machine: an unchanged pack is not unpacked again) -------------
pack="gpu-pack/mxplug-gpu.tar.xz"
if [[ ! -f "$pack" ]]; then
  echo "tools/gpu/run.sh: $pack is missing: run tools/gpu/pack.sh on the build machine and carry gpu-pack" >&2
  exit 1
fi
stamp="$(sha256sum "$pack" | cut -c1-16)"
if [[ "$(cat "$build/.pack" 2>/dev/null)" != "$stamp" ]]; then
  rm -rf "$build" "$build.tmp" && mkdir -p "$build.tmp"
  tar -C "$build.tmp" -xJf "$pack" || exit 1
  mv "$build.tmp/build" "$build" && mv "$build.tmp/deps" "$build.tmp/MANIFEST" "$build/" && rmdir "$build.tmp"
  # A carried library this machine has (zlib, say) gives way to the machine's own, which may be
  # newer than Debian's and is what its other programs were built against.
  system_libs="$(ldconfig -p)"  # read whole: grep -q in a pipeline would fail it under pipefail
  for lib in "$build"/deps/*; do
    if grep -q "^[[:space:]]*$(basename "$lib") (libc6,x86-64)" <<< "$system_libs"; then rm "$lib"; fi
  done
  echo "$stamp" > "$build/.pack"
fi
mkdir -p "$results"  # again: the default one is inside the build folder just replaced

# The carried libraries, then CUDA's cuBLAS, cuDNN and NCCL: the toolkit's, or those PyTorch's wheels bring.
cuda_libs="$("$python" - <<'EOF'
import glob, os, sys
dirs = []
for lib in ("libcublas.so.*", "libcudnn.so.*", "libnccl.so.*"):
    found = [d for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/lib") if glob.glob(os.path.join(d, lib))]
    for p in sys.path:
        found += sorted({os.path.dirname(f) for f in glob.glob(os.path.join(p, "nvidia", "**", lib), recursive=True)})
    dirs += [d for d in found if d not in dirs]
print(":".join(dirs))
EOF
)"
export LD_LIBRARY_PATH="$repo/$build/deps:$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MXPLUG_BUILD_DIR="$build" MXPLUG_WITHOUT_MXNET=1 PYTHONUNBUFFERED=1
export MXPLUG_CACHE_DIR="$repo/$build/cache"

# --- The Python extension, for this Python ----------------------------------------------------
ext_log="$results/build.log"
dlpack_dir="$repo/$build/install/$(sed -n 's/^dlpack config: //p' "$build/MANIFEST")"
if ! { cmake -S python -B "$build/python-ext" -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_PREFIX_PATH="$repo/$build/install" -Ddlpack_DIR="$dlpack_dir" \
         -DPython3_EXECUTABLE="$(command -v "$python")" -Dpybind11_DIR="$("$python" -m pybind11 --cmakedir)" &&
       cmake --build "$build/python-ext"; } > "$ext_log" 2>&1; then
  tail -30 "$ext_log"
  echo "tools/gpu/run.sh: building mxplug._core for $("$python" --version) failed (log: $ext_log)" >&2
  exit 1
fi

# What a command after this one needs to run mxplug here as the steps do (`source build-gpu/env.sh`).
declare -p LD_LIBRARY_PATH MXPLUG_BUILD_DIR MXPLUG_WITHOUT_MXNET PYTHONUNBUFFERED MXPLUG_CACHE_DIR |
  sed 's/^declare -x/export/' > "$build/env.sh"
echo "export PYTHONPATH=\"$repo/$build/install/lib/python3/dist-packages\"" >> "$build/env.sh"

# --- The machine ------------------------------------------------------------------------------
devices="$("$build/bin/mxplug" devices 2>&1)"
echo "$devices"
gpu="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
versions="$("$python" -c 'import platform, numpy; v = "Python %s, NumPy %s" % (platform.python_version(), numpy.__version__)
try:
    import torch; v += ", PyTorch %s (CUDA %s)" % (torch.__version__, torch.version.cuda)
except ImportError: pass
print(v)')"
count="$("$build/bin/mxplug" --json devices | "$python" -c 'import json, sys
print(sum(d["count"] for d in json.load(sys.stdin)["devices"] if d["name"] == "cuda"))')"
if [[ "$device" == cuda && "$count" == 0 ]]; then
  { echo "# mxplug on a GPU machine: no CUDA device"; echo; echo "$devices"; } > "$summary"
  echo "tools/gpu/run.sh: the CUDA plugin sees no device here (above); on a machine without a GPU," \
       "tools/gpu/run.sh --device=testdev rehearses the run" >&2
  exit 1
fi
backend_filter="Backends/DeviceConformance.*/$device"
xdist=()
"$python" -c 'import xdist' 2>/dev/null && xdist=(-n "$(( $(nproc) < 8 ? $(nproc) : 8 ))")
# Each step's commands run at most this long each (a hang, not a slow run), and never past the
# run's --time-limit, less 20 s for the summary.
# MXPLUG_GPU_LIMIT_<step>=S sets one step's.
declare -A step_limit=([cpp]=180 [ops]=600 [python]=420 [sanitizer]=600 [bench]=1200)
for s in "${!step_limit[@]}"; do
  v="MXPLUG_GPU_LIMIT_$s"
  [[ -n "${!v:-}" ]] && step_limit[$s]="${!v}"
done
within() {  # step, command...: 124 if stopped at the limit, 125 if no time was left to start it
  local limit="${step_limit[$1]}"
  shift
  if ((time_limit)); then
    local left=$((time_limit - SECONDS - 20))
    ((left < limit)) && limit=$left
    if ((limit < 15)); then
      echo "tools/gpu/run.sh: not run, the run's --time-limit=$time_limit is reached: $*"
      return 125
    fi
  fi
  timeout -k 10 "$limit" "$@"
}
verdict() {  # a command's exit code, in words for the summary
  case "$1" in
    0 | "") echo passed ;;
    124 | 137) echo "FAILED (stopped at its time limit)" ;;
    125) echo "skipped (no time left)" ;;
    *) echo FAILED ;;
  esac
}
per_test=()  # a hung test ends its worker (pytest-xdist starts another), not the step
"$python" -c 'import pytest_timeout' 2>/dev/null && per_test=(--timeout=180 --timeout-method=thread)
pytest_run() {  # log, pytest arguments...
  local log="$1"
  shift
  within "$step" "$python" -m pytest -q -p no:cacheprovider "${per_test[@]}" "$@" > "$log" 2>&1
}
# A representative subset for slow runs: the MLP's ops, the convolutional network's, a gather, a
# reduction, the updates, the random ops; each in float32 on the device.
subset='gpu and (FullyConnected or dot or softmax or SoftmaxOutput or Activation or broadcast_add
  or sum or argmax or take or Embedding or Concat or slice or transpose or Cast or update or Dropout
  or samplers or Convolution or Pooling or BatchNorm)'
subset="${subset//$'\n'/ }"

for step in "${steps[@]}"; do
  log="$results/$step.log"
  case "$step" in
    cpp)
      within cpp "$build/bin/mxplug_tests" --gtest_filter="$backend_filter" > "$log" 2>&1
      code=$?
      step_row "backend conformance ($device)" "$(verdict $code)" "$(gtest_counts "$log")"
      ;;
    ops)
      args=(tests/python/test_conformance.py)
      [[ "$device" == cuda ]] && args+=(tests/python/test_cuda.py)
      ((quick)) && args+=(-k "$subset")
      MXPLUG_TEST_DEVICE="$device" pytest_run "$log" "${xdist[@]}" "${args[@]}"
      code=$?
      step_row "op conformance ($device)" "$(verdict $code)" "$(pytest_counts "$log")"
      if [[ "$device" == cuda ]]; then  # the ops on vendor libraries again, on the project's (HIP's) kernels
        MXPLUG_CUDA_PORTABLE_KERNELS=1 MXPLUG_TEST_DEVICE=cuda pytest_run "$results/portable.log" \
          "${xdist[@]}" tests/python/test_conformance.py \
          -k "dot or FullyConnected or onvolution or BatchNorm or Activation or oftmax or LRN"
        code=$?
        cat "$results/portable.log" >> "$log" && rm "$results/portable.log"
        step_row "op conformance (cuda, portable kernels)" "$(verdict $code)" \
          "$(pytest_counts "$log")"
      fi
      ;;
    python)
      args=(tests/python/test_ndarray.py tests/python/test_executor.py tests/python/test_module.py
            tests/python/test_kvstore.py
            tests/python/test_library.py::test_the_extension_exports_none_of_a_cxx_runtime_it_links_statically)
      ((quick)) && args+=(-k "gpu or device or memory or pinned or module or kvstore")
      MXPLUG_TEST_DEVICE="$device" pytest_run "$log" "${xdist[@]}" "${args[@]}"
      code=$?
      step_row "NDArray, executor, Module, kvstore on gpu(0)" "$(verdict $code)" \
        "$(pytest_counts "$log")"
      if [[ "$device" == cuda ]]; then  # DLPack with PyTorch's CUDA tensors and pinned memory; the file's CPU tests need cpu(0) as the default
        pytest_run "$results/dlpack.log" tests/python/test_dlpack.py -k "cuda or pinned"
        code=$?
        cat "$results/dlpack.log" >> "$log" && rm "$results/dlpack.log"
        step_row "DLPack with PyTorch CUDA tensors and pinned memory" "$(verdict $code)" \
          "$(pytest_counts "$log")"
        # The LeNet of examples/train on gpu(0), to its goal, on the Fashion-MNIST the pack carries.
        if [[ -d gpu-pack/fashion-mnist ]]; then
          PYTHONPATH="$repo/$build/install/lib/python3/dist-packages" within python "$python" examples/train/train_mnist.py \
            --network lenet --gpu --data-dir gpu-pack/fashion-mnist --check --no-progress \
            --checkpoint-dir "$build/checkpoints" > "$results/train.log" 2>&1
          code=$?
          accuracy="$(grep -oE "test accuracy [0-9.]+ \(goal [0-9.]+[^)]*\)" "$results/train.log" | tail -1)"
          cat "$results/train.log" >> "$log" && rm "$results/train.log"
          step_row "LeNet on Fashion-MNIST, train_mnist.py --gpu" "$(verdict $code)" \
            "${accuracy:-no accuracy printed}"
        else
          step_row "LeNet on Fashion-MNIST, train_mnist.py --gpu" "skipped" "the pack carries no Fashion-MNIST"
        fi
      fi
      ;;
    sanitizer)
      if [[ "$device" != cuda ]] || ! command -v compute-sanitizer > /dev/null; then
        step_row "compute-sanitizer memcheck and racecheck" "skipped" "needs CUDA and compute-sanitizer"
        continue
      fi
      # API errors are not reported: mxplug checks every call's status itself, and NCCL's set-up
      # probes for kernels of other architectures and gets cudaErrorNoKernelImageForDevice.
      sanitize=(compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 97 --print-limit 20)
      within sanitizer "${sanitize[@]}" "$build/bin/mxplug_tests" --gtest_filter="$backend_filter" > "$log" 2>&1
      code1=$?
      within sanitizer "${sanitize[@]}" "$python" -m pytest -q -p no:cacheprovider tests/python/test_conformance.py \
        -k "$subset and float32 or gpu and (update or samplers or Dropout)" >> "$log" 2>&1
      code2=$?
      # racecheck: the kernels that share memory within a block (the reductions, BatchNorm's
      # statistics, the portable GEMM under the matrix products and the convolutions).
      racecheck=(compute-sanitizer --tool racecheck --error-exitcode 97 --print-limit 20)
      MXPLUG_CUDA_PORTABLE_KERNELS=1 within sanitizer "${racecheck[@]}" "$python" -m pytest -q -p no:cacheprovider \
        tests/python/test_conformance.py \
        -k "gpu and float32 and (sum or mean or norm or dot or FullyConnected or Convolution or BatchNorm)" \
        >> "$log" 2>&1
      code3=$?
      errors="$(grep -oE "ERROR SUMMARY: [0-9]+" "$log" | awk '{n += $3} END {print n + 0}')"
      step_row "compute-sanitizer memcheck and racecheck" \
        "$(verdict "$(for c in $code1 $code2 $code3; do ((c)) && { echo $c; break; }; done)")" \
        "$errors errors over the backend suite and op tests ($(pytest_counts "$log"))"
      ;;
    bench)
      bench_args=(--device="$device" --json="$results/bench.json" --rounds="$bench_rounds")
      ((quick)) && bench_args+=(--quick)
      within bench "$python" tools/bench/gpu_bench.py "${bench_args[@]}" > "$log" 2>&1
      code=$?
      step_row "benchmarks against PyTorch" "$(verdict $code)" "table below"
      ;;
  esac
done

{
  echo "# mxplug on a GPU machine"
  echo
  echo "- GPU: ${gpu:-none (nvidia-smi found no GPU)}; device under test: $device"
  echo "- $versions"
  sed 's/^/- /' "$build/MANIFEST"
  echo "- carried libraries in use (the others this machine has): $(find "$build/deps" -type f -printf '%f ')"
  echo
  echo "| step | result | details |"
  echo "| --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  echo
  echo '```'
  echo "$devices"
  echo '```'
  if [[ -f "$results/bench.log" ]]; then
    echo
    echo '```'
    sed -n '/^== table/,$p' "$results/bench.log" | sed 1d
    echo '```'
  fi
} > "$summary"
echo
cat "$summary"
exit "$failed"
