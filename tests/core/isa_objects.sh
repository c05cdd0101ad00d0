#!/bin/sh
# isa_objects.sh LIBLUMEN LUMEN X86 — the SIMD paths are what their names say, whatever -march
# the rest of the build used (-march=native here), and LUMEN_ISA can never make the program fail.
#   1. object code (objdump of liblumen's simd_*.o and cpu_loops_*.o, the backend's and the
#      kernels' loops): the scalar file has no VEX/EVEX instruction and no packed arithmetic;
#      the avx2 file has ymm and FMA code and no AVX-512 (no zmm, no mask
#      registers, no xmm/ymm16-31, no EVEX-only instructions); the avx512 file has zmm code.
#   2. the program: every LUMEN_ISA value (the three paths, an unknown name, empty) runs, says on
#      --version which path it took, and warns (on stderr, once) when it could not follow.
# X86 is "ON" when CMake gave the files their flags (else only the scalar path exists). The checks
# that vector code is present at all hold for optimised builds (BUILD_TYPE Release) only: the
# sanitizer build compiles at -O2 with instrumentation and vectorises little.
lib=$1 lumen=$2 x86=$3 build_type=$4
status=0
fail() { echo "isa_objects: $*"; status=1; }

evex='%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|\{1to[0-9]+\}|vpternlog|vpermt2|vpermi2|vpcompress|vpexpand|vcompressp|vexpandp|vrndscale|vfpclass|vscalef|vgetexp|vgetmant|vrangep|vreducep|vpmovm2|vpmov[a-z]*2m|vpro[lr][dq]|vpabsq|vpm(ax|in)[su]q|vpmullq|valign[dq]|vpsraq|vinsert[fi](32x|64x)|vextract[fi](32x|64x)|vbroadcast[fi](32x|64x)|vpconflict|vplzcnt'
vex='^[[:space:]]*[0-9a-f]+:[[:space:]]+v[a-z]'
packed='^[[:space:]]*[0-9a-f]+:[[:space:]]+(add|sub|mul|div|max|min|sqrt)p[sd][[:space:]]'

# the patterns must be able to fail: planted instructions are caught
probe=$(printf '  10:\tvaddps %%zmm1,%%zmm2,%%zmm3\n  14:\tvpternlogd $0x1,%%ymm1,%%ymm2,%%ymm3\n  18:\taddps %%xmm1,%%xmm0\n')
[ "$(printf '%s\n' "$probe" | grep -cE "$evex")" = 2 ] || fail "the AVX-512 probe was not detected"
[ "$(printf '%s\n' "$probe" | grep -cE "$vex")" = 2 ] || fail "the VEX probe was not detected"
[ "$(printf '%s\n' "$probe" | grep -cE "$packed")" = 1 ] || fail "the packed-arithmetic probe was not detected"

if [ "$x86" = ON ]; then
	dir=$(mktemp -d)
	# the backend's loops (src/backend/cpu/simd_*.c) and the kernels' (src/kernels/cpu_loops_*.c)
	for fam in simd cpu_loops; do
		(cd "$dir" && ar x "$lib" ${fam}_scalar.c.o ${fam}_avx2.c.o ${fam}_avx512.c.o) || fail "no ${fam}_*.o in $lib"
		for isa in scalar avx2 avx512; do
			objdump -d --no-show-raw-insn "$dir/${fam}_$isa.c.o" > "$dir/$isa.s" 2>/dev/null ||
				fail "objdump of ${fam}_$isa.c.o failed"
		done
		n=$(grep -cE "$evex" "$dir/scalar.s"); [ "$n" = 0 ] || fail "$fam scalar path: $n AVX-512 instructions"
		n=$(grep -cE "$vex" "$dir/scalar.s"); [ "$n" = 0 ] || fail "$fam scalar path: $n VEX instructions"
		n=$(grep -cE "$packed" "$dir/scalar.s"); [ "$n" = 0 ] || fail "$fam scalar path: $n packed float operations (vectorised)"
		grep -qE 'addss|mulss' "$dir/scalar.s" || fail "$fam scalar path: no scalar float code at all?"
		n=$(grep -cE "$evex" "$dir/avx2.s"); [ "$n" = 0 ] ||
			{ fail "$fam avx2 path: $n AVX-512 instructions, e.g."; grep -E "$evex" "$dir/avx2.s" | head -3; }
		if [ "$build_type" = Release ]; then
			grep -q '%ymm' "$dir/avx2.s" || fail "$fam avx2 path: no ymm instruction (not vectorised?)"
			grep -q 'vfmadd' "$dir/avx2.s" || fail "$fam avx2 path: no FMA instruction"
			grep -q '%zmm' "$dir/avx512.s" || fail "$fam avx512 path: no zmm instruction (flags not applied?)"
		fi
	done
	rm -rf "$dir"
fi

# the program under every LUMEN_ISA value
for want in scalar avx2 avx512 bogus ""; do
	out=$(LUMEN_ISA=$want "$lumen" -e 'print(lm.ones(1000):sum())' 2>&1) || fail "LUMEN_ISA=$want: exit $?: $out"
	case $out in *1000*) ;; *) fail "LUMEN_ISA=$want: wrong sum: $out" ;; esac
	ver=$(LUMEN_ISA=$want "$lumen" --version) || fail "LUMEN_ISA=$want --version failed"
	path=$(printf '%s\n' "$ver" | sed -n 's/^  SIMD: \([a-z0-9]*\) .*/\1/p')
	[ -n "$path" ] || fail "LUMEN_ISA=$want: --version names no SIMD path"
	if [ "$want" = "$path" ]; then
		case $out in *warning*) fail "LUMEN_ISA=$want: a warning though the path was taken: $out" ;; esac
		printf '%s\n' "$ver" | grep -q 'set by LUMEN_ISA' || fail "LUMEN_ISA=$want: --version does not say why"
	elif [ -z "$want" ]; then
		printf '%s\n' "$ver" | grep -q 'the best this CPU supports' || fail "no LUMEN_ISA: not the best path?"
	else
		[ "$(printf '%s\n' "$out" | grep -c "warning: LUMEN_ISA=$want")" = 1 ] ||
			fail "LUMEN_ISA=$want fell back to $path without exactly one warning: $out"
		printf '%s\n' "$ver" | grep -q "warning: LUMEN_ISA=$want" || fail "--version lacks the warning"
		echo "isa_objects: LUMEN_ISA=$want -> $path (the CPU or build lacks it; warned)"
	fi
done
[ $status -eq 0 ] && echo "isa_objects: ok"
exit $status
