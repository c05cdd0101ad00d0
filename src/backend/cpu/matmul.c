/*
 * matmul.c — matrix products on the CPU: OpenBLAS sgemm/dgemm for floats, a blocked loop for
 * integers.
 *
 * BLAS takes a row-major operand either as is (unit column stride) or transposed (unit row
 * stride); any other layout is copied to a dense buffer first. Read next: ../../ops/matmul.c.
 */
#include <string.h>

#include "backend/cpu/blas.h"
#include "backend/cpu/cpu.h"

/* How BLAS can read m: row-major with leading dimension ld, possibly transposed. */
static bool blas_layout(const lmi_mat *m, CBLAS_TRANSPOSE *tr, int64_t *ld)
{
	int64_t mc = m->cols > 1 ? m->cols : 1, mr = m->rows > 1 ? m->rows : 1;
	if (m->cs == 1 || m->cols == 1) {
		int64_t l = m->rows == 1 ? mc : m->rs;
		if (l >= mc) {
			*tr = CblasNoTrans;
			*ld = l;
			return true;
		}
	}
	if (m->rs == 1 || m->rows == 1) {
		int64_t l = m->cols == 1 ? mr : m->cs;
		if (l >= mr) {
			*tr = CblasTrans;
			*ld = l;
			return true;
		}
	}
	return false;
}

/* A dense row-major copy of m (caller frees with lm_free(p, bytes)). */
static void *dense_copy(lm_dtype dt, const lmi_mat *m, size_t *bytes)
{
	size_t es = lm_dtype_size(dt);
	*bytes = (size_t)(m->rows * m->cols) * es;
	char *d = lm_alloc(*bytes ? *bytes : 1);
	if (!d) return NULL;
	if (dt == LM_FLOAT32) {
		const float *s = m->data;
		float *o = (float *)d;
		for (int64_t i = 0; i < m->rows; i++)
			for (int64_t j = 0; j < m->cols; j++) o[i * m->cols + j] = s[i * m->rs + j * m->cs];
	} else {
		const double *s = m->data;
		double *o = (double *)d;
		for (int64_t i = 0; i < m->rows; i++)
			for (int64_t j = 0; j < m->cols; j++) o[i * m->cols + j] = s[i * m->rs + j * m->cs];
	}
	return d;
}

lm_status lmi_cpu_gemm(lm_dtype dt, const lmi_mat *a, const lmi_mat *b, void *c, int64_t ldc,
                       double beta)
{
	int64_t M = a->rows, K = a->cols, N = b->cols;
	LM_ASSERT(b->rows == K);
	if (M == 0 || N == 0) return LM_OK;
	if (K == 0) { /* empty sum: C = beta * C */
		size_t es = lm_dtype_size(dt);
		for (int64_t i = 0; i < M; i++)
			if (beta == 0) memset((char *)c + (size_t)(i * ldc) * es, 0, (size_t)N * es);
		return LM_OK;
	}
	if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
		return lmi_fail(LM_ERR_OVERFLOW, "matmul: dims %lld x %lld x %lld exceed BLAS's int range",
		                (long long)M, (long long)K, (long long)N);
	lmi_mat A = *a, B = *b;
	void *abuf = NULL, *bbuf = NULL;
	size_t abytes = 0, bbytes = 0;
	CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans;
	int64_t lda = 0, ldb = 0;
	if (!blas_layout(&A, &ta, &lda)) {
		if (!(abuf = dense_copy(dt, a, &abytes))) return lm_last_status();
		A = (lmi_mat){abuf, M, K, K, 1};
		blas_layout(&A, &ta, &lda);
	}
	if (!blas_layout(&B, &tb, &ldb)) {
		if (!(bbuf = dense_copy(dt, b, &bbytes))) {
			lm_free(abuf, abytes);
			return lm_last_status();
		}
		B = (lmi_mat){bbuf, K, N, N, 1};
		blas_layout(&B, &tb, &ldb);
	}
	const lmi_blas_api *blas = lmi_blas();
	if (!blas) {
		lm_free(abuf, abytes);
		lm_free(bbuf, bbytes);
		return lm_last_status();
	}
	/*
	 * A very large product (over 1e10 multiply-adds: ~0.1 s and more) runs as panels of 512 rows
	 * of C with an interrupt check between them, so Ctrl-C does not wait for a whole 4096^2
	 * product (one BLAS call cannot be stopped). Each panel re-packs B, a few per cent of the
	 * time, which is why smaller products stay one call.
	 */
	double work = (double)M * (double)N * (double)K;
	int64_t panel = work > 1e10 && M > 1024 ? 512 : M;
	size_t es = lm_dtype_size(dt);
	lm_status st = LM_OK;
	for (int64_t i = 0; i < M; i += panel) {
		if (i && lmi_check_interrupt()) {
			st = lmi_fail(LM_ERR_INTERRUPTED, "interrupted");
			break;
		}
		int64_t m = M - i < panel ? M - i : panel;
		/* row i of A: offset i*lda without transposition, column i (offset i) with it */
		const char *ai = (const char *)A.data + (size_t)(ta == CblasNoTrans ? i * lda : i) * es;
		char *ci = (char *)c + (size_t)(i * ldc) * es;
		if (dt == LM_FLOAT32)
			blas->sgemm(CblasRowMajor, ta, tb, (int)m, (int)N, (int)K, 1.0f, (const float *)ai,
			            (int)lda, B.data, (int)ldb, (float)beta, (float *)ci, (int)ldc);
		else
			blas->dgemm(CblasRowMajor, ta, tb, (int)m, (int)N, (int)K, 1.0, (const double *)ai,
			            (int)lda, B.data, (int)ldb, beta, (double *)ci, (int)ldc);
	}
	lm_free(abuf, abytes);
	lm_free(bbuf, bbytes);
	return st;
}

#define IGEMM(T, UT)                                                                                \
	static void igemm_##T(const lmi_mat *a, const lmi_mat *b, T *c, int64_t ldc)                    \
	{                                                                                           \
		const T *A = a->data, *B = b->data;                                                     \
		for (int64_t i = 0; i < a->rows; i++) {                                                 \
			T *ci = c + i * ldc;                                                                \
			for (int64_t j = 0; j < b->cols; j++) ci[j] = 0;                                    \
			for (int64_t k = 0; k < a->cols; k++) {                                             \
				UT aik = (UT)A[i * a->rs + k * a->cs];                                          \
				for (int64_t j = 0; j < b->cols; j++)                                           \
					ci[j] = (T)((UT)ci[j] + aik * (UT)B[k * b->rs + j * b->cs]);                \
			}                                                                                   \
		}                                                                                       \
	}
IGEMM(int32_t, uint32_t)
IGEMM(int64_t, uint64_t)
IGEMM(uint8_t, uint32_t)

void lmi_cpu_gemm_int(lm_dtype dt, const lmi_mat *a, const lmi_mat *b, void *c, int64_t ldc)
{
	switch (dt) {
	case LM_INT32: igemm_int32_t(a, b, c, ldc); break;
	case LM_INT64: igemm_int64_t(a, b, c, ldc); break;
	case LM_UINT8: igemm_uint8_t(a, b, c, ldc); break;
	default: LM_ASSERT(0 && "integer gemm dtype");
	}
}

/* ---------------------------------------------------------------- batches of products */

/* Matrix k of operand t (at least 2-D) with its batch broadcast to bshape. */
static lmi_mat batch_mat(const lm_tensor *t, int bnd, const int64_t *bshape, int64_t k)
{
	int tb = t->ndim - 2;
	int64_t off = 0;
	for (int i = bnd - 1; i >= 0; i--) {
		int64_t idx = k % bshape[i];
		k /= bshape[i];
		int ti = i - (bnd - tb);
		if (ti >= 0 && t->shape[ti] != 1) off += idx * t->stride[ti];
	}
	return (lmi_mat){lmi_data(t) + off * (int64_t)lmi_elem_size(t->dtype), t->shape[tb],
	                 t->shape[tb + 1], t->stride[tb], t->stride[tb + 1]};
}

/* One product, by BLAS (floats) or the integer loop. */
static lm_status gemm_one(lm_dtype dt, const lmi_mat *a, const lmi_mat *b, void *c, int64_t ldc)
{
	if (lm_dtype_is_float(dt)) return lmi_cpu_gemm(dt, a, b, c, ldc, 0);
	lmi_cpu_gemm_int(dt, a, b, c, ldc);
	return LM_OK;
}

lm_status lmi_cpu_matmul(const lm_tensor *a, const lm_tensor *b, int bnd, const int64_t *bshape,
                         lm_tensor *out)
{
	int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1];
	int64_t nbatch = 1;
	for (int i = 0; i < bnd; i++) nbatch *= bshape[i];
	lm_dtype dt = out->dtype;
	char *o = lmi_data(out);
	size_t es = lm_dtype_size(dt);
	/* The Linear-layer case: b is one matrix and a's batch folds into rows: one product. */
	bool fold = b->ndim == 2 && a->ndim > 2 && lm_tensor_is_contiguous(a);
	if (nbatch == 1 || fold) {
		lmi_mat ma = fold ? (lmi_mat){lmi_data(a), nbatch * M, K, K, 1} : batch_mat(a, bnd, bshape, 0);
		lmi_mat mb = batch_mat(b, fold ? 0 : bnd, bshape, 0); /* folded: b has no batch (and a's may be 0) */
		return gemm_one(dt, &ma, &mb, o, N);
	}
	/* Parallel over the batch (BLAS single-threaded inside each) when the matrices are small or
	 * there are enough of them to keep every thread busy (convolution's images); otherwise one
	 * product at a time with BLAS's own threads. */
	int nt = lmi_num_threads();
	bool by_batch = nt > 1 && ((double)M * (double)N * (double)K < 96.0 * 96 * 96 || nbatch >= 4 * nt);
	lmi_par_err perr;
	lmi_par_init(&perr);
#pragma omp parallel for schedule(dynamic, 1) if (by_batch)
	for (int64_t k = 0; k < nbatch; k++) {
		if (lmi_check_interrupt()) {
			lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "interrupted");
			continue;
		}
		lmi_mat ma = batch_mat(a, bnd, bshape, k), mb = batch_mat(b, bnd, bshape, k);
		if (gemm_one(dt, &ma, &mb, o + (size_t)(k * M * N) * es, N))
			lmi_par_fail(&perr, lm_last_status(), "%s", lm_last_error());
	}
	return lmi_par_finish(&perr);
}

lm_status lmi_cpu_matmul_batch_sum(const lm_tensor *a, const lm_tensor *b, lm_tensor *out)
{
	int nd = a->ndim;
	int64_t M = a->shape[nd - 2], N = b->shape[nd - 1], nbatch = 1;
	for (int i = 0; i < nd - 2; i++) nbatch *= a->shape[i];
	/* Threads split the batch, each summing its share into its own (M, N) partial (BLAS runs
	 * single-threaded inside the region; thread 0's partial is out); the partials are added at
	 * the end. */
	int nt = lmi_num_threads();
	if (nt > nbatch) nt = (int)(nbatch ? nbatch : 1);
	if (nt > 64) nt = 64;
	lm_tensor *part[64] = {out};
	lm_status s = lmi_fill(out, 0);
	for (int t = 1; t < nt && !s; t++) {
		if (!(part[t] = lmi_empty("matmul", 2, (int64_t[]){M, N}, out->dtype))) s = lm_last_status();
		else s = lmi_fill(part[t], 0);
	}
	lmi_par_err perr;
	lmi_par_init(&perr);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && !s)
	for (int t = 0; t < nt; t++) {
		for (int64_t k = nbatch * t / nt; k < nbatch * (t + 1) / nt && !s; k++) {
			if (lmi_check_interrupt()) {
				lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "interrupted");
				break;
			}
			lmi_mat ma = batch_mat(a, nd - 2, a->shape, k), mb = batch_mat(b, nd - 2, b->shape, k);
			if (lmi_cpu_gemm(a->dtype, &ma, &mb, lmi_data(part[t]), N, 1)) {
				lmi_par_fail(&perr, lm_last_status(), "%s", lm_last_error());
				break;
			}
		}
	}
	if (!s) s = lmi_par_finish(&perr);
	for (int t = 1; t < nt && !s; t++) s = lmi_cpu_binary(LM_ADD, out, out, part[t]);
	for (int t = 1; t < nt; t++) lm_tensor_release(part[t]);
	return s;
}
