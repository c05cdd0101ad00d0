/*
 * common.c — what several scenes use: running the course's kernels on given values (emulated,
 * traced) into runs, demonstration inputs, and small drawing pieces (a value cell, a legend
 * entry, a line chart).
 *
 * Kernels are called through their public C API (lumen/kernels.h), exactly as kernels.scan does
 * from Lua; their errors keep the kernel's name and gain the viz function's in front.
 * Read next: scan.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

/* ---------------------------------------------------------------- runs */

static lm_tensor *float_tensor(const double *x, int64_t n, const char *fname)
{
	float *f = vz_malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
	if (!f) {
		lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++) f[i] = (float)x[i];
	lm_tensor *t = lm_from_data(f, 1, &n, LM_FLOAT32);
	vz_free(f);
	return t;
}

/* Finishes a kernel call: the run from its info, everything else released. */
static lm_status finish(lm_status st, lm_tensor *x, lm_tensor *y, lm_kernel_info *info,
                        lm_viz_run *run, const char *fname)
{
	if (st == LM_OK) vz_run_from_info(run, info);
	else {
		char msg[1024];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		lm_set_error(st, "%s: %s", fname, msg);
	}
	lm_kernel_info_free(info);
	lm_tensor_release(x);
	lm_tensor_release(y);
	return st;
}

static void emu_opts(lm_kernel_opts *o, const char *algo, int64_t block)
{
	lm_kernel_opts_init(o);
	o->backend = "emu";
	o->algo = algo;
	o->block = block;
	o->trace = 1;
}

lm_status vzs_run_scan(const double *x, int64_t n, const char *algo, int64_t block, bool exclusive,
                       lm_viz_run *run, const char *fname)
{
	lm_tensor *in = float_tensor(x, n, fname), *y = NULL;
	if (!in) return lm_last_status();
	lm_kernel_opts o;
	emu_opts(&o, algo, block);
	o.inclusive = exclusive ? 0 : 1;
	lm_kernel_info *info = NULL;
	lm_status st = lm_kernel_scan(in, &o, &y, &info);
	return finish(st, in, y, info, run, fname);
}

lm_status vzs_run_reduce(const double *x, int64_t n, const char *algo, int64_t block,
                         lm_viz_run *run, const char *fname)
{
	lm_tensor *in = float_tensor(x, n, fname), *y = NULL;
	if (!in) return lm_last_status();
	lm_kernel_opts o;
	emu_opts(&o, algo, block);
	lm_kernel_info *info = NULL;
	lm_status st = lm_kernel_reduce(in, &o, &y, &info);
	return finish(st, in, y, info, run, fname);
}

lm_status vzs_run_histogram(const int32_t *bins_of, int64_t n, int64_t bins, const char *algo,
                            int64_t block, int64_t coarsen, lm_viz_run *run, const char *fname)
{
	lm_tensor *in = lm_from_data(bins_of, 1, &n, LM_INT32), *y = NULL;
	if (!in) return vz_error_prefix(0, fname);
	lm_kernel_opts o;
	emu_opts(&o, algo, block);
	o.coarsen = coarsen;
	lm_kernel_info *info = NULL;
	lm_status st = lm_kernel_histogram(in, bins, &o, &y, &info);
	return finish(st, in, y, info, run, fname);
}

lm_status vzs_run_divergence(const char *pattern, int64_t warps, int64_t block, lm_viz_run *run,
                             const char *fname)
{
	lm_kernel_opts o;
	emu_opts(&o, NULL, block);
	o.pattern = pattern;
	o.warps = warps;
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	lm_status st = lm_kernel_divergence(&o, &y, &info);
	return finish(st, NULL, y, info, run, fname);
}

static lm_tensor *tensor_2d(const double *x, int64_t r, int64_t c, const char *fname)
{
	lm_tensor *t = float_tensor(x, r * c, fname);
	if (!t) return NULL;
	int64_t shape[2] = {r, c};
	lm_tensor *v = lm_view(t, 2, shape);
	lm_tensor_release(t);
	if (!v) vz_error_prefix(0, fname);
	return v;
}

/* Two 2-D float tensors, both or neither (the status says why). */
static lm_status tensors_2d(const double *a, int64_t ar, int64_t ac, const double *b, int64_t br,
                            int64_t bc, const char *fname, lm_tensor **x, lm_tensor **z)
{
	*x = tensor_2d(a, ar, ac, fname);
	*z = *x ? tensor_2d(b, br, bc, fname) : NULL;
	if (*z) return LM_OK;
	lm_tensor_release(*x);
	*x = NULL;
	return lm_last_status();
}

lm_status vzs_run_conv2d(const double *img, int64_t h, int64_t w, const double *mask, int64_t mh,
                         int64_t mw, const char *algo, int64_t tile, lm_viz_run *run, const char *fname)
{
	lm_tensor *x, *f, *y = NULL;
	lm_status st = tensors_2d(img, h, w, mask, mh, mw, fname, &x, &f);
	if (st) return st;
	lm_kernel_opts o;
	emu_opts(&o, algo, 0);
	o.tile = tile;
	lm_kernel_info *info = NULL;
	st = lm_kernel_conv2d(x, f, &o, &y, &info);
	lm_tensor_release(f);
	return finish(st, x, y, info, run, fname);
}

lm_status vzs_run_matmul(const double *a, const double *b, int64_t m, int64_t k, int64_t n,
                         const char *algo, int64_t tile, int64_t trace_cap, lm_viz_run *run,
                         const char *fname)
{
	lm_tensor *x, *z, *y = NULL;
	lm_status st = tensors_2d(a, m, k, b, k, n, fname, &x, &z);
	if (st) return st;
	lm_kernel_opts o;
	emu_opts(&o, algo, 0);
	o.tile = tile;
	o.trace_cap = trace_cap;
	lm_kernel_info *info = NULL;
	st = lm_kernel_matmul(x, z, &o, &y, &info);
	lm_tensor_release(z);
	return finish(st, x, y, info, run, fname);
}

lm_sparse *vzs_sparse(const int32_t *rows, const int32_t *cols, const double *vals, int64_t nnz,
                      int64_t m, int64_t n, const char *fname)
{
	lm_tensor *r = lm_from_data(rows, 1, &nnz, LM_INT32), *c = lm_from_data(cols, 1, &nnz, LM_INT32);
	lm_tensor *v = float_tensor(vals, nnz, fname);
	lm_sparse *a = r && c && v ? lm_sparse_from_coo(r, c, v, m, n, 0) : NULL;
	lm_tensor_release(r);
	lm_tensor_release(c);
	lm_tensor_release(v);
	if (!a) vz_error_prefix(0, fname);
	return a;
}

lm_status vzs_run_spmv(const lm_sparse *a, const double *x, const char *format, int64_t block,
                       lm_viz_run *run, const char *fname)
{
	lm_tensor *xv = float_tensor(x, lm_sparse_cols(a), fname), *y = NULL;
	if (!xv) return lm_last_status();
	lm_kernel_opts o;
	emu_opts(&o, NULL, block);
	o.format = format;
	lm_kernel_info *info = NULL;
	lm_status st = lm_kernel_spmv(a, xv, &o, &y, &info);
	return finish(st, xv, y, info, run, fname);
}

lm_status vzs_run_streams(int64_t segments, int64_t bytes, int64_t copy_engines, lm_viz_run *run,
                          const char *fname)
{
	lm_kernel_opts o;
	emu_opts(&o, NULL, 0);
	o.segments = segments;
	o.bytes = bytes;
	o.copy_engines = copy_engines;
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	lm_status st = lm_kernel_streams(&o, &y, &info);
	return finish(st, NULL, y, info, run, fname);
}

lm_status vzs_count_scan(int64_t n, const char *algo, double *adds, double *steps, const char *fname)
{
	lm_tensor *in = lm_ones(1, &n, LM_FLOAT32), *y = NULL;
	if (!in) return vz_error_prefix(0, fname);
	lm_kernel_opts o;
	emu_opts(&o, algo, 0);
	o.trace_cap = 1; /* the counters are complete without the events */
	lm_kernel_info *info = NULL;
	lm_status st = lm_kernel_scan(in, &o, &y, &info);
	if (st == LM_OK) {
		lm_kernel_info_counter(info, "adds", adds);
		lm_kernel_info_counter(info, "steps", steps);
	}
	lm_viz_run unused;
	memset(&unused, 0, sizeof unused);
	st = finish(st, in, y, info, &unused, fname);
	vz_run_clear(&unused);
	return st;
}

const lm_viz_run *vzs_keep_runs(const vz_build *b, lm_viz_run *given, int *ngiven)
{
	const lm_viz_run *traced = NULL;
	for (int i = 0; i < b->nruns && *ngiven < VZS_GIVEN; i++) {
		vz_run_copy(&given[(*ngiven)++], &b->runs[i]);
		if (b->runs[i].trace && !traced) traced = &b->runs[i];
	}
	return traced;
}

void vzs_panel_add(vz_panel *p, const char *title, const lm_viz_run *r, const char *const *names)
{
	char src[128];
	vz_panel_run(p, vz_panel_column(p, title, vz_run_source_label(r, src, sizeof src)), r, names);
}

void vzs_panel_measured(vz_panel *p, const lm_viz_run *given, int n, const char *const *names)
{
	for (int i = 0; i < n; i++) {
		if (given[i].trace) continue;
		char title[64];
		VZ_SNPRINTF_TR(title, sizeof title, "%s (your run)", "%s（你的运行）", given[i].algo);
		vzs_panel_add(p, title, &given[i], names);
	}
}

lm_status vzs_demo_values(const char *kind, int64_t n, double *out, const char *fname)
{
	static const double pmpp[] = {3, 1, 7, 0, 4, 1, 6, 3};
	uint64_t s = 0x9E3779B97F4A7C15ull;
	for (int64_t i = 0; i < n; i++) {
		if (strcmp(kind, "arange") == 0) out[i] = (double)(i + 1);
		else if (strcmp(kind, "ones") == 0) out[i] = 1;
		else if (strcmp(kind, "pmpp") == 0) out[i] = pmpp[i % 8];
		else if (strcmp(kind, "random") == 0) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			out[i] = (double)(s % 10);
		} else {
			return lm_set_error(LM_ERR_ARG, "%s: unknown input '%s' (arange, ones, pmpp, random)",
			                    fname, kind);
		}
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- drawing */

bool vzs_dense(const vz_frame *f, float cell_w) { return cell_w * vz_zoom(f) < 3; }

/* The mean colour of the source cells [r0, r1) x [c0, c1). */
static vz_color mean(const vz_color *px, int cols, int r0, int r1, int c0, int c1)
{
	unsigned long sum[4] = {0, 0, 0, 0}, n = 0;
	for (int y = r0; y < r1; y++)
		for (int x = c0; x < c1; x++, n++) {
			const vz_color *c = &px[(size_t)y * (size_t)cols + (size_t)x];
			sum[0] += c->r, sum[1] += c->g, sum[2] += c->b, sum[3] += c->a;
		}
	return (vz_color){(uint8_t)(sum[0] / n), (uint8_t)(sum[1] / n), (uint8_t)(sum[2] / n), (uint8_t)(sum[3] / n)};
}

/* More cells than pixels: each texel is the mean of the cells it covers, so alternating lit and
 * idle lanes show as their mix instead of aliasing into stripes that are not there. */
vz_cell *vzs_grid_draw(vz_frame *f, vzs_grid *g, vz_rect r, int rows, int cols, const vz_color *colors,
                       const char *kind, int32_t first)
{
	float z = vz_zoom(f);
	int w = cols, h = rows;
	if (r.w * z < (float)cols) w = (int)fmaxf(1, ceilf(r.w * z));
	if (r.h * z < (float)rows) h = (int)fmaxf(1, ceilf(r.h * z));
	if (!g->img || g->img->w != w || g->img->h != h) {
		vz_image_free(g->img);
		g->img = vz_image_new(w, h);
	}
	if (g->img) {
		vz_color *dst = (vz_color *)g->img->rgba, *tmp = NULL;
		const vz_color *src = colors;
		if (w != cols || h != rows) {
			tmp = vz_malloc((size_t)w * (size_t)h * sizeof *tmp);
			if (tmp)
				for (int y = 0; y < h; y++)
					for (int x = 0; x < w; x++)
						tmp[(size_t)y * (size_t)w + (size_t)x] =
							mean(colors, cols, y * rows / h, (y + 1) * rows / h > y * rows / h ? (y + 1) * rows / h : y * rows / h + 1,
							     x * cols / w, (x + 1) * cols / w > x * cols / w ? (x + 1) * cols / w : x * cols / w + 1);
			src = tmp;
		}
		size_t n = (size_t)w * (size_t)h * sizeof *dst;
		if (src && memcmp(dst, src, n) != 0) {
			memcpy(dst, src, n);
			vz_image_touch(g->img);
		}
		vz_free(tmp);
		vz_draw_image(f, r, g->img);
	}
	vz_cell *c = vz_cell_add(f, r, kind);
	c->rows = rows;
	c->cols = cols;
	c->index = first;
	return c;
}

bool vzs_matrix_dense(const vz_frame *f, vz_rect r, int rows, int cols)
{
	float cw = cols > 0 ? r.w / (float)cols * vz_zoom(f) : 0;
	return cw < 10 * f->scale || (int64_t)rows * cols > 4096; /* no room for values: one image */
}

void vzs_matrix_fill(vz_cell *c, const vzs_matrix *m, int64_t i)
{
	if (i < 0 || i >= (int64_t)m->rows * m->cols) return;
	c->state = m->names[m->state ? m->state[i] : 0];
	c->color = m->color[i];
	if (m->value) {
		c->value = m->value[i];
		c->has_value = !isnan(c->value);
	}
	c->index = m->first + (int32_t)i;
	c->row = (int32_t)(i / m->cols);
	c->col = (int32_t)(i % m->cols);
	c->rows = c->cols = -1;
}

vz_cell *vzs_matrix_draw(vz_frame *f, vzs_grid *g, vz_rect r, const vzs_matrix *m)
{
	if (m->rows <= 0 || m->cols <= 0 || !vz_visible(f, r)) return NULL;
	if (vzs_matrix_dense(f, r, m->rows, m->cols)) {
		vz_cell *c = vzs_grid_draw(f, g, r, m->rows, m->cols, m->color, m->kind, m->first);
		c->group = m->group;
		c->tag = m->tag;
		return c;
	}
	float cw = r.w / (float)m->cols, ch = r.h / (float)m->rows;
	bool values = m->show_values && m->value;
	for (int64_t i = 0; values && i < (int64_t)m->rows * m->cols; i++) { /* all the values, or none */
		char t[32];
		if (!isnan(m->value[i]) && !vz_text_fits(f, VZ_FONT_TINY, vzs_short(t, sizeof t, m->value[i]), cw - 2 / vz_zoom(f)))
			values = false; /* (the margin vzs_value_cell keeps) */
	}
	for (int y = 0; y < m->rows; y++)
		for (int x = 0; x < m->cols; x++) {
			vz_rect cr = vz_r(r.x + (float)x * cw, r.y + (float)y * ch, cw, ch);
			if (!vz_visible(f, cr)) continue;
			int64_t i = (int64_t)y * m->cols + x;
			if (m->hatched && m->hatched[i]) {
				vz_hatch(f, cr, m->color[i], vz_th.hatch);
				vz_outline(f, cr, 1, vz_mix(m->color[i], VZ_RGB(0, 0, 0), 0.25));
			} else {
				vzs_value_cell(f, cr, m->color[i], m->value ? m->value[i] : 0, values && !isnan(m->value[i]));
			}
			vz_cell *c = vz_cell_add(f, cr, m->kind);
			c->group = m->group;
			c->tag = m->tag;
			vzs_matrix_fill(c, m, i);
		}
	return NULL;
}

void vzs_grid_free(vzs_grid *g)
{
	vz_image_free(g->img);
	g->img = NULL;
}

char *vzs_short(char *buf, size_t cap, double v)
{
	if (isnan(v)) snprintf(buf, cap, "?");
	else if (v == floor(v) && fabs(v) < 1e7) snprintf(buf, cap, "%.0f", v);
	else snprintf(buf, cap, "%.3g", v);
	return buf;
}

void vzs_text_line(vz_frame *f, char *keep, size_t cap, float x, float y, vz_color c, const char *fmt, ...)
{
	char t[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t, sizeof t, fmt, ap);
	va_end(ap);
	vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, c, t);
	vz_append(keep, cap, "%s%s", keep[0] ? "\n" : "", t);
}

void vzs_value_cell(vz_frame *f, vz_rect r, vz_color fill, double value, bool show_value)
{
	float px = 1.0f / vz_zoom(f);
	vz_cell_fill(f, r, fill, r.w * vz_zoom(f) >= 4 ? 1 : 0, vz_mix(fill, VZ_RGB(0, 0, 0), 0.25));
	if (!show_value) return;
	char s[32];
	vzs_short(s, sizeof s, value);
	/* the small font, else the tiny one, a pixel clear each side: numbers in neighbouring cells
	 * that touch read as one ("136392") */
	vz_font font = vz_text_fits(f, VZ_FONT_SMALL, s, r.w - 2 * px) ? VZ_FONT_SMALL : VZ_FONT_TINY;
	if (!vz_text_fits(f, font, s, r.w - 2 * px)) return;
	float th = vz_text_height(f, font);
	if (th > r.h + 3 * px) return;
	vz_text_draw(f, r.x + r.w / 2, r.y + (r.h - th) / 2, font, VZ_ALIGN_CENTER, vz_text_on(fill), s);
}

float vzs_legend(vz_frame *f, float x, float y, vz_color c, bool hatched, const char *label)
{
	float h = vz_text_height(f, VZ_FONT_SMALL), sw = h * 0.9f;
	vz_rect r = vz_r(x, y + (h - sw) / 2, sw, sw);
	if (hatched) vz_hatch(f, r, c, vz_th.hatch);
	else vz_fill(f, r, c);
	vz_outline(f, r, 1, vz_mix(c, VZ_RGB(0, 0, 0), 0.3));
	float w = vz_text_draw(f, x + sw + h * 0.35f, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, label);
	return x + sw + h * 0.35f + w + h * 1.2f;
}

static double axis(double v, bool log) { return log ? log2(v > 1 ? v : 1) : v; }

void vzs_chart(vz_frame *f, vz_rect r, const char *title, const double *x, int n, bool logx,
               bool logy, const vzs_series *s, int nseries, double mark_x)
{
	if (n < 1) return;
	float lh = vz_text_height(f, VZ_FONT_SMALL), cw = vz_char_width(f, VZ_FONT_SMALL);
	double ymax = 0;
	for (int k = 0; k < nseries; k++)
		for (int i = 0; i < n; i++)
			if (s[k].y[i] > ymax) ymax = s[k].y[i];
	if (ymax <= 1) ymax = 2;
	char num[32];
	vzs_short(num, sizeof num, ymax);
	float left = r.x + (float)(strlen(num) + 1) * cw, right = r.x + r.w - cw;
	float top = r.y + lh * 1.6f, bottom = r.y + r.h - lh * 1.4f;
	vz_text_draw(f, r.x, r.y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, title);
	if (right - left < 20 || bottom - top < 20) return;
	double x0 = axis(x[0], logx), x1 = axis(x[n - 1], logx), y1 = axis(ymax, logy), y0 = logy ? 0 : 0;
	if (x1 <= x0) x1 = x0 + 1;
#define PX(v) (left + (float)((axis((v), logx) - x0) / (x1 - x0)) * (right - left))
#define PY(v) (bottom - (float)((axis((v), logy) - y0) / (y1 - y0)) * (bottom - top))
	vz_line(f, left, bottom, right, bottom, 1, vz_th.text_dim);
	vz_line(f, left, top, left, bottom, 1, vz_th.text_dim);
	vz_text_draw(f, left - cw * 0.5f, top - lh * 0.5f, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, vz_th.text_dim, num);
	vz_text_draw(f, left - cw * 0.5f, bottom - lh * 0.5f, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, vz_th.text_dim,
	             logy ? "1" : "0");
	if (logy) vz_text_draw(f, left + cw * 0.5f, top - lh * 0.5f, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
	                       vz_th.text_dim, vz_tr("(log scale)", "（对数坐标）"));
	float last_end = -1e9f;
	for (int i = 0; i < n; i++) { /* x ticks where their labels do not touch */
		vzs_short(num, sizeof num, x[i]);
		float px = PX(x[i]), w = vz_text_width(f, VZ_FONT_SMALL, num);
		bool lastone = i == n - 1; /* right-aligned at the axis' end */
		float l0 = lastone ? px - w : px - w / 2;
		bool room = l0 > last_end + cw;
		vz_line(f, px, bottom, px, bottom + lh * 0.25f, 1, vz_th.text_dim);
		if (!room) continue;
		vz_text_draw(f, lastone ? px : px, bottom + lh * 0.3f, VZ_FONT_SMALL,
		             lastone ? VZ_ALIGN_RIGHT : VZ_ALIGN_CENTER, vz_th.text_dim, num);
		last_end = lastone ? px : px + w / 2;
	}
	if (mark_x > 0) vz_dashed(f, PX(mark_x), top, PX(mark_x), bottom, 1, 4, vz_th.highlight);
	for (int k = 0; k < nseries; k++) {
		float px0 = 0, py0 = 0;
		for (int i = 0; i < n; i++) {
			float px = PX(x[i]), py = PY(s[k].y[i]);
			if (i) vz_line(f, px0, py0, px, py, 2, s[k].color);
			vz_disc(f, px, py, 2.5f, s[k].color);
			px0 = px;
			py0 = py;
		}
	}
	/* labels: in the top left corner of the plot, one a line */
	for (int k = 0; k < nseries; k++)
		vz_text_draw(f, left + cw, top + lh * (0.6f + 1.1f * (float)k), VZ_FONT_SMALL, VZ_ALIGN_LEFT,
		             s[k].color, s[k].label);
#undef PX
#undef PY
}
