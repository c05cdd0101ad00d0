#!/usr/bin/env bash
# bench/lessons — the lesson runner's figures (issue 20 "Measure"), against anchors measured in the
# same run:
#   first frame  `lumen --headless --lesson ece408/16-scan` until step 1's scene has drawn its first
#                frame (the piped line `viz.redraw()`), then :quit; against `lumen -e ''` and against
#                the same scene's first frame without the lesson (`viz.scene` + `viz.redraw()`)
#   walk         the headless walk of every lesson (tests/lessons: code, scenes, exercises), total
#                and per lesson, in the release build and in the ASan + UBSan build (issue 21
#                "Measure": Lessons I + II, both builds, under 4 minutes together)
# Run under the CPU lock:
#   flock /tmp/lumen-cpu.lock bench/lessons/run.sh [path/to/lumen [path/to/asan/lumen]]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
asan=${2:-$root/build-asan/lumen} # the walk again under ASan + UBSan (skipped when absent)
[ -x "$lumen" ] || { echo "bench/lessons: $lumen is not an executable (build first)" >&2; exit 1; }
export LP_NUM_THREADS=${LP_NUM_THREADS:-1} SDL_VIDEODRIVER=offscreen NO_COLOR=1 LUMEN_LANG=en
# the ASan walk as ctest runs it (the visualizer's known leaks of Mesa suppressed)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
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

# The walk in the release build and, when there is one, the ASan build: a row per lesson.
walk() { # walk LUMEN TAG: per-lesson seconds into $tmp/TAG.rows, the whole run's into $tmp/TAG.total
	local t0 t1
	t0=$EPOCHREALTIME
	XDG_STATE_HOME=$tmp/state-$2 "$1" --test "$root/tests/lessons" > "$tmp/$2.out" 2> "$tmp/$2.err" ||
		{ cat "$tmp/$2.out" "$tmp/$2.err"; exit 1; }
	t1=$EPOCHREALTIME
	sed -n 's/^test_lessons: \(.*\) walked in \([0-9.]*\) s.*/\1 \2/p' "$tmp/$2.err" > "$tmp/$2.rows"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }' > "$tmp/$2.total"
}
walk "$lumen" release
if [ -x "$asan" ]; then
	walk "$asan" asan
else
	: > "$tmp/asan.rows"; echo "-" > "$tmp/asan.total"
fi
printf '%-58s %9s %9s %8s\n' "bench/lessons walk (tests/lessons, one run each)" "release s" "ASan s" "ASan/rel"
while read -r name secs; do
	a=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/asan.rows")
	printf '  %-56s %9s %9s %8s\n' "$name" "$secs" "${a:--}" \
		"$([ -n "$a" ] && awk -v a="$a" -v r="$secs" 'BEGIN { printf "%.1f", (r > 0) ? a / r : 0 }')"
done < "$tmp/release.rows"
rt=$(cat "$tmp/release.total") at=$(cat "$tmp/asan.total")
printf '%-58s %9s %9s\n' "the whole walk, start to end of the program" "$rt" "$at"
if [ "$at" != "-" ]; then
	printf '%-58s %9s %9s\n' "both builds together (< 240 s: the lesson suite in CI)" \
		"$(awk -v a="$rt" -v b="$at" 'BEGIN { printf "%.2f", a + b }')" \
		"$(awk -v a="$rt" -v b="$at" 'BEGIN { print (a + b < 240) ? "yes" : "NO" }')"
fi
tail -n1 "$tmp/release.out"
