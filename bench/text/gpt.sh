#!/usr/bin/env bash
# bench/text/gpt.sh — training a char GPT and a char LSTM on the English fortunes, Lumen against
# PyTorch CPU in the same run: the same text (data.Corpus('fortunes'), written to a file for
# PyTorch), split (first 90% / last 10%), random windows, model, batch, schedule, iterations and
# threads. Lumen runs the examples themselves (examples/char_gpt.lua, char_lstm.lua --quiet);
# PyTorch runs bench/text/torch_text.py, the same models in torch 1.13 (its attention written as
# softmax(q k^T / sqrt(d) + causal mask) v: Debian's torch has no F.scaled_dot_product_attention).
#   GPT: 4 layers, 4 heads, width 128, block 64, batch 12, AdamW 1e-3 -> 1e-4 (warm-up 100, cosine),
#        no dropout, clipping 1.0, ITERS iterations (2,000); validation loss over 100 batches.
#   LSTM: 2 layers of width 256, block 64, batch 12, ITERS_LSTM iterations (300): time per iteration.
# Prints ms per training iteration (validation and sampling not counted), the ratio Lumen / PyTorch
# (lower is better; targets: GPT <= 0.8, LSTM <= 1.0) and the validation loss (GPT target: within 2%
# of PyTorch's). PyTorch's threads as bench/train: OMP/MKL/OPENBLAS_NUM_THREADS and
# torch.set_num_threads; at 2 threads also with OpenBLAS on 1 thread (often its best here).
#   usage: bench/text/gpt.sh [path/to/lumen]   (env: ITERS=2000 ITERS_LSTM=300 THREADS="1 2")
# Run it under the machine's lock: flock /tmp/lumen-cpu.lock bench/text/gpt.sh build/lumen
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-${LUMEN:-$root/build/lumen}}
[ -x "$lumen" ] || { echo "bench/text: $lumen is not an executable (build first)" >&2; exit 1; }
py=/usr/bin/python3
"$py" -c 'import torch' 2>/dev/null || { echo "bench/text: $py lacks torch (python3-torch)" >&2; exit 1; }
iters=${ITERS:-2000}
iters_lstm=${ITERS_LSTM:-300}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$lumen" -e "io.write(data.Corpus('fortunes').text)" > "$out/fortunes.txt"

summary() { # name command...: the command's summary line, with its name
	local name=$1
	shift
	"$@" > "$out/$name.log" 2>&1 || { echo "bench/text: $name failed:" >&2; tail -20 "$out/$name.log" >&2; exit 1; }
	echo "$name $(grep '^summary:' "$out/$name.log" | tail -1)"
}

echo "bench/text/gpt.sh: English fortunes ($(wc -c < "$out/fortunes.txt") bytes), GPT $iters iterations, LSTM $iters_lstm;" \
	"$("$lumen" --version | head -1); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-8s %-28s %12s %8s %10s %10s\n' model threads implementation ms/iter ratio train_loss val_loss
for t in ${THREADS:-1 2}; do
	for m in gpt lstm; do
		n=$iters
		[ $m = lstm ] && n=$iters_lstm
		rows=()
		rows+=("$(summary "Lumen" "$lumen" "$root/examples/char_$m.lua" --corpus fortunes --iters "$n" --eval-every "$n" \
			--eval-iters 100 --length 0 --quiet --threads "$t")")
		rows+=("$(summary "PyTorch" "$py" "$root/bench/text/torch_text.py" --model $m --text "$out/fortunes.txt" \
			--iters "$n" --eval-iters 100 --threads "$t")")
		if [ "$t" -gt 1 ]; then
			rows+=("$(summary "PyTorch(BLAS-1-thread)" "$py" "$root/bench/text/torch_text.py" --model $m \
				--text "$out/fortunes.txt" --iters "$n" --eval-iters 100 --threads "$t" --blas-threads 1)")
		fi
		lumen_ms=$(echo "${rows[0]}" | sed -n 's/.*ms_per_iter=\([0-9.]*\).*/\1/p')
		for r in "${rows[@]}"; do
			name=${r%% *}
			ms=$(echo "$r" | sed -n 's/.*ms_per_iter=\([0-9.]*\).*/\1/p')
			tl=$(echo "$r" | sed -n 's/.*train_loss=\([0-9.na]*\).*/\1/p')
			vl=$(echo "$r" | sed -n 's/.*val_loss=\([0-9.na]*\).*/\1/p')
			ratio=""
			[ "$name" != Lumen ] && ratio=$(awk -v a="$lumen_ms" -v b="$ms" 'BEGIN { printf "%.2f", a / b }')
			printf '%-6s %-8s %-28s %12s %8s %10s %10s\n' $m "$t" "${name//-/ }" "$ms" "$ratio" "$tl" "$vl"
		done
	done
done
echo "ratio = Lumen ms/iter / that row's (targets: GPT <= 0.8, LSTM <= 1.0); train_loss: the mean over all steps;"
echo "val_loss: the mean over 100 batches of 12 random validation windows (each side draws its own)."
echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)"
