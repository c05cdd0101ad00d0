/*
 * simd.h — the CPU backend's vectorised loops, one table per instruction set, chosen at run time.
 *
 * The loops whose speed depends on the vector width (elementwise math, a + alpha*b, the dense
 * reduction lanes, the Winograd convolution's transforms and products) are written once, in
 * simd_loops.h and the *_loops.h files it includes, and compiled three times: simd_scalar.c
 * (x86-64 baseline, vectorisation off), simd_avx2.c (x86-64-v3) and simd_avx512.c (x86-64-v4),
 * each with its own -march whatever the rest of the build uses (CMakeLists.txt), each defining
 * one lmi_simd_table. lmi_simd() returns the table of the path in use (lumen/isa.h); callers
 * (ewise.c, axpy.c, reduce.c, winograd.c) fetch it once per operation. Everything else in the
 * backend is compiled once and is not ISA-specific. Read next: simd_loops.h, ../../core/cpu_isa.c.
 */
#ifndef LUMEN_BACKEND_CPU_SIMD_H
#define LUMEN_BACKEND_CPU_SIMD_H

#include "backend/cpu/cpu.h"
#include "core/cpu_isa.h"

/* Context of the unary kernels: the op (an lm_unop or an lmi_cpu_unop_ext) and its parameters. */
typedef struct lmi_unary_ctx {
	int op;
	double p0, p1;
} lmi_unary_ctx;

/* Context of the a + alpha * b kernels. */
typedef struct lmi_axpy_ctx {
	double f;  /* alpha for float dtypes */
	int64_t i; /* alpha for integer dtypes (integral; wraps like the arithmetic) */
} lmi_axpy_ctx;

/* The Winograd F(2x2, 3x3) convolution's float32 loops (winograd_loops.h, gemm_loops.h; the
 * algorithm and the buffers' layouts are described in winograd.c). */
typedef struct lmi_wino_loops {
	void (*in_tf)(const float *xp, int64_t wp, int64_t cp, int64_t t0, int64_t nt, int64_t tw,
	              float *v, int64_t ldv);
	void (*out_tf)(const float *m, int64_t ldm, int64_t kp, int64_t t0, int64_t nt, int64_t tw,
	               const float *bias, float *y, int64_t oh, int64_t ow);
	void (*out_tf_adj)(const float *gy, int64_t oh, int64_t ow, int64_t kp, int64_t t0,
	                   int64_t nt, int64_t tw, float *dm, int64_t ldm);
	void (*in_tf_adj)(const float *dv, int64_t ldv, int64_t cp, int64_t t0, int64_t nt,
	                  int64_t tw, float *dxp, int64_t wp);
	/* C (m x n, ldc) = (or += with acc) A (a[i*ars + p*aps], m x k) B (k x n, ldb); n % 16 == 0 */
	void (*gemm)(int64_t m, int64_t n, int64_t k, const float *a, int64_t ars, int64_t aps,
	             const float *b, int64_t ldb, float *c, int64_t ldc, bool acc);
} lmi_wino_loops;

typedef struct lmi_simd_table {
	lm_isa isa;
	/* elementwise 1-D kernels for lmi_iter, per dtype (ewise.c, axpy.c) */
	lmi_iter_kernel unary[LM_DTYPE_COUNT];  /* ctx: lmi_unary_ctx */
	lmi_iter_kernel binary[LM_DTYPE_COUNT]; /* ctx: an int lm_binop */
	lmi_iter_kernel where[LM_DTYPE_COUNT];  /* ctx: unused */
	lmi_iter_kernel axpy[LM_DTYPE_COUNT];   /* ctx: lmi_axpy_ctx */
	/*
	 * Reduction lanes (reduce.c): part[l] += the sum of x[i] over i = l (mod L), i < n; L a
	 * multiple of 16, at most 256. float32 adds 64-element runs in float, then in double.
	 */
	void (*lanes_f32)(const float *x, int64_t n, int L, double *part);
	void (*lanes_f64)(const double *x, int64_t n, int L, double *part);
	/* acc[j] += the sum over r < rows of x[r * rs + j], j < n (sums over an outer dim, in double) */
	void (*rowsacc_f32)(double *acc, const float *x, int64_t rows, int64_t rs, int64_t n);
	void (*rowsacc_f64)(double *acc, const double *x, int64_t rows, int64_t rs, int64_t n);
	lmi_wino_loops wino;
	/* C (m x n int32, ldc) = A (m x k uint8, lda) B (k x n int8, ldb), exact (qgemm_loops.h);
	 * scratch from lm_alloc (LM_ERR_NOMEM when it fails); how: the kernel this path runs */
	lm_status (*gemm_u8s8)(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda,
	                       const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc);
	const char *(*gemm_u8s8_how)(void);
	/* the dot product of nb q4_0 blocks with nb q8_0 blocks (qdot_loops.h) */
	float (*dot_q4_0_q8_0)(const void *x, const void *y, int64_t nb);
	/* rows of float16 / bfloat16 bits to and from float32, core/half.h's rules (half_loops.h) */
	struct {
		void (*f16_from_f32)(const float *x, uint16_t *y, int64_t n);
		void (*f16_to_f32)(const uint16_t *x, float *y, int64_t n);
		void (*bf16_from_f32)(const float *x, uint16_t *y, int64_t n);
		void (*bf16_to_f32)(const uint16_t *x, float *y, int64_t n);
	} half;
} lmi_simd_table;

extern const lmi_simd_table lmi_simd_scalar;
#ifdef LUMEN_SIMD_X86
extern const lmi_simd_table lmi_simd_avx2, lmi_simd_avx512;
#endif

/* The table of path isa, or NULL where this build has none (the tests run every path this way;
 * a path the CPU cannot run must not be called). */
const lmi_simd_table *lmi_simd_for(lm_isa isa);

/* The table of the path in use. */
static inline const lmi_simd_table *lmi_simd(void)
{
#ifdef LUMEN_SIMD_X86
	switch (lmi_isa()) {
	case LM_ISA_AVX512: return &lmi_simd_avx512;
	case LM_ISA_AVX2: return &lmi_simd_avx2;
	default: break;
	}
#endif
	return &lmi_simd_scalar;
}

/* The plain triple-loop product the Winograd convolution runs where no vector kernel does (the
 * scalar path's float32, every path's float64): C (m x n, ldc) = or += A (element (i, p) at
 * a[i*ars + p*aps]) B (k x n, ldb). */
#define LMI_PLAIN_GEMM(NAME, T)                                                                     \
	static void NAME(int64_t m, int64_t n, int64_t k, const T *a, int64_t ars, int64_t aps,         \
	                 const T *b, int64_t ldb, T *c, int64_t ldc, bool acc)                          \
	{                                                                                           \
		for (int64_t i = 0; i < m; i++) {                                                       \
			T *ci = c + i * ldc;                                                                \
			if (!acc)                                                                           \
				for (int64_t j = 0; j < n; j++) ci[j] = 0;                                      \
			for (int64_t p = 0; p < k; p++) {                                                   \
				T av = a[i * ars + p * aps];                                                    \
				const T *bp = b + p * ldb;                                                      \
				for (int64_t j = 0; j < n; j++) ci[j] += av * bp[j];                            \
			}                                                                                   \
		}                                                                                       \
	}

#endif
