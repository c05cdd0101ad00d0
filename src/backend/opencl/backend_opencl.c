/*
 * backend_opencl.c — the OpenCL device (../backend.h): tensors in OpenCL buffers (cl_runtime.h:
 * behind addresses), the core's copy / fill / random loops, and a loops table whose kernels are
 * tensor.cl, built once per element type on first use.
 *
 * Memory: the tensors' buffers go through the caching allocator the CUDA device uses
 * (../cuda/cache.h), so a training step reuses the last step's buffers instead of asking the
 * runtime (and the OS, for a CPU device: fresh pages) each time.
 *
 * What it runs: copies and fills of float32, float64, int32, int64, uint8 and int8 (any strides,
 * broadcasting, converting); the elementwise loops (unary, binary with the comparisons, where,
 * add_scaled), reduce_dims, matmul and matmul_batch_sum (PMPP's tiled kernel in local memory),
 * softmax / log-softmax, nll and its gradient, im2col / col2im (so conv2d runs as im2col + the
 * tiled matmul), max_pool2d, GELU, scatter_add, gather and index_select (every dtype), and the
 * SGD, Adam and RMSprop steps, on float32 and
 * float64 (float64 where the device has cl_khr_fp64). The other loops stay NULL: supports_node
 * says no and the op is refused naming itself, the device and the dtype (`lumen --ops` shows
 * which); random numbers are drawn on the host from the same Philox blocks as the CPU's (so a
 * seed gives the CPU's values) and copied in. Float sums run as trees in T, so they may differ
 * from the CPU's (which accumulates in double) in the last bits.
 * Read next: cl_runtime.h, tensor.cl.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cuda/cache.h"
#include "backend/opencl/cl_runtime.h"
#include "lumen/opencl.h"

_Static_assert(LMI_CLAMP == 17 && LMI_DIV_S == 23 && LM_SQUARE == 16, "tensor.cl's unary codes");
_Static_assert(LM_GE == 12 && LM_REMAINDER == 14, "tensor.cl's binary codes");
_Static_assert(LM_NORM == 9 && LM_ARGMIN == 6, "tensor.cl's reduction codes");

/* tensor.cl's geometry, by value */
typedef struct geo {
	cl_long n;
	cl_long shape[8];
	cl_long st[4][8];
	cl_int nd;
	cl_int pad_;
} geo;
_Static_assert(LM_MAX_DIMS == 8, "geo holds every tensor");

static const lmi_cl *cl;
static lmi_cache *cache; /* tensors' buffers, kept for reuse (cuda/cache.h) */

static const char *cl_type(lm_dtype dt)
{
	switch (dt) {
	case LM_FLOAT32: return "float";
	case LM_FLOAT64: return "double";
	case LM_INT32: return "int";
	case LM_INT64: return "long";
	case LM_UINT8: return "uchar";
	case LM_INT8: return "char";
	default: return NULL;
	}
}

static bool is_float(lm_dtype dt)
{
	return dt == LM_FLOAT32 || (dt == LM_FLOAT64 && (!cl || cl->fp64));
}

/* The kernel `name` of tensor.cl built for T = dt (td/ts: the copy's types; LM_DTYPE_COUNT:
 * unused) and, op >= 0, for that one unary or binary op (OPC: a program per op, whose loop the
 * compiler can vectorize; several times faster on PoCL than a switch per element). The program is the runtime's cache's; the kernel is the caller's to release. */
static cl_kernel kernel_op(const char *fname, const char *name, lm_dtype t, lm_dtype td, lm_dtype ts,
                           int op)
{
	size_t len;
	const char *src = lmi_cl_source("tensor.cl", &len);
	if (!src) return lmi_fail_null(LM_ERR_INTERNAL, "%s: tensor.cl is not in this build", fname);
	char opts[160];
	bool f64 = cl->fp64; /* float64 tensors, and the reductions' accumulator */
	static const char *const twin[] = {[LM_INT32] = "uint", [LM_INT64] = "ulong",
	                                   [LM_UINT8] = "uchar", [LM_INT8] = "uchar"};
	if (t != LM_DTYPE_COUNT && !is_float(t))
		snprintf(opts, sizeof opts, "-DT=%s -DUT=%s%s", cl_type(t), twin[t],
		         f64 ? " -DLM_FP64" : "");
	else if (t != LM_DTYPE_COUNT)
		snprintf(opts, sizeof opts, "-DT=%s%s", cl_type(t), f64 ? " -DLM_FP64" : "");
	else
		snprintf(opts, sizeof opts, "-DTD=%s -DTS=%s%s", cl_type(td), cl_type(ts),
		         f64 ? " -DLM_FP64" : "");
	if (op >= 0) {
		size_t n = strlen(opts);
		snprintf(opts + n, sizeof opts - n, " -DOPC=%d", op);
	}
	cl_program p = lmi_cl_program(fname, "tensor.cl", src, len, opts, NULL);
	return p ? lmi_cl_kernel(fname, p, name) : NULL;
}


/* t's strides broadcast to shape (nd dims, t aligned right) into row k of g */
static void geo_strides(geo *g, int k, const lm_tensor *t)
{
	int off = g->nd - t->ndim;
	for (int d = 0; d < g->nd; d++) {
		int j = d - off;
		g->st[k][d] = j < 0 || (t->shape[j] == 1 && g->shape[d] != 1) ? 0 : t->stride[j];
	}
}

/* Merges dim d into d + 1 where every array steps over both as one (contiguous runs): fewer
 * divisions per element, one dim for same-shape contiguous operands. */
static void geo_merge(geo *gp)
{
	geo g = *gp;
	int k = g.nd - 1;
	for (int d = g.nd - 2; d >= 0 && k >= 0; d--) {
		bool merge = true;
		for (int j = 0; j < 4; j++) merge &= g.st[j][d] == g.st[j][k] * g.shape[k];
		if (merge) {
			g.shape[k] *= g.shape[d];
		} else {
			k--;
			g.shape[k] = g.shape[d];
			for (int j = 0; j < 4; j++) g.st[j][k] = g.st[j][d];
		}
	}
	if (g.nd > 0 && k > 0) { /* the kept dims are k..nd-1: move them to the front */
		int nd = g.nd - k;
		for (int d = 0; d < nd; d++) {
			g.shape[d] = g.shape[d + k];
			for (int j = 0; j < 4; j++) g.st[j][d] = g.st[j][d + k];
		}
		g.nd = nd;
	}
	*gp = g;
}

/* the geometry of out and its inputs (NULL ends them) */
static geo make_geo(const lm_tensor *out, const lm_tensor *a, const lm_tensor *b,
                    const lm_tensor *c)
{
	geo g;
	memset(&g, 0, sizeof g);
	g.nd = out->ndim;
	g.n = 1;
	for (int d = 0; d < out->ndim; d++) g.shape[d] = out->shape[d], g.n *= out->shape[d];
	geo_strides(&g, 0, out);
	if (a) geo_strides(&g, 1, a);
	if (b) geo_strides(&g, 2, b);
	if (c) geo_strides(&g, 3, c);
	geo_merge(&g);
	return g;
}

static void arg_t(lmi_cl_args *a, const lm_tensor *t)
{
	lmi_cl_arg_array(a, lmi_data(t), lmi_elem_size(t->dtype));
}

/* a number as a parameter of type dt */
static void arg_num(lmi_cl_args *a, lm_dtype dt, double v)
{
	switch (dt) {
	case LM_FLOAT64: lmi_cl_arg(a, sizeof(cl_double), &v); break;
	case LM_INT32: { cl_int x = (cl_int)v; lmi_cl_arg(a, sizeof x, &x); break; }
	case LM_INT64: { cl_long x = (cl_long)v; lmi_cl_arg(a, sizeof x, &x); break; }
	case LM_UINT8: { cl_uchar x = (cl_uchar)v; lmi_cl_arg(a, sizeof x, &x); break; }
	case LM_INT8: { cl_char x = (cl_char)v; lmi_cl_arg(a, sizeof x, &x); break; }
	default: { cl_float x = (cl_float)v; lmi_cl_arg(a, sizeof x, &x); break; }
	}
}

static void arg_int(lmi_cl_args *a, long long v)
{
	cl_int x = (cl_int)v;
	lmi_cl_arg(a, sizeof x, &x);
}

static void arg_long(lmi_cl_args *a, int64_t v)
{
	cl_long x = (cl_long)v;
	lmi_cl_arg(a, sizeof x, &x);
}

/* Runs k over n items (1-D) once its arguments are set, then releases it; the lock is held from
 * the caller's first argument (BEGIN) to here. */
static lm_status finish(const char *fname, lmi_cl_args *a, cl_uint dims, const size_t *global,
                        const size_t *local)
{
	lm_status s;
	if (a->err) s = lmi_cl_fail(fname, a->what, a->err);
	else if (dims == 0) s = lmi_cl_launch_1d(fname, a->k, global[0]);
	else s = lmi_cl_launch(fname, a->k, dims, global, local, NULL);
	lmi_cl_unlock();
	cl->clReleaseKernel(a->k);
	return s;
}

#define BEGIN(fname, name, t, td, ts) BEGIN_OP(fname, name, t, td, ts, -1)
#define BEGIN_OP(fname, name, t, td, ts, op)                                                       \
	cl_kernel k_ = kernel_op(fname, name, t, td, ts, op);                                      \
	if (!k_) return lm_last_status();                                                          \
	lmi_cl_lock();                                                                             \
	lmi_cl_args A = {k_, 0, 0, NULL}

#define RUN_1D(fname, n) finish(fname, &A, 0, (size_t[]){(size_t)(n)}, NULL)

/* ---------------------------------------------------------------- memory and the core's loops */

static int raw_alloc(void *ctx, void **p, size_t n, bool *oom, char *msg, size_t cap)
{
	(void)ctx;
	*p = lmi_cl_alloc(n);
	*oom = !*p && lm_last_status() == LM_ERR_NOMEM;
	if (!*p) snprintf(msg, cap, "%s", lm_last_error());
	return *p ? 0 : 1;
}

static int raw_free(void *ctx, void *p, char *msg, size_t cap)
{
	(void)ctx, (void)msg, (void)cap;
	lmi_cl_free(p);
	return 0;
}

static void *m_alloc(size_t n) { return lmi_cache_alloc(cache, "opencl", n); }
static void m_free(void *p, size_t n) { lmi_cache_free(cache, p, n); }

static lm_status m_memcpy(void *dst, const void *src, size_t n, lmi_copy_kind k, bool pinned)
{
	static const char *const fname = "opencl copy";
	(void)pinned;
	cl_mem dm = NULL, sm = NULL;
	size_t doff = 0, soff = 0;
	if (k != LMI_TO_HOST && !lmi_cl_ref(dst, &dm, &doff))
		return lmi_fail(LM_ERR_INTERNAL, "%s: the destination is no OpenCL buffer", fname);
	if (k != LMI_TO_DEVICE && !lmi_cl_ref(src, &sm, &soff))
		return lmi_fail(LM_ERR_INTERNAL, "%s: the source is no OpenCL buffer", fname);
	cl_int e;
	if (k == LMI_TO_DEVICE)
		e = cl->clEnqueueWriteBuffer(cl->queue, dm, CL_TRUE, doff, n, src, 0, NULL, NULL);
	else if (k == LMI_TO_HOST)
		e = cl->clEnqueueReadBuffer(cl->queue, sm, CL_TRUE, soff, n, dst, 0, NULL, NULL);
	else
		e = cl->clEnqueueCopyBuffer(cl->queue, sm, dm, soff, doff, n, 0, NULL, NULL);
	return e == CL_SUCCESS ? LM_OK : lmi_cl_fail(fname, "a buffer copy", e);
}

static lm_status unsupported_dtype(const char *fname, lm_dtype dt)
{
	return lmi_fail(LM_ERR_UNSUPPORTED, "%s: the opencl device holds float32, float64, int32, "
	                "int64, uint8 and int8 tensors, not %s", fname, lm_dtype_name(dt));
}

static lm_status m_copy(lm_tensor *dst, const lm_tensor *src)
{
	static const char *const fname = "opencl copy";
	if (!cl_type(dst->dtype)) return unsupported_dtype(fname, dst->dtype);
	if (!cl_type(src->dtype)) return unsupported_dtype(fname, src->dtype);
	geo g = make_geo(dst, src, NULL, NULL);
	if (g.n == 0) return LM_OK;
	BEGIN(fname, "copy", LM_DTYPE_COUNT, dst->dtype, src->dtype);
	arg_t(&A, dst);
	arg_t(&A, src);
	lmi_cl_arg(&A, sizeof g, &g);
	return RUN_1D(fname, g.n);
}

static lm_status m_fill(lm_tensor *t, double v)
{
	static const char *const fname = "opencl fill";
	if (!cl_type(t->dtype)) return unsupported_dtype(fname, t->dtype);
	geo g = make_geo(t, NULL, NULL, NULL);
	if (g.n == 0) return LM_OK;
	BEGIN(fname, "fill", LM_DTYPE_COUNT, t->dtype, t->dtype);
	arg_t(&A, t);
	lmi_cl_arg(&A, sizeof g, &g);
	arg_num(&A, t->dtype, v);
	return RUN_1D(fname, g.n);
}

/* drawn on the host from the CPU's blocks, then copied in */
static lm_status m_random(lm_tensor *t, const lmi_rng_call *c)
{
	int64_t n = lm_tensor_numel(t);
	size_t bytes = (size_t)n * lmi_elem_size(t->dtype);
	void *h = malloc(bytes ? bytes : 1);
	if (!h) return lmi_fail(LM_ERR_NOMEM, "opencl random: out of host memory (%zu bytes)", bytes);
	lm_status s = lmi_rng_fill_host(h, t->dtype, n, c);
	if (!s) s = m_memcpy(lmi_data(t), h, bytes, LMI_TO_DEVICE, false);
	free(h);
	return s;
}

static const lmi_device_ops opencl_mem = {
    .alloc = m_alloc,
    .free = m_free,
    .memcpy = m_memcpy,
    .copy = m_copy,
    .fill = m_fill,
    .random = m_random,
};

/* ---------------------------------------------------------------- elementwise */

static lm_status s_unary(int op, lm_tensor *out, const lm_tensor *x, double p0, double p1)
{
	static const char *const fname = "opencl unary";
	geo g = make_geo(out, x, NULL, NULL);
	if (g.n == 0) return LM_OK;
	if (g.nd == 1 && g.st[0][0] == 1 && g.st[1][0] == 1) { /* all dense: the fastest kernel */
		BEGIN_OP(fname, "unary_dense", x->dtype, 0, 0, op);
		arg_t(&A, out);
		arg_t(&A, x);
		arg_long(&A, g.n);
		arg_int(&A, op);
		arg_num(&A, x->dtype, p0);
		arg_num(&A, x->dtype, p1);
		return RUN_1D(fname, g.n);
	}
	if (g.nd == 1) { /* one run each: the vectorizable kernel */
		BEGIN_OP(fname, "unary1", x->dtype, 0, 0, op);
		arg_t(&A, out);
		arg_long(&A, g.st[0][0]);
		arg_t(&A, x);
		arg_long(&A, g.st[1][0]);
		arg_long(&A, g.n);
		arg_int(&A, op);
		arg_num(&A, x->dtype, p0);
		arg_num(&A, x->dtype, p1);
		return RUN_1D(fname, g.n);
	}
	BEGIN_OP(fname, "unary", x->dtype, 0, 0, op);
	arg_t(&A, out);
	arg_t(&A, x);
	lmi_cl_arg(&A, sizeof g, &g);
	arg_int(&A, op);
	arg_num(&A, x->dtype, p0);
	arg_num(&A, x->dtype, p1);
	return RUN_1D(fname, g.n);
}

/* Whether integer b holds a 0 (// and % refuse it, as the CPU does). */
static lm_status check_divisor(const lm_tensor *b)
{
	static const char *const fname = "opencl binary";
	geo g = make_geo(b, NULL, NULL, NULL); /* b's own strides, as the first array's */
	cl_int zero = 0, flag = 0;
	void *f = lmi_cl_alloc(sizeof zero);
	if (!f) return lm_last_status();
	lm_status s = m_memcpy(f, &zero, sizeof zero, LMI_TO_DEVICE, false);
	if (!s) {
		BEGIN(fname, "any_zero", b->dtype, 0, 0);
		arg_t(&A, b);
		lmi_cl_arg(&A, sizeof g, &g);
		cl_mem m;
		size_t off;
		lmi_cl_ref(f, &m, &off);
		lmi_cl_arg(&A, sizeof m, &m);
		s = RUN_1D(fname, g.n);
	}
	if (!s) s = m_memcpy(&flag, f, sizeof flag, LMI_TO_HOST, false);
	lmi_cl_free(f);
	if (!s && flag)
		s = lmi_fail(LM_ERR_ARG, "binary: integer division by zero (the %s divisor holds a 0)",
		             lm_dtype_name(b->dtype));
	return s;
}

static lm_status s_binary(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b)
{
	static const char *const fname = "opencl binary";
	geo g = make_geo(out, a, b, NULL);
	if (g.n == 0) return LM_OK;
	if ((op == LM_FLOOR_DIVIDE || op == LM_REMAINDER) && !is_float(b->dtype)) {
		lm_status s = check_divisor(b);
		if (s) return s;
	}
	if (g.nd == 1 && !lm_binop_is_comparison(op) && g.st[0][0] == 1 && g.st[1][0] == 1 &&
	    g.st[2][0] == 1) { /* all dense: the fastest kernel */
		BEGIN_OP(fname, "binary_dense", a->dtype, 0, 0, (int)op);
		arg_t(&A, out);
		arg_t(&A, a);
		arg_t(&A, b);
		arg_long(&A, g.n);
		arg_int(&A, op);
		return RUN_1D(fname, g.n);
	}
	if (g.nd == 1 && !lm_binop_is_comparison(op)) { /* one run each: the vectorizable kernel */
		BEGIN_OP(fname, "binary1", a->dtype, 0, 0, (int)op);
		arg_t(&A, out);
		arg_long(&A, g.st[0][0]);
		arg_t(&A, a);
		arg_long(&A, g.st[1][0]);
		arg_t(&A, b);
		arg_long(&A, g.st[2][0]);
		arg_long(&A, g.n);
		arg_int(&A, op);
		return RUN_1D(fname, g.n);
	}
	BEGIN_OP(fname, lm_binop_is_comparison(op) ? "compare" : "binary", a->dtype, 0, 0, (int)op);
	arg_t(&A, out);
	arg_t(&A, a);
	arg_t(&A, b);
	lmi_cl_arg(&A, sizeof g, &g);
	arg_int(&A, op);
	return RUN_1D(fname, g.n);
}

static lm_status s_where(lm_tensor *out, const lm_tensor *c, const lm_tensor *a, const lm_tensor *b)
{
	static const char *const fname = "where";
	geo g = make_geo(out, c, a, b);
	if (g.n == 0) return LM_OK;
	BEGIN(fname, "where_", out->dtype, 0, 0);
	arg_t(&A, out);
	arg_t(&A, c);
	arg_t(&A, a);
	arg_t(&A, b);
	lmi_cl_arg(&A, sizeof g, &g);
	return RUN_1D(fname, g.n);
}

static lm_status s_add_scaled(lm_tensor *out, const lm_tensor *a, const lm_tensor *b, double al)
{
	static const char *const fname = "add_scaled";
	geo g = make_geo(out, a, b, NULL);
	if (g.n == 0) return LM_OK;
	BEGIN(fname, "add_scaled", out->dtype, 0, 0);
	arg_t(&A, out);
	arg_t(&A, a);
	arg_t(&A, b);
	lmi_cl_arg(&A, sizeof g, &g);
	arg_num(&A, out->dtype, al);
	return RUN_1D(fname, g.n);
}

/* ---------------------------------------------------------------- reductions */

#define RGROUP 64 /* tensor.cl's */

/* the accumulator's type as a parameter: double where the device has it */
static void arg_acc(lmi_cl_args *a, double v)
{
	arg_num(a, cl->fp64 ? LM_FLOAT64 : LM_FLOAT32, v);
}

/* rows (rows x R, contiguous on the device) reduced into out / idx (as reduce_dims's) */
static lm_status reduce_rows(const char *fname, lm_redop op, const lm_tensor *c, int64_t rows,
                             int64_t R, const lm_tensor *out, const lm_tensor *idx, double p)
{
	bool arg = op == LM_ARGMAX || op == LM_ARGMIN;
	if (rows == 0) return LM_OK;
	BEGIN(fname, "reduce_rows", c->dtype, 0, 0);
	const lm_tensor *o = arg ? c : out, *ix = arg ? out : idx ? idx : c;
	arg_t(&A, c);
	arg_long(&A, R);
	arg_t(&A, o);
	lmi_cl_arg_array(&A, lmi_data(ix), lmi_elem_size(ix->dtype));
	arg_int(&A, op);
	arg_int(&A, !arg);
	arg_int(&A, arg || idx);
	arg_acc(&A, p);
	size_t global = (size_t)rows * RGROUP, local = RGROUP;
	return finish(fname, &A, 1, &global, &local);
}

static lm_status s_reduce_dims(lm_redop op, const lm_tensor *x, uint32_t mask, lm_tensor *out,
                               lm_tensor *idx, double p)
{
	static const char *const fname = "opencl reduce_dims";
	/* var, std and norm of integers: the rows in float64 (float32 without fp64), then stored */
	bool stat = op == LM_VAR || op == LM_STD || op == LM_NORM;
	lm_dtype dt = stat && !is_float(x->dtype) ? (cl->fp64 ? LM_FLOAT64 : LM_FLOAT32) : x->dtype;
	int64_t rows, R;
	lm_tensor *c = lmi_rows_of(x, mask, dt, &rows, &R);
	if (!c) return lm_last_status();
	lm_status s;
	if (dt == x->dtype) {
		s = reduce_rows(fname, op, c, rows, R, out, idx, p);
	} else {
		lm_tensor *t = lmi_empty_on(fname, LM_OPENCL, out->ndim, out->shape, dt);
		s = t ? reduce_rows(fname, op, c, rows, R, t, NULL, p) : lm_last_status();
		if (!s) s = m_copy(out, t);
		lm_tensor_release(t);
	}
	lm_tensor_release(c);
	return s;
}

/* ---------------------------------------------------------------- products */

#define TILE 16 /* tensor.cl's */

static lm_status gemm(const char *fname, lm_dtype dt, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const void *a, int64_t sA, const void *b, int64_t sB, void *c,
                      int64_t sC)
{
	if (batch == 0 || M == 0 || N == 0) return LM_OK;
	BEGIN(fname, "matmul_tiled", dt, 0, 0);
	size_t es = lmi_elem_size(dt);
	lmi_cl_arg_array(&A, a, es);
	arg_long(&A, sA);
	lmi_cl_arg_array(&A, b, es);
	arg_long(&A, sB);
	lmi_cl_arg_array(&A, c, es);
	arg_long(&A, sC);
	arg_long(&A, M);
	arg_long(&A, N);
	arg_long(&A, K);
	size_t global[3] = {(size_t)(N + TILE - 1) / TILE * TILE, (size_t)(M + TILE - 1) / TILE * TILE,
	                    (size_t)batch};
	size_t local[3] = {TILE, TILE, 1};
	return finish(fname, &A, 3, global, local);
}

static lm_status s_matmul(const lm_tensor *a, const lm_tensor *b, int bnd, const int64_t *bshape,
                          lm_tensor *out)
{
	int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1];
	int64_t batch = 1, sA = 0, sB = 0;
	for (int i = 0; i < bnd; i++) batch *= bshape[i];
	lm_tensor *Am = lmi_batch_operand(a, bnd, bshape, &sA),
	          *Bm = Am ? lmi_batch_operand(b, bnd, bshape, &sB) : NULL;
	lm_status s = Bm ? LM_OK : lm_last_status();
	if (!s)
		s = gemm("matmul", a->dtype, batch, M, N, K, lmi_data(Am), sA, lmi_data(Bm), sB,
		         lmi_data(out), M * N);
	lm_tensor_release(Am);
	lm_tensor_release(Bm);
	return s;
}

static lm_status s_matmul_batch_sum(const lm_tensor *a, const lm_tensor *b, lm_tensor *out)
{
	lm_tensor *ap, *bp;
	int64_t M, N, nK;
	lm_status s = lmi_batch_sum_operands(a, b, &ap, &bp, &M, &N, &nK);
	if (!s)
		s = gemm("matmul", a->dtype, 1, M, N, nK, lmi_data(ap), 0, lmi_data(bp), 0, lmi_data(out), 0);
	lm_tensor_release(ap);
	lm_tensor_release(bp);
	return s;
}

/* ---------------------------------------------------------------- nn */

static lm_status s_softmax(const lm_tensor *x, lm_tensor *y, int64_t outer, int64_t R,
                           int64_t inner, bool logsm)
{
	const char *fname = logsm ? "log_softmax" : "softmax";
	if (outer * inner == 0) return LM_OK;
	BEGIN(fname, "softmax", x->dtype, 0, 0);
	arg_t(&A, x);
	arg_t(&A, y);
	arg_long(&A, outer);
	arg_long(&A, R);
	arg_long(&A, inner);
	arg_int(&A, logsm);
	return RUN_1D(fname, outer * inner);
}

static lm_status nll_common(const char *fname, const char *name, const lm_tensor *in,
                            const lm_tensor *t, lm_tensor *out, int64_t N, int64_t C, int64_t L)
{
	if (N * L == 0) return LM_OK;
	BEGIN(fname, name, in->dtype, 0, 0);
	arg_t(&A, in);
	arg_t(&A, t);
	arg_t(&A, out);
	arg_long(&A, N);
	arg_long(&A, C);
	arg_long(&A, L);
	return RUN_1D(fname, N * L);
}

static lm_status s_nll(const lm_tensor *logp, const lm_tensor *t, lm_tensor *out, int64_t N,
                       int64_t C, int64_t L)
{
	return nll_common("nll_loss", "nll", logp, t, out, N, C, L);
}

static lm_status s_nll_grad(const lm_tensor *g, const lm_tensor *t, lm_tensor *gx, int64_t N,
                            int64_t C, int64_t L)
{
	return nll_common("nll_loss backward", "nll_grad", g, t, gx, N, C, L);
}

/* ---------------------------------------------------------------- convolution's loops, pooling, GELU */

static void arg_window(lmi_cl_args *A, const lm_window2d *w)
{
	const int64_t v[8] = {w->kh, w->kw, w->sh, w->sw, w->ph, w->pw, w->dh, w->dw};
	for (int i = 0; i < 8; i++) arg_long(A, v[i]);
}

static lm_status s_im2col(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
                          lm_tensor *cols)
{
	int64_t planes = x->shape[0] * x->shape[1], n = lm_tensor_numel(cols);
	if (n == 0) return LM_OK;
	BEGIN("im2col", "im2col", x->dtype, 0, 0);
	arg_t(&A, x);
	arg_t(&A, cols);
	arg_long(&A, planes);
	arg_long(&A, x->shape[2]);
	arg_long(&A, x->shape[3]);
	arg_window(&A, w);
	arg_long(&A, oh);
	arg_long(&A, ow);
	return RUN_1D("im2col", n);
}

static lm_status s_col2im(const lm_tensor *cols, const lm_window2d *w, int64_t oh, int64_t ow,
                          lm_tensor *out)
{
	int64_t planes = out->shape[0] * out->shape[1], n = lm_tensor_numel(out);
	if (n == 0) return LM_OK;
	BEGIN("col2im", "col2im", cols->dtype, 0, 0);
	arg_t(&A, cols);
	arg_t(&A, out);
	arg_long(&A, planes);
	arg_long(&A, out->shape[2]);
	arg_long(&A, out->shape[3]);
	arg_window(&A, w);
	arg_long(&A, oh);
	arg_long(&A, ow);
	return RUN_1D("col2im", n);
}

static lm_status s_max_pool2d(const lm_tensor *x, lm_tensor *y, lm_tensor *idx, int64_t planes,
                              int64_t H, int64_t W, int64_t OH, int64_t OW, const int64_t *k,
                              const int64_t *stride, const int64_t *pad)
{
	if (planes * OH * OW == 0) return LM_OK;
	BEGIN("max_pool2d", "max_pool2d", x->dtype, 0, 0);
	arg_t(&A, x);
	arg_t(&A, y);
	arg_t(&A, idx);
	const int64_t v[10] = {planes, H, W, OH, OW, k[0], k[1], stride[0], stride[1], pad[0]};
	for (int i = 0; i < 10; i++) arg_long(&A, v[i]);
	arg_long(&A, pad[1]);
	return RUN_1D("max_pool2d", planes * OH * OW);
}

static lm_status s_gelu(lm_tensor *out, const lm_tensor *x, const lm_tensor *g, bool tanh_approx)
{
	const char *fname = g ? "gelu backward" : "gelu";
	geo gm = make_geo(out, x, g ? g : x, NULL);
	if (gm.n == 0) return LM_OK;
	BEGIN(fname, "gelu", out->dtype, 0, 0);
	arg_t(&A, out);
	arg_t(&A, x);
	arg_t(&A, g ? g : x);
	lmi_cl_arg(&A, sizeof gm, &gm);
	arg_int(&A, tanh_approx);
	arg_int(&A, g != NULL);
	return RUN_1D(fname, gm.n);
}

/* ---------------------------------------------------------------- scatter_add */

/* An index kernel (scatter_add, gather) over idx's shape, with the smallest position of an index
 * out of [0, size) read back and worded as the CPU words it. strides: the other two arrays'
 * (dim's already 0 where the index replaces it); step: dim's stride of the indexed array. */
static lm_status run_indexed(const char *fname, const char *name, lm_dtype dt, const lm_tensor *idx,
                             int dim, const lm_tensor *a, const int64_t *sa, const lm_tensor *b,
                             const int64_t *sb, int64_t step, int64_t size, bool a_indexed)
{
	int64_t n = lm_tensor_numel(idx);
	if (n == 0) return LM_OK;
	lm_tensor *ix = lmi_contiguous_copy(idx, LM_INT64);
	if (!ix) return lm_last_status();
	geo g;
	memset(&g, 0, sizeof g);
	g.nd = idx->ndim;
	g.n = n;
	for (int d = 0; d < g.nd; d++) {
		g.shape[d] = idx->shape[d];
		g.st[0][d] = sa[d], g.st[1][d] = sb[d], g.st[2][d] = ix->stride[d];
	}
	geo_merge(&g);
	cl_long none = INT64_MAX, bad = INT64_MAX;
	void *bb = lmi_cl_alloc(sizeof none);
	lm_status s = bb ? m_memcpy(bb, &none, sizeof none, LMI_TO_DEVICE, false) : lm_last_status();
	cl_kernel k_ = s ? NULL : kernel_op(fname, name, dt, 0, 0, -1);
	if (!s && !k_) s = lm_last_status();
	if (k_) {
		lmi_cl_lock();
		lmi_cl_args A = {k_, 0, 0, NULL};
		arg_t(&A, a);
		if (a_indexed) arg_long(&A, step), arg_long(&A, size); /* scatter_add: out is indexed */
		arg_t(&A, b);
		if (!a_indexed) arg_long(&A, step), arg_long(&A, size); /* gather: x is */
		arg_t(&A, ix);
		lmi_cl_arg(&A, sizeof g, &g);
		cl_mem bm;
		size_t boff;
		lmi_cl_ref(bb, &bm, &boff); /* a buffer of its own: offset 0 */
		lmi_cl_arg(&A, sizeof bm, &bm);
		s = finish(fname, &A, 0, (size_t[]){(size_t)n}, NULL);
	}
	if (!s) s = m_memcpy(&bad, bb, sizeof bad, LMI_TO_HOST, false);
	if (!s && bad != INT64_MAX) {
		int64_t v = 0;
		s = m_memcpy(&v, (char *)lmi_data(ix) + bad * 8, sizeof v, LMI_TO_HOST, false);
		int64_t pos[LM_MAX_DIMS], q = bad;
		for (int d = idx->ndim - 1; d >= 0; d--) {
			pos[d] = idx->shape[d] ? q % idx->shape[d] : 0;
			q = idx->shape[d] ? q / idx->shape[d] : 0;
		}
		if (!s)
			s = lmi_fail(LM_ERR_INDEX,
			             "%s: index %lld at position %s is out of range for dim %d of size %lld",
			             fname, (long long)v, lmi_dims_s(idx->ndim, pos), dim, (long long)size);
	}
	if (bb) lmi_cl_free(bb);
	lm_tensor_release(ix);
	return s;
}

static lm_status s_scatter_add(lm_tensor *out, int dim, const lm_tensor *idx, const lm_tensor *src)
{
	int64_t so[LM_MAX_DIMS], ss[LM_MAX_DIMS];
	for (int d = 0; d < idx->ndim; d++) so[d] = d == dim ? 0 : out->stride[d], ss[d] = src->stride[d];
	return run_indexed("scatter_add", "scatter_add", out->dtype, idx, dim, out, so, src, ss,
	                   out->stride[dim], out->shape[dim], true);
}

static lm_status s_gather(const lm_tensor *x, int dim, const lm_tensor *idx, lm_tensor *out)
{
	int64_t so[LM_MAX_DIMS], sx[LM_MAX_DIMS];
	for (int d = 0; d < idx->ndim; d++) so[d] = out->stride[d], sx[d] = d == dim ? 0 : x->stride[d];
	return run_indexed("gather", "gather", x->dtype, idx, dim, out, so, x, sx, x->stride[dim],
	                   x->shape[dim], false);
}

/* the index is short next to what it moves: checked on the host, in order, as the CPU does */
static lm_status s_index_select(const char *fname, const lm_tensor *x, int64_t outer, int64_t size,
                                int64_t inner, const lm_tensor *idx, lm_tensor *out)
{
	int64_t n = lm_tensor_numel(idx);
	lm_tensor *ix = lmi_contiguous_copy(idx, LM_INT64);
	if (!ix) return lm_last_status();
	int64_t *h = malloc((size_t)(n ? n : 1) * sizeof *h);
	lm_status s = h ? m_memcpy(h, lmi_data(ix), (size_t)n * 8, LMI_TO_HOST, false)
	                : lmi_fail(LM_ERR_NOMEM, "%s: out of memory", fname);
	for (int64_t j = 0; !s && j < n; j++)
		if (h[j] < 0 || h[j] >= size)
			s = lmi_fail(LM_ERR_INDEX, "%s: index %lld (at position %lld) is out of range for a "
			             "dim of size %lld", fname, (long long)h[j], (long long)j, (long long)size);
	free(h);
	if (!s && outer * n * inner > 0) {
		cl_kernel k_ = kernel_op(fname, "index_select", x->dtype, 0, 0, -1);
		if (!k_) {
			s = lm_last_status();
		} else {
			lmi_cl_lock();
			lmi_cl_args A = {k_, 0, 0, NULL};
			arg_t(&A, out);
			arg_t(&A, x);
			arg_t(&A, ix);
			arg_long(&A, outer);
			arg_long(&A, size);
			arg_long(&A, inner);
			arg_long(&A, n);
			s = finish(fname, &A, 0, (size_t[]){(size_t)(outer * n * inner)}, NULL);
		}
	}
	lm_tensor_release(ix);
	return s;
}

/* ---------------------------------------------------------------- the optimizers */

static lm_status s_sgd_step(lm_tensor *p, const lm_tensor *g, lm_tensor *buf, const lm_sgd_opts *o,
                            bool first)
{
	static const char *const fname = "sgd_step_";
	int64_t n = lm_tensor_numel(p);
	if (n == 0) return LM_OK;
	lm_dtype dt = p->dtype;
	BEGIN(fname, "sgd_step", dt, 0, 0);
	arg_t(&A, p);
	arg_t(&A, g);
	arg_t(&A, buf ? buf : p);
	arg_long(&A, n);
	arg_num(&A, dt, o->lr);
	arg_num(&A, dt, o->momentum);
	arg_num(&A, dt, 1 - o->dampening);
	arg_num(&A, dt, o->weight_decay);
	arg_int(&A, o->nesterov);
	arg_int(&A, o->maximize);
	arg_int(&A, first);
	arg_int(&A, buf != NULL);
	return RUN_1D(fname, n);
}

static lm_status s_adam_step(lm_tensor *p, const lm_tensor *g, lm_tensor *m, lm_tensor *v,
                             lm_tensor *vmax, const lm_adam_opts *o, double step_size,
                             double bc2_sqrt)
{
	static const char *const fname = "adam_step_";
	int64_t n = lm_tensor_numel(p);
	if (n == 0) return LM_OK;
	lm_dtype dt = p->dtype;
	BEGIN(fname, "adam_step", dt, 0, 0);
	arg_t(&A, p);
	arg_t(&A, g);
	arg_t(&A, m);
	arg_t(&A, v);
	arg_t(&A, vmax ? vmax : v);
	arg_long(&A, n);
	const double f[9] = {o->beta1,        o->beta2,  1 - o->beta1, 1 - o->beta2,
	                     o->weight_decay, 1 - o->lr * o->weight_decay,
	                     step_size,       bc2_sqrt, o->eps};
	for (int i = 0; i < 9; i++) arg_num(&A, dt, f[i]);
	arg_int(&A, o->decoupled);
	arg_int(&A, o->amsgrad);
	arg_int(&A, o->maximize);
	return RUN_1D(fname, n);
}

static lm_status s_rmsprop_step(lm_tensor *p, const lm_tensor *g, lm_tensor *sq, lm_tensor *buf,
                                lm_tensor *gavg, const lm_rmsprop_opts *o)
{
	static const char *const fname = "rmsprop_step_";
	int64_t n = lm_tensor_numel(p);
	if (n == 0) return LM_OK;
	lm_dtype dt = p->dtype;
	BEGIN(fname, "rmsprop_step", dt, 0, 0);
	arg_t(&A, p);
	arg_t(&A, g);
	arg_t(&A, sq);
	arg_t(&A, buf ? buf : sq);
	arg_t(&A, gavg ? gavg : sq);
	arg_long(&A, n);
	const double f[6] = {o->alpha, 1 - o->alpha, o->weight_decay, o->lr, o->eps, o->momentum};
	for (int i = 0; i < 6; i++) arg_num(&A, dt, f[i]);
	arg_int(&A, o->maximize);
	arg_int(&A, buf != NULL);
	arg_int(&A, gavg != NULL);
	return RUN_1D(fname, n);
}

/* ---------------------------------------------------------------- the table */

static bool supports_op(lmi_be_op op, lm_dtype dt)
{
	if (dt < 0 || dt >= LM_DTYPE_COUNT || !cl_type(dt) || lmi_dtypes[dt].compute_as != dt)
		return false;
	switch (op) {
	case LMI_BE_OP_unary:
	case LMI_BE_OP_binary:
	case LMI_BE_OP_where:
	case LMI_BE_OP_scatter_add:
	case LMI_BE_OP_gather:
	case LMI_BE_OP_index_select:
	case LMI_BE_OP_reduce_dims: return true; /* integers as the CPU's: wrapping */
	default: break;
	}
	if (!is_float(dt)) return false;
	switch (op) {
	case LMI_BE_OP_add_scaled:
	case LMI_BE_OP_matmul:
	case LMI_BE_OP_matmul_batch_sum:
	case LMI_BE_OP_softmax:
	case LMI_BE_OP_nll:
	case LMI_BE_OP_nll_grad:
	case LMI_BE_OP_sgd_step:
	case LMI_BE_OP_adam_step:
	case LMI_BE_OP_rmsprop_step:
	case LMI_BE_OP_im2col:
	case LMI_BE_OP_col2im:
	case LMI_BE_OP_max_pool2d:
	case LMI_BE_OP_gelu: return true;
	default: return false; /* the slots left NULL */
	}
}

static const lmi_loops opencl_loops = {
    .supports_op = supports_op,
    .unary = s_unary,
    .binary = s_binary,
    .where = s_where,
    .add_scaled = s_add_scaled,
    .reduce_dims = s_reduce_dims,
    .matmul = s_matmul,
    .matmul_batch_sum = s_matmul_batch_sum,
    .softmax = s_softmax,
    .nll = s_nll,
    .nll_grad = s_nll_grad,
    .sgd_step = s_sgd_step,
    .adam_step = s_adam_step,
    .rmsprop_step = s_rmsprop_step,
    .im2col = s_im2col,
    .col2im = s_col2im,
    .max_pool2d = s_max_pool2d,
    .gelu = s_gelu,
    .scatter_add = s_scatter_add,
    .gather = s_gather,
    .index_select = s_index_select,
};

static bool supports_node(const lmi_exec *e)
{
	return lmi_loops_supports(&opencl_loops, e);
}

static lm_status compute(const lmi_exec *e)
{
	return lmi_loops_compute(&opencl_loops, e);
}

const lmi_backend lmi_opencl_backend = {
    .version = LMI_BACKEND_VERSION,
    .name = "opencl",
    .device = LM_OPENCL,
    .mem = &opencl_mem,
    .supports_node = supports_node,
    .compute = compute,
};

const lmi_backend *lmi_opencl_backend_load(const char *fname)
{
	if (!(cl = lmi_cl_get(fname))) return NULL;
	static const lmi_raw_alloc raw = {raw_alloc, raw_free, NULL};
	if (!cache && !(cache = lmi_cache_new(&raw))) return NULL; /* (called under the registry's lock) */
	return &lmi_opencl_backend;
}
