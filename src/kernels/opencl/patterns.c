/*
 * patterns.c — the course's kernels on the OpenCL device (backend = 'opencl'): the same bodies
 * (../body/<pattern>.h) as the emulator and CUDA, built at run time as OpenCL C, launched by the
 * same plans (../body/<pattern>_plan.h), timed with OpenCL events.
 *
 * Design: a program is the embedded text of body/simt_macros.h (its OpenCL branch) and of one
 * body, with T and KFN defined for one element type (as body/both_types.h does for the other
 * hosts), and `#line` directives so that a compiler message names the body's own lines; it is
 * built on first use and kept (the runtime's cache). The plan's kernel list K_(name, args) is
 * expanded into clSetKernelArg calls by the C type of each argument (_Generic: a device address
 * becomes its buffer, unsigned and int their OpenCL twins); the parameters OpenCL adds after
 * them (simt_macros.h: SHARED_DYN_ARG, CONSTANT_ARG) are found by their address qualifier. A
 * run's time is the sum of its kernels' event times (start to end), the median of `repeats`
 * runs after a warm-up; unlike the CUDA runs no cache is flushed between runs (on a CPU device
 * the runtime's own threads share the host's caches) and the zeroing of an output between runs
 * is not timed. The table has the shape of the CUDA module's (../cuda/cuda_api.h), so the
 * patterns' CUDA callbacks run it unchanged; divergence, streams and the access demos have no
 * OpenCL run (NULL: the driver says so).
 * Read next: ../driver.c (run_opencl), ../body/simt_macros.h, ../../backend/opencl/cl_runtime.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/cl_runtime.h"
#include "kernels/cuda/cuda_api.h"
#include "kernels/opencl/opencl_kernels.h"

/* ---------------------------------------------------------------- programs */

typedef struct body_types {
	const char *t0, *t1, *sfx0, *sfx1; /* both_types.h's */
} body_types;

static const body_types floats = {"float", "double", "_f32", "_f64"};
static const body_types bytes_ints = {"uchar", "int", "_u8", "_i32"};

/* The program of body (e.g. "body/reduce.h") for its type 0 or 1. */
static cl_program program(const char *fname, const char *body, const body_types *ty, int second,
                          const lmi_cl **clp)
{
	const lmi_cl *cl = lmi_cl_get(fname);
	if (!cl) return NULL;
	*clp = cl;
	size_t mlen, blen;
	const char *macros = lmi_cl_source("body/simt_macros.h", &mlen);
	const char *text = lmi_cl_source(body, &blen);
	if (!macros || !text)
		return lmi_fail_null(LM_ERR_INTERNAL, "%s: %s is not in this build", fname, body);
	if (second && ty == &floats && !cl->fp64)
		return lmi_fail_null(LM_ERR_UNSUPPORTED, "%s: the OpenCL device %s has no float64 "
		                     "(cl_khr_fp64); run float32", fname, cl->name);
	size_t cap = mlen + blen + 1024;
	char *src = malloc(cap);
	if (!src) return lmi_fail_null(LM_ERR_NOMEM, "%s: out of memory", fname);
	int n = snprintf(src, cap, "#line 1 \"body/simt_macros.h\"\n%.*s\n"
	                 "#define T %s\n#define KFN(name) LMK_CAT(name, %s)\n#line 1 \"%s\"\n",
	                 (int)mlen, macros, second ? ty->t1 : ty->t0, second ? ty->sfx1 : ty->sfx0, body);
	memcpy(src + n, text, blen);
	n += (int)blen;
	src[n] = '\0';
	char opts[256];
	snprintf(opts, sizeof opts, "-cl-kernel-arg-info -DLMI_CONV_MAX_MASK=%d -DLMK_ACCESS_TILE=%d",
	         LMI_CONV_MAX_MASK, LMK_ACCESS_TILE);
	cl_program p = lmi_cl_program(fname, body, src, (size_t)n, opts, NULL);
	free(src);
	return p;
}

/* ---------------------------------------------------------------- arguments and launches */

typedef struct run_ctx {
	const char *fname;
	const lmi_cl *cl;
	cl_program prog;
	const char *sfx;       /* the kernels' suffix */
	cl_mem constant;       /* what a CONSTANT_ARG parameter gets (conv2d's mask) */
	lmi_cuda_timing *t;
	double ms;             /* kernel time of the run in progress */
	int launches;
	cl_kernel k;
	lmi_cl_args A;
	char *msg;
	size_t msg_cap;
} run_ctx;

static void arg_ptr(run_ctx *r, void *p)
{
	cl_mem m = NULL;
	size_t off = 0;
	if (p && (!lmi_cl_ref(p, &m, &off) || off != 0)) {
		r->A.err = CL_INVALID_MEM_OBJECT, r->A.what = "a kernel's array";
		return;
	}
	lmi_cl_arg(&r->A, sizeof m, &m);
}
static void arg_uint(run_ctx *r, unsigned v) { lmi_cl_arg(&r->A, sizeof(cl_uint), &v); }
static void arg_int(run_ctx *r, int v) { lmi_cl_arg(&r->A, sizeof(cl_int), &v); }

#define CL_ARG_(x) _Generic((x), void *: arg_ptr, unsigned: arg_uint, int: arg_int)(r, (x));
#define FE_1(f, x) f(x)
#define FE_2(f, x, ...) f(x) FE_1(f, __VA_ARGS__)
#define FE_3(f, x, ...) f(x) FE_2(f, __VA_ARGS__)
#define FE_4(f, x, ...) f(x) FE_3(f, __VA_ARGS__)
#define FE_5(f, x, ...) f(x) FE_4(f, __VA_ARGS__)
#define FE_6(f, x, ...) f(x) FE_5(f, __VA_ARGS__)
#define FE_7(f, x, ...) f(x) FE_6(f, __VA_ARGS__)
#define FE_8(f, x, ...) f(x) FE_7(f, __VA_ARGS__)
#define FE_9(f, x, ...) f(x) FE_8(f, __VA_ARGS__)
#define FE_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, NAME, ...) NAME
#define FOR_EACH(f, ...)                                                                           \
	FE_PICK_(__VA_ARGS__, FE_9, FE_8, FE_7, FE_6, FE_5, FE_4, FE_3, FE_2, FE_1)(f, __VA_ARGS__)
#define SET_ARGS_(...) FOR_EACH(CL_ARG_, __VA_ARGS__)

/* Starts kernel `name` + r->sfx: made, locked, arguments from index 0. */
static int begin(run_ctx *r, const char *name)
{
	char full[96];
	snprintf(full, sizeof full, "%s%s", name, r->sfx);
	r->k = lmi_cl_kernel(r->fname, r->prog, full);
	if (!r->k) {
		snprintf(r->msg, r->msg_cap, "%s", lm_last_error());
		return -1;
	}
	lmi_cl_lock();
	r->A = (lmi_cl_args){r->k, 0, 0, NULL};
	size_t n = strlen(r->t->kernels);
	if (!strstr(r->t->kernels, full) && n + strlen(full) + 4 < sizeof r->t->kernels)
		snprintf(r->t->kernels + n, sizeof r->t->kernels - n, "%s%s", n ? " + " : "", full);
	return 0;
}

/* The parameters OpenCL adds after the plan's (dynamic local memory, a __constant array), then
 * the launch of l, timed by its event. */
static int finish_launch(run_ctx *r, const lmk_launch *l)
{
	const lmi_cl *cl = r->cl;
	cl_uint nargs = 0;
	cl_int e = cl->clGetKernelInfo(r->k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
	for (cl_uint i = r->A.i; e == CL_SUCCESS && !r->A.err && i < nargs; i++) {
		cl_kernel_arg_address_qualifier q = 0;
		e = cl->clGetKernelArgInfo(r->k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, NULL);
		if (e != CL_SUCCESS) break;
		if (q == CL_KERNEL_ARG_ADDRESS_LOCAL) lmi_cl_arg_local(&r->A, l->shared);
		else lmi_cl_arg(&r->A, sizeof r->constant, &r->constant);
	}
	if (!e) e = r->A.err;
	lm_status s = LM_OK;
	double ms = 0;
	if (!e) {
		size_t global[3] = {(size_t)l->grid.x * l->block.x, (size_t)l->grid.y * l->block.y,
		                    (size_t)l->grid.z * l->block.z};
		size_t local[3] = {l->block.x, l->block.y, l->block.z};
		s = lmi_cl_launch(r->fname, r->k, 3, global, local, &ms);
	}
	lmi_cl_unlock();
	cl->clReleaseKernel(r->k);
	if (e) {
		snprintf(r->msg, r->msg_cap, "setting a kernel's arguments: %s", lmi_cl_error_name(e));
		return (int)e;
	}
	if (s) {
		snprintf(r->msg, r->msg_cap, "%s", lm_last_error());
		return -1;
	}
	r->ms += ms;
	r->launches++;
	return 0;
}

/* lmk_run for an OpenCL kernel list: kernel l->kernel of LIST with the arguments it reads from a. */
#define LMK_CL_CASE_(name, args)                                                                   \
	case LMK_K_##name:                                                                         \
		if (begin(r, #name)) return -1;                                                    \
		SET_ARGS_ args break;
#define LMK_CL_LAUNCHER(FN, LIST, ARGS)                                                            \
	static int FN(run_ctx *r, const lmk_launch *l, const ARGS *a)                              \
	{                                                                                          \
		switch (l->kernel) {                                                               \
			LIST(LMK_CL_CASE_)                                                         \
		default: return -1;                                                                \
		}                                                                                  \
		return finish_launch(r, l);                                                        \
	}

LMK_CL_LAUNCHER(launch_scan, LMK_SCAN_KERNELS, lmk_scan_args)
LMK_CL_LAUNCHER(launch_reduce, LMK_REDUCE_KERNELS, lmk_reduce_args)
LMK_CL_LAUNCHER(launch_hist, LMK_HIST_KERNELS, lmk_hist_args)
LMK_CL_LAUNCHER(launch_matmul, LMK_MATMUL_KERNELS, lmk_matmul_args)
LMK_CL_LAUNCHER(launch_conv, LMK_CONV_KERNELS, lmk_conv_args)
LMK_CL_LAUNCHER(launch_spmv, LMK_SPMV_KERNELS, lmk_spmv_args)

/* ---------------------------------------------------------------- buffers and timing */

typedef struct buffers {
	void *p[16];
	int n;
} buffers;

/* a device buffer of bytes (host non-NULL: filled from it) into *out */
static int device(run_ctx *r, buffers *b, void **out, const void *host, size_t bytes)
{
	void *d = lmi_cl_alloc(bytes ? bytes : 8);
	if (!d) {
		snprintf(r->msg, r->msg_cap, "%s", lm_last_error());
		return -1;
	}
	b->p[b->n++] = d;
	*out = d;
	if (!host || !bytes) return 0;
	cl_mem m;
	size_t off;
	lmi_cl_ref(d, &m, &off);
	cl_int e = r->cl->clEnqueueWriteBuffer(r->cl->queue, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
	if (e) snprintf(r->msg, r->msg_cap, "clEnqueueWriteBuffer: %s", lmi_cl_error_name(e));
	return e;
}

static int to_host(run_ctx *r, void *host, const void *d, size_t bytes)
{
	cl_mem m;
	size_t off;
	lmi_cl_ref(d, &m, &off);
	cl_int e = r->cl->clEnqueueReadBuffer(r->cl->queue, m, CL_TRUE, off, bytes, host, 0, NULL, NULL);
	if (e) snprintf(r->msg, r->msg_cap, "clEnqueueReadBuffer: %s", lmi_cl_error_name(e));
	return e;
}

/* zeroes bytes of d (or copies from src when src is non-NULL), untimed */
static int reset(run_ctx *r, void *d, const void *src, size_t bytes)
{
	cl_mem m, s;
	size_t off;
	lmi_cl_ref(d, &m, &off);
	cl_int e;
	if (src) {
		lmi_cl_ref(src, &s, &off);
		e = r->cl->clEnqueueCopyBuffer(r->cl->queue, s, m, 0, 0, bytes, 0, NULL, NULL);
	} else {
		cl_uchar zero = 0;
		e = r->cl->clEnqueueFillBuffer(r->cl->queue, m, &zero, 1, 0, bytes, 0, NULL, NULL);
	}
	if (e) snprintf(r->msg, r->msg_cap, "resetting a buffer: %s", lmi_cl_error_name(e));
	return e;
}

static void free_all(buffers *b)
{
	for (int i = 0; i < b->n; i++) lmi_cl_free(b->p[i]);
	b->n = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The timing loop: a warm-up then t->repeats runs of run(r, arg), median of their kernel times. */
static int time_runs(run_ctx *r, int (*run)(run_ctx *, void *), void *arg)
{
	double *times = calloc((size_t)r->t->repeats, sizeof *times);
	if (!times) {
		snprintf(r->msg, r->msg_cap, "out of host memory");
		return -1;
	}
	int rc = 0;
	for (int k = -1; k < r->t->repeats && !rc; k++) {
		r->ms = 0;
		r->launches = 0;
		rc = run(r, arg);
		if (!rc && k >= 0) times[k] = r->ms;
	}
	if (!rc) {
		qsort(times, (size_t)r->t->repeats, sizeof *times, cmp_double);
		int n = r->t->repeats;
		r->t->time_ms = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
		r->t->launches = r->launches;
	}
	free(times);
	return rc;
}

static int start(run_ctx *r, const char *fname, const char *body, const body_types *ty, int second,
                 lmi_cuda_timing *t, char *msg, size_t cap)
{
	memset(r, 0, sizeof *r);
	r->fname = fname, r->t = t, r->msg = msg, r->msg_cap = cap;
	r->sfx = second ? ty->sfx1 : ty->sfx0;
	t->kernels[0] = '\0';
	r->prog = program(fname, body, ty, second, &r->cl);
	if (!r->prog) {
		snprintf(msg, cap, "%s", lm_last_error());
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- the patterns */

typedef struct scan_state {
	const lmi_scan_call *c;
	lmk_scan_plan p;
	void *X, *Y;
	LMK_PTR sums[LMK_SCAN_MAX_LEVELS];
} scan_state;

static int scan_run(run_ctx *r, void *arg)
{
	scan_state *s = arg;
	for (int i = 0; i < s->p.nlaunches; i++) {
		const lmk_launch *l = &s->p.launch[i];
		lmk_scan_args a = lmk_scan_args_of(&s->p, l, s->c, s->X, s->Y, s->sums);
		if (launch_scan(r, l, &a)) return -1;
	}
	return 0;
}

static int cl_scan(const lmi_scan_call *c, lmi_cuda_timing *t, char *msg, size_t cap)
{
	run_ctx r;
	buffers b = {{0}, 0};
	scan_state s = {.c = c};
	size_t es = c->is_double ? 8 : 4, bytes = (size_t)c->n * es;
	if (start(&r, "kernels.scan", "body/scan.h", &floats, c->is_double, t, msg, cap)) return -1;
	lmk_scan_plan_make(&s.p, c, es);
	int rc = device(&r, &b, &s.X, c->x, bytes);
	if (!rc) rc = device(&r, &b, &s.Y, NULL, bytes);
	for (int l = 0; !rc && l + 1 < s.p.levels; l++)
		rc = device(&r, &b, &s.sums[l], NULL, s.p.sections[l] * es);
	if (!rc) rc = time_runs(&r, scan_run, &s);
	if (!rc) rc = to_host(&r, c->y, s.Y, bytes);
	free_all(&b);
	return rc;
}

typedef struct reduce_state {
	lmk_reduce_plan p;
	lmk_reduce_args a;
	void *pristine;
	size_t len, elem;
} reduce_state;

static int reduce_run(run_ctx *r, void *arg)
{
	reduce_state *s = arg;
	if (s->p.in_place && reset(r, s->a.input, s->pristine, s->len)) return -1;
	if (reset(r, s->a.output, NULL, s->elem)) return -1;
	return launch_reduce(r, &s->p.launch, &s->a);
}

static int cl_reduce(const lmi_reduce_call *c, lmi_cuda_timing *t, char *msg, size_t cap)
{
	run_ctx r;
	buffers b = {{0}, 0};
	reduce_state s;
	memset(&s, 0, sizeof s);
	s.elem = c->is_double ? 8 : 4;
	if (start(&r, "kernels.reduce", "body/reduce.h", &floats, c->is_double, t, msg, cap)) return -1;
	lmk_reduce_plan_make(&s.p, c, s.elem);
	s.len = (size_t)s.p.len * s.elem;
	void *input = NULL, *output = NULL;
	int rc = device(&r, &b, &input, s.p.in_place ? NULL : c->x, s.len);
	if (!rc) rc = device(&r, &b, &output, NULL, s.elem);
	if (!rc && s.p.in_place) {
		rc = device(&r, &b, &s.pristine, NULL, s.len);
		if (!rc) rc = reset(&r, s.pristine, NULL, s.len);
		cl_mem m;
		size_t off;
		if (!rc && c->n > 0) {
			lmi_cl_ref(s.pristine, &m, &off);
			rc = r.cl->clEnqueueWriteBuffer(r.cl->queue, m, CL_TRUE, 0, (size_t)c->n * s.elem,
			                                c->x, 0, NULL, NULL);
		}
	}
	s.a = (lmk_reduce_args){input, output, (unsigned)c->n, c->coarsen};
	if (!rc) rc = time_runs(&r, reduce_run, &s);
	if (!rc) rc = to_host(&r, c->y, output, s.elem);
	free_all(&b);
	return rc;
}

typedef struct one_launch {
	lmk_launch l;
	const void *a;
	int (*launch)(run_ctx *, const lmk_launch *, const void *);
	void *zero;         /* an output zeroed before each run (NULL: none) */
	size_t zero_bytes;
} one_launch;

static int one_run(run_ctx *r, void *arg)
{
	one_launch *o = arg;
	if (o->zero && reset(r, o->zero, NULL, o->zero_bytes)) return -1;
	return o->launch(r, &o->l, o->a);
}

static int hist_launch(run_ctx *r, const lmk_launch *l, const void *a)
{
	return launch_hist(r, l, a);
}
static int matmul_launch(run_ctx *r, const lmk_launch *l, const void *a)
{
	return launch_matmul(r, l, a);
}
static int conv_launch(run_ctx *r, const lmk_launch *l, const void *a)
{
	return launch_conv(r, l, a);
}
static int spmv_launch(run_ctx *r, const lmk_launch *l, const void *a)
{
	return launch_spmv(r, l, a);
}

static int cl_histogram(const lmi_hist_call *c, lmi_cuda_timing *t, char *msg, size_t cap)
{
	run_ctx r;
	buffers b = {{0}, 0};
	if (start(&r, "kernels.histogram", "body/histogram.h", &bytes_ints, !c->is_u8, t, msg, cap))
		return -1;
	size_t hbytes = c->bins * sizeof(unsigned), es = c->is_u8 ? 1 : 4;
	void *data = NULL, *histo = NULL;
	int rc = device(&r, &b, &data, c->data, (size_t)c->n * es);
	if (!rc) rc = device(&r, &b, &histo, NULL, hbytes);
	lmk_hist_args a = lmk_hist_args_of(c, data, histo);
	one_launch o = {lmk_hist_launch(c), &a, hist_launch, histo, hbytes};
	if (!rc) rc = time_runs(&r, one_run, &o);
	if (!rc) rc = to_host(&r, c->histo, histo, hbytes);
	free_all(&b);
	return rc;
}

static int cl_matmul(const lmi_matmul_call *c, lmi_cuda_timing *t, char *msg, size_t cap)
{
	run_ctx r;
	buffers b = {{0}, 0};
	if (start(&r, "kernels.matmul", "body/matmul.h", &floats, c->is_double, t, msg, cap)) return -1;
	size_t es = c->is_double ? 8 : 4;
	size_t sa = (size_t)(c->m * c->k) * es, sb = (size_t)(c->k * c->n) * es,
	       sc = (size_t)(c->m * c->n) * es;
	void *da = NULL, *db = NULL, *dc = NULL;
	int rc = device(&r, &b, &da, c->a, sa);
	if (!rc) rc = device(&r, &b, &db, c->b, sb);
	if (!rc) rc = device(&r, &b, &dc, NULL, sc);
	lmk_matmul_args a = lmk_matmul_args_of(c, da, db, dc);
	one_launch o = {lmk_matmul_launch(c, es), &a, matmul_launch, NULL, 0};
	if (!rc) rc = time_runs(&r, one_run, &o);
	if (!rc) rc = to_host(&r, c->c, dc, sc);
	free_all(&b);
	return rc;
}

static int cl_conv2d(const lmi_conv_call *c, lmi_cuda_timing *t, char *msg, size_t cap)
{
	run_ctx r;
	buffers b = {{0}, 0};
	if (start(&r, "kernels.conv2d", "body/conv2d.h", &floats, c->is_double, t, msg, cap)) return -1;
	size_t es = c->is_double ? 8 : 4;
	size_t si = (size_t)(c->h * c->w) * es, sm = (size_t)(c->mh * c->mw) * es;
	void *n = NULL, *f = NULL, *p = NULL;
	int rc = device(&r, &b, &n, c->img, si);
	if (!rc) rc = device(&r, &b, &f, c->mask, sm);
	if (!rc) rc = device(&r, &b, &p, NULL, si);
	size_t off;
	if (!rc) lmi_cl_ref(f, &r.constant, &off); /* the mask, as the __constant array */
	lmk_conv_args a = lmk_conv_args_of(c, n, f, p);
	one_launch o = {lmk_conv_launch(c, es), &a, conv_launch, NULL, 0};
	if (!rc) rc = time_runs(&r, one_run, &o);
	if (!rc) rc = to_host(&r, c->out, p, si);
	free_all(&b);
	return rc;
}

static int cl_spmv(const lmi_spmv_call *c, lmi_cuda_timing *t, char *msg, size_t cap)
{
	run_ctx r;
	buffers b = {{0}, 0};
	if (start(&r, "kernels.spmv", "body/spmv.h", &floats, c->is_double, t, msg, cap)) return -1;
	size_t es = c->is_double ? 8 : 4;
	lmk_spmv_args a;
	memset(&a, 0, sizeof a);
	lmk_spmv_array list[LMK_SPMV_MAX_ARRAYS];
	int n = lmk_spmv_arrays(c, &a, list), rc = 0;
	size_t ybytes = (size_t)c->m * es;
	for (int i = 0; i < n && !rc; i++) { /* y last, not copied in */
		void *d = NULL;
		size_t e = list[i].index ? sizeof(int) : es;
		rc = device(&r, &b, &d, i < n - 1 ? list[i].host : NULL, (size_t)list[i].length * e);
		*list[i].arg = d;
	}
	one_launch o = {lmk_spmv_launch(c), &a, spmv_launch, a.y, ybytes};
	if (!rc) rc = reset(&r, a.y, NULL, ybytes);
	if (!rc) rc = time_runs(&r, one_run, &o);
	if (!rc) rc = to_host(&r, c->y, a.y, ybytes);
	free_all(&b);
	return rc;
}

static const lmi_cuda_kernels table = {
    .version = LMI_CUDA_KERNELS_VERSION,
    .scan = cl_scan,
    .reduce = cl_reduce,
    .histogram = cl_histogram,
    .matmul = cl_matmul,
    .conv2d = cl_conv2d,
    .spmv = cl_spmv,
};

const lmi_cuda_kernels *lmi_opencl_kernels_get(const char *fname)
{
	return lmi_cl_get(fname) ? &table : NULL;
}
