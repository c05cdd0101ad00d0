#!/bin/sh
# bench/dist/run_pipeline.sh [LUMEN] — dist.Pipeline on 2 ranks (1 thread each) against the whole
# model in one process with 1 thread, same run (bench/dist/pipeline.lua). Run it alone.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
asroot=""
[ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
OMP_NUM_THREADS=1 "$lumen" "$root/bench/dist/pipeline.lua"
OMP_NUM_THREADS=1 mpirun $asroot -np 2 -x OMP_NUM_THREADS "$lumen" "$root/bench/dist/pipeline.lua"
