/*
 * simd_avx512.c — the AVX-512 path of the vectorised loops (simd.h), compiled with
 * -march=x86-64-v4 -mprefer-vector-width=512 whatever the rest of the build uses
 * (CMakeLists.txt). Empty where CMake could not give it those flags (LUMEN_SIMD_X86 undefined).
 * Read next: simd_loops.h.
 */
#ifdef LUMEN_SIMD_X86
#define LMI_SIMD_TABLE lmi_simd_avx512
#define LMI_SIMD_ISA LM_ISA_AVX512
#include "backend/cpu/simd_loops.h"
#else
typedef int lmi_simd_avx512_not_built; /* ISO C wants a declaration in every file */
#endif
