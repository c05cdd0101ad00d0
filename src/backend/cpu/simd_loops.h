/*
 * simd_loops.h — the body of each simd_<isa>.c: every vectorised loop of the backend, compiled
 * for the instruction set of the including file (its -march comes from CMakeLists.txt), and the
 * table that exports them (LMI_SIMD_TABLE, named by the includer). The scalar file defines
 * LMI_SIMD_SCALAR: no `omp simd`, no vector math, vectorisation off (its flags), so it is the
 * plain-C reference path. Read next: simd.h, ewise_loops.h, reduce_loops.h, gemm_loops.h,
 * winograd_loops.h.
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/simd.h"

#ifdef LMI_SIMD_SCALAR
#define LMI_OMP_SIMD
#else
#define LMI_OMP_SIMD _Pragma("omp simd")
#endif

#include "backend/cpu/ewise_loops.h"
#include "backend/cpu/reduce_loops.h"
#include "backend/cpu/gemm_loops.h"
#include "backend/cpu/qgemm_loops.h"
#include "core/half.h"
#include "core/quant.h"
#include "backend/cpu/qdot_loops.h"
#include "backend/cpu/half_loops.h"

/* the Winograd transforms in float32, vectorised across channels */
#define WT float
#define WFN(name) name##_f32
#if defined(LMI_SIMD_SCALAR)
#define WV float
#define WVW 1
#define WLOAD(p) (*(p))
#define WSTORE(p, v) (*(p) = (v))
#define WZERO() 0.0f
#elif defined(__AVX512F__)
#define WV __m512
#define WVW 16
#define WLOAD(p) _mm512_loadu_ps(p)
#define WSTORE(p, v) _mm512_storeu_ps(p, v)
#define WZERO() _mm512_setzero_ps()
#else
#define WV __m256
#define WVW 8
#define WLOAD(p) _mm256_loadu_ps(p)
#define WSTORE(p, v) _mm256_storeu_ps(p, v)
#define WZERO() _mm256_setzero_ps()
#endif
#include "backend/cpu/winograd_loops.h"

const lmi_simd_table LMI_SIMD_TABLE = {
	.isa = LMI_SIMD_ISA,
	.unary = {unary_f32, unary_f64, unary_i32, unary_i64, unary_u8},
	.binary = {binary_f32, binary_f64, binary_i32, binary_i64, binary_u8},
	.where = {where_f32, where_f64, where_i32, where_i64, where_u8},
	.axpy = {axpy_f32, axpy_f64, axpy_i32, axpy_i64, axpy_u8},
	.lanes_f32 = lanes_f32,
	.lanes_f64 = lanes_f64,
	.rowsacc_f32 = rowsacc_f32,
	.rowsacc_f64 = rowsacc_f64,
	.wino = {in_tf_f32, out_tf_f32, out_tf_adj_f32, in_tf_adj_f32, gemm_f32},
	.gemm_u8s8 = gemm_u8s8,
	.gemm_u8s8_how = gemm_u8s8_how,
	.dot_q4_0_q8_0 = dot_q4_0_q8_0,
	.half = {f16_from_f32, f16_to_f32, bf16_from_f32, bf16_to_f32},
};
