/*
 * test_gpu_check_refs.c — the references of tools/gpu-check/gpu_check_slots.c (the rows that
 * check the CUDA kernels of tensor_api.h versions 3 and 4 on a GPU) run against the CPU backend's
 * loops: a stand-in for the CUDA module's kernel table serves each entry from the CPU's loops (lmi_cpu_*) on
 * host memory ("device" buffers are malloc'ed, copies are memcpy), so every row must pass. A row
 * that failed here would be the check's mistake, not the GPU's, on the one GPU run this project
 * gets. A planted fault (sort's order reversed, var's correction off by one) must fail exactly
 * those rows: the rows can fail. gpu_check_slots.c is included as it is (it is built by
 * tools/gpu-check's own CMake project, without liblumen, so it is not in lumen_core).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/gpu-check/gpu_check_slots.c"
#include "backend/backend.h"
#include "backend/cpu/axpy.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_move.h"
#include "backend/cpu/nn.h"
#include "backend/cpu/train.h"
#include "testutil.h"

static int fault; /* 1: the planted faults */

/* ---------------------------------------------------------------- the stand-in table */

static size_t esz(int dt)
{
	return lm_dtype_size((lm_dtype)dt);
}

/* A contiguous CPU tensor holding a's elements (the CPU's result does not depend on strides). */
static lm_tensor *tin(const lmi_cu_arr *a)
{
	int64_t n = 1;
	for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
	size_t es = esz(a->dtype);
	char *buf = malloc(n * es + 1);
	for (int64_t i = 0; i < n; i++) {
		int64_t q = i, off = 0;
		for (int d = a->ndim - 1; d >= 0; d--) {
			off += (q % a->shape[d]) * a->stride[d];
			q /= a->shape[d];
		}
		memcpy(buf + i * es, (char *)a->data + off * es, es);
	}
	lm_tensor *t = lm_from_data(buf, a->ndim, a->shape, (lm_dtype)a->dtype);
	free(buf);
	return t;
}

static lm_tensor *raw(const void *p, int dt, int nd, const int64_t *shape)
{
	return lm_from_data(p, nd, shape, (lm_dtype)dt);
}

static void tout(void *dst, const lm_tensor *t)
{
	memcpy(dst, lmi_data(t), lm_tensor_numel(t) * lm_dtype_size(t->dtype));
}

static int st(lm_status s, char *em, size_t ecap)
{
	if (s) snprintf(em, ecap, "%s", lm_last_error());
	return s ? 1 : 0;
}

static int m_stat(int op, int dt, const void *x, int64_t rows, int64_t R, void *out, double p,
                  char *em, size_t ecap)
{
	lm_tensor *a = raw(x, dt, 2, (int64_t[]){rows, R}), *o = lm_empty(1, &rows, (lm_dtype)dt);
	int e = st(lmi_cpu_reduce_dims(op, a, 2u, o, NULL, fault && op == LM_VAR ? p + 1 : p), em, ecap);
	tout(out, o);
	lm_tensor_release(a);
	lm_tensor_release(o);
	return e;
}

static int m_gelu(const lmi_cu_arr *out, const lmi_cu_arr *x, const lmi_cu_arr *g, int t, char *em,
                  size_t ecap)
{
	lm_tensor *a = tin(x), *b = g ? tin(g) : NULL,
	          *o = lm_empty(out->ndim, out->shape, (lm_dtype)out->dtype);
	int e = st(lmi_cpu_gelu(o, a, b, t), em, ecap);
	tout(out->data, o);
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(o);
	return e;
}

static int m_pool(int dt, const void *x, void *y, int64_t *idx, int64_t P, int64_t H, int64_t W,
                  int64_t OH, int64_t OW, const int64_t *w, char *em, size_t ecap)
{
	lm_tensor *a = raw(x, dt, 3, (int64_t[]){P, H, W}),
	          *o = lm_empty(3, (int64_t[]){P, OH, OW}, (lm_dtype)dt),
	          *ix = lm_empty(2, (int64_t[]){P, OH * OW}, LM_INT64);
	int e = st(lmi_cpu_max_pool2d(a, o, ix, P, H, W, OH, OW, (int64_t[]){w[0], w[1]},
	                         (int64_t[]){w[2], w[3]}, (int64_t[]){w[4], w[5]}),
	           em, ecap);
	tout(y, o);
	tout(idx, ix);
	lm_tensor_release(a);
	lm_tensor_release(o);
	lm_tensor_release(ix);
	return e;
}

static int m_rms(int dt, void *p, const void *g, void *sq, void *buf, void *ga, int64_t n,
                 const double *f, char *em, size_t ecap)
{
	lm_tensor *tp = raw(p, dt, 1, &n), *tg = raw(g, dt, 1, &n), *ts = raw(sq, dt, 1, &n),
	          *tb = buf ? raw(buf, dt, 1, &n) : NULL, *ta = ga ? raw(ga, dt, 1, &n) : NULL;
	lm_rmsprop_opts o = {.lr = f[2],
	                     .alpha = f[0],
	                     .eps = f[3],
	                     .weight_decay = f[1],
	                     .momentum = f[4],
	                     .centered = ga != NULL,
	                     .maximize = f[5] != 0};
	int e = st(lmi_cpu_rmsprop_step(tp, tg, ts, tb, ta, &o), em, ecap);
	tout(p, tp);
	tout(sq, ts);
	if (tb) tout(buf, tb);
	if (ta) tout(ga, ta);
	lm_tensor_release(tp);
	lm_tensor_release(tg);
	lm_tensor_release(ts);
	lm_tensor_release(tb);
	lm_tensor_release(ta);
	return e;
}

static int dt_of(int es)
{
	return es == 1 ? LM_UINT8 : es == 4 ? LM_INT32 : LM_INT64;
}

static int m_crop(int es, const void *x, const int64_t *off, int64_t pad, int64_t N, int64_t Cc,
                  int64_t H, int64_t W, int64_t oh, int64_t ow, void *out, char *em, size_t ecap)
{
	lm_tensor *a = raw(x, dt_of(es), 4, (int64_t[]){N, Cc, H, W}),
	          *of = raw(off, LM_INT64, 2, (int64_t[]){N, 2}),
	          *o = lm_zeros(4, (int64_t[]){N, Cc, oh, ow}, (lm_dtype)dt_of(es));
	int e = st(lmi_cpu_crop_batch(a, of, pad, o), em, ecap);
	tout(out, o);
	lm_tensor_release(a);
	lm_tensor_release(of);
	lm_tensor_release(o);
	return e;
}

static int m_flip(int es, const void *x, const uint8_t *mask, void *out, int64_t N, int64_t L,
                  int64_t W, char *em, size_t ecap)
{
	lm_tensor *a = raw(x, dt_of(es), 3, (int64_t[]){N, L, W}), *m = raw(mask, LM_UINT8, 1, &N),
	          *o = lm_empty(3, (int64_t[]){N, L, W}, (lm_dtype)dt_of(es));
	int e = st(lmi_cpu_flip_batch(a, m, o), em, ecap);
	tout(out, o);
	lm_tensor_release(a);
	lm_tensor_release(m);
	lm_tensor_release(o);
	return e;
}
/* An index out of range: the kernels' answer, {the first position in idx's order, its value}. */
static int first_bad(const lmi_cu_arr *idx, int64_t size, int64_t *bad)
{
	lm_tensor *t = tin(idx);
	int64_t n = lm_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		int64_t v = idx->dtype == LM_INT64 ? ((int64_t *)lmi_data(t))[i]
		                                   : ((int32_t *)lmi_data(t))[i];
		if (v < 0 || v >= size) {
			bad[0] = i;
			bad[1] = v;
			lm_tensor_release(t);
			return LMI_CU_ERR_INDEX;
		}
	}
	lm_tensor_release(t);
	return 0;
}

static int m_isel(const void *x, int es, int64_t O, int64_t S, int64_t I, const lmi_cu_arr *idx,
                  void *out, int64_t *bad, char *em, size_t ecap)
{
	if (first_bad(idx, S, bad)) return LMI_CU_ERR_INDEX;
	lm_tensor *a = raw(x, dt_of(es), 3, (int64_t[]){O, S, I}), *ix = tin(idx);
	int64_t n = lm_tensor_numel(ix);
	lm_tensor *o = lm_empty(3, (int64_t[]){O, n, I}, (lm_dtype)dt_of(es));
	int e = st(lmi_cpu_index_select("index_select", a, O, S, I, ix, o), em, ecap);
	tout(out, o);
	lm_tensor_release(a);
	lm_tensor_release(ix);
	lm_tensor_release(o);
	return e;
}

static int m_gather(const lmi_cu_arr *x, int dim, const lmi_cu_arr *idx, const lmi_cu_arr *out,
                    int64_t *bad, char *em, size_t ecap)
{
	if (first_bad(idx, x->shape[dim], bad)) return LMI_CU_ERR_INDEX;
	lm_tensor *a = tin(x), *ix = tin(idx),
	          *o = lm_empty(out->ndim, out->shape, (lm_dtype)out->dtype);
	int e = st(lmi_cpu_gather(a, dim, ix, o), em, ecap);
	tout(out->data, o);
	lm_tensor_release(a);
	lm_tensor_release(ix);
	lm_tensor_release(o);
	return e;
}

static int m_scatter(const lmi_cu_arr *out, int dim, const lmi_cu_arr *idx, const lmi_cu_arr *src,
                     int64_t *bad, char *em, size_t ecap)
{
	if (first_bad(idx, out->shape[dim], bad)) return LMI_CU_ERR_INDEX;
	lm_tensor *o = tin(out), *ix = tin(idx), *s = tin(src);
	int e = st(lmi_cpu_scatter_add(o, dim, ix, s), em, ecap);
	tout(out->data, o);
	lm_tensor_release(o);
	lm_tensor_release(ix);
	lm_tensor_release(s);
	return e;
}

static int m_onehot(const lmi_cu_arr *idx, int64_t classes, int64_t *out, int64_t *bad, char *em,
                    size_t ecap)
{
	if (first_bad(idx, classes, bad)) return LMI_CU_ERR_INDEX;
	lm_tensor *ix = tin(idx);
	int64_t n = lm_tensor_numel(ix);
	lm_tensor *o = lm_zeros(2, (int64_t[]){n, classes}, LM_INT64);
	int e = st(lmi_cpu_one_hot(ix, classes, o), em, ecap);
	tout(out, o);
	lm_tensor_release(ix);
	lm_tensor_release(o);
	return e;
}

static int m_cumsum(int dt, const void *x, int64_t O, int64_t R, int64_t I, void *out, char *em,
                    size_t ecap)
{
	lm_tensor *a = raw(x, dt, 3, (int64_t[]){O, R, I});
	lm_tensor *o = lm_empty(3, (int64_t[]){O, R, I},
	                        lm_dtype_is_float((lm_dtype)dt) ? (lm_dtype)dt : LM_INT64);
	int e = st(lmi_cpu_cumsum(a, O, R, I, o), em, ecap);
	tout(out, o);
	lm_tensor_release(a);
	lm_tensor_release(o);
	return e;
}

static int m_tri(int es, const void *x, int64_t B, int64_t M, int64_t N, int64_t k, int up,
                 void *out, char *em, size_t ecap)
{
	lm_tensor *a = raw(x, dt_of(es), 3, (int64_t[]){B, M, N}),
	          *o = lm_empty(3, (int64_t[]){B, M, N}, (lm_dtype)dt_of(es));
	int e = st(lmi_cpu_triangle(a, B, M, N, k, up, o), em, ecap);
	tout(out, o);
	lm_tensor_release(a);
	lm_tensor_release(o);
	return e;
}

static int m_repeat(int es, void *out, int nd, const int64_t *shape, const int64_t *xs, char *em,
                    size_t ecap)
{
	int64_t reps[8];
	for (int d = 0; d < nd; d++) reps[d] = shape[d] / xs[d];
	lm_tensor *o = raw(out, dt_of(es), nd, shape);
	int e = st(lmi_cpu_repeat_fill(o, xs, reps), em, ecap);
	tout(out, o);
	lm_tensor_release(o);
	return e;
}

static int m_sort(int dt, const void *x, int64_t O, int64_t R, int64_t I, int64_t k, int desc,
                  void *v, int64_t *ix, char *em, size_t ecap)
{
	if (R > LMI_CU_SORT_MAX) {
		snprintf(em, ecap, "too long");
		return 1;
	}
	lm_tensor *a = raw(x, dt, 3, (int64_t[]){O, R, I}),
	          *vo = lm_empty(3, (int64_t[]){O, k, I}, (lm_dtype)dt),
	          *io = lm_empty(3, (int64_t[]){O, k, I}, LM_INT64);
	int e = st(lmi_cpu_sort(a, O, R, I, k, fault ? !desc : desc, vo, io), em, ecap);
	tout(v, vo);
	tout(ix, io);
	lm_tensor_release(a);
	lm_tensor_release(vo);
	lm_tensor_release(io);
	return e;
}

static int m_fill(const lmi_cu_arr *d, double v, char *em, size_t ecap)
{
	(void)em;
	(void)ecap;
	int64_t n = 1;
	for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
	for (int64_t i = 0; i < n; i++) {
		if (d->dtype == LM_INT64)
			((int64_t *)d->data)[i] = (int64_t)v;
		else if (d->dtype == LM_FLOAT32)
			((float *)d->data)[i] = (float)v;
		else
			((double *)d->data)[i] = v;
	}
	return 0;
}

static int m_free(void *p, char *em, size_t ecap)
{
	(void)em;
	(void)ecap;
	free(p);
	return 0;
}

static int m_unary(int op, const lmi_cu_arr *out, const lmi_cu_arr *x, double p0, double p1,
                   char *em, size_t ecap)
{
	lm_tensor *a = tin(x), *o = lm_empty(out->ndim, out->shape, (lm_dtype)out->dtype);
	int e = st(lmi_cpu_unary(op, o, a, p0, p1), em, ecap);
	tout(out->data, o);
	lm_tensor_release(a);
	lm_tensor_release(o);
	return e;
}

static lm_tensor *bcast(const lmi_cu_arr *a, const lmi_cu_arr *out)
{
	/* a broadcast to out's shape by stride 0, then materialised */
	lmi_cu_arr b = *a;
	b.ndim = out->ndim;
	for (int d = out->ndim - 1; d >= 0; d--) {
		int j = d - (out->ndim - a->ndim);
		b.shape[d] = out->shape[d];
		b.stride[d] = j < 0 || (a->shape[j] == 1 && out->shape[d] != 1) ? 0 : a->stride[j];
	}
	return tin(&b);
}

static int m_binary(int op, const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
                    char *em, size_t ecap)
{
	lm_tensor *x = bcast(a, out), *y = bcast(b, out),
	          *o = lm_empty(out->ndim, out->shape, (lm_dtype)out->dtype);
	lm_status s = lmi_cpu_binary(op, o, x, y);
	int e = s == LM_ERR_ARG && strstr(lm_last_error(), "division by zero") ? LMI_CU_ERR_ZERO_DIV
	                                                                       : st(s, em, ecap);
	tout(out->data, o);
	lm_tensor_release(x);
	lm_tensor_release(y);
	lm_tensor_release(o);
	return e;
}

static int m_where(const lmi_cu_arr *out, const lmi_cu_arr *c, const lmi_cu_arr *a,
                   const lmi_cu_arr *b, char *em, size_t ecap)
{
	lm_tensor *m = bcast(c, out), *x = bcast(a, out), *y = bcast(b, out),
	          *o = lm_empty(out->ndim, out->shape, (lm_dtype)out->dtype);
	int e = st(lmi_cpu_where(o, m, x, y), em, ecap);
	tout(out->data, o);
	lm_tensor_release(m);
	lm_tensor_release(x);
	lm_tensor_release(y);
	lm_tensor_release(o);
	return e;
}

static int m_axpy(const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b, double al,
                  char *em, size_t ecap)
{
	lm_tensor *x = bcast(a, out), *y = bcast(b, out),
	          *o = lm_empty(out->ndim, out->shape, (lm_dtype)out->dtype);
	int e = st(lmi_cpu_add_scaled(o, x, y, al), em, ecap);
	tout(out->data, o);
	lm_tensor_release(x);
	lm_tensor_release(y);
	lm_tensor_release(o);
	return e;
}

static int m_reduce(int op, int dt, const void *x, int64_t rows, int64_t R, void *out, int64_t *idx,
                    char *em, size_t ecap)
{
	bool arg = op == LM_ARGMAX || op == LM_ARGMIN;
	lm_tensor *a = raw(x, dt, 2, (int64_t[]){rows, R});
	bool fl = lm_dtype_is_float((lm_dtype)dt);
	lm_dtype odt = arg || (!fl && (op == LM_SUM || op == LM_PROD)) ? LM_INT64
	               : !fl && op == LM_MEAN                          ? LM_FLOAT32
	                                                               : (lm_dtype)dt;
	lm_tensor *o = lm_empty(1, &rows, odt);
	lm_tensor *ix = idx && !arg ? lm_empty(1, &rows, LM_INT64) : NULL;
	int e = st(lmi_cpu_reduce_dims(op, a, 2u, o, ix, 0), em, ecap);
	tout(arg ? (void *)idx : out, o);
	if (ix) tout(idx, ix);
	lm_tensor_release(a);
	lm_tensor_release(o);
	lm_tensor_release(ix);
	return e;
}

/* gemm: A (M, K) when sA is 0, else (batch, M, K); B likewise; through the CPU's matmul slot */
static int m_gemm(int dt, int64_t batch, int64_t M, int64_t N, int64_t K, const void *A, int64_t sA,
                  const void *B, int64_t sB, void *Cm, int64_t sC, double beta, char *em,
                  size_t ecap)
{
	(void)sC, (void)beta;
	lm_tensor *a =
	    sA ? raw(A, dt, 3, (int64_t[]){batch, M, K}) : raw(A, dt, 2, (int64_t[]){M, K});
	lm_tensor *b =
	    sB ? raw(B, dt, 3, (int64_t[]){batch, K, N}) : raw(B, dt, 2, (int64_t[]){K, N});
	lm_tensor *o = lm_empty(3, (int64_t[]){batch, M, N}, (lm_dtype)dt);
	int e = st(lmi_cpu_matmul(a, b, 1, &batch, o), em, ecap);
	tout(Cm, o);
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(o);
	return e;
}

static lmi_cuda_tensor_api stand_in;

const lmi_cuda_tensor_api *lm_cuda_tensor_api(void)
{
	stand_in.version = LMI_CUDA_TENSOR_VERSION;
	stand_in.free = m_free;
	stand_in.fill = m_fill;
	stand_in.unary = m_unary;
	stand_in.binary = m_binary;
	stand_in.where = m_where;
	stand_in.add_scaled = m_axpy;
	stand_in.reduce_rows = m_reduce;
	stand_in.gemm = m_gemm;
	stand_in.stat_rows = m_stat;
	stand_in.gelu = m_gelu;
	stand_in.max_pool2d = m_pool;
	stand_in.rmsprop = m_rms;
	stand_in.crop = m_crop;
	stand_in.flip = m_flip;
	stand_in.index_select = m_isel;
	stand_in.gather = m_gather;
	stand_in.scatter_add = m_scatter;
	stand_in.one_hot = m_onehot;
	stand_in.cumsum = m_cumsum;
	stand_in.triangle = m_tri;
	stand_in.repeat_fill = m_repeat;
	stand_in.sort = m_sort;
	return &stand_in;
}

/* ---------------------------------------------------------------- gpu_check.h's helpers */

void *gc_dev(size_t n)
{
	return malloc(n ? n : 1);
}
void gc_up(void *d, const void *h, size_t n)
{
	memcpy(d, h, n);
}
void gc_down(void *h, const void *d, size_t n)
{
	memcpy(h, d, n);
}

lmi_cu_arr gc_arr(void *p, int dt, int nd, const int64_t *shape)
{
	lmi_cu_arr a;
	memset(&a, 0, sizeof a);
	a.data = p, a.dtype = dt, a.ndim = nd;
	int64_t s = 1;
	for (int i = nd - 1; i >= 0; i--) a.shape[i] = shape[i], a.stride[i] = s, s *= shape[i];
	return a;
}

static char failed[1024]; /* the names of the rows that failed, ';'-separated */

void gc_row(tally *tl, const char *what, int ok, const char *detail)
{
	tl->runs++;
	if (ok) return;
	tl->failures++;
	size_t n = strlen(failed);
	snprintf(failed + n, sizeof failed - n, "%s (%s); ", what, detail);
}

static uint64_t rng_state = 88172645463325252ull;

int gc_int(int lo, int hi)
{
	rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
	return lo + (int)((rng_state * 2685821657736338717ull >> 33) % (uint64_t)(hi - lo));
}

/* ---------------------------------------------------------------- the tests */

static void test_references_agree(void **state)
{
	(void)state;
	tally t = {0, 0};
	fault = 0, failed[0] = 0;
	gc_tensor_slots(&t);
	if (t.failures) fail_msg("%d of %d rows failed: %s", t.failures, t.runs, failed);
	assert_int_equal(t.runs, 19);
}

static void test_planted_faults_fail(void **state)
{
	(void)state;
	tally t = {0, 0};
	fault = 1, failed[0] = 0;
	gc_tensor_slots(&t);
	fault = 0;
	assert_int_equal(t.failures, 2);
	assert_non_null(strstr(failed, "var, std, norm"));
	assert_non_null(strstr(failed, "sort float32 stable"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    LEAK_TEST(test_references_agree),
	    LEAK_TEST(test_planted_faults_fail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
