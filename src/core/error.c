/*
 * error.c — the thread-local error of the core (the stb model: NULL or a status, plus a reason).
 *
 * lmi_fail formats into a per-thread buffer; lm_last_error() reads it. Shapes in messages come from
 * lmi_shape_s, a small ring of per-thread buffers so one message can name several shapes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmi.h"

static _Thread_local char err_msg[1024]; /* the emulator's reports run long, in Chinese more so */
static _Thread_local lm_status err_status;
static _Atomic int ui_lang = -1; /* -1: from the environment */

void lm_set_lang(lm_lang lang) { ui_lang = lang == LM_LANG_ZH ? LM_LANG_ZH : LM_LANG_EN; }
void lm_reset_lang(void) { ui_lang = -1; }

/* 'zh', 'zh_CN.UTF-8' -> zh; 'en_US', 'C', 'POSIX', 'C.UTF-8' -> en; else -1. */
static int from_locale(const char *s)
{
	if (!s || !*s) return -1;
	char l[3] = {(char)(s[0] | 0x20), s[1] ? (char)(s[1] | 0x20) : 0, 0};
	if (strcmp(l, "zh") == 0) return LM_LANG_ZH;
	if (strcmp(l, "en") == 0 || strcmp(s, "C") == 0 || strcmp(s, "c") == 0 || strcmp(s, "POSIX") == 0 ||
	    strncmp(s, "C.", 2) == 0 || strncmp(s, "c.", 2) == 0)
		return LM_LANG_EN;
	return -1;
}

lm_lang lm_lang_why(const char **why)
{
	static _Thread_local char buf[96];
	int v = ui_lang;
	if (v >= 0) {
		*why = ":lang";
		return (lm_lang)v;
	}
	const char *l = getenv("LUMEN_LANG");
	if ((v = from_locale(l)) >= 0) {
		snprintf(buf, sizeof buf, "LUMEN_LANG=%.70s", l);
		*why = buf;
		return (lm_lang)v;
	}
	l = getenv("LANG");
	if (l && *l) {
		snprintf(buf, sizeof buf, "LANG=%.80s", l);
		*why = buf;
		return from_locale(l) == LM_LANG_ZH ? LM_LANG_ZH : LM_LANG_EN;
	}
	*why = "the default";
	return LM_LANG_EN;
}

lm_lang lm_get_lang(void)
{
	const char *why;
	return lm_lang_why(&why);
}

const char *lm_last_error(void) { return err_msg; }
lm_status lm_last_status(void) { return err_status; }

void lm_clear_error(void)
{
	err_msg[0] = '\0';
	err_status = LM_OK;
}

static const char *const status_names[LM_STATUS_COUNT] = {
	[LM_OK] = "ok",
	[LM_ERR_ARG] = "bad argument",
	[LM_ERR_SHAPE] = "shape mismatch",
	[LM_ERR_DTYPE] = "bad dtype",
	[LM_ERR_INDEX] = "index out of range",
	[LM_ERR_NOMEM] = "out of memory",
	[LM_ERR_OVERFLOW] = "size overflow",
	[LM_ERR_DEVICE] = "device error",
	[LM_ERR_STATE] = "bad state",
	[LM_ERR_IO] = "i/o error",
	[LM_ERR_INTERRUPTED] = "interrupted",
	[LM_ERR_UNSUPPORTED] = "unsupported",
	[LM_ERR_INTERNAL] = "internal error",
};

const char *lm_status_name(lm_status s)
{
	return (s >= 0 && s < LM_STATUS_COUNT) ? status_names[s] : "unknown status";
}

static void vset(lm_status s, const char *fmt, va_list ap)
{
	vsnprintf(err_msg, sizeof err_msg, fmt, ap);
	err_status = s;
}

lm_status lmi_fail(lm_status s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(s, fmt, ap);
	va_end(ap);
	return s;
}

lm_status lm_set_error(lm_status s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(s, fmt, ap);
	va_end(ap);
	return s;
}

void *lmi_fail_null(lm_status s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(s, fmt, ap);
	va_end(ap);
	return NULL;
}

char *lm_shape_str(int ndim, const int64_t *shape, char *buf, size_t cap)
{
	size_t n = 0;
	if (cap == 0) return buf;
	buf[0] = '\0';
	n += (size_t)snprintf(buf + n, cap - n, "[");
	for (int i = 0; i < ndim && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, i ? ", %lld" : "%lld", (long long)shape[i]);
	if (n < cap) snprintf(buf + n, cap - n, "]");
	return buf;
}

const char *lmi_dims_s(int ndim, const int64_t *shape)
{
	static _Thread_local char ring[8][LM_SHAPE_STR_MAX];
	static _Thread_local unsigned next;
	char *b = ring[next++ % 8];
	if (ndim < 0 || ndim > LM_MAX_DIMS) {
		snprintf(b, LM_SHAPE_STR_MAX, "[%d dims]", ndim);
		return b;
	}
	return lm_shape_str(ndim, shape, b, LM_SHAPE_STR_MAX);
}

const char *lmi_shape_s(const lm_tensor *t)
{
	return t ? lmi_dims_s(t->ndim, t->shape) : "(null)";
}

_Noreturn void lmi_assert_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "lumen: internal assertion failed: %s (%s:%d)\n", what, file, line);
	abort();
}
