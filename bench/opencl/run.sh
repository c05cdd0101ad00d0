#!/usr/bin/env bash
# bench/opencl/run.sh — bench/opencl/run.lua at a fixed thread count (default: every core, as PoCL
# uses them all): ./bench/opencl/run.sh [--quick]. Builds lumen first if needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x build/lumen ] || { source tools/deps.sh; lumen_build build; }
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
exec ./build/lumen bench/opencl/run.lua "$@"
