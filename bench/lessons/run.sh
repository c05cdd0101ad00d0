#!/usr/bin/env bash
# bench/lessons — the lesson runner's figures (issue 20 "Measure"), against anchors measured in the
# same run:
#   first frame  `lumen --headless --lesson ece408/16-scan` until step 1's scene has drawn its first
#                frame (the piped line `viz.redraw()`), then :quit; against `lumen -e ''` and against
#                the same scene's first frame without the lesson (`viz.scene` + `viz.redraw()`)
#   walk         the headless walk of every lesson (tests/lessons: code, scenes, exercises), total
#                and per lesson
# Run under the CPU lock: flock /tmp/lumen-cpu.lock bench/lessons/run.sh [path/to/lumen]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
[ -x "$lumen" ] || { echo "bench/lessons: $lumen is not an executable (build first)" >&2; exit 1; }
export LP_NUM_THREADS=${LP_NUM_THREADS:-1} SDL_VIDEODRIVER=offscreen NO_COLOR=1 LUMEN_LANG=en
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME=$tmp/state
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf 'viz.redraw()\n:quit\n' > "$tmp/in"
"$lumen" -e '' >/dev/null
"$lumen" --headless --lesson ece408/16-scan < "$tmp/in" > "$tmp/out"
grep -q 'scene: scan' "$tmp/out" || { echo "bench/lessons: step 1 showed no scene:" >&2; cat "$tmp/out" >&2; exit 1; }
first=() base=() scene=()
for i in $(seq 10); do
	rm -rf "$XDG_STATE_HOME" # the first visit every time (no progress to resume)
	t0=$EPOCHREALTIME; "$lumen" --headless --lesson ece408/16-scan < "$tmp/in" >/dev/null; t1=$EPOCHREALTIME
	first+=("$(ms "$t0" "$t1")")
	t0=$EPOCHREALTIME; "$lumen" -e '' >/dev/null; t1=$EPOCHREALTIME; base+=("$(ms "$t0" "$t1")")
	t0=$EPOCHREALTIME; "$lumen" --headless -e "viz.scene('scan', {n = 8, input = 'pmpp'}) viz.redraw()" >/dev/null
	t1=$EPOCHREALTIME; scene+=("$(ms "$t0" "$t1")")
done
f=$(printf '%s\n' "${first[@]}" | median); b=$(printf '%s\n' "${base[@]}" | median)
s=$(printf '%s\n' "${scene[@]}" | median)
printf '%-58s %9s %10s %8s\n' "bench/lessons first frame (median of 10)" "ms" "< 1000 ms" "x -e ''"
printf '%-58s %9s %10s %8s\n' "lumen -e '' (anchor)" "$b" "" "1.0"
printf '%-58s %9s %10s %8s\n' "the scene alone: viz.scene('scan') + viz.redraw()" "$s" "" \
	"$(awk -v s="$s" -v b="$b" 'BEGIN{printf "%.1f", s/b}')"
printf '%-58s %9s %10s %8s\n' "lumen --headless --lesson ece408/16-scan, to the 1st frame" "$f" \
	"$(awk -v s="$f" 'BEGIN{print (s<1000)?"yes":"NO"}')" "$(awk -v s="$f" -v b="$b" 'BEGIN{printf "%.1f", s/b}')"
echo

t0=$EPOCHREALTIME
"$lumen" --test "$root/tests/lessons" > "$tmp/walk" 2> "$tmp/walk.err" || { cat "$tmp/walk" "$tmp/walk.err"; exit 1; }
t1=$EPOCHREALTIME
printf '%-58s %9s\n' "bench/lessons walk (tests/lessons, one run)" "s"
sed -n 's/^test_lessons: \(.*\) walked in \([0-9.]*\) s.*/\1 \2/p' "$tmp/walk.err" |
	while read -r name secs; do printf '  %-56s %9s\n' "$name" "$secs"; done
printf '%-58s %9s %10s\n' "the whole walk, start to end of the program" \
	"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" "(< 120 s)"
tail -n1 "$tmp/walk"
