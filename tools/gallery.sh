#!/usr/bin/env bash
# tools/gallery.sh [path/to/lumen] — renders one PNG of each scene into assets/gallery/ (the
# pictures in the README) with `lumen --snapshot`, offscreen. Regenerate after changing a scene;
# never edit the files by hand. The same command always writes the same bytes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lumen=${1:-$root/build/lumen}
[ -x "$lumen" ] || { echo "tools/gallery.sh: $lumen is not an executable (build first)" >&2; exit 1; }
out=$root/assets/gallery
mkdir -p "$out"
size=width=1280,height=720
# scene, step, options: a moment that shows what the lecture draws
shots=(
	"scan 3 n=16,input=arange"
	"reduce 3 n=128"
	"histogram 5 input=pmpp"
	"divergence 11 pattern=even-odd,warps=4"
)
for shot in "${shots[@]}"; do
	read -r scene step opts <<< "$shot"
	"$lumen" --snapshot "$scene" "$out/$scene.png" --step "$step" --opts "$opts,$size"
	printf '%-12s %s (%s bytes)\n' "$scene" "assets/gallery/$scene.png" "$(wc -c < "$out/$scene.png")"
done
