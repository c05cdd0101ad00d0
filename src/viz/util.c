/*
 * util.c — small helpers of the visualizer: the labels' language, bounded formatting, numbers as
 * counters show them, allocation that reports through the core's error, the clock, images.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "viz/vz.h"
#include "viz/vz_gpu.h"

/* The labels' language, read again at each entry of the viewer (vz_lang_sync): the core's
 * lm_get_lang reads the environment at each call, and a frame asks a few hundred times (0.1 ms of
 * the curves scene's 0.8 ms of recording). */
static int lang_zh = -1;

bool vz_lang_sync(void)
{
	int zh = lm_get_lang() == LM_LANG_ZH && vz_cjk_font(NULL) != NULL;
	bool changed = zh != lang_zh;
	lang_zh = zh;
	return changed;
}

bool vz_zh(void)
{
	if (lang_zh < 0) vz_lang_sync();
	return lang_zh;
}

char *vz_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	return buf;
}

void vz_append(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(buf);
	if (n + 1 >= cap) return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

char *vz_number(char *buf, size_t cap, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 1e15) snprintf(buf, cap, "%.0f", v);
	else if (isfinite(v) && fabs(v) >= 1e-3 && fabs(v) < 1e6) snprintf(buf, cap, "%.4g", v);
	else snprintf(buf, cap, "%.3g", v);
	return buf;
}

lm_status vz_error_prefix(lm_status st, const char *fname)
{
	char msg[1024];
	snprintf(msg, sizeof msg, "%s", lm_last_error());
	if (!st) st = lm_last_status() ? lm_last_status() : LM_ERR_INTERNAL;
	return lm_set_error(st, "%s: %s", fname, msg);
}

/* The visualizer's heap is the core's counting allocator (lm_alloc: lm.memory() sees a scene's
 * arrays, and the memory limit holds them too). Each block carries its size in a 16-byte header,
 * so that vz_free and vz_realloc need none, as free and realloc do. */
#define VZ_HEAD 16

void *vz_malloc(size_t n)
{
	if (n > SIZE_MAX - VZ_HEAD) {
		lm_set_error(LM_ERR_NOMEM, "viz: out of memory (%zu bytes)", n);
		return NULL;
	}
	char *p = lm_alloc(n + VZ_HEAD);
	if (!p) return NULL; /* lm_alloc said why */
	memcpy(p, &n, sizeof n);
	return p + VZ_HEAD;
}

void vz_free(void *p)
{
	if (!p) return;
	char *b = (char *)p - VZ_HEAD;
	size_t n;
	memcpy(&n, b, sizeof n);
	lm_free(b, n + VZ_HEAD);
}

void *vz_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		lm_set_error(LM_ERR_NOMEM, "viz: out of memory (%zu x %zu bytes)", n, size);
		return NULL;
	}
	void *p = vz_malloc(n * size);
	if (p) memset(p, 0, n * size);
	return p;
}

bool vz_grow(void **p, int *cap, int need, size_t size, int first)
{
	if (need <= *cap) return true;
	int c = *cap ? *cap : first;
	while (c < need) c *= 2;
	void *q = vz_realloc(*p, (size_t)c * size);
	if (!q) return false; /* vz_malloc said why */
	*p = q;
	*cap = c;
	return true;
}

void *vz_realloc(void *p, size_t n)
{
	if (!p) return vz_malloc(n);
	size_t old;
	memcpy(&old, (char *)p - VZ_HEAD, sizeof old);
	if (n <= old && n >= old / 2) return p; /* fits: keep it */
	void *q = vz_malloc(n);
	if (!q) return NULL; /* p stays valid, as realloc leaves it */
	memcpy(q, p, n < old ? n : old);
	vz_free(p);
	return q;
}

double vz_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

vz_image *vz_image_new(int w, int h)
{
	if (w < 1 || h < 1 || w > 8192 || h > 8192) {
		lm_set_error(LM_ERR_ARG, "viz: image size %d x %d out of 1..8192", w, h);
		return NULL;
	}
	vz_image *im = vz_calloc(1, sizeof *im);
	if (!im) return NULL;
	im->rgba = vz_calloc((size_t)w * (size_t)h, 4);
	if (!im->rgba) {
		vz_free(im);
		return NULL;
	}
	im->w = w;
	im->h = h;
	im->dirty = true;
	return im;
}

void vz_image_free(vz_image *im)
{
	if (!im) return;
	vz_gpu_forget_image(im);
	vz_free(im->rgba);
	vz_free(im);
}

void vz_image_set(vz_image *im, int x, int y, vz_color c)
{
	if (x < 0 || y < 0 || x >= im->w || y >= im->h) return;
	uint8_t *p = im->rgba + ((size_t)y * (size_t)im->w + (size_t)x) * 4;
	p[0] = c.r;
	p[1] = c.g;
	p[2] = c.b;
	p[3] = c.a;
	im->dirty = true;
}
