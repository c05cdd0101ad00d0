/*
 * text.c — the glyph atlas: DejaVu Sans Mono (Debian's fonts-dejavu-core) rendered by SDL2_ttf
 * at four sizes into one coverage texture, with the glyphs every scene needs (ASCII and a few
 * symbols such as arrows, ×, ≤, Σ).
 *
 * Design: a monospace font makes layout arithmetic (columns of counters, cells that fit a number)
 * exact: every character advances the same. Glyphs are rendered once, at the UI scale (HiDPI:
 * twice the pixels), packed on shelves; drawing text is then one instance per glyph. The font is
 * found at $LUMEN_FONT, else at its Debian path, else through fontconfig (fc-match).
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
#define ATLAS_H 1024
#define DEBIAN_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"

/* Sizes of VZ_FONT_SMALL, _BODY, _TITLE, _TINY in points at UI scale 1 (pixels on a 96-dpi
 * display). TINY is for numbers in dense cells. */
static const int font_points[VZ_FONT_COUNT] = {11, 13, 16, 9};

/* The symbols beyond ASCII that scenes and the UI use. */
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

struct vz_text {
	char path[512];
	float line[VZ_FONT_COUNT], advance[VZ_FONT_COUNT];
	vz_glyph glyphs[VZ_FONT_COUNT][NGLYPHS];
	bool has[VZ_FONT_COUNT][NGLYPHS];
	uint8_t *atlas; /* ATLAS_W x ATLAS_H coverage */
};

/* ---------------------------------------------------------------- UTF-8 */

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

static int glyph_slot(uint32_t cp)
{
	if (cp >= 32 && cp <= 126) return (int)(cp - 32);
	for (size_t i = 0; i < NEXTRA; i++)
		if (extra_glyphs[i] == cp) return (int)(NASCII + i);
	return -1;
}

/* ---------------------------------------------------------------- finding the font */

static bool readable(const char *p) { return p && *p && access(p, R_OK) == 0; }

/* fontconfig's answer for DejaVu Sans Mono, if it has one that is DejaVu (fc-match falls back to
 * any font otherwise). */
static bool fontconfig_path(char *out, size_t cap)
{
	FILE *p = popen("fc-match -f '%{file}' 'DejaVu Sans Mono' 2>/dev/null", "r");
	if (!p) return false;
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	pclose(p);
	return n > 0 && strstr(out, "DejaVuSansMono") && readable(out);
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
	if (fontconfig_path(out, cap)) return LM_OK;
	return lm_set_error(LM_ERR_IO, "%s: the font DejaVu Sans Mono was not found (looked at %s and "
	                    "asked fontconfig): install it with apt-get install fonts-dejavu-core",
	                    fname, DEBIAN_FONT);
}

/* ---------------------------------------------------------------- the atlas */

typedef struct shelf {
	int x, y, h; /* pen of the current shelf */
} shelf;

/* Copies the glyph's coverage (alpha of an ARGB8888 surface) into the atlas. */
static bool place(vz_text *t, shelf *sh, SDL_Surface *s, vz_glyph *g)
{
	if (sh->x + s->w + 1 > ATLAS_W) {
		sh->x = 0;
		sh->y += sh->h + 1;
		sh->h = 0;
	}
	if (sh->y + s->h + 1 > ATLAS_H) return false;
	SDL_LockSurface(s);
	for (int y = 0; y < s->h; y++) {
		const uint32_t *row = (const uint32_t *)((const uint8_t *)s->pixels + (size_t)y * (size_t)s->pitch);
		uint8_t *dst = t->atlas + (size_t)(sh->y + y) * ATLAS_W + (size_t)sh->x;
		for (int x = 0; x < s->w; x++) dst[x] = (uint8_t)(row[x] >> 24);
	}
	SDL_UnlockSurface(s);
	g->x = 0;
	g->y = 0;
	g->w = (float)s->w;
	g->h = (float)s->h;
	g->u0 = (float)sh->x / ATLAS_W;
	g->v0 = (float)sh->y / ATLAS_H;
	g->u1 = (float)(sh->x + s->w) / ATLAS_W;
	g->v1 = (float)(sh->y + s->h) / ATLAS_H;
	sh->x += s->w + 1;
	if (s->h > sh->h) sh->h = s->h;
	return true;
}

static lm_status render_font(vz_text *t, int f, float scale, shelf *sh, const char *fname)
{
	int px = (int)(font_points[f] * scale + 0.5f);
	TTF_Font *font = TTF_OpenFont(t->path, px);
	if (!font)
		return lm_set_error(LM_ERR_IO, "%s: SDL2_ttf cannot open the font '%s': %s", fname,
		                    t->path, TTF_GetError());
	TTF_SetFontHinting(font, TTF_HINTING_LIGHT);
	t->line[f] = (float)TTF_FontHeight(font);
	int minx, maxx, miny, maxy, adv = 0;
	if (TTF_GlyphMetrics32(font, 'M', &minx, &maxx, &miny, &maxy, &adv) != 0 || adv <= 0)
		adv = px / 2 + 1;
	t->advance[f] = (float)adv;
	SDL_Color white = {255, 255, 255, 255};
	for (int i = 0; i < (int)NGLYPHS; i++) {
		uint32_t cp = i < NASCII ? (uint32_t)(32 + i) : extra_glyphs[i - NASCII];
		if (cp == ' ' || !TTF_GlyphIsProvided32(font, cp)) continue;
		SDL_Surface *s = TTF_RenderGlyph32_Blended(font, cp, white);
		if (!s) continue;
		SDL_Surface *c = SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_ARGB8888, 0);
		SDL_FreeSurface(s);
		if (!c) continue;
		bool ok = place(t, sh, c, &t->glyphs[f][i]);
		SDL_FreeSurface(c);
		if (!ok) {
			TTF_CloseFont(font);
			return lm_set_error(LM_ERR_INTERNAL, "%s: the glyph atlas is full (UI scale %.1f)",
			                    fname, scale);
		}
		t->has[f][i] = true;
	}
	TTF_CloseFont(font);
	return LM_OK;
}

vz_text *vz_text_new(float scale, const char *fname)
{
	vz_text *t = vz_calloc(1, sizeof *t);
	if (!t) return NULL;
	if (find_font(t->path, sizeof t->path, fname) != LM_OK) goto fail;
	if (!TTF_WasInit() && TTF_Init() != 0) {
		lm_set_error(LM_ERR_IO, "%s: SDL2_ttf does not start: %s", fname, TTF_GetError());
		goto fail;
	}
	t->atlas = vz_calloc(ATLAS_W, ATLAS_H);
	if (!t->atlas) goto fail;
	shelf sh = {0, 0, 0};
	for (int f = 0; f < VZ_FONT_COUNT; f++)
		if (render_font(t, f, scale, &sh, fname) != LM_OK) goto fail;
	return t;
fail:
	vz_text_free(t);
	return NULL;
}

void vz_text_free(vz_text *t)
{
	if (!t) return;
	free(t->atlas);
	free(t);
}

float vz_text_line_px(const vz_text *t, vz_font font) { return t ? t->line[font] : 14.0f; }
float vz_text_advance_px(const vz_text *t, vz_font font) { return t ? t->advance[font] : 7.0f; }

bool vz_text_glyph(const vz_text *t, vz_font font, uint32_t cp, vz_glyph *g)
{
	int i = glyph_slot(cp);
	if (i < 0) i = glyph_slot('?');
	if (!t->has[font][i]) return false;
	*g = t->glyphs[font][i];
	return true;
}

const uint8_t *vz_text_atlas(const vz_text *t, int *w, int *h)
{
	*w = ATLAS_W;
	*h = ATLAS_H;
	return t->atlas;
}

const char *vz_text_font_path(const vz_text *t) { return t->path; }
