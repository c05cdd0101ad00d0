#!/bin/sh
# tests/dist/run.sh LUMEN — lumen.dist on Open MPI (ctest dist/mpi): tests/dist/dist_check.lua,
# (the collectives), ddp_check.lua (DistributedDataParallel, DistributedSampler) and
# parallel_check.lua (tensor-parallel Linear, the pipeline, ZeRO-1) under mpirun
# with 2 and 3 ranks (--oversubscribe past the cores; --allow-run-as-root as root),
# a rank that raises stops the others (the job ends, non-zero, with dist's message, well before
# the timeout), and dist without mpirun is a world of one. Exit 77 (skipped) when this build has
# no MPI module or Open MPI's mpirun is missing.
set -u
lumen=$1
here=$(cd "$(dirname "$0")" && pwd)
if ! "$lumen" -e 'os.exit(lm._dist_built and 0 or 1)'; then
	echo "skipped: this build has no MPI module (install libopenmpi-dev and openmpi-bin, then build again)"
	exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
	echo "skipped: mpirun is missing (Debian's openmpi-bin)"
	exit 77
fi
root=""
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
fail=0
for check in dist_check.lua ddp_check.lua parallel_check.lua; do
	for np in 2 3; do
		out=$(timeout 300 mpirun $root --oversubscribe -np $np "$lumen" "$here/$check" 2>&1)
		rc=$?
		echo "$out" | grep -E "checks|FAIL|error" | head -20
		if [ $rc -ne 0 ] || [ "$(echo "$out" | grep -c ' 0 failed')" -ne $np ]; then
			echo "FAIL: $check with $np ranks (exit $rc)"
			echo "$out" | tail -20
			fail=1
		fi
	done
done
# one rank raises while the others wait in a collective: the job must end, reporting it
t0=$(date +%s)
out=$(timeout 120 mpirun $root --oversubscribe -np 3 "$lumen" -e "
local dist = require 'lumen.dist'
local r = dist.init()
if r == 1 then error('rank one fails on purpose') end
dist.all_reduce(lm.ones(4))" 2>&1)
rc=$?
t1=$(date +%s)
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || ! echo "$out" | grep -q "dist: rank 1 of 3 failed; stopping the other ranks" ||
	! echo "$out" | grep -q "rank one fails on purpose"; then
	echo "FAIL: a failing rank did not stop the job cleanly (exit $rc after $((t1 - t0)) s):"
	echo "$out" | tail -15
	fail=1
else
	echo "ok: a failing rank stops the others (exit $rc after $((t1 - t0)) s)"
fi
# without mpirun: a world of one
out=$("$lumen" -e "
local dist = require 'lumen.dist'
local r, n = dist.init()
local t = lm.ones(3)
dist.all_reduce(t, {algo = 'ring'})
print(r, n, t:sum():item(), table.concat(dist.all_gather(t):shape(), 'x'))" 2>&1)
if [ "$out" != "$(printf '0\t1\t3.0\t1x3')" ]; then
	echo "FAIL: dist without mpirun: '$out'"
	fail=1
else
	echo "ok: without mpirun, a world of one"
fi
out=$("$lumen" -e "local dist = require 'lumen.dist'; print(pcall(dist.rank))" 2>&1)
if ! echo "$out" | grep -q "dist.rank: call dist.init() first"; then
	echo "FAIL: dist.rank before init: '$out'"
	fail=1
fi
[ $fail -eq 0 ] && echo "all passed"
exit $fail
