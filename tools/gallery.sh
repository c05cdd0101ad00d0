#!/usr/bin/env bash
# tools/gallery.sh [path/to/lumen] — renders one PNG of each scene into assets/gallery/ (the
# pictures in the README) with `lumen --snapshot`, offscreen. Regenerate after changing a scene;
# never edit the files by hand. The same command always writes the same bytes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lumen=${1:-$root/build/lumen}
[ -x "$lumen" ] || { echo "tools/gallery.sh: $lumen is not an executable (build first)" >&2; exit 1; }
lumen=$(cd "$(dirname "$lumen")" && pwd)/$(basename "$lumen")
cd "$root" # paths in the pictures (the followed CSV) read from the checkout, not this machine
out=$root/assets/gallery
mkdir -p "$out"
size=width=1280,height=720
# scene, step, options: a moment that shows what the lecture draws
shots=(
	"scan 3 n=16,input=arange"
	"reduce 3 n=4096,block=64"
	"histogram 5 input=pmpp"
	"divergence 11 pattern=even-odd,warps=4"
	"conv 5 h=16,w=16,tile=4"
	"matmul 3 m=8,tile=4"
	"spmv 2 format=ell"
	"timeline 9 segments=4"
	"curves 96 csv=tests/viz/data/mlp_run.csv"
	"tensor 5 view=transpose,variant=contiguous()"
	"quant 3 bits=4,group_size=32"
	"attention 3"
	"rnn 2"
	"queues 3"
	"mlu 2"
	"pingpong 20"
	"systolic 14 rows=8,cols=8,dataflow=ws,m=20,n=12,k=16"
	"dma 46"
	"energy 6"
)
for shot in "${shots[@]}"; do
	read -r scene step opts <<< "$shot"
	"$lumen" --snapshot "$scene" "$out/$scene.png" --step "$step" --opts "$opts,$size"
	printf '%-12s %s (%s bytes)\n' "$scene" "assets/gallery/$scene.png" "$(wc -c < "$out/$scene.png")"
done
# the model after a few steps of training with its histograms, and a perceptron's graph with its
# gradcheck: made by a program (Fashion-MNIST: apt-get install dataset-fashion-mnist)
"$lumen" --headless "$root/tools/gallery.lua" "$out"
for scene in model graph; do
	printf '%-12s %s (%s bytes)\n' "$scene" "assets/gallery/$scene.png" "$(wc -c < "$out/$scene.png")"
done
