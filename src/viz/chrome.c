/*
 * chrome.c — what surrounds every scene: the title bar (scene title, what this step shows, step
 * count and play state), the counters panel, the one-line key hint that is always on screen, the
 * hover tooltip with the outline of the cell under the pointer, the key help (`?`) and the
 * short messages after a snapshot.
 *
 * All in screen coordinates (drawable pixels), sized from the font and the UI scale, so HiDPI
 * windows get the same layout at twice the pixels. Read next: viewer.c, panel.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "viz/vz_viewer.h"

#define V vz_V

static const char hint_full[] =
	"space play/pause \xC2\xB7 \xE2\x86\x90/\xE2\x86\x92 step \xC2\xB7 Home/End \xC2\xB7 +/\xE2\x88\x92 speed "
	"\xC2\xB7 Tab variant \xC2\xB7 hover: details \xC2\xB7 wheel zoom \xC2\xB7 drag pan \xC2\xB7 0 fit \xC2\xB7 "
	"s PNG \xC2\xB7 ? keys \xC2\xB7 Esc close";
static const char hint_short[] =
	"space play \xC2\xB7 \xE2\x86\x90/\xE2\x86\x92 step \xC2\xB7 Tab variant \xC2\xB7 s PNG \xC2\xB7 ? keys "
	"\xC2\xB7 Esc close";

static const char *const help_lines[] = {
	"Keys",
	"space        play / pause (from the start when at the end)",
	"\xE2\x86\x92 / \xE2\x86\x90        one step forward / back",
	"Home / End   first / last step",
	"+ / \xE2\x88\x92        faster / slower",
	"Tab          next variant (Shift+Tab: previous)",
	"mouse        hover: what is under the pointer",
	"wheel, drag  zoom and pan the picture; 0 fits it again",
	"s            write a PNG of this frame (lumen-<scene>-<step>.png)",
	"?            show / hide these keys",
	"Esc          close the window (the REPL goes on)",
	NULL,
};

void vz_chrome_layout(const vz_frame *f, vz_chrome *c)
{
	float s = f->scale, W = (float)f->width, H = (float)f->height;
	float title_h = vz_text_height(f, VZ_FONT_TITLE) + vz_text_height(f, VZ_FONT_BODY) + 14 * s;
	float hint_h = vz_text_height(f, VZ_FONT_SMALL) + 8 * s;
	float panel_h = vz_panel_height(&V.panel, f);
	if (panel_h > H * 0.4f) panel_h = H * 0.4f;
	c->title = vz_r(0, 0, W, title_h);
	c->hint = vz_r(0, H - hint_h, W, hint_h);
	c->panel = vz_r(0, H - hint_h - panel_h, W, panel_h);
	float top = title_h + 4 * s, bottom = c->panel.y - 4 * s;
	c->area = vz_r(8 * s, top, W - 16 * s, fmaxf(10, bottom - top));
}

/* Line 1: the scene's title; line 2: what this step shows, and at the right the step, the play
 * state and the variant. */
static void draw_title(vz_frame *f, const vz_chrome *c)
{
	float s = f->scale, pad = 10 * s;
	vz_fill(f, vz_r(0, c->title.h - fmaxf(1, s), c->title.w, fmaxf(1, s)), vz_th.panel_line);
	vz_text_draw(f, pad, pad * 0.5f, VZ_FONT_TITLE, VZ_ALIGN_LEFT, vz_th.text,
	             V.scene ? V.title : "Lumen visualizer: no scene yet (viz.show(info) or viz.scene(name))");
	if (!V.scene) return;
	char status[160];
	snprintf(status, sizeof status, "step %d of %d%s \xC2\xB7 %.3g steps/s", V.step, V.steps - 1,
	         V.playing ? " \xE2\x96\xB6 playing" : "", V.speed);
	if (V.variants > 1) {
		char v[96];
		snprintf(v, sizeof v, " \xC2\xB7 Tab %d/%d: %s", V.variant + 1, V.variants,
		         V.cls->variant_name(V.scene, V.variant));
		strncat(status, v, sizeof status - strlen(status) - 1);
	}
	float y2 = pad * 0.5f + vz_text_height(f, VZ_FONT_TITLE) + 2 * s;
	float sw = vz_text_width(f, VZ_FONT_BODY, status);
	vz_text_draw(f, c->title.w - pad, y2, VZ_FONT_BODY, VZ_ALIGN_RIGHT, vz_th.text_dim, status);
	char label[256];
	V.cls->step_label(V.scene, V.step, label, sizeof label);
	vz_clip(f, vz_r(0, 0, c->title.w - sw - 3 * pad, c->title.h));
	vz_text_draw(f, pad, y2, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, label);
	vz_screen(f);
}

static void draw_hint(vz_frame *f, const vz_chrome *c)
{
	float pad = 10 * f->scale;
	vz_fill(f, c->hint, vz_th.panel);
	const char *h = vz_text_width(f, VZ_FONT_SMALL, hint_full) + 2 * pad <= c->hint.w ? hint_full : hint_short;
	vz_text_draw(f, pad, c->hint.y + 4 * f->scale, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, h);
}

/* A box of lines near (x, y), kept inside the window. */
static void text_box(vz_frame *f, float x, float y, const char *text, vz_color bg, vz_color fg)
{
	float s = f->scale, pad = 6 * s, lh = vz_text_height(f, VZ_FONT_SMALL);
	char lines[12][160];
	int n = 0;
	float w = 0;
	for (const char *p = text; *p && n < 12; n++) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		snprintf(lines[n], sizeof lines[n], "%.*s", (int)len, p);
		float lw = vz_text_width(f, VZ_FONT_SMALL, lines[n]);
		if (lw > w) w = lw;
		p = e ? e + 1 : p + len;
	}
	float bw = w + 2 * pad, bh = (float)n * lh + 2 * pad;
	if (x + bw > f->width) x = (float)f->width - bw - 2 * s;
	if (y + bh > f->height) y = (float)f->height - bh - 2 * s;
	if (x < 0) x = 0;
	if (y < 0) y = 0;
	vz_fill(f, vz_r(x + 2 * s, y + 2 * s, bw, bh), (vz_color){0, 0, 0, 40}); /* shadow */
	vz_fill(f, vz_r(x, y, bw, bh), bg);
	vz_outline(f, vz_r(x, y, bw, bh), fmaxf(1, s), vz_th.panel_line);
	for (int i = 0; i < n; i++)
		vz_text_draw(f, x + pad, y + pad + (float)i * lh, VZ_FONT_SMALL, VZ_ALIGN_LEFT, fg, lines[i]);
}

void vz_chrome_describe(vz_cell *c, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (V.scene && V.cls->describe) V.cls->describe(V.scene, c, buf, cap);
	if (buf[0]) return;
	vz_append(buf, cap, "%s", c->kind ? c->kind : "cell");
	if (c->index >= 0) vz_append(buf, cap, " %d", c->index);
	if (c->has_value) vz_append(buf, cap, " = %g", c->value);
	if (c->thread >= 0) vz_append(buf, cap, "\nthread %d", c->thread);
	if (c->block >= 0) vz_append(buf, cap, ", block %d", c->block);
	if (c->warp >= 0) vz_append(buf, cap, ", warp %d", c->warp);
	if (c->lane >= 0) vz_append(buf, cap, ", lane %d", c->lane);
	if (c->step >= 0) vz_append(buf, cap, "\nstep %d", c->step);
	if (c->event >= 0) vz_append(buf, cap, ", trace event %lld", (long long)c->event + 1);
}

static void draw_hover(vz_frame *f, const vz_chrome *c)
{
	if (!V.mouse_in || V.dragging || !vz_contains(c->area, V.mouse_x, V.mouse_y)) return;
	vz_cell cell;
	if (!vz_frame_pick(f, V.mouse_x, V.mouse_y, &cell)) return;
	float s = f->scale;
	vz_rect r = cell.r;
	if (cell.rows > 0 && cell.cols > 0) { /* one cell of a grid */
		float cw = cell.full.w / (float)cell.cols, ch = cell.full.h / (float)cell.rows;
		r = vz_r(cell.full.x + (float)cell.col * cw, cell.full.y + (float)cell.row * ch, cw, ch);
	}
	vz_clip(f, c->area);
	vz_layer(f);
	vz_outline(f, vz_r(r.x - s, r.y - s, r.w + 2 * s, r.h + 2 * s), 2 * s, vz_th.highlight);
	vz_screen(f);
	vz_layer(f);
	char text[512];
	vz_chrome_describe(&cell, text, sizeof text);
	text_box(f, V.mouse_x + 14 * s, V.mouse_y + 16 * s, text, VZ_RGB(255, 255, 250), vz_th.text);
}

static void draw_help(vz_frame *f)
{
	char text[1024] = "";
	for (int i = 0; help_lines[i]; i++) vz_append(text, sizeof text, "%s%s", i ? "\n" : "", help_lines[i]);
	float w = vz_text_width(f, VZ_FONT_SMALL, help_lines[1]) + 12 * f->scale;
	text_box(f, ((float)f->width - w) / 2, (float)f->height * 0.22f, text, VZ_RGB(255, 255, 250),
	         vz_th.text);
}

void vz_chrome_draw(vz_frame *f, const vz_chrome *c)
{
	draw_title(f, c);
	vz_panel_draw(&V.panel, f, c->panel);
	draw_hint(f, c);
	draw_hover(f, c);
	vz_layer(f);
	if (V.help) draw_help(f);
	vz_layer(f);
	if (V.toast[0])
		text_box(f, 10 * f->scale, c->panel.y - 34 * f->scale, V.toast, vz_th.text, vz_th.bg);
}
