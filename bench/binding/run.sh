#!/usr/bin/env bash
# bench/binding — the cost of one call through the Lua bindings: 1e6 calls of x:add_(1) on a
# 1-element tensor, in ns per call, beside calls that isolate the parts (see binding.lua).
#   usage: bench/binding/run.sh [path/to/lumen]   (default: build/lumen)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-${LUMEN:-$root/build/lumen}}
[ -x "$lumen" ] || { echo "bench/binding: $lumen is not an executable (build first)" >&2; exit 1; }
exec "$lumen" "$root/bench/binding/binding.lua" "${N:-1000000}"
