/*
 * simd_avx2.c — the AVX2 + FMA path of the vectorised loops (simd.h), compiled with
 * -march=x86-64-v3 whatever the rest of the build uses (CMakeLists.txt): no AVX-512 instruction
 * can appear here (tests/core/isa_objects.sh checks the object code). Empty where CMake could not
 * give it those flags (LUMEN_SIMD_X86 undefined). Read next: simd_loops.h.
 */
#ifdef LUMEN_SIMD_X86
#define LMI_SIMD_TABLE lmi_simd_avx2
#define LMI_SIMD_ISA LM_ISA_AVX2
#include "backend/cpu/simd_loops.h"
#else
typedef int lmi_simd_avx2_not_built; /* ISO C wants a declaration in every file */
#endif
