/*
 * attention.c — the attention scene: the weights softmax(q k^T / sqrt(d)) of every layer and head
 * of a model on one prompt, as heat maps over the tokens (rows: the query, columns: the key it
 * looks at), the causal mask's cells (keys after the query) hatched grey, and for one query the
 * keys it looks at as bars.
 *
 * Steps: 0 is the grid of all maps (rows: layers, columns: heads); step k = 1 + layer * heads +
 * head zooms into one map with the tokens along both axes and the query's row as bars (option
 * query, 1-based; default the last token). Hovering a cell or a query token lists the keys it
 * looks at most. Built from viz.show('attention', {weights = W, tokens = {...}}) (Lua computed W:
 * lua/lumen/viz.lua says where it came from in `source`), or from options: a demonstration of
 * random weights (Philox keyed by seed: q and k per head from a random embedding of a Tang poem
 * line, each head with its own preference for nearby tokens), labelled as such.
 * Read next: docs/viz.md ("attention"), lua/lumen/viz.lua (viz.attention), rnn.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_T    256 /* tokens */
#define MAX_MAPS 64  /* layers x heads */
#define TOK_CAP  32  /* bytes of a token's text */
#define TOP_K    3

static const char *const state_names[] = {"weight", "masked", "query"};
enum { S_WEIGHT, S_MASKED, S_QUERY };

typedef struct att_scene {
	char fname[32], source[160];
	bool demo, causal;
	int L, H, T, query; /* query: 0-based, the row the zoomed step shows */
	double *w;          /* L x H x T x T */
	char (*tok)[TOK_CAP];
	vz_color *col;      /* L x H x T x T */
	uint8_t *state;
	bool *hatched;
	double *entropy, *dist; /* per map: the mean over queries */
	vzs_grid grid[MAX_MAPS + 1];
	/* layout (world) */
	float key_w; /* the widest token */
	float lh, cw, margin, top, map, gap, label_w, zoom_x, zoom_y, zoom, bars_x, bars_w, bar_h;
} att_scene;

static const char demo_text[] = "床前明月光，疑是地上霜。";

/* ---------------------------------------------------------------- the data */

static int map_count(const att_scene *s) { return s->L * s->H; }
static const double *row_of(const att_scene *s, int m, int i) { return s->w + ((size_t)m * s->T + (size_t)i) * s->T; }

/* n values of N(0, 1) from Philox4x32-10 keyed by seed and stream, by Box-Muller. */
static void normals(double *out, int n, int64_t seed, uint32_t stream)
{
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)((uint64_t)seed >> 32) ^ stream};
	for (int i = 0; i < n; i += 2) {
		uint32_t ctr[4] = {(uint32_t)(i / 2), 0, 0, 0}, r[4];
		lm_philox4x32(ctr, key, r);
		double u1 = ((double)r[0] + 1.0) / 4294967297.0, u2 = (double)r[1] / 4294967296.0;
		double rad = sqrt(-2 * log(u1));
		out[i] = rad * cos(2 * M_PI * u2);
		if (i + 1 < n) out[i + 1] = rad * sin(2 * M_PI * u2);
	}
}

/* The demonstration: x (T x D) random, per head q = x Wq, k = x Wk (D x d), scores q k^T / sqrt(d)
 * minus slope_h |i - j| (head h prefers nearer keys the larger its slope), the mask, softmax. */
static void demo_weights(att_scene *s, int64_t seed)
{
	enum { D = 16, DH = 8 };
	int T = s->T;
	double x[MAX_T * D], wq[D * DH], wk[D * DH], q[MAX_T * DH], k[MAX_T * DH];
	normals(x, T * D, seed, 0);
	for (int m = 0; m < map_count(s); m++) {
		normals(wq, D * DH, seed, 1 + 2 * (uint32_t)m);
		normals(wk, D * DH, seed, 2 + 2 * (uint32_t)m);
		for (int i = 0; i < T; i++)
			for (int e = 0; e < DH; e++) {
				double a = 0, b = 0;
				for (int c = 0; c < D; c++) a += x[i * D + c] * wq[c * DH + e], b += x[i * D + c] * wk[c * DH + e];
				q[i * DH + e] = a / sqrt(D), k[i * DH + e] = b / sqrt(D);
			}
		double slope = 1.5 * (double)(m % s->H) / (double)(s->H > 1 ? s->H - 1 : 1);
		for (int i = 0; i < T; i++) {
			double *row = s->w + ((size_t)m * T + (size_t)i) * T, mx = -INFINITY, sum = 0;
			for (int j = 0; j < T; j++) {
				double d = 0;
				for (int e = 0; e < DH; e++) d += q[i * DH + e] * k[j * DH + e];
				row[j] = s->causal && j > i ? -INFINITY : 2 * d / sqrt(DH) - slope * fabs((double)(i - j));
				mx = fmax(mx, row[j]);
			}
			for (int j = 0; j < T; j++) sum += row[j] = exp(row[j] - mx);
			for (int j = 0; j < T; j++) row[j] /= sum;
		}
	}
}

/* Splits the demonstration's text into its characters (one token each). */
static int demo_tokens(att_scene *s, int T)
{
	const unsigned char *p = (const unsigned char *)demo_text;
	int n = 0;
	while (*p && n < T) {
		const unsigned char *q = p;
		vz_utf8_next(&p);
		snprintf(s->tok[n++], TOK_CAP, "%.*s", (int)(p - q), (const char *)q);
	}
	for (; n < T; n++) snprintf(s->tok[n], TOK_CAP, "t%d", n + 1);
	return n;
}

static void colours(att_scene *s)
{
	int T = s->T;
	for (int m = 0; m < map_count(s); m++) {
		double ent = 0, dist = 0;
		for (int i = 0; i < T; i++)
			for (int j = 0; j < T; j++) {
				size_t at = ((size_t)m * T + (size_t)i) * T + (size_t)j;
				double v = s->w[at];
				bool masked = s->causal && j > i;
				s->hatched[at] = masked;
				s->state[at] = masked ? S_MASKED : S_WEIGHT;
				s->col[at] = masked ? VZ_RGB(225, 225, 225) : vz_viridis(sqrt(fmax(v, 0)));
				if (v > 0) ent -= v * log(v);
				dist += v * (double)(i - j);
			}
		s->entropy[m] = ent / T;
		s->dist[m] = dist / T;
	}
}

static void att_destroy(void *p)
{
	att_scene *s = p;
	if (!s) return;
	for (int i = 0; i <= MAX_MAPS; i++) vzs_grid_free(&s->grid[i]);
	vz_free(s->w), vz_free(s->tok), vz_free(s->col), vz_free(s->state), vz_free(s->hatched);
	vz_free(s->entropy), vz_free(s->dist);
	vz_free(s);
}

/* Checks what Lua gave (lua/lumen/viz.lua checks it first, with the same words). */
static lm_status check_given(const lm_viz_attention *a, const char *fname)
{
	if (a->layers < 1 || a->heads < 1 || a->T < 1)
		return lm_set_error(LM_ERR_SHAPE, "%s: the attention scene needs weights of shape (layers, heads, T, T), got "
		                    "%d x %d x %d", fname, a->layers, a->heads, a->T);
	if (a->layers * a->heads > MAX_MAPS || a->T > MAX_T)
		return lm_set_error(LM_ERR_ARG, "%s: the attention scene draws at most %d maps (layers x heads) of %d tokens; "
		                    "got %d x %d of %d", fname, MAX_MAPS, MAX_T, a->layers, a->heads, a->T);
	size_t n = (size_t)a->layers * a->heads * a->T * a->T;
	for (size_t i = 0; i < n; i++) {
		int j = (int)(i % (size_t)a->T), q = (int)(i / (size_t)a->T % (size_t)a->T);
		if (!isfinite(a->w[i]) || a->w[i] < 0)
			return lm_set_error(LM_ERR_ARG, "%s: the attention scene's weight at query %d, key %d is %g (weights are "
			                    "probabilities)", fname, q + 1, j + 1, a->w[i]);
		if (a->causal && j > q && a->w[i] != 0)
			return lm_set_error(LM_ERR_ARG, "%s: the attention scene's weights are not causal: query %d gives key %d "
			                    "weight %g", fname, q + 1, j + 1, a->w[i]);
	}
	return LM_OK;
}

static void *att_create(const vz_build *b)
{
	const lm_viz_attention *a = b->attention;
	if (a && check_given(a, b->fname) != LM_OK) return NULL;
	att_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->demo = !a;
	s->L = a ? a->layers : (int)vz_opt_int(b->opts, "layers", 2);
	s->H = a ? a->heads : (int)vz_opt_int(b->opts, "heads", 4);
	s->T = a ? a->T : (int)vz_opt_int(b->opts, "tokens", 12);
	s->causal = a ? a->causal : atoi(vz_opt_string(b->opts, "causal", "1")) == 1 ||
	                                strcmp(vz_opt_string(b->opts, "causal", "1"), "true") == 0;
	if (s->L * s->H > MAX_MAPS) {
		lm_set_error(LM_ERR_ARG, "%s: the attention scene draws at most %d maps; layers x heads is %d", b->fname,
		             MAX_MAPS, s->L * s->H);
		att_destroy(s);
		return NULL;
	}
	size_t n = (size_t)map_count(s) * s->T * s->T;
	s->w = vz_malloc(n * sizeof *s->w);
	s->col = vz_malloc(n * sizeof *s->col);
	s->state = vz_malloc(n);
	s->hatched = vz_malloc(n * sizeof *s->hatched);
	s->tok = vz_calloc((size_t)s->T, sizeof *s->tok);
	s->entropy = vz_calloc((size_t)map_count(s), sizeof *s->entropy);
	s->dist = vz_calloc((size_t)map_count(s), sizeof *s->dist);
	if (!s->w || !s->col || !s->state || !s->hatched || !s->tok || !s->entropy || !s->dist) {
		vz_error_prefix(0, b->fname);
		att_destroy(s);
		return NULL;
	}
	if (a) {
		memcpy(s->w, a->w, n * sizeof *s->w);
		for (int i = 0; i < s->T; i++) {
			snprintf(s->tok[i], TOK_CAP, "%s", a->tokens && a->tokens[i] ? a->tokens[i] : "?");
			vz_utf8_trim(s->tok[i]);
		}
		snprintf(s->source, sizeof s->source, "%s", a->source && *a->source ? a->source : "given by the caller");
	} else {
		demo_tokens(s, s->T);
		demo_weights(s, vz_opt_int(b->opts, "seed", 0));
	}
	int64_t q = vz_opt_int(b->opts, "query", 0);
	if (q > s->T) {
		lm_set_error(LM_ERR_ARG, "%s: the attention scene's query %lld is past the %d tokens", b->fname, (long long)q,
		             s->T);
		att_destroy(s);
		return NULL;
	}
	s->query = q >= 1 ? (int)q - 1 : s->T - 1;
	colours(s);
	return s;
}

/* ---------------------------------------------------------------- layout */

static int att_steps(void *p) { return 1 + map_count(p); }
static int att_variants(void *p) { (void)p; return 1; }
static const char *att_variant_name(void *p, int v) { (void)p, (void)v; return "weights"; }
static void att_set_variant(void *p, int v) { (void)p, (void)v; }

static void att_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	att_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 440 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	/* the grid: "layer 12" on the left, "head 8" above, the colour bar below */
	s->margin = vz_text_width(f, VZ_FONT_SMALL, vz_tr("layer 12", "第 12 层")) + s->cw;
	s->top = s->lh * 1.4f;
	s->gap = s->cw;
	float legend = s->lh * 2;
	s->map = fminf((W - s->margin - (float)(s->H - 1) * s->gap) / (float)s->H,
	               (H - s->top - legend - (float)(s->L - 1) * s->gap) / (float)s->L);
	/* the zoom: tokens left and above, the map, then the bars of the query's row */
	float tw = 0;
	for (int i = 0; i < s->T; i++) tw = fmaxf(tw, vz_text_width(f, VZ_FONT_SMALL, s->tok[i]));
	s->label_w = tw + vz_text_width(f, VZ_FONT_SMALL, "99 ") + s->cw;
	s->zoom_x = s->label_w;
	s->zoom_y = s->lh * 1.5f + s->label_w;
	s->bars_w = fminf(W * 0.38f, 60 * s->cw);
	s->zoom = fminf(W - s->bars_w - s->zoom_x - 3 * s->cw, H - s->zoom_y - legend);
	s->bars_x = s->zoom_x + s->zoom + 3 * s->cw;
	s->bar_h = fminf(s->lh * 1.2f, (s->zoom_y + s->zoom - s->lh * 2.9f) / (float)s->T); /* ends with the map */
	s->key_w = 0;
	for (int i = 0; i < s->T; i++) s->key_w = fmaxf(s->key_w, vz_text_width(f, VZ_FONT_SMALL, s->tok[i]));
	*ww = W;
	*wh = H;
}

/* ---------------------------------------------------------------- drawing */

static int step_of(const vz_frame *f) { return (int)floor(f->t + 1e-9); }

static vzs_matrix matrix_of(att_scene *s, int m, bool zoomed)
{
	size_t at = (size_t)m * s->T * s->T;
	vzs_matrix mx = {s->T, s->T, s->col + at, s->w + at, s->state + at, state_names, "weight", "attention",
	                 (int32_t)at, m, zoomed, s->hatched + at};
	return mx;
}

/* A colour bar: weight 0 .. 1 on the square-root scale, the mask's colour, and the source. */
static void legend(vz_frame *f, att_scene *s, float x, float y, float w)
{
	float bw = fminf(w * 0.25f, 140 * f->scale);
	x += vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "0 ") ;
	for (int i = 0; i < 32; i++) {
		double t = (i + 0.5) / 32;
		vz_fill(f, vz_r(x + bw * (float)i / 32, y, bw / 32 + 0.5f, s->lh), vz_viridis(sqrt(t)));
	}
	x += bw;
	x += vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
	                  vz_tr(" 1 weight (colour: its square root)  ", " 1 权重（颜色：其平方根）  "));
	if (s->causal) {
		vz_hatch(f, vz_r(x, y, s->lh, s->lh), VZ_RGB(225, 225, 225), vz_th.hatch);
		x += s->lh + s->cw * 0.5f;
		x += vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
		                  vz_tr("masked (causal: a later key)  ", "被掩码（因果：后面的键）  "));
	}
	char t[200];
	snprintf(t, sizeof t, "%s", s->source[0] ? s->source : vz_tr("random weights: a demonstration", "随机权重：演示"));
	vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, w - x);
	vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, t);
}

static void draw_grid(vz_frame *f, att_scene *s)
{
	char t[48];
	for (int h = 0; h < s->H; h++) {
		VZ_SNPRINTF_TR(t, sizeof t, "head %d", "头 %d", h + 1);
		vz_text_draw(f, s->margin + (float)h * (s->map + s->gap) + s->map / 2, 0, VZ_FONT_SMALL, VZ_ALIGN_CENTER,
		             vz_th.text, t);
	}
	for (int l = 0; l < s->L; l++) {
		float y = s->top + (float)l * (s->map + s->gap);
		VZ_SNPRINTF_TR(t, sizeof t, "layer %d", "第 %d 层", l + 1);
		vz_text_draw(f, 0, y + s->map / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		for (int h = 0; h < s->H; h++) {
			int m = l * s->H + h;
			vz_rect r = vz_r(s->margin + (float)h * (s->map + s->gap), y, s->map, s->map);
			vzs_matrix mx = matrix_of(s, m, false);
			vzs_matrix_draw(f, &s->grid[m], r, &mx);
			vz_outline(f, r, 1, vz_th.panel_line);
		}
	}
	legend(f, s, 0, s->top + (float)s->L * (s->map + s->gap), s->margin + (float)s->H * (s->map + s->gap));
}

/* Token labels every k-th so that they do not touch. */
static int label_every(const att_scene *s, float cell)
{
	int k = 1;
	while (cell * (float)k < s->lh * 1.05f && k < s->T) k++;
	return k;
}

static void draw_zoom(vz_frame *f, att_scene *s, int m)
{
	int T = s->T, l = m / s->H, h = m % s->H;
	float cell = s->zoom / (float)T;
	char t[64];
	VZ_TEXTF_TR(f, 0, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	            "layer %d, head %d: rows are queries, columns the keys they look at", "第 %d 层，头 %d：行是查询，列是它所看的键",
	            l + 1, h + 1);
	vz_rect r = vz_r(s->zoom_x, s->zoom_y, s->zoom, s->zoom);
	vzs_matrix mx = matrix_of(s, m, true);
	for (int j = 0; j < T; j++) s->state[(size_t)m * T * T + (size_t)s->query * T + (size_t)j] =
		                           s->causal && j > s->query ? S_MASKED : S_QUERY;
	vzs_matrix_draw(f, &s->grid[MAX_MAPS], r, &mx);
	for (int j = 0; j < T; j++) s->state[(size_t)m * T * T + (size_t)s->query * T + (size_t)j] =
		                           s->causal && j > s->query ? S_MASKED : S_WEIGHT;
	vz_outline(f, r, 1, vz_th.panel_line);
	vz_outline(f, vz_r(r.x - 1, r.y + (float)s->query * cell - 1, r.w + 2, cell + 2), 2, vz_th.highlight);
	int k = label_every(s, cell), kk = 1; /* keys: written across, so spaced by their width */
	while (cell * (float)kk < fmaxf(s->key_w, vz_text_width(f, VZ_FONT_TINY, "999")) + s->cw * 0.5f && kk < T) kk++;
	k = k > kk ? k : kk;
	for (int i = 0; i < T; i += k) { /* queries down the left, keys across the top (rotated: written down) */
		bool q = i == s->query;
		snprintf(t, sizeof t, "%d %s", i + 1, s->tok[i]);
		vz_rect lr = vz_r(0, r.y + (float)i * cell + cell / 2 - s->lh / 2, s->label_w - s->cw, s->lh);
		vz_text_draw(f, lr.x + lr.w, lr.y, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, q ? vz_th.highlight : vz_th.text, t);
		vz_cell *c = vz_cell_add(f, lr, "token");
		c->group = "query", c->index = i, c->tag = m, c->state = q ? "query" : "token";
		vz_rect kr = vz_r(r.x + (float)i * cell + cell / 2 - s->cw, s->lh * 1.5f, s->cw * 2, s->label_w - s->cw);
		vz_text_draw(f, kr.x + s->cw, kr.y + kr.h - s->lh, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text, s->tok[i]);
		if (s->lh * 2.2f <= kr.h) {
			snprintf(t, sizeof t, "%d", i + 1);
			vz_text_draw(f, kr.x + s->cw, kr.y + kr.h - 2.1f * s->lh, VZ_FONT_TINY, VZ_ALIGN_CENTER, vz_th.text_dim, t);
		}
		c = vz_cell_add(f, kr, "token");
		c->group = "key", c->index = i, c->tag = m, c->state = "token";
	}
	/* the query's row as bars */
	const double *row = row_of(s, m, s->query);
	float bx = s->bars_x, y0 = s->lh * 1.5f, lw = s->label_w, bw = s->bars_w - lw - 6 * s->cw;
	VZ_TEXTF_TR(f, bx, y0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "where query %d '%s' looks:",
	            "查询 %d「%s」看向哪里：", s->query + 1, s->tok[s->query]);
	y0 += s->lh * 1.4f;
	int kb = s->bar_h < s->lh ? label_every(s, s->bar_h) : 1;
	for (int j = 0; j < T; j++) {
		float y = y0 + (float)j * s->bar_h;
		bool masked = s->causal && j > s->query;
		if (j % kb == 0) {
			snprintf(t, sizeof t, "%d %s", j + 1, s->tok[j]);
			vz_text_draw(f, bx + lw - s->cw, y + s->bar_h / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_RIGHT,
			             masked ? vz_th.text_dim : vz_th.text, t);
		}
		vz_rect br = vz_r(bx + lw, y + s->bar_h * 0.1f, fmaxf((float)row[j] * bw, masked ? 0 : 1), s->bar_h * 0.8f);
		if (masked) vz_hatch(f, vz_r(bx + lw, br.y, 2 * s->cw, br.h), VZ_RGB(225, 225, 225), vz_th.hatch);
		else vz_fill(f, br, vz_viridis(sqrt(row[j])));
		if (j % kb == 0 && !masked) {
			snprintf(t, sizeof t, "%.3f", row[j]);
			vz_text_draw(f, br.x + br.w + s->cw * 0.5f, y + s->bar_h / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
			             vz_th.text_dim, t);
		}
		vz_cell *c = vz_cell_add(f, vz_r(bx, y, s->bars_w, s->bar_h), "bar");
		c->group = "query", c->index = j, c->tag = m, c->value = row[j], c->has_value = true;
		c->state = masked ? "masked" : "weight";
	}
	legend(f, s, 0, r.y + r.h + s->lh * 0.5f, s->bars_x + s->bars_w);
}

static void att_draw(void *p, vz_frame *f)
{
	att_scene *s = p;
	int st = step_of(f);
	if (st <= 0) draw_grid(f, s);
	else draw_zoom(f, s, st - 1 < map_count(s) ? st - 1 : map_count(s) - 1);
}

/* ---------------------------------------------------------------- text */

static void att_title(void *p, char *buf, size_t cap)
{
	att_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "attention: %d layer%s x %d head%s over %d tokens%s; %s",
	               "注意力：%d 层%s x %d 个头%s，%d 个词元%s；%s", s->L, s->L > 1 && !vz_zh() ? "s" : "", s->H,
	               s->H > 1 && !vz_zh() ? "s" : "", s->T, s->causal ? vz_tr(", causal", "，因果") : "",
	               s->demo ? vz_tr("random weights: a demonstration", "随机权重：演示") : s->source);
}

static void att_step_label(void *p, int step, char *buf, size_t cap)
{
	att_scene *s = p;
	if (step == 0) {
		VZ_SNPRINTF_TR(buf, cap, "every layer and head: row i is where token i looks (each row sums to 1)%s",
		               "每层每个头：第 i 行是词元 i 看向哪里（每行之和为 1）%s",
		               s->causal ? vz_tr("; grey: the causal mask", "；灰色：因果掩码") : "");
		return;
	}
	int m = step - 1, l = m / s->H, h = m % s->H;
	VZ_SNPRINTF_TR(buf, cap, "layer %d, head %d: mean entropy %.3g nats, looks back %.3g tokens on average",
	               "第 %d 层，头 %d：平均熵 %.3g nats，平均回看 %.3g 个词元", l + 1, h + 1, s->entropy[m], s->dist[m]);
}

static void att_counters(void *p, vz_panel *pn)
{
	att_scene *s = p;
	const char *src = s->demo ? vz_tr("random weights: a demonstration", "随机权重：演示") : s->source;
	for (int l = 0; l < s->L && l < VZ_PANEL_COLS; l++) {
		char t[32];
		VZ_SNPRINTF_TR(t, sizeof t, "layer %d", "第 %d 层", l + 1);
		int col = vz_panel_column(pn, t, src);
		double e = 0, d = 0, self = 0;
		for (int h = 0; h < s->H; h++) {
			int m = l * s->H + h;
			e += s->entropy[m], d += s->dist[m];
			for (int i = 0; i < s->T; i++) self += row_of(s, m, i)[i];
		}
		vz_panel_set(pn, col, "entropy", e / s->H);
		vz_panel_set(pn, col, "looks_back", d / s->H);
		vz_panel_set(pn, col, "self_weight", self / (s->H * s->T));
	}
	VZ_NOTE_TR(pn, "means over heads and queries: entropy -sum w log w (nats; uniform over n keys: log n), "
	               "looks_back sum w (i - j) (tokens), self_weight w_ii; %d layers shown of %d",
	           "对头和查询取平均：熵 −Σ w log w（nats；均匀分布在 n 个键上为 log n），looks_back Σ w (i − j)（词元），"
	           "self_weight w_ii；显示 %d 层，共 %d 层",
	           s->L < VZ_PANEL_COLS ? s->L : VZ_PANEL_COLS, s->L);
}

/* ---------------------------------------------------------------- hover */

/* "'月' 0.41, '光' 0.22, '明' 0.12": the top keys of query i in map m. */
static void top_keys(const att_scene *s, int m, int i, char *buf, size_t cap)
{
	const double *row = row_of(s, m, i);
	int used[TOP_K];
	for (int k = 0; k < TOP_K && k < s->T; k++) {
		int best = -1;
		for (int j = 0; j < s->T; j++) {
			bool taken = false;
			for (int u = 0; u < k; u++) taken |= used[u] == j;
			if (!taken && (best < 0 || row[j] > row[best])) best = j;
		}
		used[k] = best;
		vz_append(buf, cap, "%s%d '%s' %.3f", k ? ", " : "", best + 1, s->tok[best], row[best]);
	}
}

static void att_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	att_scene *s = p;
	int m = c->tag;
	if (m < 0 || m >= map_count(s)) return;
	int l = m / s->H, h = m % s->H;
	if (strcmp(c->kind, "weight") == 0) {
		if (c->rows > 0 && c->cols > 0) {
			vzs_matrix mx = matrix_of(s, m, false);
			vzs_matrix_fill(c, &mx, (int64_t)c->row * s->T + c->col);
		}
		int i = c->row, j = c->col;
		if (i < 0 || j < 0 || i >= s->T || j >= s->T) return;
		VZ_SNPRINTF_TR(buf, cap, "layer %d, head %d: query %d '%s' -> key %d '%s': weight %.4g%s\n",
		               "第 %d 层，头 %d：查询 %d「%s」→ 键 %d「%s」：权重 %.4g%s\n", l + 1, h + 1, i + 1, s->tok[i], j + 1,
		               s->tok[j], row_of(s, m, i)[j],
		               s->causal && j > i ? vz_tr(" (masked: the key comes later)", "（被掩码：键在后面）") : "");
		VZ_APPEND_TR(buf, cap, "query %d looks most at: ", "查询 %d 最关注：", i + 1);
		top_keys(s, m, i, buf, cap);
	} else if (strcmp(c->kind, "token") == 0 && strcmp(c->group, "query") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "query %d '%s' (layer %d, head %d) looks most at: ",
		               "查询 %d「%s」（第 %d 层，头 %d）最关注：", c->index + 1, s->tok[c->index], l + 1, h + 1);
		top_keys(s, m, c->index, buf, cap);
	} else if (strcmp(c->kind, "token") == 0) {
		double sum = 0;
		for (int i = 0; i < s->T; i++) sum += row_of(s, m, i)[c->index];
		VZ_SNPRINTF_TR(buf, cap, "key %d '%s': the queries give it %.4g in all (column sum)",
		               "键 %d「%s」：所有查询给它的权重之和 %.4g", c->index + 1, s->tok[c->index], sum);
	} else if (strcmp(c->kind, "bar") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "query %d '%s' -> key %d '%s': weight %.4g", "查询 %d「%s」→ 键 %d「%s」：权重 %.4g",
		               s->query + 1, s->tok[s->query], c->index + 1, s->tok[c->index], c->value);
	}
}

static const vz_option att_options[] = {
	{"query", VZ_OPT_INT, 0, MAX_T, NULL, "0 (the last token)", "the query whose row the zoomed steps show (1-based)"},
	{"layers", VZ_OPT_INT, 1, 8, NULL, "2", "the demonstration's layers"},
	{"heads", VZ_OPT_INT, 1, 8, NULL, "4", "the demonstration's heads"},
	{"tokens", VZ_OPT_INT, 1, MAX_T, NULL, "12", "the demonstration's tokens (a Tang poem line, then t13, ...)"},
	{"causal", VZ_OPT_CHOICE, 0, 0, "1 0 true false", "1", "the demonstration masks later keys"},
	{"seed", VZ_OPT_INT, 0, 4294967295.0, NULL, "0", "the demonstration's random numbers"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_attention = {
	.name = "attention",
	.summary = "attention weights per layer and head as heat maps over the tokens, the causal mask, where a "
	           "query looks",
	.patterns = "",
	.options = att_options,
	.create = att_create,
	.destroy = att_destroy,
	.steps = att_steps,
	.variants = att_variants,
	.variant_name = att_variant_name,
	.set_variant = att_set_variant,
	.layout = att_layout,
	.draw = att_draw,
	.title = att_title,
	.step_label = att_step_label,
	.counters = att_counters,
	.describe = att_describe,
};
