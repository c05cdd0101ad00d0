/*
 * draw.c — recording a frame: shapes become instances (shaders/batch.vert), grouped into batches
 * by clip rectangle, image and layer; cells record what can be picked, and every text where it was
 * drawn (viz.layout('text'): the label tests check that none is clipped or overlaps another).
 * Within a batch the GPU draws images, then fills, then lines, then text (gpu.c); what must cover
 * text (a tooltip) starts a new layer.
 *
 * Design: scenes draw in world coordinates (their layout, in pixels at zoom 1); the view turns
 * them into drawable pixels here, on the CPU, so the GPU sees one coordinate system and one
 * instanced draw per batch. Shapes entirely outside the clip are dropped before they cost
 * anything. Allocation failures mark the frame failed (it is then drawn incomplete, never
 * crashes). Read next: gpu.c (how batches are drawn), text.c (glyphs).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/vz.h"

void vz_frame_init(vz_frame *f) { memset(f, 0, sizeof *f); }

void vz_frame_free(vz_frame *f)
{
	vz_free(f->inst);
	vz_free(f->batches);
	vz_free(f->cells);
	vz_free(f->texts);
	memset(f, 0, sizeof *f);
}

void vz_frame_begin(vz_frame *f, int width, int height, float scale, vz_text *text)
{
	f->ninst = f->nbatches = f->ncells = f->ntexts = f->layer = 0;
	f->failed = false;
	f->width = width;
	f->height = height;
	f->scale = scale > 0 ? scale : 1;
	f->text = text;
	f->world = false;
	f->clip = vz_r(0, 0, (float)width, (float)height);
	if (f->area.w <= 0) f->area = f->clip;
	if (f->view.zoom <= 0) f->view.zoom = 1;
}

/* ---------------------------------------------------------------- coordinates */

void vz_world(vz_frame *f)
{
	f->world = true;
	vz_clip(f, f->area);
}

void vz_overlay(vz_frame *f)
{
	f->world = false;
	vz_clip(f, f->area);
}

void vz_screen(vz_frame *f)
{
	f->world = false;
	vz_clip(f, vz_r(0, 0, (float)f->width, (float)f->height));
}

void vz_clip(vz_frame *f, vz_rect r) { f->clip = r; }

void vz_layer(vz_frame *f)
{
	f->new_layer = true;
	f->layer++;
}

float vz_sx(const vz_frame *f, float x)
{
	return f->world ? f->area.x + (float)((x - f->view.pan_x) * f->view.zoom) : x;
}

float vz_sy(const vz_frame *f, float y)
{
	return f->world ? f->area.y + (float)((y - f->view.pan_y) * f->view.zoom) : y;
}

float vz_zoom(const vz_frame *f) { return f->world ? (float)f->view.zoom : 1.0f; }

static vz_rect to_screen(const vz_frame *f, vz_rect r)
{
	if (!f->world) return r;
	float z = (float)f->view.zoom;
	return vz_r(vz_sx(f, r.x), vz_sy(f, r.y), r.w * z, r.h * z);
}

static bool overlaps(vz_rect a, vz_rect b)
{
	return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

bool vz_visible(const vz_frame *f, vz_rect r) { return overlaps(to_screen(f, r), f->clip); }

/* ---------------------------------------------------------------- instances */

static void set_color(float *dst, vz_color c)
{
	dst[0] = c.r / 255.0f;
	dst[1] = c.g / 255.0f;
	dst[2] = c.b / 255.0f;
	dst[3] = c.a / 255.0f;
}

/* A new instance in the batch for the current clip and image (a new batch when they change). */
static vz_instance *push(vz_frame *f, int kind, vz_image *image)
{
	if (f->failed) return NULL;
	vz_batch *last = f->nbatches ? &f->batches[f->nbatches - 1] : NULL;
	bool same = last && !f->new_layer && memcmp(&last->clip, &f->clip, sizeof f->clip) == 0 &&
	            (kind != VZ_KIND_IMAGE || last->image == NULL || last->image == image);
	f->new_layer = false;
	if (!same) {
		if (!vz_grow((void **)&f->batches, &f->cap_batches, f->nbatches + 1, sizeof *f->batches, 1024)) {
			f->failed = true;
			return NULL;
		}
		last = &f->batches[f->nbatches++];
		last->first = f->ninst;
		last->count = 0;
		last->clip = f->clip;
		last->image = NULL;
	}
	if (kind == VZ_KIND_IMAGE) last->image = image;
	if (!vz_grow((void **)&f->inst, &f->cap_inst, f->ninst + 1, sizeof *f->inst, 1024)) {
		f->failed = true;
		return NULL;
	}
	vz_instance *in = &f->inst[f->ninst++];
	memset(in, 0, sizeof *in);
	in->kind = (float)kind;
	last->count++;
	return in;
}

/* An instance of kind over the screen rectangle s (none where s misses the clip). */
static void screen_shape(vz_frame *f, vz_rect s, int kind, vz_color c, vz_color c2, float b0)
{
	if (s.w <= 0 || s.h <= 0 || !overlaps(s, f->clip) || c.a == 0) return;
	vz_instance *in = push(f, kind, NULL);
	if (!in) return;
	in->a[0] = s.x;
	in->a[1] = s.y;
	in->a[2] = s.w;
	in->a[3] = s.h;
	in->b[0] = b0;
	set_color(in->color, c);
	set_color(in->color2, c2);
}

static void rect_shape(vz_frame *f, vz_rect r, int kind, vz_color c, vz_color c2, float b0)
{
	screen_shape(f, to_screen(f, r), kind, c, c2, b0);
}

void vz_fill(vz_frame *f, vz_rect r, vz_color c) { rect_shape(f, r, VZ_KIND_FILL, c, c, 0); }

/* In world mode, widths are in points (times the UI scale): a scene's lines and borders look the
 * same on a HiDPI display. The chrome, in screen mode, scales its own. */
static float points(const vz_frame *f, float w) { return f->world ? w * f->scale : w; }

void vz_cell_fill(vz_frame *f, vz_rect r, vz_color fill, float border, vz_color line)
{
	rect_shape(f, r, VZ_KIND_FILL, fill, line, points(f, border));
}

void vz_hatch(vz_frame *f, vz_rect r, vz_color bg, vz_color stripes)
{
	rect_shape(f, r, VZ_KIND_HATCH, bg, stripes, 0);
}

/* A small outline is one quad whose fragments inside the band are discarded; a large one is four
 * filled strips that partition the band (the same pixels but where a pixel centre lies exactly at
 * the band's inner edge on the top or left), since under llvmpipe a frame costs what its fragments
 * cost: the curves scene's two plot outlines shaded 467,000 pixels a frame to draw 3,900. */
void vz_outline(vz_frame *f, vz_rect r, float width, vz_color c)
{
	vz_rect s = to_screen(f, r);
	float b = points(f, width);
	if (s.w * s.h <= 4096 || s.w <= 4 * b || s.h <= 4 * b) {
		screen_shape(f, s, VZ_KIND_OUTLINE, c, c, b);
		return;
	}
	screen_shape(f, vz_r(s.x, s.y, s.w, b), VZ_KIND_FILL, c, c, 0);
	screen_shape(f, vz_r(s.x, s.y + s.h - b, s.w, b), VZ_KIND_FILL, c, c, 0);
	screen_shape(f, vz_r(s.x, s.y + b, b, s.h - 2 * b), VZ_KIND_FILL, c, c, 0);
	screen_shape(f, vz_r(s.x + s.w - b, s.y + b, b, s.h - 2 * b), VZ_KIND_FILL, c, c, 0);
}

void vz_disc(vz_frame *f, float cx, float cy, float radius, vz_color c)
{
	rect_shape(f, vz_r(cx - radius, cy - radius, 2 * radius, 2 * radius), VZ_KIND_DISC, c, c, 0);
}

void vz_draw_image(vz_frame *f, vz_rect r, vz_image *im)
{
	vz_rect s = to_screen(f, r);
	if (!im || s.w <= 0 || s.h <= 0 || !overlaps(s, f->clip)) return;
	vz_instance *in = push(f, VZ_KIND_IMAGE, im);
	if (!in) return;
	in->a[0] = s.x;
	in->a[1] = s.y;
	in->a[2] = s.w;
	in->a[3] = s.h;
	in->b[0] = 0;
	in->b[1] = 0;
	in->b[2] = 1;
	in->b[3] = 1;
	set_color(in->color, VZ_RGB(255, 255, 255));
}

/* A segment in screen pixels (kind line or head), dropped when outside the clip. */
static void segment(vz_frame *f, int kind, float x0, float y0, float x1, float y1, float w,
                    vz_color c)
{
	float pad = w + 2;
	vz_rect box = vz_r(fminf(x0, x1) - pad, fminf(y0, y1) - pad, fabsf(x1 - x0) + 2 * pad,
	                   fabsf(y1 - y0) + 2 * pad);
	if (!overlaps(box, f->clip) || c.a == 0) return;
	vz_instance *in = push(f, kind, NULL);
	if (!in) return;
	in->a[0] = x0;
	in->a[1] = y0;
	in->a[2] = x1;
	in->a[3] = y1;
	in->b[0] = w;
	set_color(in->color, c);
	set_color(in->color2, c);
}

void vz_line(vz_frame *f, float x0, float y0, float x1, float y1, float width, vz_color c)
{
	float z = vz_zoom(f);
	float w = points(f, width) * (f->world ? fmaxf(0.6f, fminf(z, 2.0f)) : 1.0f);
	segment(f, VZ_KIND_LINE, vz_sx(f, x0), vz_sy(f, y0), vz_sx(f, x1), vz_sy(f, y1), w, c);
}

void vz_dashed(vz_frame *f, float x0, float y0, float x1, float y1, float width, float dash,
               vz_color c)
{
	float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
	if (len <= 0 || dash <= 0) return;
	int n = (int)(len / dash);
	if (n > 2000) n = 2000;
	for (int i = 0; i < n; i += 2) {
		float a = i * dash / len, b = fminf(1.0f, (i + 1) * dash / len);
		vz_line(f, x0 + a * dx, y0 + a * dy, x0 + b * dx, y0 + b * dy, width, c);
	}
}

void vz_arrow(vz_frame *f, float x0, float y0, float x1, float y1, float width, float head,
              vz_color c)
{
	float sx0 = vz_sx(f, x0), sy0 = vz_sy(f, y0), sx1 = vz_sx(f, x1), sy1 = vz_sy(f, y1);
	float z = vz_zoom(f);
	float k = f->world ? fmaxf(0.5f, fminf(z, 2.0f)) * f->scale : 1.0f;
	float w = width * k, h = head * k;
	float dx = sx1 - sx0, dy = sy1 - sy0, len = sqrtf(dx * dx + dy * dy);
	if (len < 0.5f) return;
	if (h > 0.6f * len) h = 0.6f * len;
	float ux = dx / len, uy = dy / len;
	float bx = sx1 - ux * h, by = sy1 - uy * h; /* base of the head */
	segment(f, VZ_KIND_LINE, sx0, sy0, bx + ux * 0.5f, by + uy * 0.5f, w, c);
	if (h >= 1.5f) segment(f, VZ_KIND_HEAD, bx, by, sx1, sy1, h * 0.9f, c);
}

/* ---------------------------------------------------------------- text */

/* Text keeps its size on screen whatever the zoom (labels stay readable; a value appears in its
 * cell once the cell is wide enough on screen), so in world mode its metrics are the screen
 * metrics divided by the zoom. */
float vz_text_height(const vz_frame *f, vz_font font)
{
	return vz_text_line_px(f->text, font) / vz_zoom(f);
}

float vz_char_width(const vz_frame *f, vz_font font)
{
	return vz_text_advance_px(f->text, font) / vz_zoom(f);
}

float vz_text_width(const vz_frame *f, vz_font font, const char *s)
{
	return vz_char_width(f, font) * (float)vz_utf8_cols(s);
}

/* Keeps where a text was drawn (viz.layout('text')): columns c0..c1 of the line at screen (sx, sy). */
static void keep_text(vz_frame *f, float sx, float sy, int c0, int c1, vz_font font, const char *s)
{
	if (c1 <= c0 || f->failed) return;
	if (!vz_grow((void **)&f->texts, &f->cap_texts, f->ntexts + 1, sizeof *f->texts, 1024)) {
		f->failed = true;
		return;
	}
	float adv = vz_text_advance_px(f->text, font);
	vz_text_box *b = &f->texts[f->ntexts++];
	b->r = vz_r(sx + roundf((float)c0 * adv), sy, roundf((float)c1 * adv) - roundf((float)c0 * adv),
	            vz_text_line_px(f->text, font));
	b->clip = f->clip;
	b->layer = f->layer;
	b->font = font;
	size_t n = strnlen(s, sizeof b->s - 1);
	memcpy(b->s, s, n);
	b->s[n] = '\0';
	if (((unsigned char)s[n] & 0xC0) == 0x80) { /* cut inside a character: drop all of it */
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
		b->s[n] = '\0';
	}
}

float vz_text_draw(vz_frame *f, float x, float y, vz_font font, int align, vz_color c,
                   const char *s)
{
	float width = vz_text_width(f, font, s);
	if (!f->text || !s || !*s || c.a == 0) return width;
	float x0 = x;
	if (align == VZ_ALIGN_CENTER) x0 -= width / 2;
	else if (align == VZ_ALIGN_RIGHT) x0 -= width;
	/* whole pixels: glyphs sampled off the pixel grid look blurred */
	float sx = roundf(vz_sx(f, x0)), sy = roundf(vz_sy(f, y));
	float adv = vz_text_advance_px(f->text, font);
	float sw = width * vz_zoom(f), sh = vz_text_line_px(f->text, font);
	if (!overlaps(vz_r(sx, sy, sw, sh), f->clip)) return width;
	const unsigned char *p = (const unsigned char *)s;
	int col = 0, ink0 = -1, ink1 = 0; /* columns: a wide character takes two */
	while (*p) {
		uint32_t cp = *p < 0x80 ? *p++ : vz_utf8_next(&p);
		int cols = cp >= 0x1100 && vz_cp_wide(cp) ? 2 : 1;
		vz_glyph g;
		if (cp == ' ' || !vz_text_glyph(f->text, font, cp, &g)) {
			col += cols;
			continue;
		}
		vz_instance *in = push(f, VZ_KIND_GLYPH, NULL);
		if (!in) return width;
		in->a[0] = sx + roundf((float)col * adv) + g.x;
		in->a[1] = sy + g.y;
		in->a[2] = g.w;
		in->a[3] = g.h;
		in->b[0] = g.u0;
		in->b[1] = g.v0;
		in->b[2] = g.u1;
		in->b[3] = g.v1;
		set_color(in->color, c);
		if (ink0 < 0) ink0 = col;
		col += cols;
		ink1 = col;
	}
	keep_text(f, sx, sy, ink0, ink1, font, s);
	return width;
}

/* Shortens t (UTF-8, cap bytes) to fit w: the longest start of whole characters that fits with an
 * ellipsis after it (nothing when not even that fits). */
void vz_text_fit(const vz_frame *f, vz_font font, char *t, size_t cap, float w)
{
	if (vz_text_fits(f, font, t, w)) return;
	char buf[256];
	size_t n = strlen(t);
	if (n > sizeof buf - 4) n = sizeof buf - 4;
	while (n > 0) {
		do n--; while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80); /* whole characters */
		if (n + 4 > cap) continue;
		memcpy(buf, t, n);
		memcpy(buf + n, "\xE2\x80\xA6", 4); /* U+2026 and the terminator */
		if (vz_text_fits(f, font, buf, w)) {
			memcpy(t, buf, n + 4);
			return;
		}
	}
	if (cap) t[0] = '\0';
}

/* Closing punctuation a Chinese line does not start with (、。，：；！？）」』). */
static bool no_break_before(uint32_t c)
{
	return c == 0x3001 || c == 0x3002 || c == 0xFF0C || c == 0xFF1A || c == 0xFF1B || c == 0xFF01 ||
	       c == 0xFF1F || c == 0xFF09 || c == 0x300D || c == 0x300F;
}

size_t vz_wrap_line(const char *s, int cols, size_t *skip)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t brk = 0, brk_skip = 0; /* the last place to break, and the spaces it drops */
	int at = 0;
	uint32_t prev = 0;
	*skip = 0;
	while (*p) {
		const unsigned char *q = p;
		uint32_t c = vz_utf8_next(&q);
		if (c == '\n') {
			*skip = 1;
			return (size_t)(p - (const unsigned char *)s);
		}
		size_t here = (size_t)(p - (const unsigned char *)s);
		bool wide = vz_cp_wide(c);
		if (c == ' ' && prev != ' ') {
			brk = here;
			brk_skip = 1;
			while (p[brk_skip] == ' ') brk_skip++;
		} else if (here > 0 && (wide || vz_cp_wide(prev)) && c != ' ' && prev != ' ' && !no_break_before(c)) {
			brk = here;
			brk_skip = 0;
		}
		int w = wide ? 2 : 1;
		if (at + w > cols && c != ' ' && here > 0) {
			if (brk > 0) {
				*skip = brk_skip;
				return brk;
			}
			return here; /* no place to break: cut the word */
		}
		at += w;
		prev = c;
		p = q;
	}
	return (size_t)(p - (const unsigned char *)s);
}

bool vz_text_fits(const vz_frame *f, vz_font font, const char *s, float w)
{
	return vz_text_width(f, font, s) <= w;
}

float vz_textf(vz_frame *f, float x, float y, vz_font font, int align, vz_color c,
               const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return vz_text_draw(f, x, y, font, align, c, buf);
}

/* ---------------------------------------------------------------- cells */

static vz_rect intersect(vz_rect a, vz_rect b)
{
	float x0 = fmaxf(a.x, b.x), y0 = fmaxf(a.y, b.y);
	float x1 = fminf(a.x + a.w, b.x + b.w), y1 = fminf(a.y + a.h, b.y + b.h);
	return vz_r(x0, y0, fmaxf(0, x1 - x0), fmaxf(0, y1 - y0));
}

/* A cell outside the clip (or one that memory ran out for) is filled in a scratch record and not
 * kept: only what can be seen can be picked. */
vz_cell *vz_cell_add(vz_frame *f, vz_rect r, const char *kind)
{
	vz_rect full = to_screen(f, r);
	vz_rect s = intersect(full, f->clip);
	vz_cell *c = &f->scratch;
	if (s.w > 0 && s.h > 0 && !f->failed) {
		if (vz_grow((void **)&f->cells, &f->cap_cells, f->ncells + 1, sizeof *f->cells, 1024))
			c = &f->cells[f->ncells++];
		else
			f->failed = true;
	}
	memset(c, 0, sizeof *c);
	c->r = s;
	c->full = full;
	c->kind = kind;
	c->row = c->col = c->index = c->step = c->thread = c->block = c->warp = c->lane = -1;
	c->launch = c->array = c->rows = c->cols = -1;
	c->event = -1;
	return c;
}

/* Cells are clipped to the region they were drawn in: one off screen cannot be picked. */
const vz_cell *vz_frame_pick(const vz_frame *f, float x, float y, vz_cell *out)
{
	for (int i = f->ncells - 1; i >= 0; i--) {
		const vz_cell *c = &f->cells[i];
		if (!vz_contains(c->r, x, y)) continue;
		*out = *c;
		if (c->rows > 0 && c->cols > 0) { /* the grid's full extent, not its visible part */
			out->row = (int32_t)((y - c->full.y) / c->full.h * (float)c->rows);
			out->col = (int32_t)((x - c->full.x) / c->full.w * (float)c->cols);
			if (out->row < 0) out->row = 0;
			if (out->col < 0) out->col = 0;
			if (c->index >= 0) out->index = c->index + out->row * c->cols + out->col;
			if (out->row >= c->rows) out->row = c->rows - 1;
			if (out->col >= c->cols) out->col = c->cols - 1;
		}
		return out;
	}
	return NULL;
}
