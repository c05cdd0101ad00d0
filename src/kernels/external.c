/*
 * external.c — kernels whose threads the caller runs (lumen/launch.h): the public call
 * lm_kernel_launch through the pattern driver (an emu-only pattern "launch"), and the emulator's
 * side of external threads: running one until its next barrier, and the checked, recorded
 * accesses it makes.
 *
 * Design: the scheduler of simt.c is unchanged; where it would resume a thread's fibre it calls
 * lmi_simt_ext_resume, which calls the caller's run(). The calls of a running thread append raw
 * events to the same buffer the C macros fill, with the same fields, so simt_model.c, the race
 * check, the trace and the counters cannot tell the two kinds of kernels apart. Where a fibre's
 * access would fault and yield for good, an external access returns the error instead (nothing
 * longjmps), with the message of the emulator's memcheck plus "arrays are indexed from 0". The
 * launch's shared arrays are laid out as one block of dynamic shared memory (16-byte aligned
 * parts, as static __shared__ arrays are), zeroed for every block, and declared once per launch
 * before its first thread runs.
 * Read next: simt.c (the scheduler), src/lua/launch.c (the Lua side), docs/student-kernels.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernels/patterns.h"
#include "kernels/simt_impl.h"

#define MAX_ALL (LM_LAUNCH_MAX_ARRAYS + LM_LAUNCH_MAX_SHARED)

struct lm_launch {
	const lm_launch_desc *d;
	lmi_simt *s;
	int range_of[MAX_ALL];      /* desc array -> the emulator's range (after declared) */
	size_t offset[MAX_ALL];     /* shared arrays: byte offset in the block's shared memory */
	size_t shared_bytes;
	bool declared;              /* the shared arrays are ranges of s (once per launch) */
	bool running;               /* inside run() */
	uint32_t thread;            /* the thread being run */
};

/* ---------------------------------------------------------------- checking the description */

static bool dtype_ok(lm_dtype dt)
{
	return dt == LM_FLOAT32 || dt == LM_FLOAT64 || dt == LM_INT32 || dt == LM_INT64 || dt == LM_UINT8;
}

static lm_status check_array(const lm_launch_desc *d, int k, lm_launch *l, int *nglobal,
                             int *nshared)
{
	const lm_launch_array *a = &d->arrays[k];
	const char *f = d->fname;
	if (!a->name || !*a->name || strlen(a->name) > 40)
		return lmi_fail(LM_ERR_ARG, "%s: array %d needs a name of 1 to 40 characters", f, k + 1);
	for (int j = 0; j < k; j++)
		if (strcmp(d->arrays[j].name, a->name) == 0)
			return lmi_fail(LM_ERR_ARG, "%s: two arrays are called '%s'", f, a->name);
	if (!dtype_ok(a->dtype))
		return lmi_fail(LM_ERR_DTYPE, "%s: array '%s' has dtype %s; a kernel takes float32, float64, "
		                "int32, int64 or uint8 arrays", f, a->name, lm_dtype_name(a->dtype));
	if (a->rows < 0 || a->cols < 0 || ((a->rows || a->cols) && a->rows * a->cols != a->length))
		return lmi_fail(LM_ERR_ARG, "%s: array '%s': a layout of %lld x %lld does not hold its %lld "
		                "elements", f, a->name, (long long)a->rows, (long long)a->cols,
		                (long long)a->length);
	if (a->space == LM_SPACE_SHARED) {
		if (a->data || a->length < 1 || a->readonly)
			return lmi_fail(LM_ERR_ARG, "%s: shared array '%s' needs at least 1 element, no data and "
			                "no read-only flag (every block gets it zeroed)", f, a->name);
		if (++*nshared > LM_LAUNCH_MAX_SHARED)
			return lmi_fail(LM_ERR_ARG, "%s: more than %d shared arrays", f, LM_LAUNCH_MAX_SHARED);
		size_t bytes = (size_t)a->length * lm_dtype_size(a->dtype);
		if (a->length > LM_KERNEL_MAX_SHARED || l->shared_bytes + bytes > LM_KERNEL_MAX_SHARED)
			return lmi_fail(LM_ERR_ARG, "%s: shared memory: '%s' (%lld x %s = %lld bytes) brings the "
			                "block's shared arrays to %lld bytes, over the limit of 48 KiB (%d bytes) "
			                "per block", f, a->name, (long long)a->length, lm_dtype_name(a->dtype),
			                (long long)a->length * (long long)lm_dtype_size(a->dtype),
			                (long long)(l->shared_bytes + bytes), LM_KERNEL_MAX_SHARED);
		l->offset[k] = l->shared_bytes;
		l->shared_bytes += (bytes + 15) / 16 * 16;
		if (l->shared_bytes > LM_KERNEL_MAX_SHARED) l->shared_bytes = LM_KERNEL_MAX_SHARED;
		return LM_OK;
	}
	if (a->space != LM_SPACE_GLOBAL && a->space != LM_SPACE_CONSTANT)
		return lmi_fail(LM_ERR_ARG, "%s: array '%s' must be global, constant or shared", f, a->name);
	if (a->length < 0 || a->length >= ((int64_t)1 << 32) || (!a->data && a->length > 0))
		return lmi_fail(LM_ERR_ARG, "%s: array '%s' of %lld elements cannot be emulated (0..2^32-1 "
		                "elements with their data)", f, a->name, (long long)a->length);
	if (++*nglobal > LM_LAUNCH_MAX_ARRAYS)
		return lmi_fail(LM_ERR_ARG, "%s: more than %d global and constant arrays", f,
		                LM_LAUNCH_MAX_ARRAYS);
	return LM_OK;
}

static lm_status check_desc(const lm_launch_desc *d, lm_launch *l)
{
	const char *f = d->fname ? d->fname : "lm_kernel_launch";
	if (!d->kernel || !*d->kernel || !d->run)
		return lmi_fail(LM_ERR_ARG, "%s: the launch needs a kernel name and a run function", f);
	if (d->narrays < 0 || d->narrays > MAX_ALL || (d->narrays && !d->arrays))
		return lmi_fail(LM_ERR_ARG, "%s: %d arrays (at most %d global and constant, %d shared)", f,
		                d->narrays, LM_LAUNCH_MAX_ARRAYS, LM_LAUNCH_MAX_SHARED);
	int ng = 0, ns = 0;
	for (int k = 0; k < d->narrays; k++) {
		lm_status st = check_array(d, k, l, &ng, &ns);
		if (st) return st;
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- the launch */

static char empty_array[16]; /* the data of arrays of no elements: every access is out of bounds */

static lm_status launch_emu(lmi_simt *s, const lmi_kcall *k, void *run)
{
	(void)k;
	lm_launch *l = run;
	const lm_launch_desc *d = l->d;
	lmi_simt_array arrays[LM_LAUNCH_MAX_ARRAYS];
	lmi_simt_layout layouts[LM_LAUNCH_MAX_SHARED];
	int na = 0, nl = 0;
	for (int i = 0; i < d->narrays; i++) {
		const lm_launch_array *a = &d->arrays[i];
		if (a->space == LM_SPACE_SHARED) {
			if (a->rows) layouts[nl++] = (lmi_simt_layout){a->name, a->rows, a->cols};
			continue;
		}
		l->range_of[i] = na; /* setup_arrays makes the launch's arrays ranges 0, 1, ... in order */
		arrays[na++] = (lmi_simt_array){
			.name = a->name, .space = a->space, .dtype = a->dtype,
			.data = a->length ? a->data : empty_array, .length = a->length,
			.rows = a->rows, .cols = a->cols,
			.readonly = a->readonly || a->space == LM_SPACE_CONSTANT,
			.init = a->space == LM_SPACE_GLOBAL && a->length ? a->init : NULL,
		};
	}
	lmi_simt_launch L = {
		.kernel = d->kernel,
		.grid = {d->grid[0], d->grid[1], d->grid[2]},
		.block = {d->block[0], d->block[1], d->block[2]},
		.dyn_shared = l->shared_bytes,
		.arrays = arrays,
		.narrays = na,
		.layouts = layouts,
		.nlayouts = nl,
		.external = l,
	};
	l->s = s;
	if (d->no_racecheck) s->racecheck = false;
	if (d->no_initcheck) s->initcheck = false;
	return lmi_simt_run(s, &L);
}

lm_status lm_kernel_launch(const lm_launch_desc *d, lm_kernel_info **info)
{
	if (!d || !info) return lmi_fail(LM_ERR_ARG, "lm_kernel_launch: desc and info must not be NULL");
	*info = NULL;
	lm_launch l;
	memset(&l, 0, sizeof l);
	l.d = d;
	lm_status st = check_desc(d, &l);
	if (st) return st;
	const char *f = d->fname ? d->fname : "lm_kernel_launch";
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.trace_cap = d->trace_cap;
	const char *algos[1] = {d->kernel};
	lmi_kcall k;
	lm_dtype dt = dtype_ok(d->dtype) ? d->dtype : LM_FLOAT32;
	if ((st = lmi_kcall_begin(f, &o, algos, 1, 0, LMI_RUNS_NO_CPU, 1, dt, &k)) != LM_OK) return st;
	uint64_t threads = (uint64_t)d->block[0] * d->block[1] * d->block[2];
	k.block = threads <= LM_KERNEL_MAX_BLOCK ? (unsigned)threads : 0; /* the emulator says why */
	k.coarsen = 1;
	snprintf(k.name, sizeof k.name, "launch %s", d->kernel);
	lmi_pattern pt = {
		.name = "launch",
		.body = d->where ? d->where : "external threads",
		.emu = launch_emu,
	};
	lm_tensor *out = NULL;
	st = lmi_pattern_run(&pt, &k, &l, &out, info);
	lm_tensor_release(out);
	return st;
}

/* ---------------------------------------------------------------- the running thread */

/* The running thread fails (as simt.c's fault, without leaving a fibre): the message names the
 * thread, the block and the kernel; lm_last_error() has it with the caller's name. */
__attribute__((format(printf, 3, 4))) static lm_status ext_fault(lm_launch *l, lm_status st,
                                                                 const char *fmt, ...)
{
	lmi_simt *s = l->s;
	simt_thread *th = &s->threads[l->thread];
	char what[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	lmi_simt_fault_message(s, th, what);
	if (s->fault.kind == LM_FAULT_NONE)
		lmi_simt_note_fault(s, th, st == LM_ERR_INTERRUPTED ? LM_FAULT_INTERRUPTED : LM_FAULT_ERROR,
		                    NULL, 0, 0, -1);
	s->fault_status = st;
	th->state = TH_FAULT;
	return lmi_fail(st, "%s: %s", l->d->fname ? l->d->fname : "lm_kernel_launch", s->fault_msg);
}

/* LM_OK when a thread of l is running and has not failed. */
static lm_status running(const lm_launch *l, const char *what)
{
	if (!l || !l->running)
		return lmi_fail(LM_ERR_STATE, "%s: %s called outside a running thread of its launch",
		                l && l->d->fname ? l->d->fname : "lm_kernel_launch", what);
	const lmi_simt *s = l->s;
	if (s->threads[l->thread].state == TH_FAULT)
		return lmi_fail(s->fault_status, "%s: %s", l->d->fname ? l->d->fname : "lm_kernel_launch",
		                s->fault_msg);
	return LM_OK;
}

static lm_status declare_shared(lm_launch *l)
{
	const lm_launch_desc *d = l->d;
	for (int i = 0; i < d->narrays; i++) {
		const lm_launch_array *a = &d->arrays[i];
		if (a->space != LM_SPACE_SHARED) continue;
		int r = lmi_simt_add_shared_range(l->s, a->name, a->dtype, l->offset[i], a->length);
		if (r < 0) return ext_fault(l, LM_ERR_ARG, "%s", lm_last_error());
		l->range_of[i] = r;
	}
	l->declared = true;
	return LM_OK;
}

void lmi_simt_ext_resume(lmi_simt *s, simt_thread *th)
{
	lm_launch *l = s->L->external;
	l->thread = th->linear;
	if (!l->declared && declare_shared(l) != LM_OK) return;
	l->running = true;
	int r = l->d->run(l->d->ctx, l, (int)th->linear, s->step == 0);
	l->running = false;
	if (th->state == TH_FAULT) return;
	if (r == LM_LAUNCH_WAIT && th->state == TH_WAIT) return;
	if (r == LM_LAUNCH_DONE && th->state == TH_READY) {
		th->state = TH_DONE;
		return;
	}
	ext_fault(l, LM_ERR_INTERNAL, "the thread's run returned %d %s lm_launch_sync", r,
	          th->state == TH_WAIT ? "after" : "without");
}

/* A raw event of the running thread (interrupts polled as simt.c's rec does), or NULL after
 * failing the thread. */
static lmi_raw_ev *ext_rec(lm_launch *l, int kind, int line)
{
	lmi_simt *s = l->s;
	if ((++s->poll & 1023) == 0 && lmi_check_interrupt()) {
		ext_fault(l, LM_ERR_INTERRUPTED, "interrupted at line %d", line);
		return NULL;
	}
	lm_status st;
	lmi_raw_ev *e = lmi_simt_raw_push(s, kind, line, &st);
	if (!e && st == LM_ERR_ARG)
		ext_fault(l, st, "more than %d events in one barrier phase of a block (an endless loop?) at "
		          "line %d", SIMT_MAX_STEP_EVENTS, line);
	else if (!e)
		ext_fault(l, LM_ERR_NOMEM, "out of memory for %lld events", (long long)s->raw_cap * 2);
	return e;
}

static const char *access_name(int kind)
{
	return kind == LM_TRACE_LOAD ? lmi_tr("load", "读") : kind == LM_TRACE_STORE ? lmi_tr("store", "写") : "atomicAdd";
}

static const char *space_name(int space)
{
	return space == LM_SPACE_GLOBAL ? lmi_tr("global", "全局") : space == LM_SPACE_SHARED ? lmi_tr("shared", "共享")
	                                                                                 : lmi_tr("constant", "常量");
}

/* One access's element: its event, its address, its array's range. */
typedef struct elem_at {
	lmi_raw_ev *e;
	char *p;
	const simt_range *r;
	const lm_dtype_traits *ty;
} elem_at;

/* The checks of one access (memcheck's), then its event and element into *at. */
static lm_status access(lm_launch *l, int array, int64_t i, int kind, int line, elem_at *at)
{
	lm_status st = running(l, access_name(kind));
	if (st) return st;
	if (array < 0 || array >= l->d->narrays)
		return ext_fault(l, LM_ERR_ARG, "%s of array %d at line %d: the launch has %d arrays",
		                 access_name(kind), array, line, l->d->narrays);
	lmi_simt *s = l->s;
	const simt_range *r = &s->ranges[l->range_of[array]];
	simt_thread *th = &s->threads[l->thread];
	if (i < 0 || i >= r->length) {
		lmi_simt_note_fault(s, th, LM_FAULT_BOUNDS, r, i, line, kind);
		return ext_fault(l, LM_ERR_INDEX, lmi_tr("out-of-bounds %s of %s array '%s' at index %lld (length "
		                                         "%lld; arrays are indexed from 0, as in CUDA C) at line %d",
		                                         "越界的%s：%s数组 '%s' 的下标 %lld（长度 %lld；和 CUDA C 一样，"
		                                         "数组从 0 开始编号），第 %d 行"),
		                 access_name(kind), space_name(r->space), r->name, (long long)i,
		                 (long long)r->length, line);
	}
	if (kind != LM_TRACE_LOAD && r->readonly) {
		lmi_simt_note_fault(s, th, LM_FAULT_BOUNDS, r, i, line, kind);
		return ext_fault(l, LM_ERR_ARG, lmi_tr("%s to read-only %s array '%s' at index %lld at line %d",
		                                       "%s只读的%s数组 '%s'，下标 %lld，第 %d 行"),
		                 access_name(kind), space_name(r->space), r->name, (long long)i, line);
	}
	if (kind == LM_TRACE_ATOMIC && r->dtype == LM_UINT8)
		return ext_fault(l, LM_ERR_DTYPE, "atomicAdd on uint8 array '%s' at line %d: atomicAdd takes "
		                 "int32, int64, float32 or float64 elements", r->name, line);
	if (s->initcheck && kind != LM_TRACE_STORE && !lmi_simt_initialized(s, r, i))
		lmi_simt_note_uninit(s, th, r, i, line, kind); /* reported at the end of the phase */
	lmi_raw_ev *e = ext_rec(l, kind, line);
	if (!e) return l->s->fault_status;
	e->space = (uint8_t)r->space;
	e->array = (uint8_t)r->trace_id;
	e->index = (uint32_t)i;
	e->size = (uint8_t)r->elem;
	e->range = (uint8_t)l->range_of[array];
	at->e = e;
	at->p = (char *)r->base + (size_t)i * r->elem;
	at->r = r;
	at->ty = lm_dtype_traits_of(r->dtype);
	if (kind != LM_TRACE_LOAD) lmi_simt_mark_written(s, r, i);
	return LM_OK;
}

/* v as an element of dt (floats rounded, integers truncated toward zero) into *out; false when it
 * does not fit (NaN, infinite or out of an integer type's range). */
static bool convert(lm_dtype dt, double v, double *out)
{
	const lm_dtype_traits *ty = lm_dtype_traits_of(dt);
	if (dt == LM_FLOAT32) return *out = (float)v, true;
	if (!ty->is_int) return *out = v, true;
	/* [min, max + 1): max + 1 is a power of two, exact as a double (int64's max rounds up to it) */
	double t = trunc(v), lo = (double)ty->min, hi = (double)ty->max + 1;
	if (!(t >= lo && t < hi)) return false;
	return *out = t, true;
}


static lm_status out_of_range(lm_launch *l, const simt_range *r, const char *what, double v,
                              int64_t i, int line)
{
	return ext_fault(l, LM_ERR_ARG, "%s of %.17g to %s array '%s' at index %lld at line %d: the value "
	                 "does not fit in %s", what, v, lm_trace_space_name(r->space), r->name,
	                 (long long)i, line, lm_dtype_name(r->dtype));
}

lm_status lm_launch_load(lm_launch *l, int array, int64_t i, int line, double *v)
{
	elem_at at;
	lm_status st = access(l, array, i, LM_TRACE_LOAD, line, &at);
	if (st) return st;
	*v = at.e->value = at.ty->get(at.p);
	return LM_OK;
}

lm_status lm_launch_store(lm_launch *l, int array, int64_t i, double v, int line)
{
	elem_at at;
	lm_status st = access(l, array, i, LM_TRACE_STORE, line, &at);
	if (st) return st;
	double c;
	if (!convert(at.r->dtype, v, &c)) return out_of_range(l, at.r, "store", v, i, line);
	at.ty->set(at.p, c); /* c fits (convert): the C conversion */
	at.e->value = c;
	return LM_OK;
}

lm_status lm_launch_atomic_add(lm_launch *l, int array, int64_t i, double v, int line, double *old)
{
	elem_at at;
	lm_status st = access(l, array, i, LM_TRACE_ATOMIC, line, &at);
	if (st) return st;
	double c, was = at.ty->get(at.p);
	if (!convert(at.r->dtype, v, &c)) return out_of_range(l, at.r, "atomicAdd", v, i, line);
	if (at.r->dtype == LM_INT32) { /* integers wrap around, as on the GPU */
		*(int32_t *)at.p = (int32_t)((uint32_t)*(int32_t *)at.p + (uint32_t)(int32_t)c);
	} else if (at.r->dtype == LM_INT64) {
		*(int64_t *)at.p = (int64_t)((uint64_t)*(int64_t *)at.p + (uint64_t)(int64_t)c);
	} else {
		at.ty->set(at.p, was + c);
	}
	at.e->value = c;
	if (old) *old = was;
	return LM_OK;
}

/* ---------------------------------------------------------------- exact integers */

/* Whether v fits the integer type ty. */
static bool int_fits(const lm_dtype_traits *ty, int64_t v) { return v >= ty->min && v <= ty->max; }

static lm_status not_integer(lm_launch *l, const simt_range *r, const char *what, int line)
{
	return ext_fault(l, LM_ERR_DTYPE, "%s of %s array '%s' at line %d as an integer: it holds %s",
	                 what, lm_trace_space_name(r->space), r->name, line, lm_dtype_name(r->dtype));
}

lm_status lm_launch_load_int(lm_launch *l, int array, int64_t i, int line, int64_t *v)
{
	elem_at at;
	lm_status st = access(l, array, i, LM_TRACE_LOAD, line, &at);
	if (st) return st;
	if (!at.ty->is_int) return not_integer(l, at.r, "load", line);
	*v = at.ty->get_int(at.p);
	at.e->value = (double)*v;
	return LM_OK;
}

lm_status lm_launch_store_int(lm_launch *l, int array, int64_t i, int64_t v, int line)
{
	elem_at at;
	lm_status st = access(l, array, i, LM_TRACE_STORE, line, &at);
	if (st) return st;
	if (!at.ty->is_int) return not_integer(l, at.r, "store", line);
	if (!int_fits(at.ty, v))
		return ext_fault(l, LM_ERR_ARG, "store of %lld to %s array '%s' at index %lld at line %d: the "
		                 "value does not fit in %s", (long long)v, lm_trace_space_name(at.r->space), at.r->name,
		                 (long long)i, line, lm_dtype_name(at.r->dtype));
	at.ty->set_int(at.p, v);
	at.e->value = (double)v;
	return LM_OK;
}

lm_status lm_launch_atomic_add_int(lm_launch *l, int array, int64_t i, int64_t v, int line, int64_t *old)
{
	elem_at at;
	lm_status st = access(l, array, i, LM_TRACE_ATOMIC, line, &at);
	if (st) return st;
	if (at.r->dtype != LM_INT32 && at.r->dtype != LM_INT64) return not_integer(l, at.r, "atomicAdd", line);
	if (!int_fits(at.ty, v))
		return ext_fault(l, LM_ERR_ARG, "atomicAdd of %lld to %s array '%s' at index %lld at line %d: "
		                 "the value does not fit in %s", (long long)v, lm_trace_space_name(at.r->space),
		                 at.r->name, (long long)i, line, lm_dtype_name(at.r->dtype));
	int64_t was = at.ty->get_int(at.p);
	if (at.r->dtype == LM_INT32) /* integers wrap around, as on the GPU */
		*(int32_t *)at.p = (int32_t)((uint32_t)was + (uint32_t)v);
	else
		*(int64_t *)at.p = (int64_t)((uint64_t)was + (uint64_t)v);
	at.e->value = (double)v;
	if (old) *old = was;
	return LM_OK;
}

lm_status lm_launch_add(lm_launch *l, double sum, bool pad, int line)
{
	lm_status st = running(l, "add");
	if (st) return st;
	lmi_raw_ev *e = ext_rec(l, LM_TRACE_ADD, line);
	if (!e) return l->s->fault_status;
	e->value = sum;
	e->aux = pad;
	return LM_OK;
}

lm_status lm_launch_branch(lm_launch *l, bool taken, int line)
{
	lm_status st = running(l, "branch");
	if (st) return st;
	lmi_raw_ev *e = ext_rec(l, LM_TRACE_BRANCH, line);
	if (!e) return l->s->fault_status;
	e->aux = taken;
	e->value = taken;
	return LM_OK;
}

lm_status lm_launch_sync_at(lm_launch *l, int line, int from, uint32_t site)
{
	lm_status st = running(l, "sync");
	if (st) return st;
	simt_thread *th = &l->s->threads[l->thread];
	if (th->state == TH_WAIT)
		return ext_fault(l, LM_ERR_STATE, "a second barrier at line %d before the thread's run "
		                 "returned", line);
	th->state = TH_WAIT;
	th->wait_line = (uint16_t)line;
	th->wait_from = (uint16_t)(from > 0 && from < 65536 ? from : 0);
	th->wait_site = site;
	return LM_OK;
}

lm_status lm_launch_sync(lm_launch *l, int line) { return lm_launch_sync_at(l, line, 0, 0); }

lm_status lm_launch_fail(lm_launch *l, lm_status st, const char *what)
{
	lm_status r = running(l, "fail");
	if (r) return r;
	return ext_fault(l, st ? st : LM_ERR_INTERNAL, "%s", what ? what : "failed");
}

bool lm_launch_failed(const lm_launch *l)
{
	return l && l->s && l->s->threads[l->thread].state == TH_FAULT;
}

void lm_launch_where(const lm_launch *l, unsigned thread[3], unsigned block[3], unsigned block_dim[3],
                     unsigned grid_dim[3])
{
	const lmi_simt *s = l ? l->s : NULL;
	if (!s) return;
	const lmi_dim3 t = s->threads[l->thread].idx, b = s->block_idx;
	const lmi_simt_launch *L = s->L;
	if (thread) thread[0] = t.x, thread[1] = t.y, thread[2] = t.z;
	if (block) block[0] = b.x, block[1] = b.y, block[2] = b.z;
	if (block_dim) block_dim[0] = L->block.x, block_dim[1] = L->block.y, block_dim[2] = L->block.z;
	if (grid_dim) grid_dim[0] = L->grid.x, grid_dim[1] = L->grid.y, grid_dim[2] = L->grid.z;
}
