#!/bin/sh
# bench/generative/run.sh [LUMEN] — one training step of the generative models, Lumen against
# PyTorch 1.13 on the CPU, in the same run, 1 thread and then 2: the conditional DCGAN and the
# conditional U-Net DDPM on 28 x 28 images, batch 64 (bench.lua, torch_models.py). Prints a table
# with the ratio Lumen / PyTorch (target <= 1.0). Run it alone on the machine.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
for th in 1 2; do
	l=$(OMP_NUM_THREADS=$th "$lumen" "$root/bench/generative/bench.lua")
	t=$(/usr/bin/python3 "$root/bench/generative/torch_models.py" $th)
	echo "$th thread(s):"
	echo "$l" | while read -r name ms; do
		tms=$(echo "$t" | awk -v n="$name" '$1 == n {print $2}')
		awk -v n="$name" -v a="$ms" -v b="$tms" 'BEGIN {printf "  %-16s Lumen %8.1f ms   PyTorch %8.1f ms   ratio %.2f\n", n, a, b, a / b}'
	done
done
