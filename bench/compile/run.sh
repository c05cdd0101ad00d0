#!/usr/bin/env bash
# bench/compile — lm.compile against eager Lumen, a copy of the same bytes, and PyTorch's eager
# steps, in one run (issue 31's Measure): bench/compile/run.lua, then bench/compile/torch_step.py
# with the same thread count. Needs python3-torch for the PyTorch column (skipped without it).
#   usage: bench/compile/run.sh [path/to/lumen] [--quick]    (env: THREADS=2, REPEATS=20)
# Run it under the machine's lock: flock /tmp/lumen-cpu.lock bench/compile/run.sh build/lumen
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=$root/build/lumen
if [[ $# -gt 0 && $1 != --* ]]; then lumen=$1; shift; fi
[ -x "$lumen" ] || { echo "bench/compile: $lumen is not an executable (build first)" >&2; exit 1; }
threads=${THREADS:-2}
repeats=${REPEATS:-20}
quick=()
[[ ${1:-} == --quick ]] && quick=(--quick)
echo "== Lumen (${threads} threads)"
OMP_NUM_THREADS=$threads "$lumen" "$root/bench/compile/run.lua" --repeats "$repeats" "${quick[@]}"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	echo "== PyTorch eager, same run (${threads} threads)"
	/usr/bin/python3 "$root/bench/compile/torch_step.py" --threads "$threads" --repeats "$repeats" "${quick[@]}"
else
	echo "== PyTorch: skipped (/usr/bin/python3 has no torch: apt-get install python3-torch)"
fi
