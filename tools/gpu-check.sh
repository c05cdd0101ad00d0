#!/bin/sh
# tools/gpu-check.sh — builds tools/gpu-check (Lumen's CUDA kernels, their CPU runs and a driver)
# with CMake and nvcc alone, then runs every pattern's CUDA run against the CPU on random inputs,
# including sizes that are not powers of two, and prints one table of times and GB/s.
# Exit status: 0 all equal, 1 a mismatch or a CUDA error, 2 no GPU here (the build still ran).
# Then the lectures' comparisons: the emulator's modelled cycles beside CUDA's times of the same
# kernels, and whether they rank alike (--model: the model's column only, without a GPU).
# Usage: tools/gpu-check.sh [--quick] [--model]   Build directory: $GPU_CHECK_BUILD (default /tmp/...).
# See docs/gpu-check.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${GPU_CHECK_BUILD:-${TMPDIR:-/tmp}/lumen-gpu-check}

command -v cmake >/dev/null 2>&1 || { echo "gpu-check: cmake is needed" >&2; exit 1; }
nvcc=$(command -v nvcc 2>/dev/null || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
[ -z "$nvcc" ] && { echo "gpu-check: nvcc (the CUDA toolkit) is needed" >&2; exit 1; }

arch=""
[ -n "${GPU_CHECK_ARCH:-}" ] && arch="-DCMAKE_CUDA_ARCHITECTURES=$GPU_CHECK_ARCH"
echo "gpu-check: building in $build with $nvcc"
cmake -S "$here/gpu-check" -B "$build" -DCMAKE_CUDA_COMPILER="$nvcc" $arch >"$build.log" 2>&1 ||
	{ cat "$build.log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >>"$build.log" 2>&1 ||
	{ tail -40 "$build.log" >&2; exit 1; }
echo "gpu-check: built $build/gpu_check"
exec "$build/gpu_check" "$@"
