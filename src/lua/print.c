/*
 * print.c — tostring(x): the tensor as PyTorch and Torch7 users expect to read it.
 *
 *   [[ 0.1000, -1.5000,  2.0000],
 *    [ 3.0000,  4.2500, -5.0000]]
 *   [float32 tensor of shape [2, 3] on cpu, grad_fn=AddBackward]
 *
 * One format per tensor, chosen from the elements that will be shown: integers as integers;
 * floats with integral values as "3."; otherwise 4 decimals, or scientific notation when the
 * magnitudes span more than 1000x or leave [1e-4, 1e8); every column the same width. Beyond
 * 1,000 elements only the first and last 3 along each dim are shown, with "...". Rows longer
 * than 80 columns wrap. Elements are read in place through the strides (no copy, no
 * allocation but the Lua buffer). Read next: tensor.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lml.h"

#define SUMMARY_THRESHOLD 1000
#define EDGE 3
#define LINE_WIDTH 80

typedef struct fmt {
	lm_dtype dt;
	int sci;      /* "%.4e" */
	int integral; /* floats with integral values: "3." */
	int width;
	int summarize;
	/* statistics of the shown elements */
	double max_abs, min_abs; /* over finite nonzero values */
	int any_finite_nonzero, all_integral;
} fmt;

/* One element through the type table: a float's value, or an integer's exactly into *iv. */
static double load(lm_dtype dt, const char *p, int64_t *iv)
{
	const lm_dtype_traits *ty = lm_dtype_traits_of(dt);
	if (ty->is_int) {
		*iv = ty->get_int(p);
		return 0;
	}
	return ty->get(p);
}

/* Formats one element; returns its length. */
static int format_elem(const fmt *f, const char *p, char *buf, size_t cap)
{
	int64_t iv = 0;
	double v = load(f->dt, p, &iv);
	if (!lm_dtype_is_float(f->dt)) return snprintf(buf, cap, "%lld", (long long)iv);
	if (isnan(v)) return snprintf(buf, cap, "nan");
	if (isinf(v)) return snprintf(buf, cap, v > 0 ? "inf" : "-inf");
	if (f->sci) return snprintf(buf, cap, "%.4e", v);
	if (f->integral) return snprintf(buf, cap, "%.0f.", v);
	return snprintf(buf, cap, "%.4f", v);
}

/* Visits the shown elements (all, or the edges of each dim when summarizing). */
typedef void (*visit_fn)(fmt *f, const char *p);

static void visit(const lm_tensor *t, fmt *f, int d, int64_t *idx, visit_fn fn)
{
	int n = lm_tensor_ndim(t);
	if (d == n) {
		fn(f, lml_elemptr(t, idx));
		return;
	}
	int64_t size = lm_tensor_shape(t)[d];
	for (int64_t i = 0; i < size; i++) {
		if (f->summarize && size > 2 * EDGE && i == EDGE) i = size - EDGE;
		idx[d] = i;
		visit(t, f, d + 1, idx, fn);
	}
}

static void gather_stats(fmt *f, const char *p)
{
	int64_t iv;
	double v = load(f->dt, p, &iv);
	if (!isfinite(v)) return;
	if (v != floor(v)) f->all_integral = 0;
	double a = fabs(v);
	if (a == 0) return;
	if (!f->any_finite_nonzero || a > f->max_abs) f->max_abs = a;
	if (!f->any_finite_nonzero || a < f->min_abs) f->min_abs = a;
	f->any_finite_nonzero = 1;
}

static void measure(fmt *f, const char *p)
{
	char buf[64];
	int w = format_elem(f, p, buf, sizeof buf);
	if (w > f->width) f->width = w;
}

static void choose_format(const lm_tensor *t, fmt *f)
{
	int64_t idx[LM_MAX_DIMS] = {0};
	memset(f, 0, sizeof *f);
	f->dt = lm_tensor_dtype(t);
	f->summarize = lm_tensor_numel(t) > SUMMARY_THRESHOLD;
	f->all_integral = 1;
	if (lm_dtype_is_float(f->dt)) {
		visit(t, f, 0, idx, gather_stats);
		if (f->any_finite_nonzero) {
			if (f->all_integral)
				f->sci = f->max_abs >= 1e8;
			else
				f->sci = f->max_abs / f->min_abs > 1000 || f->max_abs >= 1e8 || f->min_abs < 1e-4;
		}
		f->integral = f->all_integral && !f->sci;
	}
	visit(t, f, 0, idx, measure);
}

static void add_spaces(luaL_Buffer *b, int n)
{
	for (int i = 0; i < n; i++) luaL_addchar(b, ' ');
}

static void add_elem(luaL_Buffer *b, const fmt *f, const char *p)
{
	char buf[64];
	int w = format_elem(f, p, buf, sizeof buf);
	add_spaces(b, f->width - w);
	luaL_addlstring(b, buf, (size_t)w);
}

/* The block of dim d at index prefix idx; indent is the column of its opening bracket. */
static void add_block(luaL_Buffer *b, const lm_tensor *t, const fmt *f, int d, int64_t *idx,
                      int indent)
{
	int n = lm_tensor_ndim(t);
	int64_t size = lm_tensor_shape(t)[d];
	int skip = f->summarize && size > 2 * EDGE;
	luaL_addchar(b, '[');
	if (d == n - 1) {
		int per_line = (LINE_WIDTH - indent - 1) / (f->width + 2);
		if (per_line < 1) per_line = 1;
		int on_line = 0;
		for (int64_t i = 0; i < size; i++) {
			if (i > 0) {
				luaL_addchar(b, ',');
				if (on_line == per_line) {
					luaL_addchar(b, '\n');
					add_spaces(b, indent + 1);
					on_line = 0;
				} else {
					luaL_addchar(b, ' ');
				}
			}
			if (skip && i == EDGE) {
				luaL_addstring(b, "...");
				on_line++;
				i = size - EDGE - 1;
				continue;
			}
			idx[d] = i;
			add_elem(b, f, lml_elemptr(t, idx));
			on_line++;
		}
	} else {
		for (int64_t i = 0; i < size; i++) {
			if (i > 0) {
				luaL_addchar(b, ',');
				for (int k = 0; k < n - d - 1; k++) luaL_addchar(b, '\n');
				add_spaces(b, indent + 1);
			}
			if (skip && i == EDGE) {
				luaL_addstring(b, "...");
				i = size - EDGE - 1;
				continue;
			}
			idx[d] = i;
			add_block(b, t, f, d + 1, idx, indent + 1);
		}
	}
	luaL_addchar(b, ']');
}

lm_tensor *lml_host_copy(const lm_tensor *t)
{
	lm_tensor *d = lm_detach(t), *h = d ? lm_to_device(d, LM_CPU) : NULL;
	lm_tensor_release(d);
	return h;
}

int lml_tensor_tostring(lua_State *L)
{
	lm_tensor *self = lml_checkself(L), *t = self;
	if (lm_tensor_device(self) != LM_CPU) LML_PUSH(L, t, lml_host_copy(self)); /* (on the stack) */
	/* a block type shows its values dequantized, as the footer says */
	bool block = lm_dtype_is_block(lm_tensor_dtype(self));
	if (block) LML_PUSH(L, t, lm_to_dtype(self, LM_FLOAT32));
	char tmp[LM_SHAPE_STR_MAX + 160];
	luaL_Buffer b;
	fmt f;
	int n = lm_tensor_ndim(t);
	luaL_buffinit(L, &b);
	if (lm_tensor_numel(t) == 0) {
		luaL_addstring(&b, "[]");
	} else if (n == 0) {
		int64_t idx[1] = {0};
		char buf[64];
		choose_format(t, &f);
		int w = format_elem(&f, lml_elemptr(t, idx), buf, sizeof buf);
		luaL_addlstring(&b, buf, (size_t)w);
	} else {
		int64_t idx[LM_MAX_DIMS] = {0};
		choose_format(t, &f);
		add_block(&b, t, &f, 0, idx, 0);
	}
	char shape[LM_SHAPE_STR_MAX];
	lm_shape_str(n, lm_tensor_shape(t), shape, sizeof shape);
	const char *gf = lm_tensor_grad_fn_name(self);
	lm_device dev = lm_tensor_device(self);
	snprintf(tmp, sizeof tmp, "\n[%s tensor of shape %s on %s%s%s%s%s%s]",
	         lm_dtype_name(lm_tensor_dtype(self)), shape, lm_device_name(dev),
	         dev == LM_CPU ? "" : ":0", gf ? ", grad_fn=" : "", gf ? gf : "",
	         !gf && lm_tensor_requires_grad(self) ? ", requires_grad" : "",
	         block ? ", shown dequantized" : "");
	luaL_addstring(&b, tmp);
	luaL_pushresult(&b);
	return 1;
}
