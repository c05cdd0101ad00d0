#!/usr/bin/env bash
# bench/text/attention.sh — causal attention forward + backward at T = 1,024, head dim 64, B x H = 4,
# 1 and 2 threads, in one run: Lumen's F.flash_attention, Lumen's composed softmax(q k^T) v (with its
# T x T matrices) and PyTorch's composed version (Debian's torch 1.13 has no fused SDPA). Time and,
# for Lumen, peak tensor memory.   usage: bench/text/attention.sh [path/to/lumen]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
for t in 1 2; do
	"$lumen" "$root/bench/text/attention.lua" "$t"
	/usr/bin/python3 "$root/bench/text/torch_attention.py" "$t" 2>/dev/null || echo '{"impl": "PyTorch (not installed)"}'
done
