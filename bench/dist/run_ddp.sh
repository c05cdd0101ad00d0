#!/bin/sh
# bench/dist/run_ddp.sh [LUMEN] — DDP on 2 ranks (1 thread each) against one process with 2 threads,
# same global batch, same run (bench/dist/ddp.lua). Run it alone on the machine.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
asroot=""
[ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
OMP_NUM_THREADS=2 "$lumen" "$root/bench/dist/ddp.lua"
OMP_NUM_THREADS=1 mpirun $asroot -np 2 -x OMP_NUM_THREADS "$lumen" "$root/bench/dist/ddp.lua"
