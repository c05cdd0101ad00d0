#!/bin/sh
# bench/dist/run.sh [LUMEN] — lumen.dist's figures on this machine: all_reduce bus bandwidth at 2
# ranks (bench/dist/allreduce.lua: Lumen's ring and tree against MPI_Allreduce) and the launch
# overhead of `mpirun -np 2 lumen -e ''` (median of 5). Run it alone on the machine:
#   flock /tmp/lumen-cpu.lock bench/dist/run.sh build/lumen
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
asroot=""
[ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
OMP_NUM_THREADS=1 mpirun $asroot -np 2 "$lumen" "$root/bench/dist/allreduce.lua"
ts=""
for i in 1 2 3 4 5; do
	t0=$(date +%s%N)
	mpirun $asroot -np 2 "$lumen" -e '' >/dev/null
	t1=$(date +%s%N)
	ts="$ts $(( (t1 - t0) / 1000000 ))"
done
echo "launch: mpirun -np 2 lumen -e '': $ts ms (median $(echo $ts | tr ' ' '\n' | sort -n | sed -n 3p) ms);" \
	"lumen -e '' alone: $( t0=$(date +%s%N); "$lumen" -e ''; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )) ) ms"
