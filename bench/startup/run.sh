#!/usr/bin/env bash
# bench/startup — wall time of `lumen -e ''` (start, load Lumen's Lua library, exit), median of
# 20 runs after one warm-up; the target is under 30 ms. Timed with bash's EPOCHREALTIME (no
# extra process per sample).
#   usage: bench/startup/run.sh [path/to/lumen]   (default: build/lumen; N=20 runs)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-${LUMEN:-$root/build/lumen}}
n=${N:-20}
[ -x "$lumen" ] || { echo "bench/startup: $lumen is not an executable (build first)" >&2; exit 1; }

"$lumen" -e '' # warm-up: page cache, dynamic loader
samples=()
for ((i = 0; i < n; i++)); do
	t0=$EPOCHREALTIME
	"$lumen" -e ''
	t1=$EPOCHREALTIME
	samples+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
done
sorted=$(printf '%s\n' "${samples[@]}" | sort -g)
min=$(echo "$sorted" | head -1)
max=$(echo "$sorted" | tail -1)
median=$(echo "$sorted" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
verdict=$(awk -v m="$median" 'BEGIN { print (m < 30) ? "yes" : "NO" }')
printf '%-28s %8s %8s %8s %10s\n' "bench/startup ($n runs)" "min ms" "median" "max ms" "< 30 ms"
printf '%-28s %8s %8s %8s %10s\n' "lumen -e ''" "$min" "$median" "$max" "$verdict"
