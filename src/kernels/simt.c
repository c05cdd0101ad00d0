/*
 * simt.c — the emulator's scheduler and memory checks.
 *
 * Design: lmi_simt_run walks the grid block by block (x fastest). For a block it starts one fibre
 * per thread and runs them in thread order until each reaches __syncthreads or exits: that is one
 * step. If some threads wait while others exited, or threads wait at different barriers, the block
 * can never continue on a GPU: a deadlock, reported with the waiting and missing lanes. Every
 * LOAD/STORE/ATOMIC_ADD finds its array by address (a small table of ranges: the launch's global
 * and constant arrays and the block's shared arrays), checks type, bounds and writability, and
 * appends a raw event. A violation is reported like compute-sanitizer's memcheck (thread, block,
 * array, index, line) and stops the launch.
 * Read next: simt_model.c (what happens to the events), fibre.c (the switch).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/lmi.h"
#include "kernels/simt_impl.h"

_Thread_local lmi_simt_self_t lmi_simt_self;
static _Thread_local lmi_simt *cur_sim; /* the emulator running on this OS thread */
static _Thread_local lm_kernel_fault last_fault; /* what stopped the last failed launch */

void lm_kernel_last_fault(lm_kernel_fault *out) { *out = last_fault; }
void lm_kernel_clear_fault(void) { memset(&last_fault, 0, sizeof last_fault); }

/* ---------------------------------------------------------------- lifetime */

lmi_simt *lmi_simt_new(const char *fname, lm_trace *trace, const lm_latency_model *lat)
{
	lmi_simt *s = lm_alloc(sizeof *s);
	if (!s) return lmi_fail_null(LM_ERR_NOMEM, "%s: out of memory for the emulator", fname);
	memset(s, 0, sizeof *s);
	s->fname = fname;
	s->trace = trace;
	s->lat = *lat;
	s->racecheck = lm_kernel_racecheck(); /* simt_race.c */
	s->initcheck = true;
	s->smem = lm_alloc(LM_KERNEL_MAX_SHARED);
	s->sinit = lm_alloc(LM_KERNEL_MAX_SHARED);
	s->threads = lm_alloc(LM_KERNEL_MAX_BLOCK * sizeof *s->threads);
	s->raw_cap = 4096;
	s->raw = lm_alloc((size_t)s->raw_cap * sizeof *s->raw);
	if (!s->smem || !s->sinit || !s->threads || !s->raw || lmi_simt_model_new(s) != LM_OK) {
		lmi_simt_free(s);
		return lmi_fail_null(LM_ERR_NOMEM, "%s: out of memory for the emulator", fname);
	}
	memset(s->smem, 0, LM_KERNEL_MAX_SHARED);
	memset(s->sinit, 0, LM_KERNEL_MAX_SHARED);
	return s;
}

void lmi_simt_free(lmi_simt *s)
{
	if (!s) return;
	lmi_simt_model_free(s);
	lmi_simt_race_free(s);
	if (s->smem) lm_free(s->smem, LM_KERNEL_MAX_SHARED);
	if (s->sinit) lm_free(s->sinit, LM_KERNEL_MAX_SHARED);
	if (s->threads) lm_free(s->threads, LM_KERNEL_MAX_BLOCK * sizeof *s->threads);
	if (s->raw) lm_free(s->raw, (size_t)s->raw_cap * sizeof *s->raw);
	lm_free(s, sizeof *s);
}

const lmi_simt_counters *lmi_simt_counters_get(const lmi_simt *s) { return &s->c; }

/* ---------------------------------------------------------------- failures inside a kernel */

static const char *dim3_s(lmi_dim3 d, char *buf, size_t cap)
{
	snprintf(buf, cap, "(%u,%u,%u)", d.x, d.y, d.z);
	return buf;
}

lm_fault_access lmi_simt_fault_access(const lmi_simt *s, const simt_thread *th, int line, int kind)
{
	return (lm_fault_access){
		.thread = {th->idx.x, th->idx.y, th->idx.z},
		.block = {s->block_idx.x, s->block_idx.y, s->block_idx.z},
		.line = line,
		.kind = kind,
	};
}

void lmi_simt_note_fault(lmi_simt *s, const simt_thread *th, lm_fault_kind kind, const simt_range *r,
                         int64_t idx, int line, int akind)
{
	lm_kernel_fault *f = &s->fault;
	memset(f, 0, sizeof *f);
	f->kind = kind;
	snprintf(f->kernel, sizeof f->kernel, "%s", s->L->kernel);
	if (r) {
		snprintf(f->array, sizeof f->array, "%s", r->name);
		f->space = r->space;
		f->length = r->length;
	}
	f->index = idx;
	f->first = lmi_simt_fault_access(s, th, line, akind);
	f->second.kind = -1;
}

/* The fault record of the running thread: kind, and where (r: the array, or NULL). */
static void note_fault(lmi_simt *s, lm_fault_kind kind, const simt_range *r, int64_t idx, int line,
                       int akind)
{
	lmi_simt_note_fault(s, s->cur, kind, r, idx, line, akind);
}

void lmi_simt_fault_message(lmi_simt *s, const simt_thread *th, const char *what)
{
	char tb[40], bb[40];
	int n = LMI_TR_SNPRINTF(s->fault_msg, sizeof s->fault_msg, "%s by thread %s in block %s (kernel %s)",
	                        "%s，出错的是线程 %s（块 %s，内核 %s）", what, dim3_s(th->idx, tb, sizeof tb),
	                        dim3_s(s->block_idx, bb, sizeof bb), s->L->kernel);
	if (s->fault_tail[0] && n > 0 && (size_t)n < sizeof s->fault_msg)
		snprintf(s->fault_msg + n, sizeof s->fault_msg - (size_t)n, "%s", s->fault_tail);
	s->fault_tail[0] = '\0';
}

/* Records why the running thread fails and leaves its fibre for good (the scheduler abandons
 * it). Runs on the fibre's stack. A fault that note_fault did not describe is an ERROR (or an
 * interrupt). */
__attribute__((format(printf, 3, 4))) static _Noreturn void fault(lmi_simt *s, lm_status st,
                                                                 const char *fmt, ...)
{
	char what[640];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	lmi_simt_fault_message(s, s->cur, what);
	if (s->fault.kind == LM_FAULT_NONE)
		note_fault(s, st == LM_ERR_INTERRUPTED ? LM_FAULT_INTERRUPTED : LM_FAULT_ERROR, NULL, 0, 0, -1);
	s->fault_status = st;
	s->cur->state = TH_FAULT;
	lmi_fibre_yield(s->cur->fibre);
	LM_ASSERT(!"a faulted fibre was resumed");
	__builtin_unreachable();
}

/* ---------------------------------------------------------------- events */

static lmi_raw_ev *rec(lmi_simt *s, int kind, int line)
{
	if ((++s->poll & 1023) == 0 && lmi_check_interrupt())
		fault(s, LM_ERR_INTERRUPTED, "interrupted at line %d", line);
	lm_status st;
	lmi_raw_ev *e = lmi_simt_raw_push(s, kind, line, &st);
	if (!e && st == LM_ERR_ARG)
		fault(s, LM_ERR_ARG,
		      "more than %d events in one barrier phase of a block (an endless loop?) at line %d",
		      SIMT_MAX_STEP_EVENTS, line);
	if (!e) fault(s, LM_ERR_NOMEM, "out of memory for %lld events", (long long)s->raw_cap * 2);
	return e;
}

lm_status lmi_simt_raw_grow(lmi_simt *s)
{
	if (s->raw_cap >= SIMT_MAX_STEP_EVENTS) return LM_ERR_ARG;
	int64_t ncap = s->raw_cap * 2;
	lmi_raw_ev *n = lm_alloc((size_t)ncap * sizeof *n);
	if (!n) return LM_ERR_NOMEM;
	memcpy(n, s->raw, (size_t)s->nraw * sizeof *n);
	lm_free(s->raw, (size_t)s->raw_cap * sizeof *n);
	s->raw = n;
	s->raw_cap = ncap;
	return LM_OK;
}

static const char *access_name(int kind)
{
	switch (kind) {
	case LM_TRACE_LOAD: return lmi_tr("load", "读");
	case LM_TRACE_STORE: return lmi_tr("store", "写");
	default: return "atomicAdd";
	}
}

static const char *space_name(int space)
{
	switch (space) {
	case LM_SPACE_GLOBAL: return lmi_tr("global", "全局");
	case LM_SPACE_SHARED: return lmi_tr("shared", "共享");
	case LM_SPACE_CONSTANT: return lmi_tr("constant", "常量");
	default: return lm_trace_space_name(space);
	}
}

void lmi_simt_uninit_report(lmi_simt *s, const simt_thread *th, const simt_range *r, int64_t idx,
                            int line, int kind, char *buf, size_t cap)
{
	lmi_simt_note_fault(s, th, LM_FAULT_UNINIT, r, idx, line, kind);
	LMI_TR_SNPRINTF(buf, cap, "uninitialized %s of %s array '%s' at index %lld (0-based) at line %d",
	                "未初始化的%s：%s数组 '%s' 的下标 %lld（从 0 开始），第 %d 行", access_name(kind),
	                space_name(r->space), r->name, (long long)idx, line);
	if (r->space == LM_SPACE_SHARED)
		snprintf(s->fault_tail, sizeof s->fault_tail, "%s",
		         lmi_tr(": no thread of this block has written that element yet, and on a GPU shared "
		                "memory starts with whatever the last block left there (never zeroed; the "
		                "emulator's zeros would hide it): write it before reading it (clear the array, "
		                "then t:sync()), as compute-sanitizer's initcheck requires",
		                "：本块还没有线程写过这个元素，而在 GPU 上共享内存里是上一个块留下的任意值（从不清零；"
		                "模拟器的 0 会把它掩盖）：先写再读（先清零数组，再 t:sync()），这是 compute-sanitizer "
		                "的 initcheck 的要求"));
	else
		snprintf(s->fault_tail, sizeof s->fault_tail, "%s",
		         lmi_tr(": the array was made by lm.empty and nothing has written that element yet (it "
		                "holds whatever the memory held): fill it first (lm.zeros, or a store before "
		                "this read), as compute-sanitizer's initcheck requires; initcheck = false skips "
		                "this check for one launch",
		                "：这个数组是 lm.empty 创建的，还没有任何操作写过这个元素（其值是内存里残留的任意数）：先"
		                "填好它（用 lm.zeros，或者在读之前写入），这是 compute-sanitizer 的 initcheck 的要求；"
		                "initcheck = false 可以让某一次启动跳过这项检查"));
}

/*
 * The address of element i of the array that base points into, after the checks memcheck makes.
 * base may point inside an array (X + offset); the index reported is then from the array's start.
 */
static void *check_access(lmi_simt *s, const void *base, int64_t i, lm_dtype dt, int kind,
                          int line, const simt_range **rout, int64_t *iout)
{
	uintptr_t p = (uintptr_t)base;
	const simt_range *r = &s->ranges[s->last_range];
	if (!(s->nranges && p >= r->base && p < r->end)) {
		const simt_range *below = NULL;
		r = NULL;
		/* newest first: the parts of the dynamic shared array (SHARED_PART) come after it */
		for (int k = s->nranges - 1; k >= 0; k--) {
			const simt_range *q = &s->ranges[k];
			if (p >= q->base && p < q->end) {
				r = q;
				if (!q->has_parts) s->last_range = k;
				break;
			}
			if (q->base <= p && (!below || q->base > below->base)) below = q;
		}
		if (!r) r = below; /* past the end of an array: an out-of-bounds index into it */
		if (!r) {
			note_fault(s, LM_FAULT_BOUNDS, NULL, 0, line, kind);
			fault(s, LM_ERR_INDEX, lmi_tr("invalid %s at line %d through an address outside every array",
			                              "无效的%s（第 %d 行）：地址不在任何数组之内"),
			      access_name(kind), line);
		}
	}
	if ((p - r->base) % r->elem != 0) {
		note_fault(s, LM_FAULT_BOUNDS, r, 0, line, kind);
		fault(s, LM_ERR_INDEX, lmi_tr("misaligned %s of %s array '%s' at line %d",
		                              "未对齐的%s：%s数组 '%s'，第 %d 行"),
		      access_name(kind), space_name(r->space), r->name, line);
	}
	int64_t idx = (int64_t)((p - r->base) / r->elem) + i;
	if (r->dtype != dt) {
		note_fault(s, LM_FAULT_ERROR, r, idx, line, kind);
		fault(s, LM_ERR_DTYPE, "%s of %s from %s array '%s' (%s) at line %d", access_name(kind),
		      lm_dtype_name(dt), space_name(r->space), r->name, lm_dtype_name(r->dtype),
		      line);
	}
	if (idx < 0 || idx >= r->length) {
		note_fault(s, LM_FAULT_BOUNDS, r, idx, line, kind);
		fault(s, LM_ERR_INDEX, lmi_tr("out-of-bounds %s of %s array '%s' at index %lld (length %lld) at line %d",
		                              "越界的%s：%s数组 '%s' 的下标 %lld（长度 %lld），第 %d 行"),
		      access_name(kind), space_name(r->space), r->name, (long long)idx,
		      (long long)r->length, line);
	}
	if (kind != LM_TRACE_LOAD && r->readonly) {
		note_fault(s, LM_FAULT_BOUNDS, r, idx, line, kind);
		fault(s, LM_ERR_ARG, lmi_tr("%s to read-only %s array '%s' at index %lld at line %d",
		                            "%s只读的%s数组 '%s'，下标 %lld，第 %d 行"),
		      access_name(kind), space_name(r->space), r->name, (long long)idx, line);
	}
	if (s->initcheck && kind != LM_TRACE_STORE && !lmi_simt_initialized(s, r, idx))
		lmi_simt_note_uninit(s, s->cur, r, idx, line, kind);
	if (kind != LM_TRACE_LOAD) lmi_simt_mark_written(s, r, idx);
	*rout = r;
	*iout = idx;
	return (char *)r->base + (size_t)idx * r->elem;
}

static void *mem_event(lmi_simt *s, const void *base, int64_t i, lm_dtype dt, int kind, int line,
                       lmi_raw_ev **eout)
{
	const simt_range *r;
	int64_t idx;
	void *p = check_access(s, base, i, dt, kind, line, &r, &idx);
	lmi_raw_ev *e = rec(s, kind, line);
	e->space = (uint8_t)r->space;
	e->array = (uint8_t)r->trace_id;
	e->index = (uint32_t)idx;
	e->size = (uint8_t)r->elem;
	e->range = (uint8_t)(r - s->ranges);
	*eout = e;
	return p;
}

#define DEFINE_LDST(suffix, ctype, dt)                                                             \
	ctype lmi_simt_ld_##suffix(const void *base, int64_t i, int line)                          \
	{                                                                                          \
		lmi_raw_ev *e;                                                                     \
		ctype v = *(ctype *)mem_event(cur_sim, base, i, dt, LM_TRACE_LOAD, line, &e);      \
		e->value = (double)v;                                                              \
		return v;                                                                          \
	}                                                                                          \
	void lmi_simt_st_##suffix(const void *base, int64_t i, ctype v, int line)                  \
	{                                                                                          \
		lmi_raw_ev *e;                                                                     \
		*(ctype *)mem_event(cur_sim, base, i, dt, LM_TRACE_STORE, line, &e) = v;           \
		e->value = (double)v;                                                              \
	}                                                                                          \
	ctype lmi_simt_atomic_add_##suffix(const void *base, int64_t i, ctype v, int line)         \
	{                                                                                          \
		lmi_raw_ev *e;                                                                     \
		ctype *p = mem_event(cur_sim, base, i, dt, LM_TRACE_ATOMIC, line, &e);             \
		ctype old = *p;                                                                    \
		*p = (ctype)(old + v);                                                             \
		e->value = (double)v;                                                              \
		return old;                                                                        \
	}

DEFINE_LDST(f32, float, LM_FLOAT32)
DEFINE_LDST(f64, double, LM_FLOAT64)
DEFINE_LDST(i32, int32_t, LM_INT32)

unsigned char lmi_simt_ld_u8(const void *base, int64_t i, int line)
{
	lmi_raw_ev *e;
	unsigned char v = *(unsigned char *)mem_event(cur_sim, base, i, LM_UINT8, LM_TRACE_LOAD, line, &e);
	e->value = v;
	return v;
}

uint32_t lmi_simt_ld_u32(const void *base, int64_t i, int line)
{
	return (uint32_t)lmi_simt_ld_i32(base, i, line);
}
void lmi_simt_st_u32(const void *base, int64_t i, uint32_t v, int line)
{
	lmi_simt_st_i32(base, i, (int32_t)v, line);
}
uint32_t lmi_simt_atomic_add_u32(const void *base, int64_t i, uint32_t v, int line)
{
	/* unsigned wrap-around, as on the GPU; stored through the int32 array type */
	return (uint32_t)lmi_simt_atomic_add_i32(base, i, (int32_t)v, line);
}

/* An add event; pad: it works on padding or ghost cells (ADD_PAD), counted in idle_lanes. */
static void add_event(double sum, int pad, int line)
{
	lmi_raw_ev *e = rec(cur_sim, LM_TRACE_ADD, line);
	e->value = sum;
	e->aux = pad != 0;
}

#define DEFINE_ADD(suffix, ctype)                                                                  \
	ctype lmi_simt_add_##suffix(ctype a, ctype b, int pad, int line)                           \
	{                                                                                          \
		ctype r = a + b;                                                                   \
		add_event((double)r, pad, line);                                                   \
		return r;                                                                          \
	}
DEFINE_ADD(f32, float)
DEFINE_ADD(f64, double)

int32_t lmi_simt_add_i32(int32_t a, int32_t b, int pad, int line)
{
	int32_t r = (int32_t)((uint32_t)a + (uint32_t)b); /* wraps like the GPU's integer add */
	add_event(r, pad, line);
	return r;
}

int lmi_simt_branch(int taken, int line)
{
	lmi_raw_ev *e = rec(cur_sim, LM_TRACE_BRANCH, line);
	e->aux = taken != 0;
	e->value = taken != 0;
	return taken;
}

void lmi_simt_syncthreads(int line)
{
	lmi_simt *s = cur_sim;
	s->cur->state = TH_WAIT;
	s->cur->wait_line = (uint16_t)line;
	lmi_fibre_yield(s->cur->fibre);
}

/* ---------------------------------------------------------------- shared memory */

/* Registers an array with the trace (if any): its id, or -1 with an error set. */
static int trace_array(lmi_simt *s, const char *name, lm_trace_space space, lm_dtype dt,
                       int64_t length, int64_t rows, int64_t cols)
{
	if (!s->trace) return LM_TRACE_NO_ARRAY;
	if (space == LM_SPACE_SHARED)
		for (int k = 0; k < s->L->nlayouts; k++)
			if (strcmp(s->L->layouts[k].name, name) == 0 &&
			    s->L->layouts[k].rows * s->L->layouts[k].cols == length) {
				rows = s->L->layouts[k].rows;
				cols = s->L->layouts[k].cols;
			}
	lm_trace_array ta = {
		.name = name,
		.space = space,
		.dtype = dt,
		.length = length,
		.rows = rows > 0 ? rows : 1,
		.cols = cols > 0 ? cols : length,
		.launch = space == LM_SPACE_SHARED ? s->launch_no : -1,
	};
	return lmi_trace_add_array(s->trace, &ta);
}

static int add_range(lmi_simt *s, const char *name, lm_trace_space space, lm_dtype dt, void *data,
                     int64_t length, bool readonly, int trace_id)
{
	LM_ASSERT(s->nranges < SIMT_MAX_RANGES);
	simt_range *r = &s->ranges[s->nranges];
	r->elem = lm_dtype_size(dt);
	r->base = (uintptr_t)data;
	r->end = r->base + (size_t)length * r->elem; /* empty: owns no address */
	r->dtype = dt;
	r->space = space;
	r->readonly = readonly;
	r->trace_id = trace_id;
	r->name = name;
	r->length = length;
	r->has_parts = false;
	r->init = NULL;
	return s->nranges++;
}

void *lmi_simt_shared(const char *name, lm_dtype dt, size_t elem, int64_t n, int line)
{
	lmi_simt *s = cur_sim;
	int k = s->cur->shared_decls++;
	if (k < s->ndecls) {
		if (s->decls[k].line != line)
			fault(s, LM_ERR_ARG,
			      "__shared__ '%s' at line %d is this thread's declaration #%d, but another thread's "
			      "#%d was at line %d",
			      name, line, k + 1, k + 1, s->decls[k].line);
		return s->smem + s->decls[k].offset;
	}
	if (k >= SIMT_MAX_SHARED_DECLS)
		fault(s, LM_ERR_ARG, "more than %d __shared__ arrays", SIMT_MAX_SHARED_DECLS);
	size_t used = (s->L->dyn_shared + 15) / 16 * 16 + s->static_shared;
	size_t bytes = elem * (size_t)n;
	if (n < 1 || used + bytes > LM_KERNEL_MAX_SHARED)
		fault(s, LM_ERR_ARG,
		      "shared memory: __shared__ %s[%lld] (%zu bytes) at line %d brings the block to %zu "
		      "bytes, over the limit of 48 KiB (%d bytes) per block",
		      name, (long long)n, bytes, line, used + bytes, LM_KERNEL_MAX_SHARED);
	int tid = trace_array(s, name, LM_SPACE_SHARED, dt, n, 0, 0);
	if (tid < 0) fault(s, LM_ERR_ARG, "%s", lm_last_error());
	int r = add_range(s, name, LM_SPACE_SHARED, dt, s->smem + used, n, false, tid);
	s->decls[k] = (shared_decl){.line = line, .offset = used, .bytes = (bytes + 15) / 16 * 16, .range = r};
	s->static_shared += s->decls[k].bytes;
	s->ndecls++;
	return s->smem + used;
}

void *lmi_simt_shared_dyn(const char *name, lm_dtype dt, size_t elem, int line)
{
	lmi_simt *s = cur_sim;
	if (s->dyn_range < 0) {
		int64_t n = (int64_t)(s->L->dyn_shared / elem);
		int tid = trace_array(s, name, LM_SPACE_SHARED, dt, n, 0, 0);
		if (tid < 0) fault(s, LM_ERR_ARG, "%s", lm_last_error());
		s->dyn_range = add_range(s, name, LM_SPACE_SHARED, dt, s->smem, n, false, tid);
	} else if (strcmp(s->ranges[s->dyn_range].name, name) != 0) {
		fault(s, LM_ERR_ARG,
		      "extern __shared__ '%s' at line %d: the dynamic shared memory is already '%s' (one "
		      "dynamic array per kernel)",
		      name, line, s->ranges[s->dyn_range].name);
	}
	return s->smem;
}

void *lmi_simt_shared_part(const char *name, void *dyn, lm_dtype dt, size_t elem, int64_t offset,
                           int64_t n, int line)
{
	lmi_simt *s = cur_sim;
	if (s->dyn_range < 0 || (uintptr_t)dyn != s->ranges[s->dyn_range].base)
		fault(s, LM_ERR_ARG,
		      "SHARED_PART '%s' at line %d must carve the kernel's dynamic shared array "
		      "(SHARED_DYN), from its start",
		      name, line);
	size_t from = (size_t)offset * elem, bytes = (size_t)n * elem;
	if (offset < 0 || n < 1 || from + bytes > s->L->dyn_shared)
		fault(s, LM_ERR_ARG,
		      "SHARED_PART '%s' at line %d: elements %lld..%lld of %zu bytes lie outside the %zu "
		      "bytes of dynamic shared memory of the launch",
		      name, line, (long long)offset, (long long)(offset + n - 1), elem, s->L->dyn_shared);
	for (int k = 0; k < s->nparts; k++) {
		const simt_range *q = &s->ranges[s->part_range[k]];
		if (strcmp(q->name, name) != 0) continue;
		if (q->base != (uintptr_t)s->smem + from || q->length != n)
			fault(s, LM_ERR_ARG,
			      "SHARED_PART '%s' at line %d: another thread carved it at other elements", name,
			      line);
		return s->smem + from;
	}
	if (s->nparts >= SIMT_MAX_PARTS)
		fault(s, LM_ERR_ARG, "more than %d SHARED_PARTs", SIMT_MAX_PARTS);
	int tid = trace_array(s, name, LM_SPACE_SHARED, dt, n, 0, 0);
	if (tid < 0) fault(s, LM_ERR_ARG, "%s", lm_last_error());
	s->part_range[s->nparts++] = add_range(s, name, LM_SPACE_SHARED, dt, s->smem + from, n, false, tid);
	s->ranges[s->dyn_range].has_parts = true;
	s->last_range = 0;
	return s->smem + from;
}

int lmi_simt_add_shared_range(lmi_simt *s, const char *name, lm_dtype dt, size_t offset, int64_t n)
{
	int tid = trace_array(s, name, LM_SPACE_SHARED, dt, n, 0, 0);
	if (tid < 0) return -1;
	return add_range(s, name, LM_SPACE_SHARED, dt, s->smem + offset, n, false, tid);
}

void lmi_simt_set_region(lmi_simt *s, int lo, int hi)
{
	s->region_lo = lo;
	s->region_hi = hi;
}

int lmi_simt_kernels_run(const lmi_simt *s, const char **names, int cap)
{
	for (int i = 0; i < s->nran && i < cap; i++) names[i] = s->ran[i];
	return s->nran;
}

/* Notes the launch's kernel (each name once). */
static void note_kernel(lmi_simt *s, const char *kernel)
{
	for (int i = 0; i < s->nran; i++)
		if (strcmp(s->ran[i], kernel) == 0) return;
	if (s->nran < LMI_SIMT_MAX_KERNELS) s->ran[s->nran++] = kernel;
}

/* ---------------------------------------------------------------- the scheduler */

static void thread_main(void *arg)
{
	(void)arg;
	cur_sim->L->entry(cur_sim->L->args);
	cur_sim->cur->state = TH_DONE;
}

/* Appends to buf (size cap) what fits of the text; keeps buf NUL-terminated. */
static void append(char *buf, size_t cap, size_t *n, const char *text)
{
	size_t len = strlen(text);
	if (*n + len + 1 > cap) {
		if (cap > 4) memcpy(buf + cap - 4, "...", 4);
		*n = cap - 1;
		return;
	}
	memcpy(buf + *n, text, len + 1);
	*n += len;
}

/* "warp 0 lanes 0-15, warp 1 lanes 0-7,9" for the threads of the block in state st. */
static void lanes_s(const lmi_simt *s, int st, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int w = 0; w * 32 < s->nthreads; w++) {
		char part[24];
		int lo = -1, ranges = 0;
		for (int l = 0; l <= 32; l++) {
			int t = w * 32 + l;
			bool in = l < 32 && t < s->nthreads && s->threads[t].state == st;
			if (in && lo < 0) lo = l;
			if (in || lo < 0) continue;
			if (ranges++ == 0) {
				snprintf(part, sizeof part, "%swarp %d lanes ", n ? ", " : "", w);
				append(buf, cap, &n, part);
			} else {
				append(buf, cap, &n, ",");
			}
			if (lo == l - 1) snprintf(part, sizeof part, "%d", lo);
			else snprintf(part, sizeof part, "%d-%d", lo, l - 1);
			append(buf, cap, &n, part);
			lo = -1;
		}
	}
}

static void abandon_block(lmi_simt *s)
{
	for (int t = 0; t < s->nthreads; t++) {
		simt_thread *th = &s->threads[t];
		if (th->started && th->state != TH_DONE) {
			s->cur = th;
			if (!s->L->external) lmi_fibre_abandon(th->fibre); /* external: the caller's */
			th->state = TH_DONE;
		}
	}
}

static lm_status block_failure(lmi_simt *s, lm_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static lm_status block_failure(lmi_simt *s, lm_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->fault_msg, sizeof s->fault_msg, fmt, ap);
	va_end(ap);
	s->fault_status = st;
	return st;
}

static bool same_barrier(const simt_thread *a, const simt_thread *b)
{
	return a->wait_line == b->wait_line && a->wait_site == b->wait_site;
}

/* "line 5" or, for a barrier reached through a call, "line 5 (called from line 12)". */
static const char *barrier_s(const simt_thread *th, char *buf, size_t cap)
{
	if (th->wait_from && th->wait_from != th->wait_line)
		LMI_TR_SNPRINTF(buf, cap, "line %d (called from line %d)", "第 %d 行（从第 %d 行调用）",
		                th->wait_line, th->wait_from);
	else
		LMI_TR_SNPRINTF(buf, cap, "line %d", "第 %d 行", th->wait_line);
	return buf;
}

/* The fault record of a barrier failure: BARRIER (two barriers, a and b) or DEADLOCK (a). */
static void note_barrier_fault(lmi_simt *s, lm_fault_kind kind, const simt_thread *a,
                               const simt_thread *b)
{
	lm_kernel_fault *f = &s->fault;
	memset(f, 0, sizeof *f);
	f->kind = kind;
	snprintf(f->kernel, sizeof f->kernel, "%s", s->L->kernel);
	f->first = lmi_simt_fault_access(s, a, a->wait_line, -1);
	f->second = b ? lmi_simt_fault_access(s, b, b->wait_line, -1) : (lm_fault_access){.kind = -1};
}

/* Checks the state of the block after a step: LM_OK to go on, else a deadlock, or threads waiting
 * at different barriers (a barrier in a divergent branch: undefined behaviour in CUDA). */
static lm_status check_barrier(lmi_simt *s, int nwait, int ndone, int *line)
{
	char bb[40], w[200], d[200], ba[64], bl[64];
	int first = -1;
	for (int t = 0; t < s->nthreads; t++)
		if (s->threads[t].state == TH_WAIT) {
			if (first < 0) first = t;
			else if (!same_barrier(&s->threads[t], &s->threads[first])) {
				/* name the two groups: those at the first barrier, and the rest */
				const simt_thread *a = &s->threads[first], *b = &s->threads[t];
				for (int u = 0; u < s->nthreads; u++)
					if (s->threads[u].state == TH_WAIT && !same_barrier(&s->threads[u], a))
						s->threads[u].state = TH_READY; /* temporarily, for lanes_s */
				lanes_s(s, TH_WAIT, w, sizeof w);
				lanes_s(s, TH_READY, d, sizeof d);
				for (int u = 0; u < s->nthreads; u++)
					if (s->threads[u].state == TH_READY) s->threads[u].state = TH_WAIT;
				note_barrier_fault(s, LM_FAULT_BARRIER, a, b);
				s->fault_status = LM_ERR_STATE;
				LMI_TR_SNPRINTF(s->fault_msg, sizeof s->fault_msg,
				                "deadlock in block %s (kernel %s): %s wait at __syncthreads on %s, "
				                "%s at the one on %s (every thread of a block must reach the same "
				                "barrier: a __syncthreads in a branch that threads of a block take "
				                "differently is undefined behaviour in CUDA; move the barrier out of "
				                "the branch)",
				                "块 %s 死锁（内核 %s）：%s 在 %s 的 __syncthreads 处等待，%s 却在 %s 的那一个"
				                "（一个块的所有线程必须到达同一道屏障：块内线程走向不同的分支里放 __syncthreads，"
				                "在 CUDA 中是未定义行为；把屏障移到分支之外）",
				                dim3_s(s->block_idx, bb, sizeof bb), s->L->kernel, w,
				                barrier_s(a, ba, sizeof ba), d, barrier_s(b, bl, sizeof bl));
				return LM_ERR_STATE;
			}
		}
	*line = first >= 0 ? s->threads[first].wait_line : 0;
	if (nwait && ndone) {
		lanes_s(s, TH_WAIT, w, sizeof w);
		lanes_s(s, TH_DONE, d, sizeof d);
		note_barrier_fault(s, LM_FAULT_DEADLOCK, &s->threads[first], NULL);
		s->fault_status = LM_ERR_STATE;
		LMI_TR_SNPRINTF(s->fault_msg, sizeof s->fault_msg,
		                "deadlock in block %s (kernel %s): %s wait at __syncthreads on %s, which %s "
		                "never reach (they exited)",
		                "块 %s 死锁（内核 %s）：%s 在 %s 的 __syncthreads 处等待，而 %s 永远到不了那里"
		                "（它们已经退出）",
		                dim3_s(s->block_idx, bb, sizeof bb), s->L->kernel, w,
		                barrier_s(&s->threads[first], ba, sizeof ba), d);
		return LM_ERR_STATE;
	}
	return LM_OK;
}

static lm_status run_block(lmi_simt *s, lmi_fibre_pool *pool)
{
	const lmi_simt_launch *L = s->L;
	size_t used = (L->dyn_shared + 15) / 16 * 16 + s->static_shared;
	memset(s->smem, 0, used); /* deterministic runs: every block starts from zeroed shared memory */
	memset(s->sinit, 0, used); /* ... that no thread has written (the initcheck) */
	for (int t = 0; t < s->nthreads; t++) {
		simt_thread *th = &s->threads[t];
		th->fibre = lmi_fibre_pool_get(pool, t);
		th->linear = (uint32_t)t;
		th->idx.x = (unsigned)t % L->block.x;
		th->idx.y = (unsigned)t / L->block.x % L->block.y;
		th->idx.z = (unsigned)t / (L->block.x * L->block.y);
		th->state = TH_READY;
		th->started = false;
		th->shared_decls = 0;
		th->wait_from = 0;
		th->wait_site = 0;
		if (!L->external) lmi_fibre_init(th->fibre, thread_main, th);
	}
	s->step = 0;
	s->block_cycles = 0;
	s->block_add_steps = 0;
	lm_status st = LM_OK;
	for (;;) {
		s->nraw = 0;
		s->uninit.set = false;
		for (int t = 0; t < s->nthreads; t++) {
			simt_thread *th = &s->threads[t];
			if (th->state != TH_READY) continue;
			s->cur = th;
			lmi_simt_self.thread_idx = th->idx;
			th->ev_start = s->nraw;
			th->started = true;
			if (L->external) lmi_simt_ext_resume(s, th); /* external.c */
			else lmi_fibre_resume(th->fibre);
			th->ev_end = s->nraw;
			if (th->state == TH_FAULT) {
				st = s->fault_status;
				goto out_abandon;
			}
		}
		int nwait = 0, ndone = 0, line = 0;
		for (int t = 0; t < s->nthreads; t++) {
			nwait += s->threads[t].state == TH_WAIT;
			ndone += s->threads[t].state == TH_DONE;
		}
		if ((st = check_barrier(s, nwait, ndone, &line)) != LM_OK) goto out_abandon;
		if (s->racecheck && (st = lmi_simt_race_phase(s)) != LM_OK) goto out_abandon;
		if (s->uninit.set) { /* no race explains it: nothing wrote the element before the read */
			char what[640];
			const simt_thread *th = &s->threads[s->uninit.thread];
			lmi_simt_uninit_report(s, th, &s->ranges[s->uninit.range], s->uninit.index,
			                       s->uninit.line, s->uninit.kind, what, sizeof what);
			lmi_simt_fault_message(s, th, what);
			st = s->fault_status = LM_ERR_STATE;
			goto out_abandon;
		}
		if ((st = lmi_simt_model_step(s, nwait > 0, line)) != LM_OK) {
			block_failure(s, st, "%s", lm_last_error());
			goto out_abandon;
		}
		if (nwait == 0) break;
		s->step++;
		for (int t = 0; t < s->nthreads; t++) s->threads[t].state = TH_READY;
		if (lmi_check_interrupt()) {
			char bb[40];
			st = block_failure(s, LM_ERR_INTERRUPTED, "interrupted in block %s (kernel %s)",
			                   dim3_s(s->block_idx, bb, sizeof bb), L->kernel);
			goto out_abandon;
		}
	}
	return LM_OK;
out_abandon:
	abandon_block(s);
	return st;
}

/* ---------------------------------------------------------------- occupancy */

/* An SM's wave of resident blocks: it started at `start`; its slowest block alone, and the issue
 * and memory-pipe cycles its blocks need together. */
typedef struct simt_sm {
	uint64_t start, latency, issue, mem;
	uint32_t blocks;
} simt_sm;

/* The wave is over: it lasted as long as its slowest block, or as the SM needed to issue every
 * block's instructions or move their sectors, whichever is longest (enough resident warps hide
 * the latency; too few leave the SM waiting). */
static void wave_end(simt_sm *q)
{
	uint64_t t = q->latency;
	if (q->issue > t) t = q->issue;
	if (q->mem > t) t = q->mem;
	q->start += t;
	q->latency = q->issue = q->mem = 0;
	q->blocks = 0;
}

/* Blocks of the launch resident on an SM together: as many as the SM's warps, block slots and
 * shared memory allow (at least one). Known once the first block declared its shared arrays. */
static uint32_t resident_blocks(const lmi_simt *s)
{
	double warps = (s->nthreads + 31) / 32;
	double smem = (double)((s->L->dyn_shared + 15) / 16 * 16 + s->static_shared);
	double r = s->lat.blocks_per_sm;
	if (floor(s->lat.warps_per_sm / warps) < r) r = floor(s->lat.warps_per_sm / warps);
	if (smem > 0 && floor(s->lat.shared_per_sm / smem) < r) r = floor(s->lat.shared_per_sm / smem);
	return r >= 1 ? (uint32_t)r : 1;
}

static lm_status check_launch(const lmi_simt *s, const lmi_simt_launch *L)
{
	const char *f = s->fname;
	if (L->block.x < 1 || L->block.y < 1 || L->block.z < 1 || L->grid.x < 1 || L->grid.y < 1 ||
	    L->grid.z < 1)
		return lmi_fail(LM_ERR_ARG, "%s: kernel %s launched with grid (%u,%u,%u) and block (%u,%u,%u): "
		                "every dimension must be at least 1",
		                f, L->kernel, L->grid.x, L->grid.y, L->grid.z, L->block.x, L->block.y,
		                L->block.z);
	/* each dim < 2^32, so a product of three can pass 2^64: checked, never wrapped */
	uint64_t nt, nb;
	bool over = __builtin_mul_overflow((uint64_t)L->block.x, L->block.y, &nt) ||
	            __builtin_mul_overflow(nt, L->block.z, &nt);
	if (over || nt > LM_KERNEL_MAX_BLOCK) {
		char count[40] = " (past 2^64)";
		if (!over) snprintf(count, sizeof count, " = %llu", (unsigned long long)nt);
		return lmi_fail(LM_ERR_ARG, "%s: kernel %s: a block of %ux%ux%u%s threads exceeds the limit of %d "
		                "threads per block", f, L->kernel, L->block.x, L->block.y, L->block.z, count,
		                LM_KERNEL_MAX_BLOCK);
	}
	if (__builtin_mul_overflow((uint64_t)L->grid.x, L->grid.y, &nb) ||
	    __builtin_mul_overflow(nb, L->grid.z, &nb) || nb > UINT32_MAX)
		return lmi_fail(LM_ERR_ARG, "%s: kernel %s: a grid of %ux%ux%u blocks is more than the emulator's "
		                "2^32 - 1 blocks", f, L->kernel, L->grid.x, L->grid.y, L->grid.z);
	if (L->dyn_shared > LM_KERNEL_MAX_SHARED)
		return lmi_fail(LM_ERR_ARG,
		                "%s: kernel %s: %zu bytes of dynamic shared memory exceed the limit of 48 KiB "
		                "(%d bytes) per block",
		                f, L->kernel, L->dyn_shared, LM_KERNEL_MAX_SHARED);
	if (L->narrays > LMI_SIMT_MAX_ARRAYS)
		return lmi_fail(LM_ERR_ARG, "%s: kernel %s: more than %d arrays", f, L->kernel,
		                LMI_SIMT_MAX_ARRAYS);
	for (int k = 0; k < L->narrays; k++) {
		const lmi_simt_array *a = &L->arrays[k];
		if (a->length < 0 || a->length >= ((int64_t)1 << 32) || !a->data ||
		    (a->space != LM_SPACE_GLOBAL && a->space != LM_SPACE_CONSTANT))
			return lmi_fail(LM_ERR_ARG, "%s: kernel %s: array '%s' of %lld elements cannot be "
			                "emulated (0..2^32-1 elements of global or constant memory)",
			                f, L->kernel, a->name, (long long)a->length);
	}
	return LM_OK;
}

static lm_status setup_arrays(lmi_simt *s, const lmi_simt_launch *L)
{
	s->nranges = s->last_range = 0;
	s->ndecls = 0;
	s->static_shared = 0;
	s->dyn_range = -1;
	s->nparts = 0;
	for (int k = 0; k < L->narrays; k++) {
		const lmi_simt_array *a = &L->arrays[k];
		/* the same buffer as in an earlier launch keeps its id: scenes follow it */
		int tid = -1;
		for (int j = 0; j < s->nknown && tid < 0; j++)
			if (s->known[j].data == a->data && strcmp(s->known[j].name, a->name) == 0)
				tid = s->known[j].trace_id;
		if (tid < 0) {
			tid = trace_array(s, a->name, a->space, a->dtype, a->length, a->rows, a->cols);
			if (tid < 0) return lmi_fail(lm_last_status(), "%s: %s", s->fname, lm_last_error());
			if (s->nknown < SIMT_MAX_KNOWN)
				s->known[s->nknown++] = (simt_known){a->data, a->name, tid};
		}
		int k2 = add_range(s, a->name, a->space, a->dtype, a->data, a->length, a->readonly, tid);
		s->ranges[k2].init = a->init;
	}
	return LM_OK;
}

lm_status lmi_simt_run(lmi_simt *s, const lmi_simt_launch *L)
{
	memset(&last_fault, 0, sizeof last_fault);
	lm_status st = check_launch(s, L);
	if (st) {
		last_fault.kind = LM_FAULT_ERROR;
		return st;
	}
	if (cur_sim)
		return lmi_fail(LM_ERR_STATE, "%s: the emulator cannot be entered from a kernel", s->fname);
	s->L = L;
	s->launch_no = s->c.launches;
	if (s->c.launches >= LMI_TRACE_MAX_LAUNCHES)
		return lmi_fail(LM_ERR_ARG, "%s: more than %d launches", s->fname, LMI_TRACE_MAX_LAUNCHES);
	if ((st = setup_arrays(s, L)) != LM_OK) return st;

	s->nthreads = (int)(L->block.x * L->block.y * L->block.z);
	uint32_t nblocks = L->grid.x * L->grid.y * L->grid.z;
	uint64_t start = s->c.cycles;
	if (s->trace) {
		lm_trace_launch tl = {
			.kernel = L->kernel,
			.grid = {L->grid.x, L->grid.y, L->grid.z},
			.block = {L->block.x, L->block.y, L->block.z},
			.shared_bytes = L->dyn_shared,
		};
		if (lmi_trace_begin_launch(s->trace, &tl, start) < 0)
			return lmi_fail(lm_last_status(), "%s: %s", s->fname, lm_last_error());
	}
	/* Blocks go round robin to `sms` multiprocessors, each running its blocks in waves of the
	 * blocks resident together (occupancy). */
	uint32_t nsms = (uint32_t)s->lat.sms < nblocks ? (uint32_t)s->lat.sms : nblocks;
	simt_sm *sm = lm_alloc(nsms * sizeof *sm);
	if (!sm) return lmi_fail(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	for (uint32_t k = 0; k < nsms; k++) sm[k] = (simt_sm){.start = start};

	lmi_fibre_pool *pool;
	if ((st = lmi_fibre_pool_take(s->fname, s->nthreads, &pool)) != LM_OK) {
		lm_free(sm, nsms * sizeof *sm);
		return st;
	}
	note_kernel(s, L->kernel);
	cur_sim = s;
	s->fault_status = LM_OK;
	memset(&s->fault, 0, sizeof s->fault);
	s->fault_tail[0] = '\0';
	if (s->racecheck) lmi_simt_race_launch(s);
	s->launch_add_steps = 0;
	lmi_simt_self.block_dim = L->block;
	lmi_simt_self.grid_dim = L->grid;
	uint32_t resident = 1;
	for (uint32_t b = 0; b < nblocks && st == LM_OK; b++) {
		simt_sm *q = &sm[b % nsms];
		if (q->blocks == resident) wave_end(q);
		s->block_linear = b;
		s->block_idx.x = b % L->grid.x;
		s->block_idx.y = b / L->grid.x % L->grid.y;
		s->block_idx.z = b / (L->grid.x * L->grid.y);
		lmi_simt_self.block_idx = s->block_idx;
		s->block_start = q->start;
		s->block_issue = s->block_mem = 0;
		st = run_block(s, pool);
		if (b == 0) resident = resident_blocks(s);
		if (s->block_cycles > q->latency) q->latency = s->block_cycles;
		q->issue += s->block_issue;
		q->mem += s->block_mem;
		q->blocks++;
		if (s->block_add_steps > s->launch_add_steps) s->launch_add_steps = s->block_add_steps;
	}
	cur_sim = NULL;
	lmi_fibre_pool_give(pool);
	uint64_t end = start;
	for (uint32_t k = 0; k < nsms; k++) {
		wave_end(&sm[k]);
		if (sm[k].start > end) end = sm[k].start;
	}
	lm_free(sm, nsms * sizeof *sm);
	if (s->launch_no == 0) { /* the warps resident together in the first wave of an SM */
		uint32_t per_sm = (nblocks + nsms - 1) / nsms;
		uint32_t wave = per_sm < resident ? per_sm : resident;
		s->c.occupancy = (double)wave * ((s->nthreads + 31) / 32) / s->lat.warps_per_sm;
	}
	if (s->trace) lmi_trace_end_launch(s->trace, end);
	s->c.launches++;
	s->c.cycles = end;
	s->c.steps += s->launch_add_steps;
	s->c.threads += (int64_t)nblocks * s->nthreads;
	if (st != LM_OK) {
		if (s->fault.kind == LM_FAULT_NONE) {
			s->fault.kind = st == LM_ERR_INTERRUPTED ? LM_FAULT_INTERRUPTED : LM_FAULT_ERROR;
			snprintf(s->fault.kernel, sizeof s->fault.kernel, "%s", L->kernel);
		}
		last_fault = s->fault;
		return lmi_fail(st, "%s: %s", s->fname, s->fault_msg);
	}
	return LM_OK;
}
