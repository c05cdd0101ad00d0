/*
 * capture.c — the recorder of a capture (lumen/graph.h): the kernels launched at the top level
 * while lm_capture_begin .. lm_capture_end runs on this thread, each as a record (trace.h) over values
 * (a storage and a geometry), each storage classified as it is first met: an input's, one
 * allocated during the capture (temp when a node writes it first, const when a node reads what
 * the host put there), or one from before (state when written, const when only read).
 *
 * The records hold their own tensors over the storages (no autograd, +1 on each storage), so no
 * memory recorded can be freed and reused for another value while the capture runs, and every
 * storage survives for the runs of the program. Read next: ../ops/program.c.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/capture.h"

_Thread_local struct lm_capture *lmi_capture_cur;
_Thread_local int lmi_capture_depth;

static _Atomic uint64_t storage_serial;

uint64_t lmi_storage_serial_next(void) { return atomic_fetch_add(&storage_serial, 1) + 1; }

const char *lm_store_kind_name(lm_store_kind k)
{
	switch (k) {
	case LM_STORE_INPUT: return "input";
	case LM_STORE_TEMP: return "temp";
	case LM_STORE_STATE: return "state";
	case LM_STORE_CONST: return "const";
	}
	return "?";
}

/* ---------------------------------------------------------------- growth */

static bool grow(void **p, int *cap, int need, size_t elem)
{
	if (need <= *cap) return true;
	int nc = *cap ? *cap * 2 : 64;
	while (nc < need) nc *= 2;
	void *q = lm_alloc((size_t)nc * elem);
	if (!q) return false;
	if (*p) {
		memcpy(q, *p, (size_t)*cap * elem);
		lm_free(*p, (size_t)*cap * elem);
	}
	*p = q;
	*cap = nc;
	return true;
}

/* The first failure is the capture's: what broke it and where. */
static void broke(lm_capture *tr, lm_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void broke(lm_capture *tr, lm_status s, const char *fmt, ...)
{
	if (tr->broke) return;
	tr->broke = s;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tr->why, sizeof tr->why, fmt, ap);
	va_end(ap);
}

static void where_now(lm_capture *tr, char *buf)
{
	buf[0] = 0;
	if (tr->where) tr->where(tr->ud, buf, LMI_WHERE_MAX);
}

/* ---------------------------------------------------------------- storages and values */

static int storage_of(lm_capture *tr, lm_storage *s)
{
	for (int i = tr->nsts - 1; i >= 0; i--)
		if (tr->sts[i].s == s) return i;
	return -1;
}

static int add_storage(lm_capture *tr, lm_storage *s, lm_store_kind kind)
{
	if (!grow((void **)&tr->sts, &tr->capsts, tr->nsts + 1, sizeof *tr->sts)) return -1;
	lmi_tstorage *st = &tr->sts[tr->nsts];
	memset(st, 0, sizeof *st);
	st->s = s;
	lmi_storage_retain(s);
	st->kind = kind;
	st->input = -1;
	st->first = -1;
	st->made_here = s->serial > tr->serial0;
	return tr->nsts++;
}

static bool same_geometry(const lm_tensor *a, const lm_tensor *b)
{
	if (a->dtype != b->dtype || a->ndim != b->ndim || a->offset != b->offset) return false;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->stride[i] != b->stride[i])) return false;
	return true;
}

static int value_on(lm_capture *tr, int si, const lm_tensor *t)
{
	for (int v = tr->sts[si].first; v >= 0; v = tr->vals[v].next)
		if (same_geometry(tr->vals[v].t, t)) return v;
	if (!grow((void **)&tr->vals, &tr->capvals, tr->nvals + 1, sizeof *tr->vals)) return -1;
	lm_tensor *w = lmi_tensor_wrap(tr->sts[si].s, t->dtype, t->ndim, t->shape, t->stride, t->offset);
	if (!w) return -1;
	lmi_tvalue *v = &tr->vals[tr->nvals];
	v->storage = si;
	v->t = w;
	v->next = tr->sts[si].first;
	tr->sts[si].first = tr->nvals;
	return tr->nvals++;
}

int lmi_capture_value_of(lm_capture *tr, const lm_tensor *t)
{
	int si = storage_of(tr, t->storage);
	if (si < 0) si = add_storage(tr, t->storage, LM_STORE_CONST);
	return si < 0 ? -1 : value_on(tr, si, t);
}

/* A value read by the node being recorded. */
static int read_value(lm_capture *tr, const lm_tensor *t)
{
	int si = storage_of(tr, t->storage);
	if (si < 0) {
		/* read before any node wrote it: memory from before the capture, or filled by the host */
		si = add_storage(tr, t->storage, LM_STORE_CONST);
		if (si >= 0 && tr->sts[si].made_here) where_now(tr, tr->sts[si].first_read);
	}
	return si < 0 ? -1 : value_on(tr, si, t);
}

/* A value written by the node being recorded (fname launched it). */
static int write_value(lm_capture *tr, const lm_tensor *t, const char *fname)
{
	int si = storage_of(tr, t->storage);
	if (si < 0) si = add_storage(tr, t->storage, t->storage->serial > tr->serial0 ? LM_STORE_TEMP : LM_STORE_STATE);
	if (si < 0) return -1;
	lmi_tstorage *st = &tr->sts[si];
	char here[LMI_WHERE_MAX];
	switch (st->kind) {
	case LM_STORE_INPUT:
		where_now(tr, here);
		broke(tr, LM_ERR_STATE, "%s changes input %d in place%s%s: a compiled call would change the caller's "
		      "tensor without the graph knowing; work on a copy (x:clone()) or return the new value",
		      fname, st->input + 1, here[0] ? " at " : "", here);
		break;
	case LM_STORE_CONST:
		if (st->made_here) {
			where_now(tr, here);
			broke(tr, LM_ERR_STATE, "%s changes in place a tensor the host filled during the capture (from Lua "
			      "values or a file%s%s)%s%s: a replay would start from the changed values; make it with "
			      "lm.zeros / lm.full, or outside the function", fname, st->first_read[0] ? ", first read at " : "",
			      st->first_read, here[0] ? " at " : "", here);
		} else {
			st->kind = LM_STORE_STATE; /* a parameter, a buffer, a .grad: updated in place */
		}
		break;
	default: break;
	}
	st->writes++;
	return value_on(tr, si, t);
}

/* ---------------------------------------------------------------- recording */

static lmi_rec *new_rec(lm_capture *tr, lmi_rec_kind kind, const char *fname)
{
	if (tr->broke) return NULL;
	if (!grow((void **)&tr->recs, &tr->caprecs, tr->nrecs + 1, sizeof *tr->recs)) {
		broke(tr, LM_ERR_NOMEM, "capture: out of memory recording kernel %d", tr->nrecs + 1);
		return NULL;
	}
	lmi_rec *r = &tr->recs[tr->nrecs];
	memset(r, 0, sizeof *r);
	r->kind = kind;
	snprintf(r->fname, sizeof r->fname, "%s", fname ? fname : "");
	where_now(tr, r->where);
	for (int k = 0; k < LMI_EXEC_SRC; k++) r->src[k] = -1;
	for (int k = 0; k < LMI_EXEC_DST; k++) r->dst[k] = -1;
	return r;
}

static void commit(lm_capture *tr, lmi_rec *r)
{
	for (int k = 0; k < r->nsrc; k++)
		if (r->src[k] < -1) goto nomem;
	for (int k = 0; k < r->ndst; k++)
		if (r->dst[k] < -1) goto nomem;
	tr->nrecs++;
	return;
nomem:
	if (r->fused) lm_free(r->fused, sizeof *r->fused);
	r->fused = NULL;
	broke(tr, LM_ERR_NOMEM, "capture: out of memory recording kernel %d", tr->nrecs + 1);
}

/* src/dst ids: -1 absent, -2 memory */
static int rd(lm_capture *tr, const lm_tensor *t)
{
	if (!t) return -1;
	int v = read_value(tr, t);
	return v < 0 ? -2 : v;
}

static int wr(lm_capture *tr, const lm_tensor *t, const char *fname)
{
	if (!t) return -1;
	int v = write_value(tr, t, fname);
	return v < 0 ? -2 : v;
}

void lmi_capture_exec(const lmi_exec *e)
{
	lm_capture *tr = lmi_capture_cur;
	if (!tr || tr->broke) return;
	if (e->op == LMI_OP_COUNT_CORRECT) {
		char here[LMI_WHERE_MAX];
		where_now(tr, here);
		broke(tr, LM_ERR_STATE, "%s returns a count to the host%s%s: a number computed from the data cannot be "
		      "replayed; count outside the compiled function", e->fname, here[0] ? " at " : "", here);
		return;
	}
	lmi_rec *r = new_rec(tr, LMI_REC_OP, e->fname);
	if (!r) return;
	r->op = e->op;
	r->p = *e->p;
	if (e->fused) { /* a compiled call's kernel: its program is kept with the record */
		if (!(r->fused = lm_alloc(sizeof *r->fused))) {
			broke(tr, LM_ERR_NOMEM, "capture: out of memory recording kernel %d", tr->nrecs + 1);
			return;
		}
		*r->fused = *e->fused;
	}
	r->dtype = e->dtype;
	r->nsrc = e->nsrc;
	r->ndst = e->ndst;
	/* reads first: an in-place node reads its input before it writes it */
	for (int k = 0; k < e->nsrc; k++) r->src[k] = rd(tr, e->src[k]);
	for (int k = 0; k < e->ndst; k++) r->dst[k] = wr(tr, e->dst[k], e->fname);
	commit(tr, r);
}

void lmi_capture_copy(const lm_tensor *dst, const lm_tensor *src)
{
	lm_capture *tr = lmi_capture_cur;
	lmi_rec *r = tr ? new_rec(tr, LMI_REC_COPY, "copy") : NULL;
	if (!r) return;
	r->dtype = dst->dtype;
	r->nsrc = r->ndst = 1;
	r->src[0] = rd(tr, src);
	r->dst[0] = wr(tr, dst, "copy");
	commit(tr, r);
}

void lmi_capture_fill(const lm_tensor *t, double value)
{
	lm_capture *tr = lmi_capture_cur;
	lmi_rec *r = tr ? new_rec(tr, LMI_REC_FILL, "fill") : NULL;
	if (!r) return;
	r->dtype = t->dtype;
	r->value = value;
	r->ndst = 1;
	r->dst[0] = wr(tr, t, "fill");
	commit(tr, r);
}

void lmi_capture_random(const lm_tensor *t, const lmi_rng_call *c, lm_dtype gen_dt)
{
	lm_capture *tr = lmi_capture_cur;
	lmi_rec *r = tr ? new_rec(tr, LMI_REC_RANDOM, "random") : NULL;
	if (!r) return;
	r->dtype = gen_dt;
	r->rng = *c;
	r->ndst = 1;
	r->dst[0] = wr(tr, t, "random");
	commit(tr, r);
}

void lmi_capture_opaque(const char *fname, const char *why)
{
	lm_capture *tr = lmi_capture_cur;
	if (!tr || lmi_capture_depth > 0) return;
	char here[LMI_WHERE_MAX];
	where_now(tr, here);
	broke(tr, LM_ERR_STATE, "%s cannot be captured%s%s: %s", fname, here[0] ? " at " : "", here, why);
}

/* ---------------------------------------------------------------- the capture */

lm_status lm_capture_begin(int ninputs, lm_tensor *const *inputs, lm_capture_where_fn where, void *ud)
{
	if (lmi_capture_cur) return lmi_fail(LM_ERR_STATE, "capture: a capture is already running on this thread");
	if (ninputs < 0 || (ninputs && !inputs)) return lmi_fail(LM_ERR_ARG, "capture: bad input list (%d)", ninputs);
	lm_capture *tr = lm_alloc(sizeof *tr);
	if (!tr) return lm_last_status();
	memset(tr, 0, sizeof *tr);
	tr->refcount = 1;
	tr->where = where;
	tr->ud = ud;
	tr->serial0 = atomic_load(&storage_serial);
	tr->inputs = lm_alloc(sizeof(int) * (size_t)(ninputs ? ninputs : 1));
	if (!tr->inputs) {
		lm_capture_release(tr);
		return lm_last_status();
	}
	tr->ninputs = ninputs;
	for (int k = 0; k < ninputs; k++) {
		const lm_tensor *t = inputs[k];
		if (!t) {
			lm_capture_release(tr);
			return lmi_fail(LM_ERR_ARG, "capture: input %d is NULL", k + 1);
		}
		int si = storage_of(tr, t->storage);
		if (si >= 0) {
			int other = tr->sts[si].input + 1;
			lm_capture_release(tr);
			return lmi_fail(LM_ERR_ARG, "capture: inputs %d and %d share memory (views of one tensor); pass "
			                "the tensor once and take the views inside the function", other, k + 1);
		}
		si = add_storage(tr, t->storage, LM_STORE_INPUT);
		int v = si < 0 ? -1 : value_on(tr, si, t);
		if (v < 0) {
			lm_capture_release(tr);
			return lm_last_status();
		}
		tr->sts[si].input = k;
		tr->sts[si].input_offset = t->offset;
		tr->inputs[k] = v;
	}
	lmi_capture_cur = tr;
	lmi_capture_depth = 0;
	return LM_OK;
}

bool lm_capture_capturing(void) { return lmi_capture_cur != NULL; }

int lm_capture_recorded(void) { return lmi_capture_cur ? lmi_capture_cur->nrecs : -1; }

void lm_capture_break(const char *why)
{
	lm_capture *tr = lmi_capture_cur;
	if (!tr) return;
	char here[LMI_WHERE_MAX];
	where_now(tr, here);
	broke(tr, LM_ERR_STATE, "%s%s%s", why ? why : "the capture was broken", here[0] ? " at " : "", here);
}

void lm_capture_cancel(void)
{
	lm_capture *tr = lmi_capture_cur;
	lmi_capture_cur = NULL;
	lm_capture_release(tr);
}

lm_capture *lm_capture_end(int noutputs, lm_tensor *const *outputs)
{
	lm_capture *tr = lmi_capture_cur;
	if (!tr) return lmi_fail_null(LM_ERR_STATE, "capture: no capture is running on this thread");
	lmi_capture_cur = NULL;
	if (tr->broke) {
		lm_status s = tr->broke;
		char why[sizeof tr->why];
		memcpy(why, tr->why, sizeof why);
		lm_capture_release(tr);
		return lmi_fail_null(s, "%s", why);
	}
	if (noutputs < 0 || (noutputs && !outputs)) {
		lm_capture_release(tr);
		return lmi_fail_null(LM_ERR_ARG, "capture: bad output list (%d)", noutputs);
	}
	tr->outputs = lm_alloc(sizeof(int) * (size_t)(noutputs ? noutputs : 1));
	if (!tr->outputs) {
		lm_capture_release(tr);
		return NULL;
	}
	tr->noutputs = noutputs;
	for (int k = 0; k < noutputs; k++) {
		const lm_tensor *t = outputs[k];
		int si = t ? storage_of(tr, t->storage) : -1;
		if (si < 0 || (tr->sts[si].kind != LM_STORE_TEMP && tr->sts[si].kind != LM_STORE_INPUT &&
		               tr->sts[si].kind != LM_STORE_STATE)) {
			lm_capture_release(tr);
			return lmi_fail_null(LM_ERR_ARG, "capture: result %d was not computed by the function's kernels "
			                     "(a constant, or a tensor made by the host): return what the function computed",
			                     k + 1);
		}
		int v = value_on(tr, si, t);
		if (v < 0) {
			lm_capture_release(tr);
			return NULL;
		}
		tr->outputs[k] = v;
		tr->sts[si].output = true;
	}
	/* Held elsewhere: more references than the trace's own (one per value on it, one here). */
	for (int i = 0; i < tr->nsts; i++) {
		int own = 1;
		for (int v = tr->sts[i].first; v >= 0; v = tr->vals[v].next) own++;
		tr->sts[i].escapes = tr->sts[i].s->refcount > own;
	}
	return tr;
}

lm_capture *lm_capture_retain(lm_capture *t)
{
	if (t) t->refcount++;
	return t;
}

void lm_capture_release(lm_capture *tr)
{
	if (!tr || --tr->refcount > 0) return;
	for (int i = 0; i < tr->nvals; i++) lm_tensor_release(tr->vals[i].t);
	for (int i = 0; i < tr->nsts; i++) lmi_storage_release(tr->sts[i].s);
	for (int i = 0; i < tr->nrecs; i++)
		if (tr->recs[i].fused) lm_free(tr->recs[i].fused, sizeof *tr->recs[i].fused);
	if (tr->recs) lm_free(tr->recs, (size_t)tr->caprecs * sizeof *tr->recs);
	if (tr->vals) lm_free(tr->vals, (size_t)tr->capvals * sizeof *tr->vals);
	if (tr->sts) lm_free(tr->sts, (size_t)tr->capsts * sizeof *tr->sts);
	if (tr->inputs) lm_free(tr->inputs, sizeof(int) * (size_t)(tr->ninputs ? tr->ninputs : 1));
	if (tr->outputs) lm_free(tr->outputs, sizeof(int) * (size_t)(tr->noutputs ? tr->noutputs : 1));
	lm_free(tr, sizeof *tr);
}

/* t's memory as a new storage of kind `kind` (a pass's constant or temp): t's value. */
static int add_new(lm_capture *c, const lm_tensor *t, lm_store_kind kind)
{
	if (!c || !t) return lmi_fail(LM_ERR_ARG, "capture: NULL argument"), -1;
	if (storage_of(c, t->storage) >= 0)
		return lmi_fail(LM_ERR_ARG, "capture: a new %s must have memory of its own (this tensor's is already in "
		                "the capture)", kind == LM_STORE_CONST ? "constant" : "temp"), -1;
	int si = add_storage(c, t->storage, kind);
	if (si < 0) return -1;
	c->sts[si].made_here = kind == LM_STORE_TEMP;
	return value_on(c, si, t);
}

int lm_capture_add_const(lm_capture *c, const lm_tensor *t) { return add_new(c, t, LM_STORE_CONST); }

int lm_capture_add_temp(lm_capture *c, const lm_tensor *t) { return add_new(c, t, LM_STORE_TEMP); }

int lm_capture_value_of(lm_capture *c, const lm_tensor *t)
{
	if (!c || !t) return lmi_fail(LM_ERR_ARG, "capture: NULL argument"), -1;
	int si = storage_of(c, t->storage);
	if (si < 0) return lmi_fail(LM_ERR_ARG, "capture: this tensor's memory is not in the capture"), -1;
	int v = value_on(c, si, t);
	return v < 0 ? (lmi_fail(LM_ERR_NOMEM, "capture: out of memory for a value"), -1) : v;
}

lmi_rec *lmi_capture_append(lm_capture *c)
{
	if (!grow((void **)&c->recs, &c->caprecs, c->nrecs + 1, sizeof *c->recs)) {
		lmi_fail(LM_ERR_NOMEM, "capture: out of memory for a new node");
		return NULL;
	}
	lmi_rec *r = &c->recs[c->nrecs];
	memset(r, 0, sizeof *r);
	for (int k = 0; k < LMI_EXEC_SRC; k++) r->src[k] = -1;
	for (int k = 0; k < LMI_EXEC_DST; k++) r->dst[k] = -1;
	return r;
}

/* ---------------------------------------------------------------- reading it */

int lm_capture_nnodes(const lm_capture *t) { return t ? t->nrecs : 0; }
int lm_capture_nvalues(const lm_capture *t) { return t ? t->nvals : 0; }
int lm_capture_nstorages(const lm_capture *t) { return t ? t->nsts : 0; }
int lm_capture_ninputs(const lm_capture *t) { return t ? t->ninputs : 0; }
int lm_capture_noutputs(const lm_capture *t) { return t ? t->noutputs : 0; }
int lm_capture_input(const lm_capture *t, int k) { return t && k >= 0 && k < t->ninputs ? t->inputs[k] : -1; }
int lm_capture_output(const lm_capture *t, int k) { return t && k >= 0 && k < t->noutputs ? t->outputs[k] : -1; }

lm_status lm_capture_value_get(const lm_capture *t, int v, lm_capture_value *out)
{
	if (!t || !out) return lmi_fail(LM_ERR_ARG, "trace: NULL argument");
	if (v < 0 || v >= t->nvals) return lmi_fail(LM_ERR_INDEX, "trace: value %d of %d", v + 1, t->nvals);
	const lm_tensor *x = t->vals[v].t;
	memset(out, 0, sizeof *out);
	out->storage = t->vals[v].storage;
	out->dtype = x->dtype;
	out->device = x->storage->device;
	out->ndim = x->ndim;
	for (int i = 0; i < x->ndim; i++) {
		out->shape[i] = x->shape[i];
		out->stride[i] = x->stride[i];
	}
	out->offset = x->offset;
	return LM_OK;
}

lm_status lm_capture_storage_get(const lm_capture *t, int s, lm_capture_storage *out)
{
	if (!t || !out) return lmi_fail(LM_ERR_ARG, "trace: NULL argument");
	if (s < 0 || s >= t->nsts) return lmi_fail(LM_ERR_INDEX, "trace: storage %d of %d", s + 1, t->nsts);
	const lmi_tstorage *st = &t->sts[s];
	*out = (lm_capture_storage){.kind = st->kind, .input = st->input, .nbytes = st->s->nbytes,
	                          .writes = st->writes, .escapes = st->escapes, .output = st->output};
	return LM_OK;
}

lm_tensor *lm_capture_value_tensor(const lm_capture *t, int v)
{
	if (!t) return lmi_fail_null(LM_ERR_ARG, "trace: NULL argument");
	if (v < 0 || v >= t->nvals) return lmi_fail_null(LM_ERR_INDEX, "trace: value %d of %d", v + 1, t->nvals);
	const lm_tensor *x = t->vals[v].t;
	return lmi_tensor_wrap(x->storage, x->dtype, x->ndim, x->shape, x->stride, x->offset);
}
