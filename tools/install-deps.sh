#!/usr/bin/env bash
# Installs every Debian package that mxplug's build, tests and benchmarks need, and the
# MXNet 1.9.1 reference environment (an oracle for file formats and a benchmark peer; never a
# dependency of mxplug). Idempotent: a second run installs nothing and takes seconds.
set -euo pipefail

packages=(
  # build
  cmake ninja-build ccache g++ pkg-config
  # core and plugins
  libopenblas-dev libdnnl-dev ocl-icd-opencl-dev libdlpack-dev
  libboost-dev libboost-filesystem-dev nlohmann-json3-dev libcli11-dev libfmt-dev zlib1g-dev
  libturbojpeg0-dev libpng-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev
  # the per-op instruction budget (tests/python/test_op_cost.py: callgrind)
  valgrind
  # Python package (Debian's /usr/bin/python3 is the project's interpreter)
  pybind11-dev python3-dev python3-numpy python3-pytest python3-venv python3-torch
  # mx.viz.plot_network: the graphviz Python package and the dot program that renders
  python3-graphviz graphviz
  # mx.test_utils.chi_square_check and verify_generator (scipy.stats), as in MXNet
  python3-scipy
  # the HIP device plugin (compile and load only: Debian 12 has HIP 5.2 but no rocBLAS or MIOpen)
  hipcc libamdhip64-dev
  # distribution
  libopenmpi-dev openmpi-bin
  # the distributed tests look for processes a job left behind (pgrep)
  procps
  # the two-host test makes "hosts" of network namespaces (ip netns; unshare is in util-linux)
  iproute2
  # data for examples and benchmark peers
  dataset-fashion-mnist libstarpu-dev python3-matplotlib
  # PyTorch as its users run it: one OpenMP pool, so an OpenMP OpenBLAS (tools/bench/peers.py)
  libopenblas0-openmp
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} Debian packages present"
fi

# MXNet 1.9.1 in its own virtual environment: the oracle and peer. It needs numpy 1.23.5 (1.24
# removed np.bool, which MXNet 1.9.1 uses at import).
venv="${MXPLUG_MXNET_VENV:-$HOME/.cache/mxplug/mxnet-venv}"
if [[ "${MXPLUG_SKIP_MXNET:-0}" != 1 ]]; then
  # graphviz (the Python package) lets MXNet's mx.viz.plot_network be the oracle of ours; pip
  # takes the version MXNet 1.9.1 declares (>=0.8.1,<0.9), as a newer pin cannot be resolved.
  # scipy: MXNet's test_utils.chi_square_check needs it, as mxplug's does.
  if ! "$venv/bin/python" -c 'import mxnet, graphviz, scipy' >/dev/null 2>&1; then
    echo "install-deps: creating the MXNet 1.9.1 reference environment in $venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'mxnet==1.9.1' 'numpy==1.23.5' 'graphviz<0.9' 'scipy==1.10.1'
  else
    echo "install-deps: MXNet reference environment present in $venv"
  fi
fi
