#!/usr/bin/env bash
# Set-up on a fresh Debian 12 machine: dependencies, configure, build, install into
# build/install, then a short demo of what the plugins registered.
set -euo pipefail
cd "$(dirname "$0")/.."
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
