/*
 * lumen/isa.h — which SIMD instruction set Lumen's own CPU loops use, chosen at run time.
 *
 * Every build carries three versions of the vectorised loops (elementwise math, reductions, the
 * Winograd convolution): scalar (the x86-64 baseline, not vectorised), AVX2 + FMA (x86-64-v3) and
 * AVX-512 (x86-64-v4: F, CD, BW, DQ, VL), whatever -march the rest of the build was compiled
 * with. The first call picks the best path the CPU has, or the one named by the environment
 * variable LUMEN_ISA=scalar|avx2|avx512 (auto, or empty, means the best). A path the CPU lacks or
 * an unknown name falls back to the best available one and leaves a warning (lm_isa_warning) that
 * the program shows: never an illegal instruction. OpenBLAS's kernels are chosen separately
 * (OPENBLAS_CORETYPE; lumen --version shows both). Non-x86 builds have the scalar path only.
 * Read next: src/core/cpu_isa.c, src/backend/cpu/simd.h.
 */
#ifndef LUMEN_ISA_H
#define LUMEN_ISA_H

#include "lumen/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lm_isa {
	LM_ISA_SCALAR, /* portable C for the x86-64 baseline, not vectorised */
	LM_ISA_AVX2,   /* AVX2 + FMA (x86-64-v3): 8 float lanes */
	LM_ISA_AVX512, /* AVX-512 F/CD/BW/DQ/VL (x86-64-v4): 16 float lanes */
	LM_ISA_COUNT
} lm_isa;

/* The path in use (chosen at the first call, thread-safe). */
lm_isa lm_isa_active(void);
/* Whether this build has the path and this CPU (and its OS) can run it. */
bool lm_isa_supported(lm_isa isa);
/* The best path the CPU supports. */
lm_isa lm_isa_best(void);
/* Switches the path, for tests and benchmarks that compare them: LM_ERR_UNSUPPORTED (nothing
 * changes) when the build or the CPU lacks it, LM_ERR_ARG for a value out of range. Operations
 * already running finish on the path they started with. */
lm_status lm_isa_set(lm_isa isa);
/* "scalar", "avx2", "avx512" ("?" out of range). */
const char *lm_isa_name(lm_isa isa);
/* LM_OK and *out for "scalar", "avx2", "avx512" (any case); LM_ERR_ARG naming the text otherwise. */
lm_status lm_isa_parse(const char *name, lm_isa *out);
/* One line for people: "avx512 (AVX-512 F/CD/BW/DQ/VL + FMA, 16 float lanes; chosen: best of
 * this CPU)" — the path, what it is, and why it was chosen (best, LUMEN_ISA, lm_isa_set). */
const char *lm_isa_describe(void);
/* The warning about LUMEN_ISA (unknown name, or a path this CPU or build lacks), or NULL. */
const char *lm_isa_warning(void);
/* The CPU's model name as the CPU reports it ("AMD EPYC 9R45", "unknown" when it cannot say). */
const char *lm_cpu_model(void);

#ifdef __cplusplus
}
#endif
#endif
