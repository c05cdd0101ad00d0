/*
 * rnn.c — the rnn scene: a recurrent network unrolled over T time steps, an RNN above an LSTM of
 * the same size on the same inputs, with the norm of the gradient ||dL/dh_t|| that reaches each
 * step back from a loss at the last step (backpropagation through time) as a bar per step on a
 * log scale: the RNN's shrinks (or grows) by about the same factor every step, the LSTM's cell
 * state carries it further. Then the same with the gradient reaching each h_t clipped to norm c
 * before it goes further back (the clipped bars, the threshold as a dashed line).
 *
 * Steps: the unrolled chains (forward); the gradient norms, revealed from the last step back;
 * clipping. Built from viz.show('rnn', {rnn = n, lstm = n, rnn_clipped = n, lstm_clipped = n})
 * (lua/lumen/viz.lua's viz.rnn_gradients measures them with Lumen's nn.RNNCell and nn.LSTMCell
 * and autograd), or from options: the same measurement done here by hand in float64 (PyTorch's
 * initialisation U(-1/sqrt(H), 1/sqrt(H)) from Philox keyed by seed, the RNN's W_hh times gain,
 * inputs N(0, 1) times input_scale, h_0 = c_0 = 0, L = sum(h_T)), labelled as a demonstration.
 * Read next: docs/viz.md ("rnn"), lua/lumen/viz.lua (viz.rnn_gradients), attention.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_T 1000
#define MAX_H 256
#define NS    LM_VIZ_RNN_SERIES

static const char *const series_names[NS] = {"rnn", "lstm", "rnn_clipped", "lstm_clipped"};
enum { ST_FORWARD, ST_BACKWARD, ST_CLIP, NSTEPS };

typedef struct rnn_scene {
	char fname[32], source[160], rnn_label[32];
	bool demo;
	int T;
	double clip;
	double *norm[NS]; /* T each, or NULL */
	double lo, hi;    /* log10 of the axis' ends */
	/* layout (world) */
	float lh, cw, label_w, pitch, x0;
	vz_rect chart[2], chain[2];
} rnn_scene;

/* ---------------------------------------------------------------- the demonstration */

/* n values of U(-k, k) (stream odd) or N(0, 1) (stream even: Box-Muller) from Philox4x32-10. */
static void randoms(double *out, int n, int64_t seed, uint32_t stream, double k)
{
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)((uint64_t)seed >> 32) ^ stream};
	for (int i = 0; i < n; i += 2) {
		uint32_t ctr[4] = {(uint32_t)(i / 2), 0, 0, 0}, r[4];
		lm_philox4x32(ctr, key, r);
		double u1 = ((double)r[0] + 1.0) / 4294967297.0, u2 = (double)r[1] / 4294967296.0;
		if (k > 0) {
			out[i] = (2 * u1 - 1) * k;
			if (i + 1 < n) out[i + 1] = (2 * u2 - 1) * k;
		} else {
			double rad = sqrt(-2 * log(u1));
			out[i] = rad * cos(2 * M_PI * u2);
			if (i + 1 < n) out[i + 1] = rad * sin(2 * M_PI * u2);
		}
	}
}

static double sigmoid(double v) { return 1 / (1 + exp(-v)); }
static double norm2(const double *v, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++) s += v[i] * v[i];
	return sqrt(s);
}
/* Scales g to norm at most c (c > 0); returns its norm after. */
static double clip_to(double *g, int n, double c)
{
	double nr = norm2(g, n);
	if (c > 0 && nr > c)
		for (int i = 0; i < n; i++) g[i] *= c / nr;
	return c > 0 && nr > c ? c : nr;
}

typedef struct demo {
	int T, H, I, G; /* G: gates (1 RNN, 4 LSTM) */
	bool relu;
	double *wih, *whh, *b, *x, *z, *h, *c; /* z: the gates' values after their nonlinearity */
} demo;

/* y (G*H) = W_ih x_t + W_hh h + b (b: b_ih + b_hh). */
static void pre(const demo *d, int t, const double *h, double *y)
{
	for (int r = 0; r < d->G * d->H; r++) {
		double a = d->b[r];
		for (int k = 0; k < d->I; k++) a += d->wih[r * d->I + k] * d->x[t * d->I + k];
		for (int k = 0; k < d->H; k++) a += d->whh[r * d->H + k] * h[k];
		y[r] = a;
	}
}

/* The forward pass: h[t] (t = 0: h_0 = 0), for the LSTM c[t] and the gates z[t] (i, f, g, o). */
static void forward(demo *d)
{
	int H = d->H, GH = d->G * H;
	for (int t = 0; t < d->T; t++) {
		double *y = d->z + (size_t)t * GH, *hp = d->h + (size_t)t * H, *hn = hp + H;
		pre(d, t, hp, y);
		if (d->G == 1) {
			for (int k = 0; k < H; k++) hn[k] = y[k] = d->relu ? fmax(y[k], 0) : tanh(y[k]);
			continue;
		}
		double *cp = d->c + (size_t)t * H, *cn = cp + H;
		for (int k = 0; k < H; k++) {
			double i = y[k] = sigmoid(y[k]), f = y[H + k] = sigmoid(y[H + k]), g = y[2 * H + k] = tanh(y[2 * H + k]),
			       o = y[3 * H + k] = sigmoid(y[3 * H + k]);
			cn[k] = f * cp[k] + i * g;
			hn[k] = o * tanh(cn[k]);
		}
	}
}

/* Backpropagation through time from L = sum(h_T): out[t] = ||dL/dh_{t+1}|| (after clipping the
 * gradient reaching h_{t+1} to norm clip, when clip > 0). */
static void backward(const demo *d, double clip, double *out, double *gh, double *gc, double *dz)
{
	int H = d->H, GH = d->G * H;
	for (int k = 0; k < H; k++) gh[k] = 1, gc[k] = 0;
	for (int t = d->T - 1; t >= 0; t--) {
		out[t] = clip_to(gh, H, clip);
		const double *y = d->z + (size_t)t * GH, *hn = d->h + (size_t)(t + 1) * H;
		if (d->G == 1) {
			for (int k = 0; k < H; k++) dz[k] = gh[k] * (d->relu ? (hn[k] > 0) : 1 - hn[k] * hn[k]);
		} else {
			const double *cp = d->c + (size_t)t * H, *cn = cp + H;
			for (int k = 0; k < H; k++) {
				double i = y[k], f = y[H + k], g = y[2 * H + k], o = y[3 * H + k], tc = tanh(cn[k]);
				double dc = gc[k] + gh[k] * o * (1 - tc * tc);
				dz[k] = dc * g * i * (1 - i);
				dz[H + k] = dc * cp[k] * f * (1 - f);
				dz[2 * H + k] = dc * i * (1 - g * g);
				dz[3 * H + k] = gh[k] * tc * o * (1 - o);
				gc[k] = dc * f;
			}
		}
		for (int k = 0; k < H; k++) { /* dL/dh_t = W_hh^T dz */
			double a = 0;
			for (int r = 0; r < GH; r++) a += d->whh[r * H + k] * dz[r];
			gh[k] = a;
		}
	}
}

/* The RNN's or LSTM's norms, unclipped (out) and clipped (outc). */
static lm_status demo_run(const vz_build *b, int G, int T, double *out, double *outc)
{
	const lm_viz_opts *o = b->opts;
	demo d = {T, (int)vz_opt_int(o, "hidden", 16), (int)vz_opt_int(o, "inputs", 4), G,
	          strcmp(vz_opt_string(o, "nonlinearity", "tanh"), "relu") == 0 && G == 1,
	          NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	int64_t seed = vz_opt_int(o, "seed", 0);
	int H = d.H, GH = G * H;
	double k = 1 / sqrt((double)H), gain = G == 1 ? vz_opt_number(o, "gain", 1) : 1;
	size_t need = (size_t)GH * d.I + (size_t)GH * H + 2 * (size_t)GH + (size_t)T * d.I + (size_t)T * GH +
	              2 * (size_t)(T + 1) * H + 3 * (size_t)GH;
	double *buf = vz_calloc(need, sizeof *buf);
	if (!buf) return vz_error_prefix(0, b->fname);
	double *p = buf, *bias2;
	d.wih = p, p += GH * d.I;
	d.whh = p, p += GH * H;
	d.b = p, p += GH;
	bias2 = p, p += GH;
	d.x = p, p += T * d.I;
	d.z = p, p += (size_t)T * GH;
	d.h = p, p += (size_t)(T + 1) * H;
	d.c = p, p += (size_t)(T + 1) * H;
	uint32_t s0 = G == 1 ? 10 : 20; /* the two networks' own streams; the inputs are shared */
	randoms(d.wih, GH * d.I, seed, s0 + 1, k);
	randoms(d.whh, GH * H, seed, s0 + 3, k);
	randoms(d.b, GH, seed, s0 + 5, k);
	randoms(bias2, GH, seed, s0 + 7, k);
	randoms(d.x, T * d.I, seed, 2, 0);
	double xs = vz_opt_number(o, "input_scale", 1);
	for (int i = 0; i < GH; i++) d.b[i] += bias2[i];
	for (int i = 0; i < GH * H; i++) d.whh[i] *= gain;
	for (int i = 0; i < T * d.I; i++) d.x[i] *= xs;
	forward(&d);
	backward(&d, 0, out, p, p + H, p + 2 * H);
	backward(&d, vz_opt_number(o, "clip", 1), outc, p, p + H, p + 2 * H);
	vz_free(buf);
	return LM_OK;
}

/* ---------------------------------------------------------------- create */

static void rnn_destroy(void *p)
{
	rnn_scene *s = p;
	if (!s) return;
	for (int i = 0; i < NS; i++) vz_free(s->norm[i]);
	vz_free(s);
}

static lm_status check_given(const lm_viz_rnn *r, const char *fname)
{
	if (r->T < 1 || r->T > MAX_T)
		return lm_set_error(LM_ERR_SHAPE, "%s: the rnn scene draws 1 to %d time steps, got %d", fname, MAX_T, r->T);
	if (!r->norm[LM_VIZ_RNN] && !r->norm[LM_VIZ_LSTM])
		return lm_set_error(LM_ERR_ARG, "%s: the rnn scene needs the gradient norms of rnn or lstm", fname);
	if (!(r->clip >= 0) || !isfinite(r->clip))
		return lm_set_error(LM_ERR_ARG, "%s: the rnn scene's clip must be a number >= 0, got %g", fname, r->clip);
	for (int i = 0; i < NS; i++)
		for (int t = 0; r->norm[i] && t < r->T; t++)
			if (!isfinite(r->norm[i][t]) || r->norm[i][t] < 0)
				return lm_set_error(LM_ERR_ARG, "%s: the rnn scene's %s[%d] is %g (a norm is finite and >= 0)", fname,
				                    series_names[i], t + 1, r->norm[i][t]);
	return LM_OK;
}

static void axis(rnn_scene *s)
{
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < NS; i++)
		for (int t = 0; s->norm[i] && t < s->T; t++)
			if (s->norm[i][t] > 0) lo = fmin(lo, s->norm[i][t]), hi = fmax(hi, s->norm[i][t]);
	if (s->clip > 0) lo = fmin(lo, s->clip), hi = fmax(hi, s->clip);
	if (!isfinite(lo)) lo = hi = 1;
	s->lo = floor(log10(lo));
	s->hi = ceil(log10(hi));
	if (s->hi <= s->lo) s->hi = s->lo + 1;
}

static void *rnn_create(const vz_build *b)
{
	const lm_viz_rnn *r = b->rnn;
	if (r && check_given(r, b->fname) != LM_OK) return NULL;
	rnn_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->demo = !r;
	s->T = r ? r->T : (int)vz_opt_int(b->opts, "length", 50);
	s->clip = r ? r->clip : vz_opt_number(b->opts, "clip", 1);
	/* given norms: the source names the cells (what ran is the caller's to say) */
	if (r)
		snprintf(s->rnn_label, sizeof s->rnn_label, "RNN");
	else
		snprintf(s->rnn_label, sizeof s->rnn_label, "RNN (%s)", vz_opt_string(b->opts, "nonlinearity", "tanh"));
	for (int i = 0; i < NS; i++) {
		if (r && !r->norm[i]) continue;
		if (!(s->norm[i] = vz_malloc((size_t)s->T * sizeof(double)))) goto fail;
		if (r) memcpy(s->norm[i], r->norm[i], (size_t)s->T * sizeof(double));
	}
	if (r) snprintf(s->source, sizeof s->source, "%s", r->source && *r->source ? r->source : "given by the caller");
	else if (demo_run(b, 1, s->T, s->norm[LM_VIZ_RNN], s->norm[LM_VIZ_RNN_CLIPPED]) != LM_OK ||
	         demo_run(b, 4, s->T, s->norm[LM_VIZ_LSTM], s->norm[LM_VIZ_LSTM_CLIPPED]) != LM_OK)
		goto fail;
	axis(s);
	return s;
fail:
	vz_error_prefix(0, b->fname);
	rnn_destroy(s);
	return NULL;
}

/* ---------------------------------------------------------------- layout */

static int rnn_steps(void *p)
{
	rnn_scene *s = p;
	return s->norm[LM_VIZ_RNN_CLIPPED] || s->norm[LM_VIZ_LSTM_CLIPPED] ? NSTEPS : NSTEPS - 1;
}
static int rnn_variants(void *p) { (void)p; return 1; }
static const char *rnn_variant_name(void *p, int v) { (void)p, (void)v; return "bptt"; }
static void rnn_set_variant(void *p, int v) { (void)p, (void)v; }

static void rnn_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	rnn_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 440 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->label_w = vz_text_width(f, VZ_FONT_SMALL, "1e-100 ") + s->cw;
	float name_w = vz_text_width(f, VZ_FONT_SMALL, "LSTM (relu) ") + s->cw;
	s->x0 = name_w + s->label_w;
	s->pitch = (W - s->x0 - vz_text_width(f, VZ_FONT_SMALL, "clip 1e+100") - s->cw) / (float)s->T;
	float row = (H - s->lh * 2) / 2, chain_h = s->lh * 3.2f;
	for (int k = 0; k < 2; k++) {
		float y = s->lh * 0.6f + (float)k * row;
		s->chart[k] = vz_r(s->x0, y, s->pitch * (float)s->T, row - chain_h - s->lh * 1.2f);
		s->chain[k] = vz_r(s->x0, y + s->chart[k].h + s->lh * 0.4f, s->chart[k].w, chain_h);
	}
	*ww = W;
	*wh = H;
}

/* ---------------------------------------------------------------- drawing */

static float ypos(const rnn_scene *s, vz_rect ch, double v)
{
	double t = (log10(v) - s->lo) / (s->hi - s->lo);
	return ch.y + ch.h * (float)(1 - fmin(fmax(t, 0), 1));
}

static void draw_axis(vz_frame *f, rnn_scene *s, vz_rect ch)
{
	int every = (int)ceil((s->hi - s->lo) / fmax(1, floor(ch.h / (s->lh * 1.6f))));
	if (every < 1) every = 1;
	for (int e = (int)s->lo; e <= (int)s->hi; e++) {
		if ((e - (int)s->lo) % every) continue;
		float y = ypos(s, ch, pow(10, e));
		vz_line(f, ch.x, y, ch.x + ch.w, y, 1, vz_fade(vz_th.grid, 0.6));
		char t[16];
		snprintf(t, sizeof t, "1e%d", e);
		vz_text_draw(f, ch.x - s->cw * 0.5f, y - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, vz_th.text_dim, t);
	}
	vz_line(f, ch.x, ch.y, ch.x, ch.y + ch.h, 1, vz_th.panel_line);
}

/* The bars of series i over chart ch, those at t >= from (the reveal). */
static void draw_bars(vz_frame *f, rnn_scene *s, int i, vz_rect ch, int from, vz_color col, float width)
{
	const double *n = s->norm[i];
	if (!n) return;
	const double *un = s->norm[i % 2];
	for (int t = from < 0 ? 0 : from; t < s->T; t++) {
		float x = ch.x + (float)t * s->pitch + s->pitch * (1 - width) / 2, y = n[t] > 0 ? ypos(s, ch, n[t]) : ch.y + ch.h;
		vz_rect r = vz_r(x, y, fmaxf(s->pitch * width, 1), ch.y + ch.h - y);
		vz_fill(f, r, col);
		vz_cell *c = vz_cell_add(f, vz_r(ch.x + (float)t * s->pitch, ch.y, s->pitch, ch.h), "bar");
		c->group = series_names[i], c->index = t, c->value = n[t], c->has_value = true, c->color = col;
		c->state = i >= 2 && un && n[t] < un[t] ? "clipped" : "norm";
	}
}

static void draw_chain(vz_frame *f, rnn_scene *s, int k, int st)
{
	vz_rect ch = s->chain[k];
	float bh = s->lh * 1.4f, y = ch.y, bw = fmaxf(s->pitch * 0.7f, 1);
	vz_color box = k ? vz_okabe_ito[VZ_OI_ORANGE] : vz_okabe_ito[VZ_OI_BLUE];
	for (int i = 0; i < s->T; i++) {
		float x = ch.x + (float)i * s->pitch + (s->pitch - bw) / 2;
		bool lit = st == ST_FORWARD; /* the forward pass; afterwards the bars say what came back */
		vz_cell_fill(f, vz_r(x, y, bw, bh), lit ? vz_fade(box, 0.8) : vz_fade(box, 0.35), bw * vz_zoom(f) >= 4 ? 1 : 0,
		             vz_th.panel_line);
		if (i + 1 < s->T && s->pitch - bw >= 3 / vz_zoom(f))
			vz_line(f, x + bw, y + bh / 2, x + s->pitch, y + bh / 2, 1, vz_th.text_dim);
		vz_cell *c = vz_cell_add(f, vz_r(ch.x + (float)i * s->pitch, y, s->pitch, bh), "cell");
		c->group = series_names[k], c->index = i, c->state = lit ? "active" : "done";
	}
	/* the loss at the end, t labels under the chain */
	float xe = ch.x + ch.w + s->cw * 0.3f;
	vz_text_draw(f, xe, y + bh / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "L");
	static const int nice[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
	int every = 1;
	for (int n = 0; n < 10 && s->pitch * (float)(every = nice[n]) < vz_text_width(f, VZ_FONT_SMALL, "t=1000") + s->cw; n++) {}
	for (int i = 0; i < s->T; i++) { /* t = 1 and the multiples of every */
		if ((i + 1) % every && i != 0) continue;
		if (i == 0 && every > 1 && s->pitch * (float)(every - 1) < vz_text_width(f, VZ_FONT_SMALL, "t=1000")) continue;
		char tl[16];
		snprintf(tl, sizeof tl, "t=%d", i + 1);
		vz_text_draw(f, ch.x + ((float)i + 0.5f) * s->pitch, y + bh + s->lh * 0.2f, VZ_FONT_SMALL, VZ_ALIGN_CENTER,
		             vz_th.text_dim, tl);
	}
}

static void rnn_draw(void *p, vz_frame *f)
{
	rnn_scene *s = p;
	int st = (int)floor(f->t + 1e-9);
	double frac = f->t - floor(f->t);
	const char *names[2] = {s->rnn_label, "LSTM"};
	for (int k = 0; k < 2; k++) {
		vz_rect ch = s->chart[k];
		vz_color col = k ? vz_okabe_ito[VZ_OI_ORANGE] : vz_okabe_ito[VZ_OI_BLUE];
		vz_text_draw(f, 0, s->chain[k].y + s->lh * 0.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, names[k]);
		if (!s->norm[k]) {
			vz_text_draw(f, ch.x, ch.y + ch.h / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
			             vz_tr("(not given)", "（未提供）"));
			continue;
		}
		draw_axis(f, s, ch);
		VZ_TEXTF_TR(f, 0, ch.y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "%s", "%s", "||dL/dh_t||");
		if (st == ST_BACKWARD)
			draw_bars(f, s, k, ch, 0, col, 0.8f);
		else if (st == ST_FORWARD && frac > 0) /* revealed from the last step back as it animates in */
			draw_bars(f, s, k, ch, s->T - (int)(frac * s->T), col, 0.8f);
		else if (st >= ST_CLIP) {
			draw_bars(f, s, k, ch, 0, vz_fade(col, 0.3), 0.8f);
			draw_bars(f, s, k + 2, ch, 0, vz_okabe_ito[VZ_OI_GREEN], 0.5f);
		}
		if (st >= ST_CLIP && s->clip > 0) {
			float y = ypos(s, ch, s->clip);
			vz_dashed(f, ch.x, y, ch.x + ch.w, y, 2, 6, vz_okabe_ito[VZ_OI_VERMILLION]);
			char t[48];
			VZ_SNPRINTF_TR(t, sizeof t, "clip %.3g", "裁剪阈值 %.3g", s->clip);
			vz_text_draw(f, ch.x + ch.w + s->cw * 0.3f, y - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
			             vz_okabe_ito[VZ_OI_VERMILLION], t);
		}
		draw_chain(f, s, k, st);
	}
}

/* ---------------------------------------------------------------- text */

static const char *source_of(const rnn_scene *s)
{
	return s->demo ? vz_tr("computed here (CPU, float64): a demonstration", "在此计算（CPU，float64）：演示") : s->source;
}

static double ratio(const rnn_scene *s, int i)
{
	const double *n = s->norm[i];
	return n && n[s->T - 1] > 0 ? n[0] / n[s->T - 1] : NAN;
}

static void rnn_title(void *p, char *buf, size_t cap)
{
	rnn_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "rnn: gradient norms back through %d steps, RNN and LSTM; %s",
	               "循环网络：梯度范数沿 %d 个时间步反向传播，RNN 与 LSTM；%s", s->T, source_of(s));
}

static void rnn_step_label(void *p, int step, char *buf, size_t cap)
{
	rnn_scene *s = p;
	char a[32], b[32];
	vzs_short(a, sizeof a, ratio(s, LM_VIZ_RNN));
	vzs_short(b, sizeof b, ratio(s, LM_VIZ_LSTM));
	if (step == ST_FORWARD)
		VZ_SNPRINTF_TR(buf, cap, "forward: the network unrolled over %d time steps, a loss L at the last",
		               "前向：网络沿 %d 个时间步展开，最后一步有损失 L", s->T);
	else if (step == ST_BACKWARD)
		VZ_SNPRINTF_TR(buf, cap, "backward: ||dL/dh_t|| at t = 1 over t = T: RNN %s, LSTM %s (log scale)",
		               "反向：t = 1 与 t = T 的 ||dL/dh_t|| 之比：RNN %s，LSTM %s（对数坐标）", a, b);
	else
		VZ_SNPRINTF_TR(buf, cap, "clipping: the gradient reaching each h_t scaled to norm <= %.3g before it goes on",
		               "裁剪：到达每个 h_t 的梯度先缩放到范数 <= %.3g 再继续反传", s->clip);
}

static void rnn_counters(void *p, vz_panel *pn)
{
	rnn_scene *s = p;
	static const char *const titles[NS] = {"RNN", "LSTM", "RNN clipped", "LSTM clipped"};
	static const char *const titles_zh[NS] = {"RNN", "LSTM", "RNN 裁剪后", "LSTM 裁剪后"};
	for (int i = 0; i < NS; i++) {
		if (!s->norm[i]) continue;
		int col = vz_panel_column(pn, vz_tr(titles[i], titles_zh[i]), source_of(s));
		vz_panel_set(pn, col, "grad_at_T", s->norm[i][s->T - 1]);
		vz_panel_set(pn, col, "grad_at_1", s->norm[i][0]);
		vz_panel_set(pn, col, "first_over_last", ratio(s, i));
	}
	VZ_NOTE_TR(pn, "grad_at_t: ||dL/dh_t||, L a loss at the last step (T = %d); first_over_last: grad_at_1 / "
	               "grad_at_T; clipped: the gradient reaching each h_t scaled to norm <= %.3g",
	           "grad_at_t：||dL/dh_t||，L 为最后一步的损失（T = %d）；first_over_last：grad_at_1 / grad_at_T；"
	           "裁剪后：到达每个 h_t 的梯度缩放到范数 <= %.3g",
	           s->T, s->clip);
}

static void rnn_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	rnn_scene *s = p;
	if (strcmp(c->kind, "bar") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s, t = %d: ||dL/dh_t|| = %.6g%s\n(%s)", "%s，t = %d：||dL/dh_t|| = %.6g%s\n（%s）",
		               c->group, c->index + 1, c->value,
		               strcmp(c->state, "clipped") == 0 ? vz_tr(" (clipped)", "（已裁剪）") : "", source_of(s));
	} else if (strcmp(c->kind, "cell") == 0) {
		int i = strcmp(c->group, "lstm") == 0 ? LM_VIZ_LSTM : LM_VIZ_RNN;
		VZ_SNPRINTF_TR(buf, cap, "%s cell at t = %d: h_%d from x_%d and h_%d", "%s 单元 t = %d：由 x_%d 和 h_%d 得到 h_%d",
		               i ? "LSTM" : s->rnn_label, c->index + 1, c->index + 1, c->index + 1, c->index);
		if (s->norm[i]) VZ_APPEND_TR(buf, cap, "\n||dL/dh_t|| = %.6g", "\n||dL/dh_t|| = %.6g", s->norm[i][c->index]);
	}
}

static const vz_option rnn_options[] = {
	{"length", VZ_OPT_INT, 2, MAX_T, NULL, "50", "the demonstration's time steps T"},
	{"hidden", VZ_OPT_INT, 1, MAX_H, NULL, "16", "the demonstration's hidden size H"},
	{"inputs", VZ_OPT_INT, 1, 64, NULL, "4", "the demonstration's input size"},
	{"gain", VZ_OPT_NUMBER, 0, 100, NULL, "1", "the demonstration RNN's W_hh times this (> 1: gradients can explode)"},
	{"input_scale", VZ_OPT_NUMBER, 0, 100, NULL, "1", "the demonstration's inputs N(0, 1) times this"},
	{"nonlinearity", VZ_OPT_CHOICE, 0, 0, "tanh relu", "tanh", "the demonstration RNN's"},
	{"clip", VZ_OPT_NUMBER, 0, 1e9, NULL, "1", "the norm the gradient reaching each h_t is clipped to (0: none)"},
	{"seed", VZ_OPT_INT, 0, 4294967295.0, NULL, "0", "the demonstration's random numbers"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_rnn = {
	.name = "rnn",
	.summary = "an RNN and an LSTM unrolled over time: the gradient norm reaching each step back (log scale), "
	           "and clipping",
	.patterns = "",
	.options = rnn_options,
	.create = rnn_create,
	.destroy = rnn_destroy,
	.steps = rnn_steps,
	.variants = rnn_variants,
	.variant_name = rnn_variant_name,
	.set_variant = rnn_set_variant,
	.layout = rnn_layout,
	.draw = rnn_draw,
	.title = rnn_title,
	.step_label = rnn_step_label,
	.counters = rnn_counters,
	.describe = rnn_describe,
};
