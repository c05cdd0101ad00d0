#!/bin/sh
# x11.sh — opens a real X11 window under Xvfb (xvfb-run, from tools/deps.sh: xvfb, xauth, x11-utils)
# and checks, from outside the program, that the X server has a window with the scene's title; from
# inside, that the frame it drew has the scene's pixels (a cell of the active colour where
# viz.layout() says one is), and that the scene plays while a Lua loop runs (the event pump from
# the Lua hook); and (ctrlc.py) that Ctrl-C interrupts a Lua loop in the REPL with the window open.
# Exit 77 (skipped) only when Xvfb is missing.
exe=${1:?usage: x11.sh LUMEN}
command -v xvfb-run >/dev/null && command -v xwininfo >/dev/null || {
	echo "x11: xvfb-run or xwininfo missing (tools/deps.sh installs xvfb, xauth, x11-utils): skipped"
	exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/x11.lua" <<LUA
viz.scene('scan', {width = 900, height = 600})
local st = viz.state()
assert(not st.offscreen, 'the window is offscreen under Xvfb')
assert(st.width == 900 and st.height == 600, 'size ' .. st.width .. 'x' .. st.height)
viz.seek(2)
local cell
for _, c in ipairs(viz.layout()) do
  if c.state == 'active' and c.step == 2 and c.w >= 6 then cell = c break end
end
local r, g, b = viz.pixel(math.floor(cell.x + 2), math.floor(cell.y + 2))
local want = viz.colors().active
assert(r == want[1] and g == want[2] and b == want[3], 'active cell ' .. r .. ',' .. g .. ',' .. b)
viz.snapshot('$tmp/x11.png')
for i = 1, 5 do viz.pump() end
os.execute('xwininfo -root -tree > $tmp/tree.txt')
-- the window lives while Lua computes: the Lua hook pumps it (no viz call in the loop)
viz.seek(0)
viz.key('+'); viz.key('+'); viz.key('+') -- faster
viz.play()
local t0, s = lm.sys.clock(), 0
while lm.sys.clock() - t0 < 0.8 do for i = 1, 1000 do s = s + i end end
assert(viz.state().step >= 2, 'the scene did not advance while Lua ran: step ' .. viz.state().step)
viz.close()
print('drawn')
LUA
out=$(LP_NUM_THREADS=1 xvfb-run -a -s "-screen 0 1280x800x24" "$exe" "$tmp/x11.lua" 2>&1)
status=$?
echo "$out"
[ $status -eq 0 ] || { echo "x11: the program failed ($status)"; exit 1; }
echo "$out" | grep -q '^drawn$' || { echo "x11: no frame was drawn"; exit 1; }
grep -q '"Lumen - scan: Kogge-Stone and Brent-Kung' "$tmp/tree.txt" || {
	echo "x11: no window titled 'Lumen - scan: ...' on the X server:"; cat "$tmp/tree.txt"; exit 1; }
# Ctrl-C still interrupts a Lua loop with a window open (SDL_HINT_NO_SIGNAL_HANDLERS)
if command -v python3 >/dev/null; then
	LP_NUM_THREADS=1 xvfb-run -a python3 "$(dirname "$0")/ctrlc.py" "$exe" || exit 1
fi
size=$(wc -c < "$tmp/x11.png")
[ "$size" -gt 1000 ] || { echo "x11: the snapshot is empty"; exit 1; }
echo "x11: ok (a window titled $(grep -o '"Lumen - scan[^"]*"' "$tmp/tree.txt" | head -1), frame checked)"
