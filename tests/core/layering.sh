#!/bin/sh
# layering.sh — the layers point down (docs/architecture.md, "Layers"). Two checks:
#  1. headers: liblumen (core, backend, ops, autograd, kernels outside kernels/cuda, io) includes
#     neither Lua, SDL, OpenGL nor CUDA headers; the visualizer (viz) does not include Lua's.
#  2. symbols: with the objects of liblumen (argument 1: lumen_core's object directory, which CMake
#     passes), every call from one layer into another, read with nm (a symbol an object needs that
#     another layer's object defines), must be allowed by the list below. A new upward call fails.
# Run by hand: sh tests/core/layering.sh build/CMakeFiles/lumen_core.dir
cd "$(dirname "$0")/../.." || exit 2
objdir=$1
status=0

# ---------------------------------------------------------------- the allow-list
# "layer: the layers it may call". Layers by path: src/core; src/backend (the device tables and the
# CPU backend's loops, the CUDA loader); graph = src/autograd/graph.c, the recording of nodes that
# every op does; src/ops; autograd = the rest of src/autograd (backward engine, gradcheck);
# src/kernels; src/io. "from -> to: symbol ..." allows single symbols against the order.
# The ops reach the backend only through the registry (src/backend/backend.h): lmi_backend_for
# and lmi_backend_open (a device loaded on first use), then the device's supports_node and compute
# through pointers — never a device's loops by name; the op table (lm.ops) names the loop families
# (lmi_be_op_name) and asks the CUDA device what it implements without loading it
# (lmi_cuda_backend_table) and the OpenCL device likewise (lmi_opencl_backend).
allow='
core:
backend: core
graph: core
ops: core graph
autograd: core graph ops
kernels: core backend ops
io: core ops
dlp: core
core -> graph: lmi_node_release
ops -> backend: lmi_backend_for lmi_backend_open lmi_be_op_name lmi_cuda_backend_table lmi_opencl_backend
'

# Prints "from to symbol object" for each call between layers in the objects below $1.
edges() {
	find "$1" -name '*.o' | sort | while read -r o; do
		rel=${o#"$1"/}
		[ -f "${rel%.o}" ] || continue # an object left from a source file that is gone
		case $rel in
		src/autograd/graph.c.o) layer=graph ;;
		src/*/*) layer=$(echo "$rel" | cut -d/ -f2) ;;
		*) continue ;;
		esac
		nm -g --defined-only "$o" | awk -v L="$layer" -v O="$rel" 'NF == 3 {print "D", L, $3, O}'
		nm -u "$o" | awk -v L="$layer" -v O="$rel" '{print "U", L, $NF, O}'
	done | awk '$1 == "D" {def[$3] = $2; next} {u[++n] = $0}
		END {for (i = 1; i <= n; i++) {split(u[i], a, " ");
			if ((a[3] in def) && def[a[3]] != a[2]) print a[2], def[a[3]], a[3], a[4]}}'
}

# Reads "from to symbol object" lines; prints those the allow-list refuses.
refused() {
	awk -v allow="$allow" '
		BEGIN {
			n = split(allow, lines, "\n")
			for (k = 1; k <= n; k++) {
				m = split(lines[k], w, " ")
				if (m >= 3 && w[2] == "->") { to = w[3]; sub(":", "", to); for (i = 4; i <= m; i++) sym[w[1] " " to " " w[i]] = 1 }
				else if (m >= 1) { l = w[1]; sub(":", "", l); for (i = 2; i <= m; i++) may[l " " w[i]] = 1 }
			}
		}
		NF && !(($1 " " $2) in may) && !(($1 " " $2 " " $3) in sym) { print "  " $1 " -> " $2 ": " $3 " (" $4 ")" }
	'
}

# ---------------------------------------------------------------- 1. headers
forbidden='#[[:space:]]*include[[:space:]]*[<"](lua|lauxlib|lualib|luaconf|SDL2?/[A-Za-z_]+|SDL[A-Za-z_]*|epoxy/[a-z]+|GL/[a-z]+|cuda_runtime|cuda_runtime_api|cuda|cublas_v2|cublas)\.h'
lua_only='#[[:space:]]*include[[:space:]]*[<"](lua|lauxlib|lualib)\.h'

# the checks must be able to fail: a planted include, a planted upward call
dir=$(mktemp -d)
printf '#include <lua.h>\n#include "SDL2/SDL.h"\n#include <cuda_runtime.h>\n' > "$dir/probe.c"
[ "$(grep -cE "$forbidden" "$dir/probe.c")" = 3 ] || { echo "layering: the include probe was not detected"; status=1; }
rm -rf "$dir"
probe=$(printf 'core ops lm_add src/core/probe.c.o\nbackend core lmi_fail x.o\ncore graph lmi_record y.o\ncore graph lmi_node_release z.o\nops backend lmi_cpu_binary o.o\nops backend lmi_backend_for b.o\n' | refused)
[ "$(printf '%s\n' "$probe" | grep -c .)" = 3 ] || { echo "layering: the symbol probe gave: $probe"; status=1; }

bad=$(grep -rlE "$forbidden" src/core src/backend/cpu src/backend/*.[ch] src/ops src/autograd src/kernels src/io src/dlp 2>/dev/null |
	grep -v '^src/kernels/cuda/')
if [ -n "$bad" ]; then
	echo "layering: these liblumen files include Lua/SDL/GL/CUDA headers:"; echo "$bad"; status=1
fi
if [ -d src/viz ]; then
	bad=$(grep -rlE "$lua_only" src/viz)
	if [ -n "$bad" ]; then echo "layering: the visualizer includes Lua headers:"; echo "$bad"; status=1; fi
fi

# ---------------------------------------------------------------- 2. symbols
if [ -n "$objdir" ]; then
	if ! command -v nm > /dev/null; then echo "layering: nm not found (binutils)"; exit 1; fi
	all=$(edges "$objdir")
	if [ -z "$all" ]; then echo "layering: no calls between layers found under $objdir"; status=1; fi
	bad=$(printf '%s\n' "$all" | refused)
	if [ -n "$bad" ]; then
		echo "layering: calls the allow-list refuses (layer -> layer: symbol (object)):"
		printf '%s\n' "$bad"; status=1
	fi
	echo "layering: $(printf '%s\n' "$all" | awk '{print $1 " -> " $2}' | sort | uniq -c | tr -s ' ' |
		paste -sd, -) calls between layers"
fi
[ $status -eq 0 ] && echo "layering: ok"
exit $status
