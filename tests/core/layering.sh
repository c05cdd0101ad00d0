#!/bin/sh
# layering.sh — fails when a layer includes headers of a layer above it or of a library it must
# not know: liblumen (core, backend/cpu, ops, autograd, kernels outside kernels/cuda) knows neither
# Lua, SDL, OpenGL nor CUDA; the visualizer (viz) does not know Lua.
cd "$(dirname "$0")/../.." || exit 2
forbidden='#[[:space:]]*include[[:space:]]*[<"](lua|lauxlib|lualib|luaconf|SDL2?/[A-Za-z_]+|SDL[A-Za-z_]*|epoxy/[a-z]+|GL/[a-z]+|cuda_runtime|cuda_runtime_api|cuda|cublas_v2|cublas)\.h'
lua_only='#[[:space:]]*include[[:space:]]*[<"](lua|lauxlib|lualib)\.h'
status=0

# the check must be able to fail: a planted include is caught by the same pattern
dir=$(mktemp -d)
printf '#include <lua.h>\n#include "SDL2/SDL.h"\n#include <cuda_runtime.h>\n' > "$dir/probe.c"
[ "$(grep -cE "$forbidden" "$dir/probe.c")" = 3 ] || { echo "layering: the probe was not detected"; status=1; }
rm -rf "$dir"

bad=$(grep -rlE "$forbidden" src/core src/backend/cpu src/backend/*.[ch] src/ops src/autograd src/kernels 2>/dev/null |
	grep -v '^src/kernels/cuda/')
if [ -n "$bad" ]; then
	echo "layering: these liblumen files include Lua/SDL/GL/CUDA headers:"; echo "$bad"; status=1
fi
if [ -d src/viz ]; then
	bad=$(grep -rlE "$lua_only" src/viz)
	if [ -n "$bad" ]; then echo "layering: the visualizer includes Lua headers:"; echo "$bad"; status=1; fi
fi
[ $status -eq 0 ] && echo "layering: ok"
exit $status
