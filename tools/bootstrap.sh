#!/usr/bin/env bash
# Set-up on a fresh Debian 12 machine: dependencies, configure, build, install into
# build/install, a short demo of what the plugins registered, and a real training run
# (examples/train/train_mnist.py) that must reach its goal accuracies.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys objects by paths relative to the checkout, so every clone shares the cache; with -g
# it would also key them by the build folder unless told not to (the debug info then names the
# folder the object was first compiled in).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
build="${MXPLUG_BUILD_DIR:-build}"

tools/install-deps.sh
tools/configure.sh "$build"
cmake --build "$build"
cmake --install "$build" > /dev/null
echo
echo "== mxplug installed in $build/install =="
"$build/install/bin/mxplug" list
echo
"$build/install/bin/mxplug" describe FullyConnected
echo
"$build/install/bin/mxplug" devices
echo
if ! grep -q '"python": true' "$build/components.json"; then
  echo "== The Python package was not built (see the configure output), so the training example is skipped =="
  exit 0
fi
echo "== Training examples/train/train_mnist.py on Fashion-MNIST: the MLP, then the LeNet =="
PYTHONPATH="$PWD/$build/install/lib/python3/dist-packages" /usr/bin/python3 examples/train/train_mnist.py \
  --check --checkpoint-dir "$build/checkpoints/train_mnist"
echo "== bootstrap: both networks reached their goal test accuracy; checkpoints in $build/checkpoints/train_mnist =="
