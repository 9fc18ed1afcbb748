#!/usr/bin/env bash
# Runs a command as on a machine with AVX2 and no AVX-512: every library that picks its kernels
# by the CPU (oneDNN, Debian's, PyTorch's and MXNet's; OpenBLAS; PyTorch's own kernels; NumPy's
# ufuncs) is capped at AVX2. mxplug's own code is built for baseline x86-64 (no -march), so the
# libraries' choices are the whole difference between the two machine kinds.
#   tools/as-avx2.sh tools/test.sh
#   tools/as-avx2.sh tools/bench/run.sh ops
set -euo pipefail
export ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 MKLDNN_MAX_CPU_ISA=AVX2
export OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2
export NPY_DISABLE_CPU_FEATURES="AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
exec "$@"
