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

/* Lines a source label takes, wrapped every SOURCE_WRAP columns (at spaces, or between Chinese
 * characters; at most 3). */
static int wrap(const char *s, char lines[3][SOURCE_WRAP * 3 + 8])
{
	int n = 0;
	while (*s && n < 3) {
		size_t skip, len = vz_wrap_line(s, n < 2 ? SOURCE_WRAP : SOURCE_WRAP * 2, &skip);
		snprintf(lines[n++], SOURCE_WRAP * 3 + 8, "%.*s", (int)len, s);
		s += len + skip;
	}
	if (!n) lines[n++][0] = '\0';
	return n;
}

static int source_lines(const vz_panel *p)
{
	int most = 1;
	char lines[3][SOURCE_WRAP * 3 + 8];
	for (int c = 0; c < p->ncols; c++) {
		int n = wrap(p->source[c], lines);
		if (n > most) most = n;
	}
	return most;
}

static int cols_of(const char *s) { return (int)vz_utf8_cols(s); }

static int column_chars(const vz_panel *p, int c);

/* Columns of the counter names (at least the heading "source"). */
static int name_chars(const vz_panel *p)
{
	int n = cols_of(vz_tr("source", "来源"));
	if (n < 8) n = 8;
	for (int r = 0; r < p->nrows; r++)
		if (cols_of(p->row[r]) > n) n = cols_of(p->row[r]);
	return n;
}

/* Two blocks side by side when the rows are many and both fit the width, else one. */
static int blocks_of(const vz_panel *p, const vz_frame *f)
{
	if (p->nrows <= ROWS_PER_BLOCK) return 1;
	int chars = name_chars(p) + 2;
	for (int c = 0; c < p->ncols; c++) chars += column_chars(p, c) + 3;
	float block_w = (float)chars * vz_char_width(f, VZ_FONT_SMALL) + 16 * f->scale;
	return 2 * block_w <= (float)f->width ? 2 : 1;
}

/* The notes' lines at the panel's width (a long note, or a Chinese one, wraps). */
static int note_cols(const vz_frame *f)
{
	return (int)(((float)f->width - 16 * f->scale) / vz_char_width(f, VZ_FONT_SMALL));
}

static int note_lines(const vz_panel *p, const vz_frame *f)
{
	int n = 0, cols = note_cols(f);
	for (int i = 0; i < p->nnotes; i++)
		for (const char *s = p->note[i]; *s; n++) {
			size_t skip, len = vz_wrap_line(s, cols, &skip);
			s += len + skip;
		}
	return n;
}

float vz_panel_height(const vz_panel *p, const vz_frame *f)
{
	if (p->ncols == 0) return 0;
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	int rows = (p->nrows + blocks_of(p, f) - 1) / blocks_of(p, f);
	return (float)(1 + source_lines(p) + rows + note_lines(p, f)) * lh + 12 * f->scale;
}

/* Width in columns of column c (title, source lines, values). */
static int column_chars(const vz_panel *p, int c)
{
	char lines[3][SOURCE_WRAP * 3 + 8], num[48];
	int w = cols_of(p->title[c]);
	int n = wrap(p->source[c], lines);
	for (int i = 0; i < n; i++)
		if (cols_of(lines[i]) > w) w = cols_of(lines[i]);
	for (int r = 0; r < p->nrows; r++)
		if (p->has[r][c] && cols_of(vz_number(num, sizeof num, p->value[r][c])) > w) w = cols_of(num);
	return w;
}

/* One block of rows [r0, r1) at x; returns its width. */
static float draw_block(const vz_panel *p, vz_frame *f, float x, float y, int r0, int r1)
{
	float cw = vz_char_width(f, VZ_FONT_SMALL), lh = vz_text_height(f, VZ_FONT_SMALL);
	float cx = x + (float)(name_chars(p) + 2) * cw;
	int nsrc = source_lines(p);
	char lines[3][SOURCE_WRAP * 3 + 8], num[48];
	vz_text_draw(f, x, y + lh, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, vz_tr("source", "来源"));
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
	int cols = note_cols(f);
	for (int i = 0; i < p->nnotes; i++)
		for (const char *s = p->note[i]; *s; ny += lh) {
			char line[sizeof p->note[0]];
			size_t skip, len = vz_wrap_line(s, cols, &skip);
			snprintf(line, sizeof line, "%.*s", (int)len, s);
			vz_text_draw(f, r.x + pad, ny, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, line);
			s += len + skip;
		}
}
