#!/usr/bin/env bash
# bench/viz — the visualizer's figures (issue 14 "Measure"), each against an anchor measured in the
# same run:
#   frames    median frame time at 1280 x 720 (offscreen, llvmpipe) of the largest scene of each
#             kind, against an empty frame; the time from viz.show(info) to the first frame
#   snapshot  `lumen --snapshot scan out.png` from start to PNG, against `lumen -e ''`
#   idle      CPU use of the REPL with an open idle window (Xvfb), against the REPL without one
#   train     one MLP epoch of examples/mlp_fashion.lua with --viz (live curves, Xvfb) against without
#   pump      a training-like loop and a pure Lua loop with no window, an idle visible window (the
#             event pump from the Lua hook) and an animating one
# Run under the CPU lock: flock /tmp/lumen-cpu.lock bench/viz/run.sh [path/to/lumen]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
[ -x "$lumen" ] || { echo "bench/viz: $lumen is not an executable (build first)" >&2; exit 1; }
# llvmpipe's render threads: the program's default on this 2-core machine (src/viz/window.c)
export LP_NUM_THREADS=${LP_NUM_THREADS:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${xvfb:-}" ] && kill "$xvfb" 2>/dev/null || true' EXIT
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

"$lumen" --headless "$root/bench/viz/frames.lua"
echo

# snapshot: start to PNG, 10 runs after a warm-up
"$lumen" -e '' && "$lumen" --snapshot scan "$tmp/s.png"
snap=() base=()
for i in $(seq 10); do
	t0=$EPOCHREALTIME; "$lumen" --snapshot scan "$tmp/s.png"; t1=$EPOCHREALTIME; snap+=("$(ms "$t0" "$t1")")
	t0=$EPOCHREALTIME; "$lumen" -e ''; t1=$EPOCHREALTIME; base+=("$(ms "$t0" "$t1")")
done
s=$(printf '%s\n' "${snap[@]}" | median); b=$(printf '%s\n' "${base[@]}" | median)
printf '%-44s %10s %10s %8s\n' "bench/viz snapshot (median of 10)" "ms" "< 1000 ms" "x -e ''"
printf '%-44s %10s %10s %8s\n' "lumen -e '' (anchor)" "$b" "" "1.0"
printf '%-44s %10s %10s %8s\n' "lumen --snapshot scan out.png" "$s" "$(awk -v s="$s" 'BEGIN{print (s<1000)?"yes":"NO"}')" \
	"$(awk -v s="$s" -v b="$b" 'BEGIN{printf "%.1f", s/b}')"
echo

if ! command -v Xvfb >/dev/null; then echo "bench/viz: no Xvfb: idle and pump figures skipped"; exit 0; fi
Xvfb :57 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & xvfb=$!
sleep 1
export DISPLAY=:57
python3 "$root/bench/viz/idle.py" "$lumen" > "$tmp/idle.txt"
none=$(awk '$1 == "none" { print $2 }' "$tmp/idle.txt"); win=$(awk '$1 == "window" { print $2 }' "$tmp/idle.txt")
printf '%-44s %10s %10s\n' "bench/viz idle (REPL waiting, 5 s)" "% of a core" "< 1 %"
printf '%-44s %10s %10s\n' "REPL, no window (anchor)" "$none" ""
printf '%-44s %10s %10s\n' "REPL, an open idle window" "$win" "$(awk -v w="$win" 'BEGIN{print (w<1)?"yes":"NO"}')"
echo

# the MLP epoch with --viz (live curves in a visible window) against without, interleaved: the ratio
# of each round's pair, then their median (this machine's speed drifts by 20% over a minute; the
# pair, a few seconds apart, sees the same machine)
if [ -r /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
	for i in 1 2 3 4 5 6 7 8 9; do
		"$lumen" "$root/bench/viz/train.lua" >> "$tmp/train_none.txt"
		"$lumen" "$root/bench/viz/train.lua" --viz >> "$tmp/train_viz.txt"
	done
	tn=$(awk '{print $2}' "$tmp/train_none.txt" | median); tv=$(awk '{print $2}' "$tmp/train_viz.txt" | median)
	r=$(paste "$tmp/train_none.txt" "$tmp/train_viz.txt" | awk '{print $6 / $2}' | median)
	fn=$(awk '{print $4}' "$tmp/train_none.txt" | median); fv=$(awk '{print $4}' "$tmp/train_viz.txt" | median)
	r1=$(paste "$tmp/train_none.txt" "$tmp/train_viz.txt" | awk '{print $8 / $4}' | median)
	printf '%-44s %10s %10s %10s %10s %8s\n' "bench/viz train (MLP, 2 threads, 9 pairs)" "s/epoch" "x none" "<= 1.02" \
		"1st epoch" "x none"
	printf '%-44s %10s %10s %10s %10s %8s\n' "examples/mlp_fashion.lua (anchor)" "$tn" "1.000" "" "$fn" "1.000"
	printf '%-44s %10s %10s %10s %10s %8s\n' "the same with --viz (curves, Xvfb window)" "$tv" \
		"$(awk -v r="$r" 'BEGIN{printf "%.3f", r}')" "$(awk -v r="$r" 'BEGIN{print (r<=1.02)?"yes":"NO"}')" "$fv" \
		"$(awk -v r="$r1" 'BEGIN{printf "%.3f", r}')"
	echo "(s/epoch: the mean of epochs 2 to 6 of a run, as bench/train; x none: the median of the 9 rounds'"
	echo " ratios, each round's two runs back to back; 1st epoch: a fresh process's first, warming caches)"
	echo
else
	echo "bench/viz: no Fashion-MNIST (apt-get install dataset-fashion-mnist): the training row is skipped"
fi

# interleaved rounds, so that a slow moment of the machine falls on every mode alike
for i in 1 2 3 4 5; do
	for mode in none idle play; do "$lumen" "$root/bench/viz/loop.lua" "$mode" >> "$tmp/$mode.txt"; done
done
tn=$(awk '{print $2}' "$tmp/none.txt" | median); ln=$(awk '{print $3}' "$tmp/none.txt" | median)
printf '%-44s %10s %10s %10s %10s\n' "bench/viz pump (median of 5)" "train ms" "overhead" "Lua ms" "overhead"
printf '%-44s %10s %10s %10s %10s\n' "no window (anchor)" "$tn" "" "$ln" ""
for mode in idle play; do
	t=$(awk '{print $2}' "$tmp/$mode.txt" | median); l=$(awk '{print $3}' "$tmp/$mode.txt" | median)
	label=$([ $mode = idle ] && echo "an idle window (pump every 40 ms)" || echo "an animating window (10 fps while Lua runs)")
	printf '%-44s %10s %9s%% %10s %9s%%\n' "$label" "$t" "$(awk -v a="$t" -v b="$tn" 'BEGIN{printf "%.1f", 100*(a-b)/b}')" \
		"$l" "$(awk -v a="$l" -v b="$ln" 'BEGIN{printf "%.1f", 100*(a-b)/b}')"
done
