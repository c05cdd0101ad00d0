/*
 * simd_scalar.c — the scalar path of the vectorised loops (simd.h): compiled for the x86-64
 * baseline with vectorisation off (CMakeLists.txt gives this file its flags), and the only path of
 * builds for other CPUs. Read next: simd_loops.h.
 */
#define LMI_SIMD_SCALAR 1
#define LMI_SIMD_TABLE lmi_simd_scalar
#define LMI_SIMD_ISA LM_ISA_SCALAR
#include "backend/cpu/simd_loops.h"
