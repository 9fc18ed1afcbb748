#!/usr/bin/env bash
# Configures a build folder (default: build) with Ninja, installing into <build>/install.
# Extra arguments go to cmake, e.g. tools/configure.sh build -DMXPLUG_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-${MXPLUG_BUILD_DIR:-build}}"
shift || true
cmake -S . -B "$build" -G Ninja -DCMAKE_INSTALL_PREFIX="$PWD/$build/install" "$@"
