#!/usr/bin/env bash
# Runs one benchmark against its peer in the same run, prints a table, and writes
# ${MXPLUG_BUILD_DIR:-build}/bench/NAME.json (rows: metric, ours, peer, peer_name, ratio, better,
# unit). Not part of tools/test.sh's pass or fail.
#   tools/bench/run.sh engine [--quick] [--workers=N] [--rounds=N]   (against StarPU, eager and lws)
#   tools/bench/run.sh ops [--quick] [--threads=N] [--rounds=N]   (against PyTorch, MXNet 1.9.1, NumPy, OpenBLAS)
#   tools/bench/run.sh executor [--quick] [--threads=N] [--rounds=N]   (networks against PyTorch, MXNet 1.9.1)
#   tools/bench/run.sh train [--quick] [--threads=N] [--rounds=N]   (Module.fit against PyTorch, MXNet 1.9.1)
#   tools/bench/run.sh dist   (dist kvstores against MXNet 1.9.1 and a bare MPI_Allreduce; MLP with 1 and 2 workers)
#   tools/bench/run.sh gpu [--quick] [--rounds=N] [--device=testdev]   (gpu(0) against PyTorch on the same GPU;
#                                              on a GPU machine without Debian, tools/gpu/run.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/../.."
name="${1:-}"
shift || true
build="${MXPLUG_BUILD_DIR:-build}"
[[ -f "$build/CMakeCache.txt" ]] || tools/configure.sh "$build"
mkdir -p "$build/bench"
case "$name" in
  engine)
    cmake --build "$build" --target mxplug_bench_engine > /dev/null
    /usr/bin/python3 -c 'import sys; sys.path.insert(0, "tools/bench"); import peers; print("CPU: " + peers.cpu_description())'
    "$build/bin/mxplug_bench_engine" --json="$build/bench/engine.json" "$@"
    ;;
  ops|executor|train|gpu|dist)
    cmake --build "$build" > /dev/null
    cmake --install "$build" > /dev/null
    MXPLUG_BUILD_DIR="$build" /usr/bin/python3 "tools/bench/${name}_bench.py" --json="$build/bench/$name.json" "$@"
    ;;
  *)
    echo "usage: tools/bench/run.sh engine|ops|executor|train|gpu|dist [--quick] [--workers=N | --threads=N]" >&2
    exit 2
    ;;
esac
