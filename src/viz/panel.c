/*
 * panel.c — the counters panel: a table with one column per run, headed by the run's title and
 * the source its numbers come from ("emulated (modelled cycles)", "CPU <model>, measured",
 * "CUDA <device>, measured"), and one row per counter; notes below it.
 *
 * Design: scenes only say which runs and which counters (vz_panel_run); the panel lays itself
 * out in the monospace font: a name column, then each run's column as wide as its widest text.
 * When the rows do not fit the height they are set in two blocks side by side, each with the
 * column headers, so a number is never far from the source it sits under.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "viz/vz.h"

#define SOURCE_WRAP 30 /* characters per line of a source label */
#define ROWS_PER_BLOCK 7

void vz_panel_clear(vz_panel *p) { memset(p, 0, sizeof *p); }

int vz_panel_column(vz_panel *p, const char *title, const char *source)
{
	if (p->ncols >= VZ_PANEL_COLS) return -1;
	int c = p->ncols++;
	snprintf(p->title[c], sizeof p->title[c], "%s", title);
	snprintf(p->source[c], sizeof p->source[c], "%s", source);
	return c;
}

void vz_panel_set(vz_panel *p, int col, const char *name, double v)
{
	if (col < 0 || col >= p->ncols) return;
	int r = 0;
	while (r < p->nrows && strcmp(p->row[r], name) != 0) r++;
	if (r == p->nrows) {
		if (p->nrows >= VZ_PANEL_ROWS) return;
		snprintf(p->row[p->nrows++], sizeof p->row[0], "%s", name);
	}
	p->value[r][col] = v;
	p->has[r][col] = true;
}

void vz_panel_run(vz_panel *p, int col, const lm_viz_run *run, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (vz_run_has(run, names[i])) vz_panel_set(p, col, names[i], vz_run_counter(run, names[i], 0));
}

void vz_panel_note(vz_panel *p, const char *fmt, ...)
{
	if (p->nnotes >= VZ_PANEL_NOTES) return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->note[p->nnotes++], sizeof p->note[0], fmt, ap);
	va_end(ap);
}

/* Lines a source label takes, wrapped at spaces every SOURCE_WRAP characters (at most 3). */
static int wrap(const char *s, char lines[3][SOURCE_WRAP + 48])
{
	int n = 0;
	size_t len = strlen(s), at = 0;
	while (at < len && n < 3) {
		size_t take = len - at;
		if (take > SOURCE_WRAP && n < 2) {
			take = SOURCE_WRAP;
			while (take > 8 && s[at + take] != ' ') take--;
			if (s[at + take] != ' ') take = SOURCE_WRAP;
		}
		if (take > SOURCE_WRAP + 40) take = SOURCE_WRAP + 40;
		snprintf(lines[n], sizeof lines[n], "%.*s", (int)take, s + at);
		n++;
		at += take;
		while (at < len && s[at] == ' ') at++;
	}
	return n ? n : 1;
}

static int source_lines(const vz_panel *p)
{
	int most = 1;
	char lines[3][SOURCE_WRAP + 48];
	for (int c = 0; c < p->ncols; c++) {
		int n = wrap(p->source[c], lines);
		if (n > most) most = n;
	}
	return most;
}


static int column_chars(const vz_panel *p, int c);

/* Two blocks side by side when the rows are many and both fit the width, else one. */
static int blocks_of(const vz_panel *p, const vz_frame *f)
{
	if (p->nrows <= ROWS_PER_BLOCK) return 1;
	int chars = 8;
	for (int r = 0; r < p->nrows; r++)
		if ((int)strlen(p->row[r]) > chars) chars = (int)strlen(p->row[r]);
	chars += 2;
	for (int c = 0; c < p->ncols; c++) chars += column_chars(p, c) + 3;
	float block_w = (float)chars * vz_char_width(f, VZ_FONT_SMALL) + 16 * f->scale;
	return 2 * block_w <= (float)f->width ? 2 : 1;
}

float vz_panel_height(const vz_panel *p, const vz_frame *f)
{
	if (p->ncols == 0) return 0;
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	int rows = (p->nrows + blocks_of(p, f) - 1) / blocks_of(p, f);
	return (float)(1 + source_lines(p) + rows + p->nnotes) * lh + 12 * f->scale;
}

/* Width in characters of column c (title, source lines, values). */
static int column_chars(const vz_panel *p, int c)
{
	char lines[3][SOURCE_WRAP + 48], num[48];
	int w = (int)vz_utf8_len(p->title[c]);
	int n = wrap(p->source[c], lines);
	for (int i = 0; i < n; i++)
		if ((int)strlen(lines[i]) > w) w = (int)strlen(lines[i]);
	for (int r = 0; r < p->nrows; r++)
		if (p->has[r][c] && (int)strlen(vz_number(num, sizeof num, p->value[r][c])) > w)
			w = (int)strlen(num);
	return w;
}

/* One block of rows [r0, r1) at x; returns its width. */
static float draw_block(const vz_panel *p, vz_frame *f, float x, float y, int r0, int r1)
{
	float cw = vz_char_width(f, VZ_FONT_SMALL), lh = vz_text_height(f, VZ_FONT_SMALL);
	int name_chars = 8;
	for (int r = 0; r < p->nrows; r++)
		if ((int)strlen(p->row[r]) > name_chars) name_chars = (int)strlen(p->row[r]);
	float cx = x + (float)(name_chars + 2) * cw;
	int nsrc = source_lines(p);
	char lines[3][SOURCE_WRAP + 48], num[48];
	vz_text_draw(f, x, y + lh, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "source");
	for (int c = 0; c < p->ncols; c++) {
		vz_text_draw(f, cx, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, p->title[c]);
		int n = wrap(p->source[c], lines);
		for (int i = 0; i < n; i++)
			vz_text_draw(f, cx, y + (float)(1 + i) * lh, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
			             vz_th.text_dim, lines[i]);
		float ry = y + (float)(1 + nsrc) * lh;
		for (int r = r0; r < r1; r++, ry += lh)
			if (p->has[r][c])
				vz_text_draw(f, cx, ry, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
				             vz_number(num, sizeof num, p->value[r][c]));
		cx += (float)(column_chars(p, c) + 3) * cw;
	}
	float ry = y + (float)(1 + nsrc) * lh;
	for (int r = r0; r < r1; r++, ry += lh)
		vz_text_draw(f, x, ry, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, p->row[r]);
	return cx - x;
}

void vz_panel_draw(const vz_panel *p, vz_frame *f, vz_rect r)
{
	if (p->ncols == 0) return;
	vz_fill(f, r, vz_th.panel);
	vz_fill(f, vz_r(r.x, r.y, r.w, fmaxf(1, f->scale)), vz_th.panel_line);
	float pad = 8 * f->scale, lh = vz_text_height(f, VZ_FONT_SMALL);
	float x = r.x + pad, y = r.y + pad * 0.75f;
	int nb = blocks_of(p, f), per = (p->nrows + nb - 1) / nb;
	for (int b = 0; b < nb; b++) {
		int r0 = b * per, r1 = r0 + per < p->nrows ? r0 + per : p->nrows;
		float w = draw_block(p, f, x, y, r0, r1);
		x += w + 2 * pad;
		if (b + 1 < nb)
			vz_fill(f, vz_r(x - pad, y, fmaxf(1, f->scale), (float)(1 + source_lines(p) + per) * lh),
			        vz_th.panel_line);
	}
	float ny = y + (float)(1 + source_lines(p) + per) * lh;
	for (int i = 0; i < p->nnotes; i++, ny += lh)
		vz_text_draw(f, r.x + pad, ny, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, p->note[i]);
}
