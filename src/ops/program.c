/*
 * program.c — a capture's nodes as the public API shows them, and programs over them
 * (lumen/graph.h): steps that run a node of the trace again (through lmi_compute, the copies,
 * fills and random draws, exactly as the op ran it) or a fused group of elementwise nodes as one
 * device node (LMI_OP_FUSED, ../backend/exec.h's lmi_fused).
 *
 * Memory: a run rebinds the input storages to the caller's tensors and gives each temp storage
 * that holds a result fresh memory (a result never aliases the next run's); every other storage
 * is the captured one, reused by each run (static memory, as a CUDA graph's), and the state ones
 * (parameters, gradients, optimizer states) are updated in place as the function updated them.
 * Read next: ../core/capture.c (the recording), lua/lumen/graph.lua (the passes that make programs).
 */
#include <math.h>
#include <string.h>

#include "core/capture.h"
#include "ops.h"

/* ---------------------------------------------------------------- nodes */

static const char *const kind_names[] = {"op", "copy", "fill", "random"};

static const lmi_rec *rec_at(const lm_capture *t, int i)
{
	if (!t) return lmi_fail_null(LM_ERR_ARG, "trace: NULL trace");
	if (i < 0 || i >= t->nrecs) return lmi_fail_null(LM_ERR_INDEX, "trace: node %d of %d", i + 1, t->nrecs);
	return &t->recs[i];
}

lm_status lm_capture_node_get(const lm_capture *t, int i, lm_capture_node *out)
{
	const lmi_rec *r = rec_at(t, i);
	if (!r) return lm_last_status();
	if (!out) return lmi_fail(LM_ERR_ARG, "trace: NULL result");
	memset(out, 0, sizeof *out);
	out->kind = kind_names[r->kind];
	out->op = r->kind == LMI_REC_OP ? lmi_ops[r->op].name : out->kind;
	out->fname = r->fname;
	out->where = r->where;
	int slot = r->kind == LMI_REC_OP ? lmi_ops[r->op].slot : -1;
	out->loop = r->kind != LMI_REC_OP ? out->kind : slot >= 0 && slot < LMI_BE_OP_COUNT ? lmi_be_op_name((lmi_be_op)slot) : "copy";
	out->dtype = r->dtype;
	out->nin = r->nsrc;
	out->nout = r->ndst;
	for (int k = 0; k < LM_CAPTURE_MAX_IN; k++) out->in[k] = k < r->nsrc ? r->src[k] : -1;
	for (int k = 0; k < LM_CAPTURE_MAX_OUT; k++) out->out[k] = k < r->ndst ? r->dst[k] : -1;
	out->value = r->value;
	out->added = r->added;
	return LM_OK;
}

int lm_capture_node_nparams(const lm_capture *t, int i)
{
	const lmi_rec *r = t && i >= 0 && i < t->nrecs ? &t->recs[i] : NULL;
	return r && r->kind == LMI_REC_OP ? lmi_param_count(&lmi_ops[r->op]) : 0;
}

lm_status lm_capture_node_param(const lm_capture *t, int i, int j, lm_param *out)
{
	const lmi_rec *r = rec_at(t, i);
	if (!r) return lm_last_status();
	int n = lm_capture_node_nparams(t, i);
	if (j < 0 || j >= n || !out) return lmi_fail(LM_ERR_INDEX, "trace: parameter %d of %d of node %d", j + 1, n, i + 1);
	lmi_param_read(&lmi_ops[r->op], &r->p, j, out);
	return LM_OK;
}

lm_status lm_capture_node_set(lm_capture *t, int i, const char *name, double v)
{
	const lmi_rec *cr = rec_at(t, i);
	if (!cr) return lm_last_status();
	lmi_rec *r = &t->recs[i];
	if (r->kind != LMI_REC_OP || !name)
		return lmi_fail(LM_ERR_ARG, "trace: node %d (%s) has no parameter %s", i + 1, kind_names[r->kind],
		                name ? name : "(NULL)");
	const lmi_op_info *o = &lmi_ops[r->op];
	const lmi_param_field *f = NULL;
	for (int k = 0; k < o->nfields && !f; k++)
		if (strcmp(o->fields[k].name, name) == 0) f = &o->fields[k];
	if (!f || (f->kind != LMI_PK_FLOAT && f->kind != LMI_PK_BOOL && f->kind != LMI_PK_INT))
		return lmi_fail(LM_ERR_ARG, "trace: node %d (%s) has no number parameter %s", i + 1, o->name, name);
	char *base = (char *)&r->p;
	if (f->kind == LMI_PK_FLOAT) {
		memcpy(base + f->offset, &v, sizeof v);
	} else if (f->kind == LMI_PK_BOOL) {
		bool b = v != 0;
		memcpy(base + f->offset, &b, sizeof b);
	} else {
		if (!(v >= -9.2e18 && v <= 9.2e18) || v != floor(v))
			return lmi_fail(LM_ERR_ARG, "trace: parameter %s of node %d must be an integer, got %g", name, i + 1, v);
		int64_t x = (int64_t)v;
		memcpy(base + f->offset, &x, sizeof x);
	}
	if (r->op == LMI_OP_ADAM_STEP) { /* the bias corrections follow the step (ops/optim.c) */
		lmi_p_adam *a = &r->p.adam;
		if (a->step < 1) return lmi_fail(LM_ERR_ARG, "trace: the Adam step must be >= 1, got %lld", (long long)a->step);
		a->step_size = a->lr / (1 - pow(a->beta1, (double)a->step));
		a->bc2_sqrt = sqrt(1 - pow(a->beta2, (double)a->step));
	}
	return LM_OK;
}

static const lmi_params none_params;

static bool value_ok(const lm_capture *t, int v) { return v >= 0 && v < t->nvals; }

int lm_capture_add_node(lm_capture *c, const char *op, int like, int nin, const int *in, int nout, const int *out)
{
	if (!c || !op || (nin > 0 && !in) || (nout > 0 && !out)) return lmi_fail(LM_ERR_ARG, "capture: NULL argument"), -1;
	bool copy = strcmp(op, "copy") == 0;
	int o = copy ? -1 : lmi_op_find(op);
	if (!copy && o < 0) return lmi_fail(LM_ERR_ARG, "capture: add_node: no op named '%s'", op), -1;
	const lmi_rec *lr = like >= 0 ? rec_at(c, like) : NULL;
	if (like >= 0 && !lr) return -1;
	if (!copy && lr && (lr->kind != LMI_REC_OP || strcmp(lmi_ops[lr->op].params_name, lmi_ops[o].params_name) != 0))
		return lmi_fail(LM_ERR_ARG, "capture: add_node: %s takes parameters of another kind than node %d (%s)", op,
		                like + 1, lr->kind == LMI_REC_OP ? lmi_ops[lr->op].name : kind_names[lr->kind]), -1;
	int want_in = copy ? 1 : lmi_ops[o].arity, want_out = copy ? 1 : -1;
	if ((want_in >= 0 && nin != want_in) || nin < 0 || nin > LMI_EXEC_SRC || nout < 1 || nout > LMI_EXEC_DST ||
	    (want_out > 0 && nout != want_out))
		return lmi_fail(LM_ERR_ARG, "capture: add_node: %s with %d inputs and %d outputs", op, nin, nout), -1;
	for (int k = 0; k < nin; k++)
		if (!value_ok(c, in[k])) return lmi_fail(LM_ERR_ARG, "capture: add_node: input %d is no value", k + 1), -1;
	for (int k = 0; k < nout; k++)
		if (!value_ok(c, out[k])) return lmi_fail(LM_ERR_ARG, "capture: add_node: output %d is no value", k + 1), -1;
	const lm_tensor *t0 = c->vals[out[0]].t;
	if (copy) {
		const lm_tensor *s0 = c->vals[in[0]].t;
		bool same = s0->ndim == t0->ndim;
		for (int i = 0; same && i < t0->ndim; i++) same = s0->shape[i] == t0->shape[i];
		if (!same)
			return lmi_fail(LM_ERR_SHAPE, "capture: add_node: copy of %s into %s", lmi_shape_s(s0), lmi_shape_s(t0)), -1;
	} else {
		lmi_exec e = {.op = (lmi_op)o, .fname = op, .dtype = lr ? lr->dtype : t0->dtype, .nsrc = nin, .ndst = nout,
		              .p = lr ? &lr->p : &none_params};
		for (int k = 0; k < nin; k++) e.src[k] = c->vals[in[k]].t;
		for (int k = 0; k < nout; k++) e.dst[k] = c->vals[out[k]].t;
		if (!lmi_supports(&e)) return lmi_refuse(&e), -1;
	}
	lmi_rec *r = lmi_capture_append(c);
	if (!r) return -1;
	r->kind = copy ? LMI_REC_COPY : LMI_REC_OP;
	r->added = true;
	r->op = copy ? (lmi_op)0 : (lmi_op)o;
	if (lr && !copy) r->p = lr->p;
	r->dtype = copy ? t0->dtype : lr ? lr->dtype : t0->dtype;
	snprintf(r->fname, sizeof r->fname, "%s", op);
	if (lr) memcpy(r->where, lr->where, sizeof r->where);
	r->nsrc = nin;
	r->ndst = nout;
	for (int k = 0; k < nin; k++) r->src[k] = in[k];
	for (int k = 0; k < nout; k++) {
		r->dst[k] = out[k];
		c->sts[c->vals[out[k]].storage].writes++;
	}
	return c->nrecs++;
}

bool lm_capture_supports(const lm_capture *c, const char *op, int v)
{
	int o = op ? lmi_op_find(op) : -1;
	if (!c || o < 0 || !value_ok(c, v)) return false;
	lmi_exec e = {.op = (lmi_op)o, .fname = op, .dtype = c->vals[v].t->dtype, .nsrc = 1, .ndst = 1,
	              .p = &none_params};
	e.src[0] = e.dst[0] = c->vals[v].t;
	return lmi_supports(&e);
}

/* The loop of a node that may run inside a fused kernel, or -1. */
static int fusable_loop(const lm_capture *t, const lmi_rec *r)
{
	if (r->kind != LMI_REC_OP || r->ndst != 1) return -1;
	lmi_exec e = {.op = r->op, .p = &r->p};
	int code, loop = -1;
	double p0, p1;
	if (lmi_exec_unary(&e, &code, &p0, &p1))
		loop = LMI_BE_OP_unary;
	else if (r->op >= LMI_OP_ADD && r->op < LMI_OP_FLOOR_DIVIDE)
		loop = LMI_BE_OP_binary;
	else if (r->op == LMI_OP_WHERE)
		loop = LMI_BE_OP_where;
	else if (r->op == LMI_OP_ADD_SCALED)
		loop = LMI_BE_OP_add_scaled;
	if (loop < 0) return -1;
	const lm_tensor *out = t->vals[r->dst[0]].t;
	for (int k = 0; k < r->nsrc; k++) { /* in place: not fused */
		if (r->src[k] < 0) return -1;
		if (t->vals[r->src[k]].storage == t->vals[r->dst[0]].storage) return -1;
		lm_dtype d = t->vals[r->src[k]].t->dtype;
		if (lmi_dtypes[d].compute_as != d || lmi_is_block(d)) return -1;
	}
	if (lmi_dtypes[out->dtype].compute_as != out->dtype) return -1;
	lm_tensor *dst[1] = {(lm_tensor *)out};
	lmi_exec f = {.op = LMI_OP_FUSED, .p = r ? &r->p : NULL, .fname = "fused", .dtype = out->dtype, .ndst = 1};
	f.dst[0] = dst[0];
	return lmi_supports(&f) ? loop : -1;
}

bool lm_capture_node_fusable(const lm_capture *t, int i)
{
	return t && i >= 0 && i < t->nrecs && fusable_loop(t, &t->recs[i]) >= 0;
}

/* ---------------------------------------------------------------- programs */

/* A fused kernel of a program and the values it reads and writes. */
typedef struct fgroup {
	lmi_fused f;
	int fin[LMI_ITER_MAX_OPS];    /* its operands: values, outputs first */
	bool view[LMI_ITER_MAX_OPS];  /* seen through a view at the group's shape (or 0-d): restride */
	int gndim;                    /* the group's shape */
	int64_t gshape[LM_MAX_DIMS];
	int nops;
} fgroup;

/*
 * A step: a node of the trace; or a fused group (pre); or an anchor with its fused neighbours,
 * run as one kernel: a reduction whose prologue (pre) ends in it, or a node (a reduction, a
 * product: matmul, mm, the Winograd convolution) followed by an epilogue (post) over its result —
 * a product's in panels of rows (dim 0) small enough to stay in the cache between the two.
 */
typedef struct pstep {
	int node;                     /* a node of the trace, or -1 */
	int in[LMI_EXEC_SRC], out[LMI_EXEC_DST];
	fgroup *pre, *post;
	int slice[LMI_EXEC_SRC];      /* a product's inputs cut with its rows (1) or whole (0) */
	int64_t panel;                /* rows per panel (0: all at once) */
	int64_t scale;                /* the product's rows per row of its epilogue (1; NHWC: H*W) */
	int64_t bytes_read, bytes_written;
} pstep;

struct lm_program {
	lm_capture *t;
	pstep *steps;
	int nsteps, cap;
	int *outputs;
	int noutputs;
};

lm_program *lm_program_new(lm_capture *t)
{
	if (!t) return lmi_fail_null(LM_ERR_ARG, "program: NULL trace");
	lm_program *p = lm_alloc(sizeof *p);
	if (!p) return NULL;
	memset(p, 0, sizeof *p);
	p->noutputs = t->noutputs;
	p->outputs = lm_alloc(sizeof(int) * (size_t)(t->noutputs ? t->noutputs : 1));
	if (!p->outputs) {
		lm_free(p, sizeof *p);
		return NULL;
	}
	for (int k = 0; k < t->noutputs; k++) p->outputs[k] = t->outputs[k];
	p->t = lm_capture_retain(t);
	return p;
}

void lm_program_release(lm_program *p)
{
	if (!p) return;
	for (int i = 0; i < p->nsteps; i++) {
		if (p->steps[i].pre) lm_free(p->steps[i].pre, sizeof *p->steps[i].pre);
		if (p->steps[i].post) lm_free(p->steps[i].post, sizeof *p->steps[i].post);
	}
	if (p->steps) lm_free(p->steps, (size_t)p->cap * sizeof *p->steps);
	lm_free(p->outputs, sizeof(int) * (size_t)(p->t->noutputs ? p->t->noutputs : 1));
	lm_capture_release(p->t);
	lm_free(p, sizeof *p);
}

int lm_program_nsteps(const lm_program *p) { return p ? p->nsteps : 0; }

static pstep *new_step(lm_program *p)
{
	if (p->nsteps == p->cap) {
		int nc = p->cap ? p->cap * 2 : 32;
		pstep *q = lm_alloc((size_t)nc * sizeof *q);
		if (!q) return NULL;
		if (p->steps) {
			memcpy(q, p->steps, (size_t)p->cap * sizeof *q);
			lm_free(p->steps, (size_t)p->cap * sizeof *q);
		}
		p->steps = q;
		p->cap = nc;
	}
	pstep *s = &p->steps[p->nsteps];
	memset(s, 0, sizeof *s);
	s->node = -1;
	for (int k = 0; k < LMI_EXEC_SRC; k++) s->in[k] = -1;
	for (int k = 0; k < LMI_EXEC_DST; k++) s->out[k] = -1;
	return s;
}

/* The bytes value v spans (a broadcast dim once). */
static int64_t span_bytes(const lm_capture *t, int v)
{
	if (v < 0) return 0;
	const lm_tensor *x = t->vals[v].t;
	int64_t n = 1;
	for (int i = 0; i < x->ndim; i++)
		if (x->stride[i] != 0 || x->shape[i] == 0) n *= x->shape[i];
	const lm_dtype_traits *d = &lmi_dtypes[x->dtype];
	return n / (d->block_size > 1 ? d->block_size : 1) * (int64_t)d->type_size;
}


/* A substitute for value v must look like it. */
static lm_status check_same(const lm_capture *t, int node, const char *what, int k, int v, int w)
{
	if (v == w) return LM_OK;
	if (v < 0 || !value_ok(t, w))
		return lmi_fail(LM_ERR_ARG, "program: node %d's %s %d: value %d is not one of the trace's %d values", node + 1,
		                what, k + 1, w + 1, t->nvals);
	const lm_tensor *a = t->vals[v].t, *b = t->vals[w].t;
	bool same = a->dtype == b->dtype && a->ndim == b->ndim && a->storage->device == b->storage->device;
	for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == b->shape[i];
	if (!same)
		return lmi_fail(LM_ERR_ARG, "program: node %d's %s %d is %s %s; value %d is %s %s", node + 1, what, k + 1,
		                lmi_shape_s(a), lm_dtype_name(a->dtype), w + 1, lmi_shape_s(b), lm_dtype_name(b->dtype));
	return LM_OK;
}

lm_status lm_program_add_node(lm_program *p, int node, const int *in, const int *out)
{
	if (!p) return lmi_fail(LM_ERR_ARG, "program: NULL program");
	const lmi_rec *r = rec_at(p->t, node);
	if (!r) return lm_last_status();
	lm_status s;
	for (int k = 0; k < r->nsrc; k++)
		if (in && (s = check_same(p->t, node, "input", k, r->src[k], in[k]))) return s;
	for (int k = 0; k < r->ndst; k++)
		if (out && (s = check_same(p->t, node, "output", k, r->dst[k], out[k]))) return s;
	pstep *st = new_step(p);
	if (!st) return lm_last_status();
	st->node = node;
	for (int k = 0; k < r->nsrc; k++) st->in[k] = in ? in[k] : r->src[k];
	for (int k = 0; k < r->ndst; k++) st->out[k] = out ? out[k] : r->dst[k];
	/* each distinct operand once */
	for (int k = 0; k < r->nsrc; k++) {
		bool seen = false;
		for (int j = 0; j < k; j++) seen |= st->in[j] == st->in[k];
		if (!seen) st->bytes_read += span_bytes(p->t, st->in[k]);
	}
	for (int k = 0; k < r->ndst; k++) st->bytes_written += span_bytes(p->t, st->out[k]);
	p->nsteps++;
	return LM_OK;
}

static bool same_shape(const lm_tensor *a, const lm_tensor *b)
{
	if (a->ndim != b->ndim) return false;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != b->shape[i]) return false;
	return true;
}

static int64_t numel_of(const lm_tensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
	return n;
}

/* Whether v holds the group's elements in C order under another shape (a reshape of a full-size
 * contiguous value): the kernel reads and writes it through a view at the group's shape, element
 * for element by flat index. */
/*
 * The strides at which shape (nd, shape) shows v's elements in v's order, as a view would (a
 * reshape without a copy): false when no strides can. v's dims are taken in runs that are
 * contiguous with each other (a run of an NHWC tensor's H and W is one); each run must be made of
 * whole dims of the new shape.
 */
static bool restride(const lm_tensor *v, int nd, const int64_t *shape, int64_t *out)
{
	int64_t n = 1;
	for (int i = 0; i < nd; i++) n *= shape[i];
	if (n != numel_of(v)) return false;
	if (n == 0 || v->ndim == 0) {
		lmi_contiguous_strides(nd, shape, out);
		return true;
	}
	int d = nd - 1;
	int64_t base = v->stride[v->ndim - 1], run = 1;
	for (int i = v->ndim - 1; i >= 0; i--) {
		run *= v->shape[i];
		bool ends = i == 0 || (v->shape[i - 1] != 1 && v->stride[i - 1] != run * base);
		if (!ends) continue;
		int64_t got = 1;
		while (d >= 0 && (got < run || shape[d] == 1)) {
			out[d] = got * base;
			got *= shape[d--];
		}
		if (got != run) return false;
		if (i > 0) {
			base = v->stride[i - 1];
			run = 1;
		}
	}
	return d < 0;
}

/* Whether v holds the elements of a value of g's shape, in order (a reshape of it). */
static bool reshaped_to(const lm_tensor *v, const lm_tensor *g)
{
	int64_t st[LM_MAX_DIMS];
	return restride(v, g->ndim, g->shape, st);
}

/* Two views of the same memory showing the same elements in the same order. */
static bool dense_alias(const lm_tensor *a, const lm_tensor *b)
{
	int64_t st[LM_MAX_DIMS];
	if (a->storage != b->storage || a->offset != b->offset || a->dtype != b->dtype || !restride(a, b->ndim, b->shape, st))
		return false;
	for (int i = 0; i < b->ndim; i++)
		if (b->shape[i] > 1 && st[i] != b->stride[i]) return false;
	return true;
}

/* Whether value v's shape broadcasts to shape (ndim, shape). */
static bool broadcasts_to(const lm_tensor *v, const lm_tensor *g)
{
	if (v->ndim > g->ndim) return false;
	for (int i = 0; i < v->ndim; i++) {
		int64_t a = v->shape[v->ndim - 1 - i], b = g->shape[g->ndim - 1 - i];
		if (a != b && a != 1) return false;
	}
	return true;
}

/*
 * Makes the fused kernel of nodes (elementwise, in order; ins[k]: node k's inputs after the
 * substitutions, NULL its own; outs[k] the value node k writes, -1 (or outs NULL) its own) writing
 * the values of mat. red (may be NULL): the reduction the
 * kernel ends in, reading value red_in; its result is the last of mat and the group's shape is
 * red_in's.
 */
static lm_status build_group(const lm_capture *t, int nnodes, const int *nodes, const int *const *ins, const int *outs,
                             int nmat, const int *mat, const lmi_rec *red, int red_in, fgroup **out, int64_t *br,
                             int64_t *bw)
{
	*out = NULL;
	if (nnodes < (red ? 0 : 1) || nnodes > LMI_FUSED_MAX_INSTR || (nnodes && !nodes))
		return lmi_fail(LM_ERR_ARG, "program: a fused group takes 1 to %d nodes, got %d", LMI_FUSED_MAX_INSTR, nnodes);
	if (nmat < 1 || nmat > LMI_FUSED_MAX_OUT || !mat)
		return lmi_fail(LM_ERR_ARG, "program: a fused group writes 1 to %d values, got %d", LMI_FUSED_MAX_OUT, nmat);
	for (int k = 0; k < nmat; k++)
		if (!value_ok(t, mat[k])) return lmi_fail(LM_ERR_ARG, "program: fused output %d is not a value", k + 1);
	/* the group's shape: the first member result with the most elements (lua/lumen/graph.lua's fuse
	 * picks it the same way) */
	const lm_tensor *g = red ? t->vals[red_in].t : NULL;
	for (int n = 0; n < nnodes && !red; n++) {
		const lmi_rec *r = rec_at(t, nodes[n]);
		if (!r) return lm_last_status();
		if (r->ndst < 1 || r->dst[0] < 0) continue;
		const lm_tensor *w = t->vals[outs && outs[n] >= 0 ? outs[n] : r->dst[0]].t;
		if (!g || numel_of(w) > numel_of(g)) g = w;
	}
	if (!g) return lmi_fail(LM_ERR_ARG, "program: a fused group of nodes without results");
	fgroup *gr = lm_alloc(sizeof *gr);
	if (!gr) return lm_last_status();
	memset(gr, 0, sizeof *gr);
	lmi_fused *f = &gr->f;
	int ops[LMI_ITER_MAX_OPS];
	int made[LMI_FUSED_MAX_INSTR], ref_of[LMI_FUSED_MAX_INSTR], nmade = 0; /* value -> its reference */
	lm_status s = LM_OK;
	f->nout = nmat;
	bool view[LMI_ITER_MAX_OPS] = {0}; /* operands seen through a view at the group's shape */
	for (int k = 0; k < nmat && !s; k++) {
		ops[k] = mat[k];
		if (red && k == nmat - 1) continue; /* the reduction's result */
		if (same_shape(t->vals[mat[k]].t, g)) continue;
		if (reshaped_to(t->vals[mat[k]].t, g))
			view[k] = true;
		else
			s = lmi_fail(LM_ERR_SHAPE, "program: fused outputs %s and %s differ in shape", lmi_shape_s(g),
			             lmi_shape_s(t->vals[mat[k]].t));
	}
	int nops = nmat;
	for (int n = 0; n < nnodes && !s; n++) {
		const lmi_rec *r = rec_at(t, nodes[n]);
		int loop = r ? fusable_loop(t, r) : -1;
		if (loop < 0) {
			s = r ? lmi_fail(LM_ERR_ARG, "program: node %d (%s) cannot run in a fused kernel", nodes[n] + 1,
			                 r->kind == LMI_REC_OP ? lmi_ops[r->op].name : kind_names[r->kind])
			      : lm_last_status();
			break;
		}
		lmi_fused_instr *in = &f->instr[f->ninstr++];
		in->loop = loop;
		in->nin = r->nsrc;
		lmi_exec e = {.op = r->op, .p = &r->p};
		if (loop == LMI_BE_OP_unary) lmi_exec_unary(&e, &in->code, &in->p0, &in->p1);
		if (loop == LMI_BE_OP_binary) in->code = (int)(r->op - LMI_OP_ADD);
		if (loop == LMI_BE_OP_add_scaled) in->p0 = r->p.add_scaled.alpha;
		/* a member whose result is the group's elements under another shape reads only what has
		 * them too (or one number): a small input broadcast to its shape would not broadcast to the
		 * group's the same way */
		int w = outs && outs[n] >= 0 ? outs[n] : r->dst[0];
		if ((s = check_same(t, nodes[n], "output", 0, r->dst[0], w))) break;
		bool reshaped = !broadcasts_to(t->vals[w].t, g);
		for (int k = 0; k < r->nsrc && !s; k++) {
			int v = ins && ins[n] ? ins[n][k] : r->src[k];
			if ((s = check_same(t, nodes[n], "input", k, r->src[k], v))) break;
			int ref = -1;
			for (int j = nmade - 1; j >= 0 && ref < 0; j--)
				if (made[j] == v || (numel_of(t->vals[made[j]].t) == numel_of(g) &&
				                     dense_alias(t->vals[made[j]].t, t->vals[v].t)))
					ref = ref_of[j];
			if (ref >= 0 && reshaped && numel_of(t->vals[v].t) != numel_of(g))
				s = lmi_fail(LM_ERR_SHAPE, "program: fused node %d reshapes the group's elements but reads %s",
				             nodes[n] + 1, lmi_shape_s(t->vals[v].t));
			for (int j = nmat; j < nops && ref < 0; j++)
				if (ops[j] == v) ref = j;
			if (ref < 0) { /* read from memory: a kernel input, which no member may write */
				for (int j = 0; j < nnodes && !s; j++) {
					int wj = outs && outs[j] >= 0 ? outs[j] : t->recs[nodes[j]].dst[0];
					if (t->vals[wj].storage == t->vals[v].storage)
						s = lmi_fail(LM_ERR_ARG, "program: fused node %d reads value %d from memory that node %d of the "
						             "group writes", nodes[n] + 1, v + 1, nodes[j] + 1);
				}
				const lm_tensor *vt = t->vals[v].t;
				bool direct = broadcasts_to(vt, g) && !reshaped;
				bool one = numel_of(vt) == 1, full = reshaped_to(vt, g);
				if (!s && !direct && !one && !full)
					s = lmi_fail(LM_ERR_SHAPE, "program: fused input %s does not broadcast to the group's %s",
					             lmi_shape_s(vt), lmi_shape_s(g));
				view[nops] = !direct;
				if (!s && (nops == LMI_ITER_MAX_OPS || nops - nmat == LMI_EXEC_SRC))
					s = lmi_fail(LM_ERR_ARG, "program: a fused kernel takes at most %d inputs and %d operands in "
					             "all", LMI_EXEC_SRC, LMI_ITER_MAX_OPS);
				if (s) break;
				ops[nops] = v;
				ref = nops++;
			}
			in->in[k] = ref;
		}
		if (s) break;
		const lm_tensor *wt = t->vals[w].t;
		in->out_dtype = wt->dtype;
		in->dtype = loop == LMI_BE_OP_binary ? t->vals[r->src[0]].t->dtype : wt->dtype;
		int ref = -1;
		for (int k = 0; k < nmat; k++)
			if (mat[k] == w) ref = k;
		if (ref < 0) {
			if (f->nregs == LMI_FUSED_MAX_REGS) {
				s = lmi_fail(LM_ERR_ARG, "program: a fused kernel holds at most %d values in registers",
				             LMI_FUSED_MAX_REGS);
				break;
			}
			if (!broadcasts_to(wt, g) && !reshaped_to(wt, g)) {
				s = lmi_fail(LM_ERR_SHAPE, "program: fused node %d's result %s does not broadcast to the group's %s",
				             nodes[n] + 1, lmi_shape_s(wt), lmi_shape_s(g));
				break;
			}
			f->reg_dtype[f->nregs] = wt->dtype;
			ref = LMI_FUSED_REG + f->nregs++;
		}
		in->out = ref;
		made[nmade] = w;
		ref_of[nmade++] = ref;
	}
	if (red && !s) { /* what the reduction reads: a member's result, or an input */
		int ref = -1;
		for (int j = nmade - 1; j >= 0 && ref < 0; j--)
			if (made[j] == red_in) ref = ref_of[j];
		for (int j = nmat; j < nops && ref < 0; j++)
			if (ops[j] == red_in) ref = j;
		if (ref < 0 && nops == LMI_ITER_MAX_OPS)
			s = lmi_fail(LM_ERR_ARG, "program: a fused kernel takes at most %d operands", LMI_ITER_MAX_OPS);
		if (ref < 0 && !s) {
			ops[nops] = red_in;
			ref = nops++;
		}
		lmi_exec e = {.op = red->op, .p = &red->p};
		uint32_t mask;
		double rp;
		f->red = 1 + (int)lmi_exec_reduce(&e, &mask, &rp);
		f->red_in = ref;
		f->red_dtype = g->dtype;
		f->red_ndim = g->ndim;
		f->red_keep = g->ndim;
		for (int d = 0; d < g->ndim; d++) {
			f->red_shape[d] = g->shape[d];
			if (mask & (1u << d) && f->red_keep == g->ndim) f->red_keep = d;
		}
	}
	for (int k = 0; k < nmat - (red ? 1 : 0) && !s; k++) { /* every output is some member's result */
		bool found = false;
		for (int j = 0; j < nmade; j++) found |= made[j] == mat[k];
		if (!found) s = lmi_fail(LM_ERR_ARG, "program: fused output value %d is no member's result", mat[k] + 1);
	}
	if (s) {
		lm_free(gr, sizeof *gr);
		return s;
	}
	gr->gndim = g->ndim;
	for (int i = 0; i < g->ndim; i++) gr->gshape[i] = g->shape[i];
	f->nin = nops - nmat;
	gr->nops = nops;
	for (int k = 0; k < nops; k++) {
		gr->fin[k] = ops[k];
		gr->view[k] = view[k];
	}
	for (int k = nmat; k < nops; k++) *br += span_bytes(t, ops[k]);
	for (int k = 0; k < nmat; k++) *bw += span_bytes(t, ops[k]);
	*out = gr;
	return LM_OK;
}

/*
 * What a node that is not elementwise can be to a fused group: 1, a reduction a prologue may end
 * in and an epilogue follow (sum, mean, amax or amin of a contiguous float input over its last
 * dims — size-1 dims aside — into a contiguous result of its dtype); 2, a product an epilogue may
 * follow in panels of rows (matmul, mm, the Winograd convolution); 0, neither.
 */
static int anchor_kind(const lm_capture *t, const lmi_rec *r)
{
	if (r->kind != LMI_REC_OP || r->ndst != 1 || r->dst[0] < 0) return 0;
	const lm_tensor *o = t->vals[r->dst[0]].t;
	for (int k = 0; k < r->nsrc; k++) /* in place: no */
		if (r->src[k] >= 0 && t->vals[r->src[k]].storage == t->vals[r->dst[0]].storage) return 0;
	if (r->op == LMI_OP_SUM || r->op == LMI_OP_MEAN || r->op == LMI_OP_AMAX || r->op == LMI_OP_AMIN) {
		if (r->nsrc != 1 || r->src[0] < 0) return 0;
		const lm_tensor *x = t->vals[r->src[0]].t;
		if ((x->dtype != LM_FLOAT32 && x->dtype != LM_FLOAT64) || o->dtype != x->dtype) return 0;
		if (!lm_tensor_is_contiguous(x) || !lm_tensor_is_contiguous(o)) return 0;
		lmi_exec e = {.op = r->op, .p = &r->p};
		uint32_t mask;
		double rp;
		lmi_exec_reduce(&e, &mask, &rp);
		int64_t R = 1;
		bool seen = false;
		for (int d = 0; d < x->ndim; d++) {
			if (mask & (1u << d)) {
				seen = true;
				R *= x->shape[d];
			} else if (seen && x->shape[d] != 1) {
				return 0; /* a kept dim inside the reduced ones */
			}
		}
		if (!seen || R < 2 || lm_tensor_numel(x) == 0) return 0;
	} else if (r->op == LMI_OP_MATMUL || r->op == LMI_OP_MM) {
		if (o->ndim < 2 || o->shape[0] < 1) return 0;
	} else if (r->op == LMI_OP_CONV2D_WINOGRAD) {
		if (o->ndim != 4 || o->shape[0] < 1) return 0;
	} else {
		return 0;
	}
	lmi_exec f = {.op = LMI_OP_FUSED, .p = &r->p, .fname = "fused", .dtype = o->dtype, .ndst = 1};
	f.dst[0] = (lm_tensor *)o;
	return lmi_supports(&f) ? (r->op >= LMI_OP_SUM && r->op <= LMI_OP_AMIN ? 1 : 2) : 0;
}

const char *lm_capture_node_anchor(const lm_capture *t, int i)
{
	if (!t || i < 0 || i >= t->nrecs) return NULL;
	switch (anchor_kind(t, &t->recs[i])) {
	case 1: return "reduce";
	case 2: return "product";
	default: return NULL;
	}
}

#define PANEL_BYTES ((int64_t)256 << 10) /* a product's result rows between it and its epilogue */

lm_status lm_program_add_fused(lm_program *p, int nnodes, const int *nodes, const int *const *ins, const int *outs,
                               int nmat, const int *mat)
{
	if (!p) return lmi_fail(LM_ERR_ARG, "program: NULL program");
	const lm_capture *t = p->t;
	if (nnodes < 1 || nnodes > LMI_FUSED_MAX_INSTR + 1 || !nodes)
		return lmi_fail(LM_ERR_ARG, "program: a fused group takes 1 to %d nodes, got %d", LMI_FUSED_MAX_INSTR, nnodes);
	if (nmat < 1 || nmat > 2 * LMI_FUSED_MAX_OUT || !mat)
		return lmi_fail(LM_ERR_ARG, "program: a fused group writes 1 to %d values, got %d", 2 * LMI_FUSED_MAX_OUT,
		                nmat);
	int a = -1; /* the anchor */
	for (int n = 0; n < nnodes; n++) {
		const lmi_rec *r = rec_at(t, nodes[n]);
		if (!r) return lm_last_status();
		if (fusable_loop(t, r) >= 0) continue;
		if (a >= 0 || !anchor_kind(t, r))
			return lmi_fail(LM_ERR_ARG, "program: node %d (%s) cannot run in a fused kernel%s", nodes[n] + 1,
			                r->kind == LMI_REC_OP ? lmi_ops[r->op].name : kind_names[r->kind],
			                a >= 0 ? " (a group has one reduction or product)" : "");
		a = n;
	}
	int64_t br = 0, bw = 0, scale = 1;
	lm_status s;
	fgroup *pre = NULL, *post = NULL;
	if (a < 0) {
		if (nmat > LMI_FUSED_MAX_OUT)
			return lmi_fail(LM_ERR_ARG, "program: a fused group writes 1 to %d values, got %d", LMI_FUSED_MAX_OUT, nmat);
		if ((s = build_group(t, nnodes, nodes, ins, outs, nmat, mat, NULL, -1, &pre, &br, &bw))) return s;
		pstep *st = new_step(p);
		if (!st) {
			lm_free(pre, sizeof *pre);
			return lm_last_status();
		}
		st->pre = pre;
		st->bytes_read = br;
		st->bytes_written = bw;
		p->nsteps++;
		return LM_OK;
	}
	const lmi_rec *ar = &t->recs[nodes[a]];
	int kind = anchor_kind(t, ar), npre = a, npost = nnodes - a - 1, res = ar->dst[0];
	if (kind == 2 && npre)
		return lmi_fail(LM_ERR_ARG, "program: a product (node %d, %s) takes an epilogue, not a prologue", nodes[a] + 1,
		                lmi_ops[ar->op].name);
	if (!npre && !npost)
		return lmi_fail(LM_ERR_ARG, "program: node %d (%s) alone is not a fused group", nodes[a] + 1,
		                lmi_ops[ar->op].name);
	int ain[LMI_EXEC_SRC];
	for (int k = 0; k < ar->nsrc; k++) {
		ain[k] = ins && ins[a] ? ins[a][k] : ar->src[k];
		if ((s = check_same(t, nodes[a], "input", k, ar->src[k], ain[k]))) return s;
	}
	/* the values each part writes: a member's result belongs to its part; the anchor's result is
	 * written (it is in memory whatever happens), counted when something else reads it */
	int pm[LMI_FUSED_MAX_OUT + 1], qm[LMI_FUSED_MAX_OUT], npm = 0, nqm = 0;
	bool res_needed = false;
	for (int k = 0; k < nmat; k++) {
		if (mat[k] == res) {
			res_needed = true;
			continue;
		}
		bool in_pre = false, in_post = false;
		for (int n = 0; n < nnodes; n++) {
			int w = outs && outs[n] >= 0 ? outs[n] : t->recs[nodes[n]].dst[0];
			if (w == mat[k] && n < a) in_pre = true;
			if (w == mat[k] && n > a) in_post = true;
		}
		if (!in_pre && !in_post)
			return lmi_fail(LM_ERR_ARG, "program: fused output value %d is no member's result", mat[k] + 1);
		if (in_pre ? npm == LMI_FUSED_MAX_OUT : nqm == LMI_FUSED_MAX_OUT)
			return lmi_fail(LM_ERR_ARG, "program: a fused kernel writes at most %d values", LMI_FUSED_MAX_OUT);
		if (in_pre)
			pm[npm++] = mat[k];
		else
			qm[nqm++] = mat[k];
	}
	if (npost && !nqm)
		return lmi_fail(LM_ERR_ARG, "program: the epilogue of node %d writes nothing", nodes[a] + 1);
	pstep *st = NULL;
	int64_t rspan = span_bytes(t, res);
	if (npre) {
		pm[npm++] = res;
		if ((s = build_group(t, npre, nodes, ins, outs, npm, pm, ar, ain[0], &pre, &br, &bw))) return s;
		bw -= rspan;
	}
	if (npost && (s = build_group(t, npost, nodes + a + 1, ins ? ins + a + 1 : NULL,
	                              outs ? outs + a + 1 : NULL, nqm, qm, NULL, -1, &post, &br, &bw))) {
		if (pre) lm_free(pre, sizeof *pre);
		return s;
	}
	if (post) {
		for (int k = post->f.nout; k < post->nops; k++)
			if (post->fin[k] == res) br -= rspan;
		if (kind == 2) {
			const lm_tensor *o = t->vals[res].t;
			/* over its result, maybe reshaped with the rows first (contiguous: the same flat order) */
			int64_t n = 1;
			for (int i = 0; i < post->gndim; i++) n *= post->gshape[i];
			bool same = post->gndim == o->ndim;
			for (int i = 0; same && i < o->ndim; i++) same = post->gshape[i] == o->shape[i];
			if (!same)
				same = post->gndim > 0 && post->gshape[0] == o->shape[0] && n == lm_tensor_numel(o) &&
				       lm_tensor_is_contiguous(o);
			/* and it reads the result in the result's order (not transposed): a row of one is a row
			 * of the other */
			for (int k = post->f.nout; same && k < post->nops; k++) {
				const lm_tensor *v = t->vals[post->fin[k]].t;
				if (v->storage == o->storage && !dense_alias(o, v)) same = false;
			}
			/* or over rows of it: a channels-last product (N*H*W, K) read as (N, K, H*W), each
			 * row of the epilogue `scale` rows of the product (every view of it steps so) */
			if (!same && post->gndim > 0 && o->ndim > 0 && post->gshape[0] > 0 && n == lm_tensor_numel(o) &&
			    lm_tensor_is_contiguous(o) && o->shape[0] % post->gshape[0] == 0) {
				scale = o->shape[0] / post->gshape[0];
				same = true;
				for (int k = post->f.nout; k < post->nops; k++) {
					const lm_tensor *v = t->vals[post->fin[k]].t;
					if (v->storage != o->storage) continue;
					same &= !post->view[k] && v->ndim == post->gndim && v->offset == o->offset &&
					        v->stride[0] == scale * o->stride[0];
				}
				if (!same) scale = 1;
			}
			if (!same) {
				lm_free(post, sizeof *post);
				return lmi_fail(LM_ERR_SHAPE, "program: the epilogue of node %d (%s) runs over %s, not its result's %s",
				                nodes[a] + 1, lmi_ops[ar->op].name, lmi_shape_s(t->vals[qm[0]].t), lmi_shape_s(o));
			}
		}
	}
	if (!(st = new_step(p))) {
		if (pre) lm_free(pre, sizeof *pre);
		if (post) lm_free(post, sizeof *post);
		return lm_last_status();
	}
	st->pre = pre;
	st->post = post;
	if (!npre) { /* the anchor runs as itself */
		st->node = nodes[a];
		for (int k = 0; k < ar->nsrc; k++) {
			bool seen = false;
			st->in[k] = ain[k];
			for (int j = 0; j < k; j++) seen |= ain[j] == ain[k];
			if (!seen) br += span_bytes(t, ain[k]);
		}
		st->out[0] = res;
	}
	if (res_needed) bw += rspan;
	if (kind == 2) {
		const lm_tensor *o = t->vals[res].t;
		int64_t row = rspan / o->shape[0];
		st->scale = scale;
		st->panel = row > 0 ? PANEL_BYTES / row : o->shape[0];
		st->panel -= st->panel % scale; /* whole rows of the epilogue */
		if (st->panel < scale) st->panel = scale;
		if (st->panel >= o->shape[0]) st->panel = 0;
		for (int k = 0; k < ar->nsrc; k++) /* an epilogue writing what a later panel reads: at once */
			for (int j = 0; j < post->f.nout && ain[k] >= 0; j++)
				if (t->vals[post->fin[j]].storage == t->vals[ain[k]].storage) st->panel = 0;
		for (int k = 0; k < ar->nsrc; k++) {
			const lm_tensor *x = ain[k] >= 0 ? t->vals[ain[k]].t : NULL;
			st->slice[k] = x && (ar->op == LMI_OP_CONV2D_WINOGRAD || o->ndim == 2
			                         ? k == 0
			                         : x->ndim == o->ndim && x->shape[0] == o->shape[0] && x->stride[0] != 0);
		}
	}
	st->bytes_read = br;
	st->bytes_written = bw;
	p->nsteps++;
	return LM_OK;
}

lm_status lm_program_set_output(lm_program *p, int k, int v)
{
	if (!p) return lmi_fail(LM_ERR_ARG, "program: NULL program");
	if (k < 0 || k >= p->noutputs)
		return lmi_fail(LM_ERR_INDEX, "program: result %d of %d", k + 1, p->noutputs);
	lm_status s = check_same(p->t, -1, "result", k, p->t->outputs[k], v);
	if (s) return s;
	p->outputs[k] = v;
	return LM_OK;
}

lm_status lm_program_cost(const lm_program *p, lm_program_info *info)
{
	if (!p || !info) return lmi_fail(LM_ERR_ARG, "program: NULL argument");
	memset(info, 0, sizeof *info);
	for (int i = 0; i < p->nsteps; i++) {
		info->kernels++;
		info->bytes_read += p->steps[i].bytes_read;
		info->bytes_written += p->steps[i].bytes_written;
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- running */

typedef struct run_state {
	const lm_capture *t;
	lm_tensor **cur; /* per value: its tensor in this run (NULL: the captured one) */
} run_state;

static lm_tensor *T(const run_state *rs, int v)
{
	if (v < 0) return NULL;
	return rs->cur[v] ? rs->cur[v] : rs->t->vals[v].t;
}

/* x's rows [r0, r1) of dim 0 (+1), or x itself (+1) when n is 0. */
static lm_tensor *rows_of(lm_tensor *x, int64_t r0, int64_t r1, bool cut)
{
	if (!cut) return lm_tensor_retain(x);
	int64_t shape[LM_MAX_DIMS];
	for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
	shape[0] = r1 - r0;
	return lmi_tensor_wrap(x->storage, x->dtype, x->ndim, shape, x->stride, x->offset + r0 * x->stride[0]);
}

/* Runs fused kernel gr; on rows [r0, r1) of the group's dim 0 when r1 > 0 (an epilogue's panel:
 * the operands that have that dim cut, the others, broadcast along it, whole). */
static lm_status run_fused(const run_state *rs, const fgroup *gr, int64_t r0, int64_t r1)
{
	lmi_exec e = {.op = LMI_OP_FUSED, .fname = "fused", .fused = &gr->f};
	static const lmi_params none;
	e.p = &none;
	e.ndst = gr->f.nout;
	e.nsrc = gr->f.nin;
	if (e.nsrc > LMI_EXEC_SRC) return lmi_fail(LM_ERR_INTERNAL, "fused: %d inputs", e.nsrc);
	lm_tensor *tmp[LMI_ITER_MAX_OPS] = {0}, *x[LMI_ITER_MAX_OPS];
	lm_status s = LM_OK;
	int64_t stride[LM_MAX_DIMS], n = 1;
	for (int i = 0; i < gr->gndim; i++) n *= gr->gshape[i];
	for (int k = 0; k < gr->nops && !s; k++) {
		lm_tensor *v = T(rs, gr->fin[k]);
		if (gr->view[k]) {
			bool one = lm_tensor_numel(v) == 1 && n != 1;
			if (!one && !restride(v, gr->gndim, gr->gshape, stride)) {
				s = lmi_fail(LM_ERR_INTERNAL, "fused: operand %s cannot be seen at the group's shape", lmi_shape_s(v));
				break;
			}
			v = lmi_tensor_wrap(v->storage, v->dtype, one ? 0 : gr->gndim, gr->gshape, stride, v->offset);
		} else {
			v = lm_tensor_retain(v);
		}
		if (v && r1 > 0) { /* the panel */
			bool cut = v->ndim == gr->gndim && v->ndim > 0 && v->shape[0] == gr->gshape[0] && v->stride[0] != 0;
			lm_tensor *w = rows_of(v, r0, r1, cut);
			lm_tensor_release(v);
			v = w;
		}
		if (!(x[k] = tmp[k] = v)) s = lm_last_status();
	}
	for (int k = 0; k < e.ndst && !s; k++) e.dst[k] = x[k];
	for (int k = 0; k < e.nsrc && !s; k++) e.src[k] = x[e.ndst + k];
	if (!s) {
		e.dtype = e.dst[0]->dtype;
		s = lmi_compute(&e);
	}
	for (int k = 0; k < gr->nops; k++) lm_tensor_release(tmp[k]);
	return s;
}

/* Runs node st->node on rows [r0, r1) of its result (all of it when r1 is 0). */
static lm_status run_node(const run_state *rs, const pstep *st, int64_t r0, int64_t r1)
{
	const lmi_rec *r = &rs->t->recs[st->node];
	switch (r->kind) {
	case LMI_REC_OP: {
		lmi_exec e = {.op = r->op, .p = &r->p, .fname = r->fname, .dtype = r->dtype, .nsrc = r->nsrc, .ndst = r->ndst,
		              .fused = r->fused};
		if (r1 == 0) {
			for (int k = 0; k < r->nsrc; k++) e.src[k] = T(rs, st->in[k]);
			for (int k = 0; k < r->ndst; k++) e.dst[k] = T(rs, st->out[k]);
			return lmi_compute(&e);
		}
		lm_tensor *cut[LMI_EXEC_SRC + LMI_EXEC_DST] = {0};
		lm_status s = LM_OK;
		for (int k = 0; k < r->nsrc && !s; k++) {
			lm_tensor *x = T(rs, st->in[k]);
			if (x && !(cut[k] = rows_of(x, r0, r1, st->slice[k]))) s = lm_last_status();
			e.src[k] = cut[k];
		}
		for (int k = 0; k < r->ndst && !s; k++) {
			if (!(cut[LMI_EXEC_SRC + k] = rows_of(T(rs, st->out[k]), r0, r1, true))) s = lm_last_status();
			e.dst[k] = cut[LMI_EXEC_SRC + k];
		}
		if (!s) s = lmi_compute(&e);
		for (int k = 0; k < LMI_EXEC_SRC + LMI_EXEC_DST; k++) lm_tensor_release(cut[k]);
		return s;
	}
	case LMI_REC_COPY: return lmi_copy(T(rs, st->out[0]), T(rs, st->in[0]));
	case LMI_REC_FILL: return lmi_fill(T(rs, st->out[0]), r->value);
	case LMI_REC_RANDOM: return lmi_rng_redraw(T(rs, st->out[0]), &r->rng, r->dtype);
	}
	return lmi_fail(LM_ERR_INTERNAL, "program: node kind %d", (int)r->kind);
}

static lm_status run_step(const run_state *rs, const pstep *st)
{
	lm_status s = LM_OK;
	if (st->panel > 0) { /* a product and its epilogue, panel by panel */
		int64_t rows = rs->t->vals[st->out[0]].t->shape[0], q = st->scale;
		for (int64_t r0 = 0; r0 < rows && !s; r0 += st->panel) {
			int64_t r1 = rows - r0 < st->panel ? rows : r0 + st->panel;
			if (!(s = run_node(rs, st, r0, r1))) s = run_fused(rs, st->post, r0 / q, r1 / q);
		}
		return s;
	}
	if (st->pre) s = run_fused(rs, st->pre, 0, 0);
	if (!s && st->node >= 0) s = run_node(rs, st, 0, 0);
	if (!s && st->post) s = run_fused(rs, st->post, 0, 0);
	return s;
}

/* Whether input x can stand where the capture had input value v. */
static lm_status check_input(const lm_capture *t, int k, const lm_tensor *x)
{
	const lm_tensor *c = t->vals[t->inputs[k]].t;
	if (!x) return lmi_fail(LM_ERR_ARG, "program: input %d is NULL", k + 1);
	if (x->dtype != c->dtype || x->storage->device != c->storage->device)
		return lmi_fail(LM_ERR_ARG, "program: input %d is %s on %s; the capture had %s on %s", k + 1,
		                lm_dtype_name(x->dtype), lm_device_name(x->storage->device), lm_dtype_name(c->dtype),
		                lm_device_name(c->storage->device));
	bool same = x->ndim == c->ndim;
	for (int i = 0; same && i < x->ndim; i++) same = x->shape[i] == c->shape[i];
	if (!same)
		return lmi_fail(LM_ERR_ARG, "program: input %d has shape %s; the capture had %s", k + 1, lmi_shape_s(x),
		                lmi_shape_s(c));
	for (int i = 0; i < x->ndim; i++)
		if (x->shape[i] > 1 && x->stride[i] != c->stride[i])
			return lmi_fail(LM_ERR_ARG, "program: input %d has other strides than at the capture (dim %d: %lld, "
			                "then %lld)", k + 1, i + 1, (long long)x->stride[i], (long long)c->stride[i]);
	return LM_OK;
}

lm_status lm_program_run(lm_program *p, int ninputs, lm_tensor *const *inputs, int noutputs, lm_tensor **outputs,
                         lm_program_info *info)
{
	if (!p) return lmi_fail(LM_ERR_ARG, "program: NULL program");
	const lm_capture *t = p->t;
	if (ninputs != t->ninputs || (ninputs && !inputs))
		return lmi_fail(LM_ERR_ARG, "program: %d inputs given, the capture had %d", ninputs, t->ninputs);
	if (noutputs != p->noutputs || (noutputs && !outputs))
		return lmi_fail(LM_ERR_ARG, "program: %d results asked, it has %d", noutputs, p->noutputs);
	for (int k = 0; k < noutputs; k++) outputs[k] = NULL;
	lm_status s;
	for (int k = 0; k < ninputs; k++)
		if ((s = check_input(t, k, inputs[k]))) return s;
	if (info) memset(info, 0, sizeof *info);
	run_state rs = {t, lm_alloc(sizeof(lm_tensor *) * (size_t)(t->nvals ? t->nvals : 1))};
	if (!rs.cur) return lm_last_status();
	memset(rs.cur, 0, sizeof(lm_tensor *) * (size_t)(t->nvals ? t->nvals : 1));
	s = LM_OK;
	/* rebind: the inputs' storages to the caller's, the results' temps to fresh memory */
	for (int si = 0; si < t->nsts && !s; si++) {
		const lmi_tstorage *st = &t->sts[si];
		lm_storage *to = NULL;
		int64_t delta = 0;
		bool fresh = false;
		if (st->kind == LM_STORE_INPUT) {
			to = inputs[st->input]->storage;
			delta = inputs[st->input]->offset - st->input_offset;
		} else if (st->kind == LM_STORE_TEMP) {
			for (int k = 0; k < p->noutputs && !fresh; k++) fresh = t->vals[p->outputs[k]].storage == si;
			if (fresh && !(to = lmi_storage_new(st->s->nbytes, st->s->device))) s = lm_last_status();
		}
		for (int v = st->first; to && v >= 0 && !s; v = t->vals[v].next) {
			const lm_tensor *c = t->vals[v].t;
			if (!(rs.cur[v] = lmi_tensor_wrap(to, c->dtype, c->ndim, c->shape, c->stride, c->offset + delta)))
				s = lm_last_status();
		}
		if (fresh && to) lmi_storage_release(to);
	}
	for (int i = 0; i < p->nsteps && !s; i++) {
		if (lmi_check_interrupt()) {
			s = lmi_fail(LM_ERR_INTERRUPTED, "compiled call: interrupted at step %d of %d", i + 1, p->nsteps);
			break;
		}
		s = run_step(&rs, &p->steps[i]);
		if (info) {
			info->kernels++;
			info->bytes_read += p->steps[i].bytes_read;
			info->bytes_written += p->steps[i].bytes_written;
		}
	}
	for (int k = 0; k < noutputs && !s; k++) {
		const lm_tensor *o = T(&rs, p->outputs[k]);
		if (!(outputs[k] = lmi_tensor_wrap(o->storage, o->dtype, o->ndim, o->shape, o->stride, o->offset)))
			s = lm_last_status();
	}
	if (s)
		for (int k = 0; k < noutputs; k++) {
			lm_tensor_release(outputs[k]);
			outputs[k] = NULL;
		}
	for (int v = 0; v < t->nvals; v++) lm_tensor_release(rs.cur[v]);
	lm_free(rs.cur, sizeof(lm_tensor *) * (size_t)(t->nvals ? t->nvals : 1));
	return s;
}

/* ---------------------------------------------------------------- a group for the kernels */

lm_status lmi_program_group(const lm_program *p, int step, const char *fname, const lmi_fused **f,
                            lm_tensor **ops, char (*names)[24], char *what, size_t what_cap)
{
	if (step < 0 || step >= p->nsteps)
		return lmi_fail(LM_ERR_INDEX, "%s: step %d of %d", fname, step + 1, p->nsteps);
	const pstep *st = &p->steps[step];
	if (!st->pre || st->node >= 0 || st->post || st->pre->f.red)
		return lmi_fail(LM_ERR_ARG, "%s: step %d is %s, not a fused elementwise group", fname, step + 1,
		                st->pre ? "a group with a reduction or a product" : "a node of its own");
	const fgroup *gr = st->pre;
	const lm_capture *t = p->t;
	lm_status s = LM_OK;
	int64_t stride[LM_MAX_DIMS], n = 1;
	for (int i = 0; i < gr->gndim; i++) n *= gr->gshape[i];
	for (int k = 0; k < LMI_ITER_MAX_OPS; k++) ops[k] = NULL;
	for (int k = 0; k < gr->nops && !s; k++) {
		const lm_tensor *v = t->vals[gr->fin[k]].t;
		if (k < gr->f.nout) {
			ops[k] = lm_empty(gr->gndim, gr->gshape, v->dtype);
		} else if (gr->view[k]) {
			bool one = lm_tensor_numel(v) == 1 && n != 1;
			if (!one && !restride(v, gr->gndim, gr->gshape, stride)) {
				s = lmi_fail(LM_ERR_INTERNAL, "%s: operand %s cannot be seen at the group's shape", fname, lmi_shape_s(v));
				break;
			}
			ops[k] = lmi_tensor_wrap(v->storage, v->dtype, one ? 0 : gr->gndim, gr->gshape, stride, v->offset);
		} else {
			ops[k] = lm_tensor_retain((lm_tensor *)v);
		}
		if (!ops[k]) s = lm_last_status();
		snprintf(names[k], 24, "%s v%d", k < gr->f.nout ? "out" : "in", gr->fin[k] + 1);
	}
	snprintf(what, what_cap, "(");
	for (int k = 0; k < gr->f.ninstr; k++) {
		const lmi_fused_instr *in = &gr->f.instr[k];
		const char *name = in->loop == LMI_BE_OP_binary ? lm_binop_name((lm_binop)in->code)
		                   : in->loop == LMI_BE_OP_unary && in->code < LM_UNOP_COUNT ? lm_unop_name((lm_unop)in->code)
		                                                                             : lmi_be_op_name((lmi_be_op)in->loop);
		size_t len = strlen(what);
		snprintf(what + len, what_cap - len, "%s%s", k ? "," : "", name);
	}
	size_t len = strlen(what);
	snprintf(what + len, what_cap - len, ")");
	if (s)
		for (int k = 0; k < gr->nops; k++) {
			lm_tensor_release(ops[k]);
			ops[k] = NULL;
		}
	*f = &gr->f;
	return s;
}
