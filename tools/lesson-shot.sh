#!/usr/bin/env bash
# tools/lesson-shot.sh [path/to/lumen] [LESSON] [STEP] — the README's picture of a lesson step: opens
# LESSON (default ece408/21-22-gpu-in-pc) headless with `lumen --lesson`, goes to STEP (default 4)
# with `:step`, as a student would, and saves the step's scene with viz.snapshot into
# assets/lesson/<course>-<NN-slug>-step<STEP>.png, and what the terminal showed for the step (its
# text, code and output, in English, 100 columns) beside it as a .txt. Offscreen (no display
# needed); the emulated scenes are the same bytes every time. Regenerate after changing the lesson
# or its scene; never edit the files by hand.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lumen=${1:-$root/build/lumen}
name=${2:-ece408/21-22-gpu-in-pc}
step=${3:-4}
[ -x "$lumen" ] || { echo "tools/lesson-shot.sh: $lumen is not an executable (build first)" >&2; exit 1; }
[[ $step =~ ^[0-9]+$ ]] || { echo "tools/lesson-shot.sh: STEP must be a number, got '$step'" >&2; exit 1; }
out=$root/assets/lesson
mkdir -p "$out"
base=$out/${name//\//-}-step$step
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SDL_VIDEODRIVER=offscreen LP_NUM_THREADS=1 NO_COLOR=1 LUMEN_LANG=en COLUMNS=100
export XDG_STATE_HOME=$tmp/state # a first visit: no progress read or written elsewhere
printf ':step %s\nviz.snapshot("%s")\n:quit\n' "$step" "$tmp/shot.png" |
	"$lumen" --headless --lesson "$name" > "$tmp/out" 2>&1
[ -s "$tmp/shot.png" ] || { echo "tools/lesson-shot.sh: no picture (does step $step of $name have a scene?):" >&2
	cat "$tmp/out" >&2; exit 1; }
# the step: from its header rule to the line viz.snapshot printed (the picture's path)
awk -v mark=" · $step/" -v shot="$tmp/shot.png" \
	'index($0, mark) && /^──/ { on = 1 } $0 == shot { exit } on' "$tmp/out" > "$tmp/step"
[ -s "$tmp/step" ] || { echo "tools/lesson-shot.sh: step $step was not shown:" >&2; cat "$tmp/out" >&2; exit 1; }
mv "$tmp/shot.png" "$base.png"
mv "$tmp/step" "$base.txt"
printf '%s (%s bytes)\n%s (%s lines)\n' "${base#"$root"/}.png" "$(wc -c < "$base.png")" \
	"${base#"$root"/}.txt" "$(wc -l < "$base.txt")"
