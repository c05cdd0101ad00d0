/*
 * text.c — the glyph atlas: DejaVu Sans Mono (Debian's fonts-dejavu-core) rendered by SDL2_ttf
 * at four sizes into one coverage texture, with the glyphs every scene needs (ASCII and a few
 * symbols such as arrows, ×, ≤, Σ) rendered up front and any other character on demand: Chinese
 * from a CJK font (WenQuanYi Micro Hei, Debian's fonts-wqy-microhei), the rest from DejaVu.
 *
 * Design: a monospace font makes layout arithmetic (columns of counters, cells that fit a number)
 * exact: every character advances the same, and an East Asian wide character (Chinese, full-width
 * punctuation) advances two columns, as in a terminal, so widths stay a count of columns. Glyphs
 * are rendered once, at the UI scale (HiDPI: twice the pixels), packed on shelves; drawing text
 * is then one instance per glyph. ASCII is a table lookup; other characters go through a small
 * hash map, rendered the first time they are drawn. When the atlas is full it grows in height
 * (texture coordinates change: the generation counter tells the viewer to record the frame again)
 * up to ATLAS_HMAX, then drops the characters rendered on demand and starts over.
 * The fonts are found at $LUMEN_FONT / $LUMEN_CJK_FONT, else at their Debian paths, else through
 * fontconfig (fc-match). Without a CJK font Chinese labels fall back to English (vz_zh).
 * Read next: draw.c (vz_text_draw), gpu.c (the texture).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "viz/vz.h"

#define ATLAS_W 1024
#define ATLAS_H0 1024
#define ATLAS_HMAX 4096
#define DEBIAN_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
#define DEBIAN_CJK_FONT "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"

/* Sizes of VZ_FONT_SMALL, _BODY, _TITLE, _TINY in points at UI scale 1 (pixels on a 96-dpi
 * display). TINY is for numbers in dense cells. */
static const int font_points[VZ_FONT_COUNT] = {11, 13, 16, 9};
/* A CJK glyph's em against DejaVu's pixel size: two columns of DejaVu Sans Mono are 1.2 em wide,
 * and Chinese set at the Latin size looks small beside it (strokes blur together at 11 px). */
#define CJK_SCALE 1.08f

/* The symbols beyond ASCII that scenes and the UI use (rendered up front: a table lookup). */
static const uint32_t extra_glyphs[] = {
	0x2192, 0x2190, 0x2191, 0x2193, /* → ← ↑ ↓ */
	0x00D7, 0x2212, 0x00B7, 0x03A3, /* × − · Σ */
	0x2264, 0x2265, 0x2026, 0x25B6, /* ≤ ≥ … ▶ */
	0x25A0, 0x2016, 0x00B2, 0x2248, /* ■ ‖ ² ≈ */
	0x2260, 0x00B1, 0x21B5, 0x2502, /* ≠ ± ↵ │ */
};
#define NEXTRA (sizeof extra_glyphs / sizeof extra_glyphs[0])
#define NASCII 95 /* 32..126 */
#define NGLYPHS (NASCII + NEXTRA)

typedef struct shelf {
	int x, y, h; /* pen of the current shelf */
} shelf;

/* A glyph rendered on demand: key = font << 22 | code point (0: an empty slot). */
typedef struct demand {
	uint32_t key;
	bool ok;     /* false: no font has it ('?' is drawn) */
	vz_glyph g;
} demand;

struct vz_text {
	char path[512];
	float scale;
	float line[VZ_FONT_COUNT], advance[VZ_FONT_COUNT];
	int ascent[VZ_FONT_COUNT];
	vz_glyph glyphs[VZ_FONT_COUNT][NGLYPHS];
	bool has[VZ_FONT_COUNT][NGLYPHS];
	TTF_Font *font[VZ_FONT_COUNT]; /* kept open for the glyphs rendered on demand */
	TTF_Font *cjk[VZ_FONT_COUNT];  /* opened at the first character DejaVu lacks */
	int cjk_state;                 /* 0: not tried, 1: open, -1: none */
	demand *map;
	int map_cap, map_n;
	uint8_t *atlas;                /* ATLAS_W x atlas_h coverage */
	int atlas_h;
	shelf sh, sh_base;             /* the pen; where the up-front glyphs end */
	int dirty_y0, dirty_y1;        /* rows changed since vz_text_take_dirty */
	unsigned generation;
};

/* ---------------------------------------------------------------- UTF-8 and columns */

uint32_t vz_utf8_next(const unsigned char **p)
{
	const unsigned char *s = *p;
	uint32_t c = s[0];
	int n = 0;
	if (c < 0x80) n = 0;
	else if ((c & 0xE0) == 0xC0) { c &= 0x1F; n = 1; }
	else if ((c & 0xF0) == 0xE0) { c &= 0x0F; n = 2; }
	else if ((c & 0xF8) == 0xF0) { c &= 0x07; n = 3; }
	else { *p = s + 1; return 0xFFFD; }
	for (int i = 1; i <= n; i++) {
		if ((s[i] & 0xC0) != 0x80) { *p = s + i; return 0xFFFD; }
		c = (c << 6) | (s[i] & 0x3F);
	}
	*p = s + n + 1;
	return c;
}

size_t vz_utf8_len(const char *s)
{
	size_t n = 0;
	if (!s) return 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		vz_utf8_next(&p);
		n++;
	}
	return n;
}

void vz_utf8_trim(char *s)
{
	size_t n = strlen(s), k = 0;
	while (k < n && k < 4 && ((unsigned char)s[n - 1 - k] & 0xC0) == 0x80) k++;
	if (k == n) return;
	unsigned char lead = (unsigned char)s[n - 1 - k];
	size_t want = lead < 0x80 ? 0 : (lead & 0xE0) == 0xC0 ? 1 : (lead & 0xF0) == 0xE0 ? 2 : (lead & 0xF8) == 0xF0 ? 3 : k;
	if (k < want) s[n - 1 - k] = '\0';
}

/* Unicode's East Asian Width W and F blocks (UAX #11), as terminals count them: the CJK
 * ideographs, kana, Hangul, CJK and full-width punctuation. The symbols the scenes use (→, ×, ·)
 * are narrow there too. */
bool vz_cp_wide(uint32_t c)
{
	return c >= 0x1100 &&
	       (c <= 0x115F || (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) || (c >= 0xAC00 && c <= 0xD7A3) ||
	        (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
	        (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x20000 && c <= 0x3FFFD));
}

size_t vz_utf8_cols(const char *s)
{
	size_t n = 0;
	if (!s) return 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		if (*p < 0x80) { /* the common case: no decoding */
			n++;
			p++;
			continue;
		}
		n += vz_cp_wide(vz_utf8_next(&p)) ? 2 : 1;
	}
	return n;
}

static int glyph_slot(uint32_t cp)
{
	if (cp >= 32 && cp <= 126) return (int)(cp - 32);
	for (size_t i = 0; i < NEXTRA; i++)
		if (extra_glyphs[i] == cp) return (int)(NASCII + i);
	return -1;
}

/* ---------------------------------------------------------------- finding the fonts */

static bool readable(const char *p) { return p && *p && access(p, R_OK) == 0; }

/* fontconfig's file for a pattern, if it names one containing `want` (fc-match falls back to
 * any font otherwise). */
static bool fontconfig_path(const char *pattern, const char *want, char *out, size_t cap)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd, "fc-match -f '%%{file}' '%s' 2>/dev/null", pattern);
	FILE *p = popen(cmd, "r");
	if (!p) return false;
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	pclose(p);
	return n > 0 && (!want || strstr(out, want)) && readable(out);
}

static lm_status find_font(char *out, size_t cap, const char *fname)
{
	const char *env = getenv("LUMEN_FONT");
	if (env && *env) {
		if (!readable(env))
			return lm_set_error(LM_ERR_IO, "%s: the font '%s' (LUMEN_FONT) cannot be read: %s",
			                    fname, env, strerror(errno));
		snprintf(out, cap, "%s", env);
		return LM_OK;
	}
	if (readable(DEBIAN_FONT)) {
		snprintf(out, cap, "%s", DEBIAN_FONT);
		return LM_OK;
	}
	if (fontconfig_path("DejaVu Sans Mono", "DejaVuSansMono", out, cap)) return LM_OK;
	return lm_set_error(LM_ERR_IO, "%s: the font DejaVu Sans Mono was not found (looked at %s and "
	                    "asked fontconfig): install it with apt-get install fonts-dejavu-core",
	                    fname, DEBIAN_FONT);
}

static int cjk_found;        /* 0: not looked for yet, 1: found, -1: none */
static char cjk_path[512];
static char cjk_why[640];

/* Whether the font at path has Simplified Chinese (中 and 线, which a Japanese-only font lacks). */
static bool has_chinese(const char *path)
{
	if (!TTF_WasInit() && TTF_Init() != 0) return false;
	TTF_Font *f = TTF_OpenFont(path, 12);
	if (!f) return false;
	bool ok = TTF_GlyphIsProvided32(f, 0x4E2D) && TTF_GlyphIsProvided32(f, 0x7EBF);
	TTF_CloseFont(f);
	return ok;
}

const char *vz_cjk_font(const char **why)
{
	if (!cjk_found) {
		const char *env = getenv("LUMEN_CJK_FONT");
		cjk_found = -1;
		if (env && *env) {
			if (readable(env) && has_chinese(env)) {
				snprintf(cjk_path, sizeof cjk_path, "%s", env);
				cjk_found = 1;
			} else {
				snprintf(cjk_why, sizeof cjk_why, "the font '%.400s' (LUMEN_CJK_FONT) %s", env,
				         readable(env) ? "has no Simplified Chinese" : "cannot be read");
			}
		} else if (readable(DEBIAN_CJK_FONT) && has_chinese(DEBIAN_CJK_FONT)) {
			snprintf(cjk_path, sizeof cjk_path, "%s", DEBIAN_CJK_FONT);
			cjk_found = 1;
		} else if (fontconfig_path(":lang=zh-cn", NULL, cjk_path, sizeof cjk_path) && has_chinese(cjk_path)) {
			cjk_found = 1;
		} else {
			snprintf(cjk_why, sizeof cjk_why, "no Chinese font (looked at %s and asked fontconfig; "
			         "apt-get install fonts-wqy-microhei)", DEBIAN_CJK_FONT);
		}
	}
	if (why) *why = cjk_found > 0 ? "" : cjk_why;
	return cjk_found > 0 ? cjk_path : NULL;
}

/* ---------------------------------------------------------------- the atlas */

static void mark_dirty(vz_text *t, int y0, int y1)
{
	if (t->dirty_y1 <= t->dirty_y0) {
		t->dirty_y0 = y0;
		t->dirty_y1 = y1;
		return;
	}
	if (y0 < t->dirty_y0) t->dirty_y0 = y0;
	if (y1 > t->dirty_y1) t->dirty_y1 = y1;
}

/* Twice the height (the glyphs keep their pixels; their v coordinates halve). */
static bool grow_atlas(vz_text *t)
{
	if (t->atlas_h >= ATLAS_HMAX) return false;
	int h = t->atlas_h * 2;
	uint8_t *a = vz_realloc(t->atlas, (size_t)ATLAS_W * (size_t)h);
	if (!a) return false;
	memset(a + (size_t)ATLAS_W * (size_t)t->atlas_h, 0, (size_t)ATLAS_W * (size_t)(h - t->atlas_h));
	float k = (float)t->atlas_h / (float)h;
	for (int f = 0; f < VZ_FONT_COUNT; f++)
		for (size_t i = 0; i < NGLYPHS; i++) {
			t->glyphs[f][i].v0 *= k;
			t->glyphs[f][i].v1 *= k;
		}
	for (int i = 0; i < t->map_cap; i++) {
		t->map[i].g.v0 *= k;
		t->map[i].g.v1 *= k;
	}
	t->atlas = a;
	t->atlas_h = h;
	t->generation++;
	mark_dirty(t, 0, h);
	return true;
}

/* Copies a w x h box of the glyph's coverage (alpha of an ARGB8888 surface, from column sx, row
 * sy) into the atlas. */
static bool place(vz_text *t, SDL_Surface *s, int sx, int sy, int w, int h, vz_glyph *g)
{
	shelf *sh = &t->sh;
	if (sh->x + w + 1 > ATLAS_W) {
		sh->x = 0;
		sh->y += sh->h + 1;
		sh->h = 0;
	}
	while (sh->y + h + 1 > t->atlas_h)
		if (!grow_atlas(t)) return false;
	SDL_LockSurface(s);
	for (int y = 0; y < h; y++) {
		const uint32_t *row = (const uint32_t *)((const uint8_t *)s->pixels + (size_t)(sy + y) * (size_t)s->pitch) + sx;
		uint8_t *dst = t->atlas + (size_t)(sh->y + y) * ATLAS_W + (size_t)sh->x;
		for (int x = 0; x < w; x++) dst[x] = (uint8_t)(row[x] >> 24);
	}
	SDL_UnlockSurface(s);
	g->w = (float)w;
	g->h = (float)h;
	g->u0 = (float)sh->x / ATLAS_W;
	g->v0 = (float)sh->y / (float)t->atlas_h;
	g->u1 = (float)(sh->x + w) / ATLAS_W;
	g->v1 = (float)(sh->y + h) / (float)t->atlas_h;
	mark_dirty(t, sh->y, sh->y + h);
	sh->x += w + 1;
	if (h > sh->h) sh->h = h;
	return true;
}

/* cp of font as an ARGB8888 surface (NULL when it cannot be rendered). */
static SDL_Surface *render(TTF_Font *font, uint32_t cp)
{
	SDL_Color white = {255, 255, 255, 255};
	SDL_Surface *s = TTF_RenderGlyph32_Blended(font, cp, white);
	if (!s) return NULL;
	SDL_Surface *c = SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_ARGB8888, 0);
	SDL_FreeSurface(s);
	return c;
}

static lm_status render_font(vz_text *t, int f, const char *fname)
{
	int px = (int)(font_points[f] * t->scale + 0.5f);
	TTF_Font *font = TTF_OpenFont(t->path, px);
	if (!font)
		return lm_set_error(LM_ERR_IO, "%s: SDL2_ttf cannot open the font '%s': %s", fname,
		                    t->path, TTF_GetError());
	TTF_SetFontHinting(font, TTF_HINTING_LIGHT);
	t->font[f] = font;
	t->line[f] = (float)TTF_FontHeight(font);
	t->ascent[f] = TTF_FontAscent(font);
	int minx, maxx, miny, maxy, adv = 0;
	if (TTF_GlyphMetrics32(font, 'M', &minx, &maxx, &miny, &maxy, &adv) != 0 || adv <= 0)
		adv = px / 2 + 1;
	t->advance[f] = (float)adv;
	for (int i = 0; i < (int)NGLYPHS; i++) {
		uint32_t cp = i < NASCII ? (uint32_t)(32 + i) : extra_glyphs[i - NASCII];
		if (cp == ' ' || !TTF_GlyphIsProvided32(font, cp)) continue;
		SDL_Surface *c = render(font, cp);
		if (!c) continue;
		vz_glyph *g = &t->glyphs[f][i];
		g->x = g->y = 0;
		bool ok = place(t, c, 0, 0, c->w, c->h, g);
		SDL_FreeSurface(c);
		if (!ok)
			return lm_set_error(LM_ERR_INTERNAL, "%s: the glyph atlas is full (UI scale %.1f)",
			                    fname, t->scale);
		t->has[f][i] = true;
	}
	return LM_OK;
}

vz_text *vz_text_new(float scale, const char *fname)
{
	vz_text *t = vz_calloc(1, sizeof *t);
	if (!t) return NULL;
	t->scale = scale;
	if (find_font(t->path, sizeof t->path, fname) != LM_OK) goto fail;
	if (!TTF_WasInit() && TTF_Init() != 0) {
		lm_set_error(LM_ERR_IO, "%s: SDL2_ttf does not start: %s", fname, TTF_GetError());
		goto fail;
	}
	t->atlas_h = ATLAS_H0;
	t->atlas = vz_calloc(ATLAS_W, ATLAS_H0);
	if (!t->atlas) goto fail;
	for (int f = 0; f < VZ_FONT_COUNT; f++)
		if (render_font(t, f, fname) != LM_OK) goto fail;
	t->sh_base = t->sh;
	t->generation = 0;
	return t;
fail:
	vz_text_free(t);
	return NULL;
}

void vz_text_free(vz_text *t)
{
	if (!t) return;
	for (int f = 0; f < VZ_FONT_COUNT; f++) {
		if (t->font[f]) TTF_CloseFont(t->font[f]);
		if (t->cjk[f]) TTF_CloseFont(t->cjk[f]);
	}
	vz_free(t->map);
	vz_free(t->atlas);
	vz_free(t);
}

float vz_text_line_px(const vz_text *t, vz_font font) { return t ? t->line[font] : 14.0f; }
float vz_text_advance_px(const vz_text *t, vz_font font) { return t ? t->advance[font] : 7.0f; }

/* ---------------------------------------------------------------- glyphs on demand */

static bool cjk_open(vz_text *t)
{
	if (t->cjk_state) return t->cjk_state > 0;
	t->cjk_state = -1;
	const char *path = vz_cjk_font(NULL);
	if (!path) return false;
	for (int f = 0; f < VZ_FONT_COUNT; f++) {
		int px = (int)(font_points[f] * t->scale * CJK_SCALE + 0.5f);
		t->cjk[f] = TTF_OpenFont(path, px);
		if (!t->cjk[f]) return false;
		TTF_SetFontHinting(t->cjk[f], TTF_HINTING_LIGHT);
	}
	t->cjk_state = 1;
	return true;
}

/* The box of s's pixels with coverage (w = 0 when none). */
static void ink_box(SDL_Surface *s, int *x0, int *y0, int *w, int *h)
{
	int lx = s->w, ly = s->h, hx = -1, hy = -1;
	SDL_LockSurface(s);
	for (int y = 0; y < s->h; y++) {
		const uint32_t *row = (const uint32_t *)((const uint8_t *)s->pixels + (size_t)y * (size_t)s->pitch);
		for (int x = 0; x < s->w; x++)
			if (row[x] >> 24) {
				if (x < lx) lx = x;
				if (x > hx) hx = x;
				if (y < ly) ly = y;
				if (y > hy) hy = y;
			}
	}
	SDL_UnlockSurface(s);
	*x0 = lx;
	*y0 = ly;
	*w = hx >= lx ? hx - lx + 1 : 0;
	*h = hy >= ly ? hy - ly + 1 : 0;
}

/* Renders cp of size f into g: from DejaVu when it has the character, else from the CJK font,
 * its baseline on DejaVu's and a wide character centred in its two columns. False when no font
 * has it, or it does not fit. */
static bool render_demand(vz_text *t, int f, uint32_t cp, vz_glyph *g)
{
	TTF_Font *font = t->font[f];
	bool cjk = !TTF_GlyphIsProvided32(font, cp);
	if (cjk) {
		if (!cjk_open(t) || !TTF_GlyphIsProvided32(t->cjk[f], cp)) return false;
		font = t->cjk[f];
	}
	SDL_Surface *s = render(font, cp);
	if (!s) return false;
	int x0, y0, w, h;
	ink_box(s, &x0, &y0, &w, &h);
	int minx, maxx, miny, maxy, adv = s->w;
	if (TTF_GlyphMetrics32(font, cp, &minx, &maxx, &miny, &maxy, &adv) != 0) adv = s->w;
	float cols = vz_cp_wide(cp) ? 2.0f : 1.0f;
	/* the surface's origin is the pen at the top of the font's line */
	g->x = (cols * t->advance[f] - (float)adv) / 2 + (float)x0;
	g->y = (float)(t->ascent[f] - TTF_FontAscent(font) + y0);
	bool ok = w == 0 || place(t, s, x0, y0, w, h, g);
	if (w == 0) g->w = g->h = 0; /* a blank (an ideographic space): nothing to draw */
	SDL_FreeSurface(s);
	return ok;
}

static demand *map_slot(vz_text *t, uint32_t key)
{
	uint32_t m = (uint32_t)t->map_cap - 1, i = (key * 2654435761u) & m;
	while (t->map[i].key && t->map[i].key != key) i = (i + 1) & m;
	return &t->map[i];
}

static bool map_reserve(vz_text *t)
{
	if (t->map && (t->map_n + 1) * 4 < t->map_cap * 3) return true;
	int cap = t->map_cap ? t->map_cap * 2 : 512;
	demand *old = t->map;
	int old_cap = t->map_cap;
	t->map = vz_calloc((size_t)cap, sizeof *t->map);
	if (!t->map) {
		t->map = old;
		return false;
	}
	t->map_cap = cap;
	for (int i = 0; i < old_cap; i++)
		if (old[i].key) *map_slot(t, old[i].key) = old[i];
	vz_free(old);
	return true;
}

/* The atlas is full at its largest: the glyphs rendered on demand go (the next frame renders the
 * ones it needs again). */
static void map_reset(vz_text *t)
{
	memset(t->map, 0, (size_t)t->map_cap * sizeof *t->map);
	t->map_n = 0;
	memset(t->atlas + (size_t)t->sh_base.y * ATLAS_W, 0, (size_t)(t->atlas_h - t->sh_base.y) * ATLAS_W);
	mark_dirty(t, t->sh_base.y, t->atlas_h);
	t->sh = t->sh_base;
	t->sh.x = 0;
	t->sh.y += t->sh.h + 1;
	t->sh.h = 0;
	t->generation++;
}

static const vz_glyph *demand_glyph(vz_text *t, int f, uint32_t cp)
{
	uint32_t key = (uint32_t)(f + 1) << 22 | cp;
	if (!map_reserve(t)) return NULL;
	demand *d = map_slot(t, key);
	if (d->key) return d->ok ? &d->g : NULL;
	vz_glyph g = {0};
	bool ok = render_demand(t, f, cp, &g);
	if (!ok && t->atlas_h >= ATLAS_HMAX && t->sh.y > t->sh_base.y) { /* full: start over */
		map_reset(t);
		ok = render_demand(t, f, cp, &g);
		d = map_slot(t, key);
	}
	d->key = key;
	d->ok = ok;
	d->g = g;
	t->map_n++;
	return ok ? &d->g : NULL;
}

bool vz_text_glyph(vz_text *t, vz_font font, uint32_t cp, vz_glyph *g)
{
	int i = glyph_slot(cp);
	if (i < 0 && cp > 126) {
		const vz_glyph *d = demand_glyph(t, font, cp);
		if (d) {
			*g = *d;
			return g->w > 0;
		}
	}
	if (i < 0) i = glyph_slot('?');
	if (!t->has[font][i]) return false;
	*g = t->glyphs[font][i];
	return true;
}

const uint8_t *vz_text_atlas(const vz_text *t, int *w, int *h)
{
	*w = ATLAS_W;
	*h = t->atlas_h;
	return t->atlas;
}

bool vz_text_take_dirty(vz_text *t, int *y0, int *y1)
{
	if (t->dirty_y1 <= t->dirty_y0) return false;
	*y0 = t->dirty_y0;
	*y1 = t->dirty_y1;
	t->dirty_y0 = t->dirty_y1 = 0;
	return true;
}

unsigned vz_text_generation(const vz_text *t) { return t ? t->generation : 0; }

const char *vz_text_font_path(const vz_text *t) { return t->path; }
