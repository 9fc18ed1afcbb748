#!/usr/bin/env bash
# Packs what a GPU machine needs from this Debian build into gpu-pack/mxplug-gpu.tar.xz
# (docs/gpu.md): the build tree's binaries stripped of debug information (the core, the plugins with
# the CUDA one, the CLI, the C++ tests and the test plugins), the install tree, the shared libraries
# they need that a bare machine lacks (OpenBLAS, oneDNN, libgfortran, ...; never glibc, libstdc++
# or CUDA's own, which the GPU machine has), and the header-only dependencies that building the
# Python extension there needs (dlpack, nlohmann-json). The sources travel as the checkout itself;
# tools/gpu/run.sh, run there from the checkout's root, unpacks this and does the rest.
#   tools/gpu/pack.sh            (the build folder: MXPLUG_BUILD_DIR, default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${MXPLUG_BUILD_DIR:-build}"
out=gpu-pack
limit_mib=56  # the device tool carries 64 MiB with the checkout; the checkout is about 2 MiB

[[ -f "$build/CMakeCache.txt" ]] || tools/configure.sh "$build"
cmake --build "$build"
cmake --install "$build" > /dev/null
if ! grep -q '"cuda": *true' "$build/components.json"; then
  echo "tools/gpu/pack.sh: $build was built without the CUDA plugin (no nvcc found): nothing to run on a GPU" >&2
  exit 1
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
tree="$stage/build"
mkdir -p "$tree/bin" "$tree/tests" "$stage/deps"

# The install tree is the one copy of the libraries and plugins; the build tree's lib/ points at
# it (the C++ tests look for plugins in build/lib/mxplug/plugins), so nothing travels twice.
cp -a "$build/install" "$tree/install"
rm -f "$tree/install/lib/python3/dist-packages/mxplug/"_core.*.so  # built there, for its Python
current="$(basename "$(readlink -f "$build/install/lib/libmxplug.so")")"
find "$tree/install/lib" -maxdepth 1 -type f -name 'libmxplug.so.*' ! -name "$current" -delete  # older installs
# The HIP plugin stays behind: NVIDIA machines cannot use it, and its runtime (libamdhip64, with
# ROCm's code-object compiler and LLVM behind it) would not fit in the pack.
rm -f "$tree/install/lib/mxplug/plugins/libmxplug_hip.so"
ln -s install/lib "$tree/lib"
cp "$build/bin/mxplug_tests" "$tree/bin/"
ln -s ../install/bin/mxplug "$tree/bin/mxplug"
(cd "$build/tests" && find plugins -name '*.so' -print0 | xargs -0 cp --parents -t "$tree/tests")
cp "$build/components.json" "$tree/"

# Debug information is most of the size (the CUDA plugin: 93 MB with it, 24 MB without).
elves() { find "$tree" -type f -print0 | xargs -0 file | grep -E 'ELF .*(executable|shared object)' | cut -d: -f1; }
for f in $(elves); do strip --strip-debug "$f"; done

# Shared libraries the binaries need, but for the C and C++ runtimes and CUDA's, cuBLAS and cuDNN
# included (the machine has those, newer) and mxplug's own.
system_libs='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn|libnccl|libmxplug)\.so'
for f in $(elves); do
  ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ "$name" =~ $system_libs ]] || cp -L "$path" "$stage/deps/$name"
done

# Header-only dependencies, where mxplug's CMake package looks for them under its prefix.
prefix_copy() {  # a file or folder under /usr, copied to the same place under the install tree
  local rel="${1#/usr/}"
  mkdir -p "$tree/install/$(dirname "$rel")"
  cp -a "$1" "$tree/install/$rel"
}
dlpack_dir="$(sed -n 's/^dlpack_DIR:PATH=//p' "$build/CMakeCache.txt")"
json_dir="$(sed -n 's/^nlohmann_json_DIR:PATH=//p' "$build/CMakeCache.txt")"
prefix_copy "$(realpath "$dlpack_dir")"
prefix_copy "$(realpath "$json_dir")"
prefix_copy /usr/include/dlpack
prefix_copy /usr/include/nlohmann

{
  echo "commit: $(git rev-parse HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)')"
  echo "packed: $(date -u +%FT%TZ) from $build ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt"))"
  echo "CUDA architectures: $(sed -n 's/^MXPLUG_CUDA_ARCHITECTURES:STRING=//p' "$build/CMakeCache.txt")"
  echo "dlpack config: ${dlpack_dir#/usr/}"
  echo "carried libraries: $(ls "$stage/deps" | tr '\n' ' ')"
} > "$stage/MANIFEST"

mkdir -p "$out"
tar -C "$stage" -cf - . | xz -T0 -6 > "$out/mxplug-gpu.tar.xz"
size_mib=$(( $(stat -c %s "$out/mxplug-gpu.tar.xz") >> 20 ))
cat "$stage/MANIFEST"
echo "$out/mxplug-gpu.tar.xz: $size_mib MiB"
if (( size_mib > limit_mib )); then
  echo "tools/gpu/pack.sh: the pack is over $limit_mib MiB, more than the device tool carries beside the" \
       "checkout; configure $build with -DMXPLUG_WITH_ONEDNN=OFF or fewer CUDA architectures" >&2
  exit 1
fi

# Fashion-MNIST (Debian's dataset-fashion-mnist, 30 MiB of gzip files) for the LeNet that
# tools/gpu/run.sh trains on gpu(0), where it still fits beside the pack.
fashion=/usr/share/datasets/fashion-mnist
rm -rf "$out/fashion-mnist"
if [[ -d "$fashion" ]]; then
  data_mib=$(( $(du -cb "$fashion"/*.gz | tail -1 | cut -f1) >> 20 ))
  if (( size_mib + data_mib <= limit_mib )); then
    mkdir -p "$out/fashion-mnist" && cp "$fashion"/*.gz "$out/fashion-mnist/"
    echo "$out/fashion-mnist: $data_mib MiB (the LeNet's training data)"
  else
    echo "tools/gpu/pack.sh: Fashion-MNIST ($data_mib MiB) does not fit beside the pack ($size_mib MiB of" \
         "$limit_mib); the GPU run will skip the LeNet's training"
  fi
fi
