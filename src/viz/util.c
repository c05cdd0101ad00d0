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

void *vz_calloc(size_t n, size_t size)
{
	void *p = n && size ? calloc(n, size) : calloc(1, 1);
	if (!p) lm_set_error(LM_ERR_NOMEM, "viz: out of memory (%zu x %zu bytes)", n, size);
	return p;
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
		free(im);
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
	free(im->rgba);
	free(im);
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
