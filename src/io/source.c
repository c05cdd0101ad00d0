/*
 * source.c — the byte sources and sinks of the file readers and writers.
 *
 * A source is a regular file or a buffer; when a reader allows it and the data starts with a
 * gzip (1f 8b) or zlib (78 xx) magic, bytes are inflated on the fly through zlib, stream after
 * stream (gzip files may hold several members), so a 26 MB .gz is never held compressed and
 * uncompressed at once. Reads poll the interrupt flag between chunks. A sink (lmi_out) writes
 * through file.c's lm_file_*, so a failed or interrupted save never damages the target. Read
 * next: file.c, json.c, safetensors.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ioi.h"

#define ZIN_SIZE (256u << 10)

/* ---------------------------------------------------------------- errors */

lm_status lmi_src_fail(const lmi_src *s, lm_status st, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lmi_fail(st, "%s: %s: %s", s->fname, s->what, msg);
}

/* ---------------------------------------------------------------- opening */

static void describe_path(lmi_src *s, const char *path)
{
	size_t n = strlen(path);
	if (n > 200) snprintf(s->what, sizeof s->what, "'...%s'", path + n - 197);
	else snprintf(s->what, sizeof s->what, "'%s'", path);
}

/* Starts inflating when the first bytes are a gzip or zlib magic. */
static lm_status start_inflate(lmi_src *s, const unsigned char *head, size_t nhead)
{
	bool gzip = nhead >= 2 && head[0] == 0x1f && head[1] == 0x8b;
	bool zlib = nhead >= 2 && (head[0] & 0x0f) == 8 && (head[0] >> 4) <= 7 &&
	            ((unsigned)head[0] << 8 | head[1]) % 31 == 0;
	if (!gzip && !zlib) return LM_OK;
#ifdef LUMEN_NO_ZLIB
	return lmi_src_fail(s, LM_ERR_UNSUPPORTED, "compressed (%s) data, but this build has no zlib: "
	                    "decompress it first (gzip -d)", gzip ? "gzip" : "zlib");
#else
	memset(&s->z, 0, sizeof s->z);
	if (inflateInit2(&s->z, 15 + 32) != Z_OK) /* 32: detect gzip or zlib headers */
		return lmi_src_fail(s, LM_ERR_NOMEM, "zlib could not start inflating");
	s->gz = s->z_live = true;
	return LM_OK;
#endif
}

lm_status lmi_src_open_file(lmi_src *s, const char *fname, const char *path, bool allow_gz)
{
	memset(s, 0, sizeof *s);
	s->fname = fname;
	if (!path) return lmi_fail(LM_ERR_ARG, "%s: path is NULL", fname);
	describe_path(s, path);
	const char *kind;
	int fd = lm_file_open_read(path, &kind); /* a FIFO or /dev/zero would never end: refused */
	if (fd < 0 && kind) return lmi_src_fail(s, LM_ERR_IO, "not a regular file (it is %s)", kind);
	if (fd < 0) return lmi_src_fail(s, LM_ERR_IO, "cannot open: %s", strerror(errno));
	s->f = fdopen(fd, "rb");
	if (!s->f) {
		close(fd);
		return lmi_src_fail(s, LM_ERR_IO, "cannot open: %s", strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		lmi_src_close(s);
		return lmi_src_fail(s, LM_ERR_IO, "cannot open: %s", strerror(errno));
	}
	s->raw_size = (uint64_t)st.st_size;
	if (!allow_gz) return LM_OK;
	unsigned char head[2];
	size_t got = fread(head, 1, 2, s->f);
	rewind(s->f);
	lm_status r = start_inflate(s, head, got);
	if (!r && s->gz && !(s->zin = lm_alloc(ZIN_SIZE))) r = lm_last_status();
	if (r) lmi_src_close(s);
	return r;
}

lm_status lmi_src_open_mem(lmi_src *s, const char *fname, const void *buf, size_t len,
                           const char *what, bool allow_gz)
{
	memset(s, 0, sizeof *s);
	s->fname = fname;
	snprintf(s->what, sizeof s->what, "%s", what ? what : "<buffer>");
	if (!buf && len) return lmi_fail(LM_ERR_ARG, "%s: buffer is NULL", fname);
	s->mem = buf;
	s->mem_len = len;
	s->raw_size = len;
	return allow_gz ? start_inflate(s, buf, len) : LM_OK;
}

void lmi_src_close(lmi_src *s)
{
	if (s->f) fclose(s->f);
#ifndef LUMEN_NO_ZLIB
	if (s->z_live) inflateEnd(&s->z);
#endif
	if (s->zin) lm_free(s->zin, ZIN_SIZE);
	s->f = NULL;
	s->z_live = false;
	s->zin = NULL;
}

uint64_t lmi_src_max_bytes(const lmi_src *s)
{
	if (!s->gz) return s->raw_size;
	uint64_t m = s->raw_size;
	return m > UINT64_MAX / 1032 ? UINT64_MAX : m * 1032 + 4096;
}

/* ---------------------------------------------------------------- reading */

static int64_t read_raw(lmi_src *s, void *buf, size_t n)
{
	if (s->f) {
		size_t got = fread(buf, 1, n, s->f);
		if (got < n && ferror(s->f)) {
			lmi_src_fail(s, LM_ERR_IO, "read error: %s", strerror(errno));
			return -1;
		}
		return (int64_t)got;
	}
	size_t left = s->mem_len - s->mem_pos, k = n < left ? n : left;
	if (k) memcpy(buf, s->mem + s->mem_pos, k);
	s->mem_pos += k;
	return (int64_t)k;
}

#ifndef LUMEN_NO_ZLIB
/* Feeds the inflater more input when it has none; returns 0 at the end of the raw data. */
static int64_t refill(lmi_src *s)
{
	if (s->z.avail_in) return 1;
	if (!s->f) { /* a buffer: hand it over in one piece */
		size_t left = s->mem_len - s->mem_pos;
		uInt k = left > (1u << 30) ? (1u << 30) : (uInt)left;
		s->z.next_in = (Bytef *)(s->mem + s->mem_pos);
		s->z.avail_in = k;
		s->mem_pos += k;
		return k;
	}
	int64_t got = read_raw(s, s->zin, ZIN_SIZE);
	if (got < 0) return -1;
	s->z.next_in = s->zin;
	s->z.avail_in = (uInt)got;
	return got;
}

/* After a stream ended: another gzip member may follow; anything else is an error. */
static int next_member(lmi_src *s)
{
	int64_t r = refill(s);
	if (r < 0) return -1;
	if (r == 0) {
		s->z_end = true;
		return 0;
	}
	if (s->z.next_in[0] != 0x1f) {
		lmi_src_fail(s, LM_ERR_IO, "corrupt: bytes follow the end of the compressed data");
		return -1;
	}
	inflateReset(&s->z);
	return 1;
}

static int64_t read_inflate(lmi_src *s, unsigned char *buf, size_t n)
{
	size_t done = 0;
	while (done < n && !s->z_end) {
		int64_t r = refill(s);
		if (r < 0) return -1;
		if (r == 0) {
			lmi_src_fail(s, LM_ERR_IO, "truncated: the compressed data ends early (after %llu "
			             "bytes of output)", (unsigned long long)(s->delivered + done));
			return -1;
		}
		size_t want = n - done;
		s->z.next_out = buf + done;
		s->z.avail_out = want > (1u << 30) ? (1u << 30) : (uInt)want;
		uInt before = s->z.avail_out;
		int zr = inflate(&s->z, Z_NO_FLUSH);
		done += before - s->z.avail_out;
		if (zr == Z_STREAM_END) {
			if (next_member(s) < 0) return -1;
		} else if (zr != Z_OK && !(zr == Z_BUF_ERROR && s->z.avail_in == 0)) {
			lmi_src_fail(s, LM_ERR_IO, "corrupt compressed data (zlib: %s)",
			             s->z.msg ? s->z.msg : zError(zr));
			return -1;
		}
		if (lmi_check_interrupt()) {
			lmi_src_fail(s, LM_ERR_INTERRUPTED, "interrupted while reading");
			return -1;
		}
	}
	return (int64_t)done;
}
#else
static int64_t read_inflate(lmi_src *s, unsigned char *buf, size_t n)
{
	(void)buf, (void)n;
	lmi_src_fail(s, LM_ERR_UNSUPPORTED, "this build has no zlib");
	return -1;
}
#endif

int64_t lmi_src_read(lmi_src *s, void *buf, size_t n)
{
	int64_t got = s->gz ? read_inflate(s, buf, n) : read_raw(s, buf, n);
	if (got > 0) s->delivered += (uint64_t)got;
	return got;
}

lm_status lmi_src_read_exact(lmi_src *s, void *buf, size_t n, const char *context)
{
	uint64_t at = s->delivered;
	int64_t got = lmi_src_read(s, buf, n);
	if (got < 0) return lm_last_status();
	if ((size_t)got < n)
		return lmi_src_fail(s, LM_ERR_IO, "truncated: the %s ends at byte %llu, inside %s (%zu "
		                    "bytes at offset %llu)", s->gz ? "decompressed data" : "file",
		                    (unsigned long long)(at + (uint64_t)got), context, n,
		                    (unsigned long long)at);
	return LM_OK;
}

int lmi_src_at_end(lmi_src *s)
{
	unsigned char c;
	int64_t got = lmi_src_read(s, &c, 1);
	return got < 0 ? -1 : got == 0;
}

/* ---------------------------------------------------------------- byte order */

void lmi_byteswap(void *data, size_t n, size_t sz)
{
	unsigned char *p = data;
	for (size_t i = 0; i < n; i++, p += sz)
		for (size_t a = 0, b = sz - 1; a < b; a++, b--) {
			unsigned char t = p[a];
			p[a] = p[b];
			p[b] = t;
		}
}

/* ---------------------------------------------------------------- writing */

lm_status lmi_out_open(lmi_out *o, const char *fname, const char *path)
{
	memset(o, 0, sizeof *o);
	o->fname = fname;
	return lm_file_begin(fname, path, &o->w);
}

lm_status lmi_out_write(lmi_out *o, const void *buf, size_t n)
{
	if (lmi_check_interrupt()) /* a long save stops early; commit says the file is unchanged */
		return lmi_fail(LM_ERR_INTERRUPTED, "%s: interrupted (the file is as it was)", o->fname);
	return lm_file_write(o->w, buf, n);
}

lm_status lmi_out_write_tensor(lmi_out *o, const lm_tensor *t)
{
	if (lm_tensor_device(t) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: tensors must be on the CPU", o->fname);
	if (lm_tensor_is_contiguous(t)) return lmi_out_write(o, lmi_data(t), lm_tensor_nbytes(t));
	if (t->ndim <= 1 || lm_tensor_nbytes(t) <= ((size_t)64 << 20)) {
		lm_tensor *c = lmi_contiguous_copy(t, t->dtype);
		lm_status s = c ? lmi_out_write(o, lmi_data(c), lm_tensor_nbytes(c)) : lm_last_status();
		lm_tensor_release(c);
		return s;
	}
	/* large: slices along dim 0, each a contiguous copy (no full second copy) */
	int64_t n0 = t->shape[0];
	for (int64_t i = 0; i < n0; i++) {
		lm_tensor *v = lmi_view_of(t, t->ndim - 1, t->shape + 1, t->stride + 1,
		                           t->offset + i * t->stride[0]);
		lm_tensor *c = v ? lmi_contiguous_copy(v, t->dtype) : NULL;
		lm_status s = c ? lmi_out_write(o, lmi_data(c), lm_tensor_nbytes(c)) : lm_last_status();
		lm_tensor_release(c);
		lm_tensor_release(v);
		if (s) return s;
	}
	return LM_OK;
}

lm_status lmi_out_commit(lmi_out *o)
{
	lm_status s = lm_file_commit(o->w);
	o->w = NULL;
	return s;
}

void lmi_out_abort(lmi_out *o)
{
	lm_file_abort(o->w);
	o->w = NULL;
}

/* ---------------------------------------------------------------- strings */

char *lmi_strndup(const char *s, size_t n)
{
	size_t *p = lm_alloc(sizeof(size_t) + n + 1);
	if (!p) return NULL;
	*p = n + 1;
	char *c = (char *)(p + 1);
	memcpy(c, s, n);
	c[n] = '\0';
	return c;
}

void lmi_str_free(char *s)
{
	if (!s) return;
	size_t *p = (size_t *)s - 1;
	lm_free(p, sizeof(size_t) + *p);
}

bool lmi_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
		if (!len || c > 0xf4 || i + (size_t)len > n) return false;
		uint32_t cp = c & (0x7f >> len);
		for (int k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80) return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
		if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
		i += (size_t)len;
	}
	return true;
}

/* ---------------------------------------------------------------- growing buffers */

void lmi_buf_add(lmi_buf *b, const void *s, size_t n)
{
	if (b->failed) return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1) cap *= 2;
		char *p = lm_alloc(cap);
		if (!p) {
			b->failed = true;
			return;
		}
		if (b->len) memcpy(p, b->p, b->len);
		if (b->p) lm_free(b->p, b->cap);
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void lmi_buf_addf(lmi_buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof tmp) {
		b->failed = true;
		return;
	}
	lmi_buf_add(b, tmp, (size_t)n);
}

void lmi_buf_add_json_string(lmi_buf *b, const char *s, size_t n)
{
	lmi_buf_add(b, "\"", 1);
	size_t run = 0; /* bytes copied as they are */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\') continue;
		lmi_buf_add(b, s + run, i - run);
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			lmi_buf_add(b, e, 2);
		} else {
			lmi_buf_addf(b, "\\u%04x", c);
		}
		run = i + 1;
	}
	lmi_buf_add(b, s + run, n - run);
	lmi_buf_add(b, "\"", 1);
}

void lmi_buf_free(lmi_buf *b)
{
	if (b->p) lm_free(b->p, b->cap);
	memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------- tensor maps */

static lm_status map_load(lm_status opened, lmi_src *s, lmi_map_loader load, lm_tensor_map *out)
{
	if (opened) return opened;
	lm_status r = load(s, out);
	lmi_src_close(s);
	return r;
}

lm_status lmi_map_load_file(const char *fname, const char *path, lmi_map_loader load, lm_tensor_map *out)
{
	if (!out) return lmi_fail(LM_ERR_ARG, "%s: out is NULL", fname);
	memset(out, 0, sizeof *out);
	lmi_src s;
	return map_load(lmi_src_open_file(&s, fname, path, false), &s, load, out);
}

lm_status lmi_map_load_mem(const char *fname, const void *buf, size_t len, const char *what, lmi_map_loader load,
                           lm_tensor_map *out)
{
	if (!out) return lmi_fail(LM_ERR_ARG, "%s: out is NULL", fname);
	memset(out, 0, sizeof *out);
	lmi_src s;
	return map_load(lmi_src_open_mem(&s, fname, buf, len, what, false), &s, load, out);
}

lm_status lmi_map_abandon(lm_tensor_map *out)
{
	lm_status keep = lm_last_status();
	char msg[512];
	snprintf(msg, sizeof msg, "%s", lm_last_error());
	lm_tensor_map_free(out);
	return lmi_fail(keep ? keep : LM_ERR_INTERNAL, "%s", msg);
}
