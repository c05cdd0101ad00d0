/*
 * image.c — PNG (libpng) and JPEG (libjpeg) images as tensors: lm_image_load reads a file into a
 * (C, H, W) tensor, lm_image_save writes one image, or a grid of a batch as torchvision's
 * make_grid / save_image lay it out.
 *
 * Reading: the format is told by the first bytes (PNG's signature, JPEG's SOI marker), never by
 * the name. Each decoder reads from a byte source (source.c: a regular file, or a buffer for the
 * tests and the fuzzer) into 8-bit pixels interleaved as the file has them (H, W, channels), which
 * are then converted to the mode asked for and spread into the tensor's planes. The sizes are
 * checked before anything is allocated: the element count (lmi_numel_checked), and for a PNG the
 * bytes its compressed data can hold (deflate's 1032:1), so a 40-byte file that claims a
 * gigapixel is refused, not allocated. libpng and libjpeg report errors by longjmp: everything a
 * jump could lose lives in a context allocated by the caller of the function that calls setjmp
 * (load_ctx, save_ctx), and each error path destroys the library's state and frees what was
 * allocated; their warnings are never printed.
 * Writing: the tensor is converted to bytes as torchvision's save_image converts (floats clamped
 * to [0, 1], floor(v * 255 + 0.5)), laid out as a grid when it is a batch, and written through
 * file.c (a temporary renamed over the target when complete).
 * Read next: source.c, file.c, ../lua/io.c, docs/nn.md ("Images").
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#ifndef LUMEN_NO_PNG
#include <png.h>
#endif
#ifndef LUMEN_NO_JPEG
#include <jpeglib.h>
#include <jerror.h>
_Static_assert(JMSG_LENGTH_MAX <= 256, "load_ctx.msg holds libjpeg's messages");
#endif

#include "ioi.h"
#include "lumen/ops.h"

#define FN_LOAD "image_load"
#define FN_SAVE "image_save"

/* Which package a build without the library needs (Debian's names; the message says it). */
#define NEED_PNG "this build of Lumen has no libpng: install it (Debian/Ubuntu: apt-get install libpng-dev) and re-run cmake"
#define NEED_JPEG "this build of Lumen has no libjpeg: install it (Debian/Ubuntu: apt-get install libjpeg-dev) and re-run cmake"

static const unsigned char PNG_SIG[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

/* ================================================================ reading */

/* The state of one load, allocated by load(), which calls no setjmp: a decoder's longjmp never
 * leaves what it holds indeterminate. */
typedef struct load_ctx {
	lmi_src *s;
	lm_image_load_opts o;
	unsigned char head[8];   /* the bytes read to tell the format, handed to the decoder first */
	size_t nhead, headpos;
	int64_t h, w;
	int ch;                  /* channels of the decoded pixels: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA */
	uint8_t *px;             /* (h, w, ch), lm_alloc'ed */
	size_t px_bytes;
	lm_tensor *t;            /* the result (C, h, w), allocated once the header is read */
	lm_status failed;        /* the error is already the thread's (reading, interrupt, allocation) */
	bool truncated;          /* the data ended inside the image */
	const char *where;       /* what a PNG decoder reads now, for "truncated: ... inside the <where>" */
	char msg[256];           /* the library's message (libjpeg's are at most JMSG_LENGTH_MAX) */
	char warning[120];       /* libpng's first warning, which often says why the error came */
#ifndef LUMEN_NO_JPEG
	struct jpeg_decompress_struct jd;
	struct jpeg_error_mgr jerr;
	jmp_buf jmp;
	struct jpeg_source_mgr jsrc;
	JOCTET jbuf[16384];
#endif
} load_ctx;

/* Reads up to n bytes: the format's head first, then the source. -1 when the source failed (the
 * error set). */
static int64_t ctx_read(load_ctx *c, void *buf, size_t n)
{
	size_t k = 0;
	if (c->headpos < c->nhead) {
		k = c->nhead - c->headpos < n ? c->nhead - c->headpos : n;
		memcpy(buf, c->head + c->headpos, k);
		c->headpos += k;
	}
	if (k == n) return (int64_t)k;
	if (lmi_check_interrupt()) {
		lmi_src_fail(c->s, LM_ERR_INTERRUPTED, "interrupted while decoding");
		return -1;
	}
	int64_t got = lmi_src_read(c->s, (char *)buf + k, n - k);
	return got < 0 ? -1 : (int64_t)k + got;
}

/* The thread's error again, with the file named: "image_load: <msg>" -> "image_load: 'p': <msg>". */
static lm_status with_path(lmi_src *s)
{
	const char *e = lm_last_error();
	size_t n = strlen(FN_LOAD);
	if (strncmp(e, FN_LOAD, n) == 0 && e[n] == ':' && e[n + 1] == ' ') e += n + 2;
	char body[400];
	snprintf(body, sizeof body, "%s", e);
	return lmi_src_fail(s, lm_last_status(), "%s", body);
}

#if !defined(LUMEN_NO_PNG) || !defined(LUMEN_NO_JPEG) /* (the decoders' helpers) */
static int out_channels(lm_image_mode mode, int ch)
{
	return mode == LM_IMAGE_GRAY ? 1 : mode == LM_IMAGE_RGB ? 3 : mode == LM_IMAGE_RGBA ? 4 : ch;
}

/* The tensor's shape for an image of w x h x ch in the mode asked for, its element count checked
 * (an RGBA PNG may claim 2^31 - 1 pixels a side: 2^64 elements). */
static lm_status check_dims(load_ctx *c, uint32_t w, uint32_t h, int ch, int64_t *shape)
{
	int64_t numel;
	shape[0] = out_channels(c->o.mode, ch);
	shape[1] = h;
	shape[2] = w;
	if (w == 0 || h == 0)
		return lmi_src_fail(c->s, LM_ERR_IO, "corrupt: the header gives an image of %u x %u pixels", w, h);
	if (lmi_numel_checked(FN_LOAD, 3, shape, &numel) || numel > INT64_MAX / 8)
		return lmi_src_fail(c->s, LM_ERR_OVERFLOW, "an image of %u x %u pixels is too large for a tensor "
		                    "(shape %s)", w, h, lmi_dims_s(3, shape));
	return LM_OK;
}

/* Once the header says w x h x ch: allocates the result and the pixels. */
static lm_status start(load_ctx *c, uint32_t w, uint32_t h, int ch)
{
	int64_t shape[3];
	lm_status st = check_dims(c, w, h, ch, shape);
	if (st) return st;
	c->w = w;
	c->h = h;
	c->ch = ch;
	c->t = lmi_empty(FN_LOAD, 3, shape, c->o.dtype);
	if (!c->t) return with_path(c->s);
	c->px_bytes = (size_t)w * h * (size_t)ch; /* < 2^31 * 2^31 * 4: fits size_t */
	c->px = lm_alloc(c->px_bytes);
	if (!c->px) return with_path(c->s);
	return LM_OK;
}
#endif

/* ITU-R BT.601 luma in integers, as PIL's convert('L'): (19595 R + 38470 G + 7471 B + 2^15) >> 16. */
static inline uint8_t luma(const uint8_t *p)
{
	return (uint8_t)((19595u * p[0] + 38470u * p[1] + 7471u * p[2] + 0x8000u) >> 16);
}

/* The decoded pixels into the tensor's planes, converted to its channels and dtype. */
static void finish(load_ctx *c)
{
	int oc = (int)lm_tensor_size(c->t, 0), ch = c->ch;
	size_t plane = (size_t)c->h * (size_t)c->w;
	lm_dtype dt = lm_tensor_dtype(c->t);
	char *out = lmi_data(c->t);
	size_t isz = lmi_elem_size(dt);
	float f32[256];
	double f64[256];
	for (int v = 0; v < 256; v++) { /* value / 255, correctly rounded in each type */
		f32[v] = (float)v / 255.0f;
		f64[v] = v / 255.0;
	}
	for (size_t i = 0; i < plane; i++) {
		const uint8_t *p = c->px + i * (size_t)ch;
		uint8_t v[4];
		bool gray = ch < 3;
		uint8_t a = ch == 2 || ch == 4 ? p[ch - 1] : 255;
		if (oc == ch) memcpy(v, p, (size_t)ch);
		else if (oc == 1) v[0] = gray ? p[0] : luma(p);
		else {
			for (int k = 0; k < 3; k++) v[k] = gray ? p[0] : p[k];
			v[3] = a; /* rgba: the file's alpha, or opaque (rgb drops it) */
		}
		for (int k = 0; k < oc; k++) {
			char *q = out + ((size_t)k * plane + i) * isz;
			if (dt == LM_UINT8) *(uint8_t *)q = v[k];
			else if (dt == LM_FLOAT32) *(float *)q = f32[v[k]];
			else *(double *)q = f64[v[k]];
		}
	}
}

/* ---------------------------------------------------------------- PNG */

#ifndef LUMEN_NO_PNG
static void png_fail(png_structp png, png_const_charp msg)
{
	load_ctx *c = png_get_error_ptr(png);
	if (c) snprintf(c->msg, sizeof c->msg, "%s", msg);
	png_longjmp(png, 1);
}

/* Warnings (a damaged ancillary chunk, a known-bad ICC profile) leave the pixels right: never
 * printed; the first is kept for the message of an error that follows ("Invalid IHDR data" comes
 * after the warning that says what is invalid). */
static void png_quiet(png_structp png, png_const_charp msg)
{
	load_ctx *c = png_get_error_ptr(png);
	if (c && !c->warning[0]) snprintf(c->warning, sizeof c->warning, "%s", msg);
}

static void png_source(png_structp png, png_bytep buf, size_t n)
{
	load_ctx *c = png_get_io_ptr(png);
	int64_t got = ctx_read(c, buf, n);
	if (got < 0) {
		c->failed = lm_last_status();
		png_error(png, "read failed");
	}
	if ((size_t)got < n) {
		c->truncated = true;
		png_error(png, "truncated");
	}
}

static lm_status png_failure(load_ctx *c)
{
	if (c->failed) return c->failed;
	if (c->truncated)
		return lmi_src_fail(c->s, LM_ERR_IO, "truncated: the file ends at byte %llu, inside the %s",
		                    (unsigned long long)c->s->delivered, c->where);
	return lmi_src_fail(c->s, LM_ERR_IO, "corrupt PNG (libpng: %s%s%s)", c->msg, c->warning[0] ? "; " : "",
	                    c->warning);
}

/* The channels of the 8-bit pixels the transforms below give: a palette is RGB, a tRNS adds alpha. */
static int png_channels_8(png_structp png, png_infop info)
{
	int ct = png_get_color_type(png, info);
	int ch = ct == PNG_COLOR_TYPE_GRAY ? 1 : ct == PNG_COLOR_TYPE_GRAY_ALPHA ? 2 : ct == PNG_COLOR_TYPE_RGB_ALPHA ? 4 : 3;
	return ch + (ch != 2 && ch != 4 && png_get_valid(png, info, PNG_INFO_tRNS) ? 1 : 0);
}

/* The transforms to 8-bit gray, gray + alpha, RGB or RGBA; returns the number of passes. */
static int png_transforms(png_structp png, png_infop info)
{
	int ct = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
	if (ct == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
	if (ct == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
	if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
	if (depth == 16) png_set_strip_16(png); /* the high byte of each sample */
	return png_set_interlace_handling(png);
}

static lm_status decode_png(load_ctx *c)
{
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, c, png_fail, png_quiet);
	if (!png) return lmi_src_fail(c->s, LM_ERR_NOMEM, "libpng could not start (out of memory)");
	png_infop info = png_create_info_struct(png);
	volatile lm_status st = LM_OK;
	if (!info) {
		st = lmi_src_fail(c->s, LM_ERR_NOMEM, "libpng could not start (out of memory)");
		goto out;
	}
	if (setjmp(png_jmpbuf(png))) {
		st = png_failure(c);
		goto out;
	}
	c->where = "header";
	png_set_read_fn(png, c, png_source);
	png_set_user_limits(png, 0x7fffffff, 0x7fffffff); /* PNG's own limits: Lumen checks the sizes */
	png_read_info(png, info);
	uint32_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
	int ch = png_channels_8(png, info);
	/* checked before libpng allocates its rows (png_read_update_info): a header can claim 2^31 - 1
	 * pixels a side; the image data inflates from the file, at most 1032 bytes for each byte in */
	int64_t shape[3];
	if ((st = check_dims(c, w, h, ch, shape))) goto out;
	uint64_t raw = (uint64_t)h * png_get_rowbytes(png, info); /* < 8 x the numel just checked */
	if (raw > c->s->raw_size * 1032 + 4096) {
		st = lmi_src_fail(c->s, LM_ERR_IO, "truncated: an image of %u x %u pixels needs %llu bytes of image "
		                  "data, more than a %llu-byte file can hold compressed", w, h,
		                  (unsigned long long)raw, (unsigned long long)c->s->raw_size);
		goto out;
	}
	int passes = png_transforms(png, info);
	png_read_update_info(png, info);
	if (png_get_bit_depth(png, info) != 8 || png_get_channels(png, info) != ch ||
	    png_get_rowbytes(png, info) != (size_t)w * (size_t)ch) { /* cannot happen after the transforms */
		st = lmi_src_fail(c->s, LM_ERR_INTERNAL, "libpng gave %d channels of %d bits, not %d of 8",
		                  png_get_channels(png, info), png_get_bit_depth(png, info), ch);
		goto out;
	}
	if ((st = start(c, w, h, ch))) goto out;
	size_t stride = (size_t)w * (size_t)ch;
	c->where = "image data";
	for (int pass = 0; pass < passes; pass++)
		for (uint32_t y = 0; y < h; y++) {
			png_read_row(png, c->px + y * stride, NULL); /* interlaced: fills in this pass's pixels */
			if ((y & 63) == 0 && lmi_check_interrupt()) {
				st = lmi_src_fail(c->s, LM_ERR_INTERRUPTED, "interrupted while decoding");
				goto out;
			}
		}
	c->where = "chunks after the image data (IEND is missing)";
	png_read_end(png, NULL); /* the chunks after the image data, to IEND: a cut file is found */
out:
	png_destroy_read_struct(&png, info ? &info : NULL, NULL);
	return st;
}
#endif

/* ---------------------------------------------------------------- JPEG */

#ifndef LUMEN_NO_JPEG
static void jpeg_fail(j_common_ptr ci)
{
	load_ctx *c = ci->client_data;
	(*ci->err->format_message)(ci, c->msg);
	longjmp(c->jmp, 1);
}

/* Warnings (corrupt entropy-coded data that libjpeg decodes anyway, as PIL does): counted, never
 * printed. */
static void jpeg_quiet(j_common_ptr ci, int level)
{
	if (level < 0) ci->err->num_warnings++;
}

static void jpeg_silent(j_common_ptr ci) { (void)ci; }

static void src_init(j_decompress_ptr ci) { (void)ci; }
static void src_term(j_decompress_ptr ci) { (void)ci; }

/* More bytes; the end of the file inside the image is an error (libjpeg's own file source would
 * pad it with an EOI marker and hand back a partly grey image). */
static boolean src_fill(j_decompress_ptr ci)
{
	load_ctx *c = ci->client_data;
	int64_t got = ctx_read(c, c->jbuf, sizeof c->jbuf);
	if (got <= 0) {
		if (got < 0) c->failed = lm_last_status();
		else c->truncated = true;
		longjmp(c->jmp, 1);
	}
	c->jsrc.next_input_byte = c->jbuf;
	c->jsrc.bytes_in_buffer = (size_t)got;
	return TRUE;
}

static void src_skip(j_decompress_ptr ci, long n)
{
	load_ctx *c = ci->client_data;
	if (n <= 0) return;
	while ((size_t)n > c->jsrc.bytes_in_buffer) {
		n -= (long)c->jsrc.bytes_in_buffer;
		src_fill(ci);
	}
	c->jsrc.next_input_byte += n;
	c->jsrc.bytes_in_buffer -= (size_t)n;
}

static lm_status jpeg_failure(load_ctx *c)
{
	if (c->failed) return c->failed;
	if (c->truncated)
		return lmi_src_fail(c->s, LM_ERR_IO, "truncated: the file ends at byte %llu, inside the JPEG data",
		                    (unsigned long long)c->s->delivered);
	if (c->jerr.msg_code == JERR_NO_BACKING_STORE)
		return lmi_src_fail(c->s, LM_ERR_NOMEM, "decoding this JPEG needs more memory than the limit "
		                    "leaves (lm.set_memory_limit)");
	return lmi_src_fail(c->s, LM_ERR_IO, "corrupt or unsupported JPEG (libjpeg: %s)", c->msg);
}

static const char *jpeg_space_name(J_COLOR_SPACE cs)
{
	return cs == JCS_CMYK ? "CMYK" : cs == JCS_YCCK ? "YCCK (CMYK)" : "an unknown color space";
}

static lm_status decode_jpeg(load_ctx *c)
{
	j_decompress_ptr ci = &c->jd;
	volatile lm_status st = LM_OK;
	memset(ci, 0, sizeof *ci);
	ci->err = jpeg_std_error(&c->jerr);
	c->jerr.error_exit = jpeg_fail;
	c->jerr.emit_message = jpeg_quiet;
	c->jerr.output_message = jpeg_silent;
	ci->client_data = c;
	if (setjmp(c->jmp)) {
		st = jpeg_failure(c);
		goto out;
	}
	jpeg_create_decompress(ci); /* (clears the struct but err and client_data) */
	c->jsrc = (struct jpeg_source_mgr){
		.init_source = src_init, .fill_input_buffer = src_fill, .skip_input_data = src_skip,
		.resync_to_restart = jpeg_resync_to_restart, .term_source = src_term,
	};
	ci->src = &c->jsrc;
	jpeg_read_header(ci, TRUE);
	int ch;
	if (ci->jpeg_color_space == JCS_GRAYSCALE) {
		ci->out_color_space = JCS_GRAYSCALE;
		ch = 1;
	} else if (ci->jpeg_color_space == JCS_YCbCr || ci->jpeg_color_space == JCS_RGB) {
		ci->out_color_space = JCS_RGB;
		ch = 3;
	} else {
		st = lmi_src_fail(c->s, LM_ERR_UNSUPPORTED, "a JPEG in %s (%d components): Lumen reads gray, "
		                  "YCbCr and RGB JPEGs; convert it first (ImageMagick: convert IN -colorspace "
		                  "sRGB OUT.jpg)", jpeg_space_name(ci->jpeg_color_space), ci->num_components);
		goto out;
	}
	if ((st = start(c, ci->image_width, ci->image_height, ch))) goto out;
	/* libjpeg's whole-image buffers (progressive files) within what Lumen's memory limit leaves */
	lm_memory_stats ms;
	lm_memory_stats_get(&ms);
	if (ms.limit_bytes) {
		size_t left = ms.limit_bytes > ms.live_bytes ? ms.limit_bytes - ms.live_bytes : 1;
		ci->mem->max_memory_to_use = left > (size_t)LONG_MAX ? LONG_MAX : (long)left;
	}
	jpeg_start_decompress(ci);
	if (ci->output_components != ch || ci->output_width != (JDIMENSION)c->w ||
	    ci->output_height != (JDIMENSION)c->h) { /* cannot happen at scale 1/1 */
		st = lmi_src_fail(c->s, LM_ERR_INTERNAL, "libjpeg gave %d channels of %u x %u",
		                  ci->output_components, ci->output_width, ci->output_height);
		goto out;
	}
	size_t stride = (size_t)c->w * (size_t)ch;
	while (ci->output_scanline < ci->output_height) {
		JSAMPROW row = c->px + (size_t)ci->output_scanline * stride;
		jpeg_read_scanlines(ci, &row, 1);
		if ((ci->output_scanline & 63) == 0 && lmi_check_interrupt()) {
			st = lmi_src_fail(c->s, LM_ERR_INTERRUPTED, "interrupted while decoding");
			goto out;
		}
	}
	jpeg_finish_decompress(ci);
out:
	jpeg_destroy_decompress(ci);
	return st;
}
#endif

/* ---------------------------------------------------------------- telling the format */

/* A name for the first bytes of a file that is not an image Lumen reads, or "". */
static const char *known_format(const unsigned char *p, size_t n)
{
	if (n >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0)) return ": a GIF image";
	if (n >= 2 && p[0] == 'B' && p[1] == 'M') return ": a BMP image?";
	if (n >= 4 && (memcmp(p, "II*\0", 4) == 0 || memcmp(p, "MM\0*", 4) == 0)) return ": a TIFF image";
	if (n >= 4 && memcmp(p, "RIFF", 4) == 0) return ": a RIFF file (a WebP image?)";
	if (n >= 6 && memcmp(p, "\x93NUMPY", 6) == 0) return ": a NumPy .npy file, for lm.load_npy";
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return ": gzip'ed data";
	return "";
}

static lm_status not_an_image(load_ctx *c)
{
	if (c->nhead == 0) return lmi_src_fail(c->s, LM_ERR_IO, "is empty (0 bytes), not a PNG or JPEG image");
	char hex[3 * sizeof c->head + 1] = "";
	for (size_t i = 0, k = 0; i < c->nhead && i < sizeof c->head; i++)
		k += (size_t)snprintf(hex + k, sizeof hex - k, i ? " %02x" : "%02x", c->head[i]);
	return lmi_src_fail(c->s, LM_ERR_IO, "is not a PNG or JPEG image (it starts with bytes %s%s)", hex,
	                    known_format(c->head, c->nhead));
}

static lm_tensor *load(lmi_src *s, const lm_image_load_opts *opts)
{
	static const lm_image_load_opts none = {LM_IMAGE_ASIS, LM_FLOAT32};
	load_ctx *c = lm_alloc(sizeof *c); /* (~17 KB with libjpeg's state: not on the stack) */
	if (!c) {
		with_path(s);
		return NULL;
	}
	memset(c, 0, sizeof *c);
	c->s = s;
	c->o = opts ? *opts : none;
	lm_status st = LM_OK;
	if (c->o.mode < LM_IMAGE_ASIS || c->o.mode > LM_IMAGE_RGBA)
		st = lmi_fail(LM_ERR_ARG, "%s: mode %d is not an lm_image_mode", FN_LOAD, (int)c->o.mode);
	else if (c->o.dtype != LM_FLOAT32 && c->o.dtype != LM_FLOAT64 && c->o.dtype != LM_UINT8)
		st = lmi_fail(LM_ERR_ARG, "%s: dtype must be float32, float64 or uint8, got %s", FN_LOAD,
		              lm_dtype_name(c->o.dtype));
	int64_t got = st ? 0 : ctx_read(c, c->head, sizeof c->head);
	if (!st && got < 0) st = lm_last_status();
	c->nhead = got > 0 ? (size_t)got : 0;
	bool png = c->nhead == 8 && memcmp(c->head, PNG_SIG, 8) == 0;
	bool jpeg = c->nhead >= 3 && c->head[0] == 0xff && c->head[1] == 0xd8 && c->head[2] == 0xff;
	if (st) {
		/* a bad option, or the file could not be read */
	} else if (png) {
#ifdef LUMEN_NO_PNG
		st = lmi_src_fail(s, LM_ERR_UNSUPPORTED, "is a PNG image, but " NEED_PNG);
#else
		st = decode_png(c);
#endif
	} else if (jpeg) {
#ifdef LUMEN_NO_JPEG
		st = lmi_src_fail(s, LM_ERR_UNSUPPORTED, "is a JPEG image, but " NEED_JPEG);
#else
		st = decode_jpeg(c);
#endif
	} else {
		st = not_an_image(c);
	}
	if (!st) finish(c);
	lm_tensor *t = c->t;
	if (c->px) lm_free(c->px, c->px_bytes);
	lm_free(c, sizeof *c);
	if (st) {
		lm_tensor_release(t);
		return NULL;
	}
	return t;
}

lm_tensor *lm_image_load(const char *path, const lm_image_load_opts *opts)
{
	lmi_src s;
	if (lmi_src_open_file(&s, FN_LOAD, path, false)) return NULL;
	lm_tensor *t = load(&s, opts);
	lmi_src_close(&s);
	return t;
}

lm_tensor *lm_image_parse(const void *buf, size_t len, const char *what, const lm_image_load_opts *opts)
{
	lmi_src s;
	if (lmi_src_open_mem(&s, FN_LOAD, buf, len, what, false)) return NULL;
	lm_tensor *t = load(&s, opts);
	lmi_src_close(&s);
	return t;
}

/* ================================================================ writing */

typedef enum { FMT_PNG, FMT_JPEG } image_format;

/* The path quoted for messages (its tail when long), as source.c quotes a file. */
static const char *quoted(const char *path, char *buf, size_t cap)
{
	size_t n = strlen(path);
	if (n > 200) snprintf(buf, cap, "'...%s'", path + n - 197);
	else snprintf(buf, cap, "'%s'", path);
	return buf;
}

static lm_status format_of(const char *path, image_format *f)
{
	char q[256];
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (dot && (!slash || dot > slash + 1)) {
		if (strcasecmp(dot, ".png") == 0) return *f = FMT_PNG, LM_OK;
		if (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0) return *f = FMT_JPEG, LM_OK;
		return lmi_fail(LM_ERR_ARG, "%s: %s: the extension says the format: .png, .jpg or .jpeg "
		                "(got '%.20s')", FN_SAVE, quoted(path, q, sizeof q), dot);
	}
	return lmi_fail(LM_ERR_ARG, "%s: %s: the extension says the format: .png, .jpg or .jpeg (the "
	                "name has none)", FN_SAVE, quoted(path, q, sizeof q));
}

/* The image's geometry: a batch (N, C, H, W) laid out as make_grid lays it out. */
typedef struct grid {
	int64_t n, c, h, w;     /* the input, as (N, C, H, W) */
	int64_t cols, pad;      /* images per row, and the pixels between them (0 for one image) */
	int64_t gh, gw;         /* the picture written */
} grid;

static lm_status plan(const lm_tensor *x, const lm_image_save_opts *o, image_format f, grid *g)
{
	int nd = lm_tensor_ndim(x);
	const int64_t *sh = lm_tensor_shape(x);
	if (nd < 2 || nd > 4)
		return lmi_fail(LM_ERR_SHAPE, "%s: an image is (H, W), (C, H, W) or a batch (N, C, H, W), got "
		                "shape %s", FN_SAVE, lmi_dims_s(nd, sh));
	g->n = nd == 4 ? sh[0] : 1;
	g->c = nd >= 3 ? sh[nd - 3] : 1;
	g->h = sh[nd - 2];
	g->w = sh[nd - 1];
	if (g->c < 1 || g->c > 4)
		return lmi_fail(LM_ERR_SHAPE, "%s: shape %s has %lld channels: an image has 1 (gray), 2 (gray + "
		                "alpha), 3 (RGB) or 4 (RGBA)", FN_SAVE, lmi_dims_s(nd, sh), (long long)g->c);
	if (f == FMT_JPEG && (g->c == 2 || g->c == 4))
		return lmi_fail(LM_ERR_SHAPE, "%s: shape %s has %lld channels, with alpha, and a JPEG has no alpha: "
		                "write a .png, or drop the alpha (x:narrow(%d, 1, %d))", FN_SAVE, lmi_dims_s(nd, sh),
		                (long long)g->c, nd - 2, g->c == 4 ? 3 : 1);
	if (g->n == 0 || g->h == 0 || g->w == 0)
		return lmi_fail(LM_ERR_SHAPE, "%s: shape %s holds no pixels", FN_SAVE, lmi_dims_s(nd, sh));
	g->cols = o->nrow < g->n ? o->nrow : g->n;
	g->pad = g->n > 1 ? o->padding : 0; /* one image is written alone, as make_grid returns it */
	int64_t rows = (g->n + g->cols - 1) / g->cols, a, b;
	bool over = __builtin_add_overflow(g->h, g->pad, &a) || __builtin_mul_overflow(a, rows, &a) ||
	            __builtin_add_overflow(a, g->pad, &g->gh) || __builtin_add_overflow(g->w, g->pad, &b) ||
	            __builtin_mul_overflow(b, g->cols, &b) || __builtin_add_overflow(b, g->pad, &g->gw);
	int64_t most = f == FMT_JPEG ? 65500 : 1000000; /* libjpeg's and libpng's limits */
	if (over || g->gh > most || g->gw > most)
		return lmi_fail(LM_ERR_SHAPE, "%s: the picture would be %lld x %lld pixels (W x H): a %s is at most "
		                "%lld on each side", FN_SAVE, over ? -1LL : (long long)g->gw,
		                over ? -1LL : (long long)g->gh, f == FMT_JPEG ? "JPEG" : "PNG (libpng's limit)",
		                (long long)most);
	return LM_OK;
}

/* v in [0, 1] to a byte as torchvision's save_image: v * 255 + 0.5, clamped to [0, 255], truncated
 * (NaN gives 0), computed in the tensor's own precision. */
static inline uint8_t byte_f32(float v)
{
	float f = v * 255.0f + 0.5f;
	return !(f > 0.0f) ? 0 : f >= 255.0f ? 255 : (uint8_t)f;
}
static inline uint8_t byte_f64(double v)
{
	double f = v * 255.0 + 0.5;
	return !(f > 0.0) ? 0 : f >= 255.0 ? 255 : (uint8_t)f;
}

/* x's values as bytes (N, C, H, W) in C order: uint8 as it is, floats converted (other dtypes as
 * float64 first), after rescaling by the min and max when normalize. */
static lm_status to_bytes(const lm_tensor *x, bool normalize, uint8_t *out, size_t n)
{
	lm_tensor *d = lm_detach(x), *cpu = d ? lmi_on_cpu(d) : NULL, *v = NULL, *cc = NULL;
	lm_status st = LM_OK;
	if (!cpu) goto out;
	lm_dtype dt = lm_tensor_dtype(cpu);
	bool keep = dt == LM_FLOAT32 || dt == LM_FLOAT64 || (dt == LM_UINT8 && !normalize);
	v = keep ? lm_tensor_retain(cpu) : lm_to_dtype(cpu, LM_FLOAT64);
	cc = v ? lm_contiguous(v) : NULL;
	if (!cc) goto out;
	dt = lm_tensor_dtype(cc);
	const char *p = lmi_data(cc);
	if (dt == LM_UINT8) {
		memcpy(out, p, n);
		goto out;
	}
	double lo = 0, hi = 1, range = 1;
	if (normalize) { /* torchvision's norm_range: (v - min) / max(max - min, 1e-5) */
		lo = INFINITY, hi = -INFINITY;
		for (size_t i = 0; i < n; i++) {
			double e = dt == LM_FLOAT32 ? ((const float *)p)[i] : ((const double *)p)[i];
			if (e < lo) lo = e;
			if (e > hi) hi = e;
		}
		range = hi - lo > 1e-5 ? hi - lo : 1e-5;
	}
	if (dt == LM_FLOAT32) {
		const float *f = (const float *)p;
		if (normalize)
			for (size_t i = 0; i < n; i++) out[i] = byte_f32((float)((f[i] - lo) / range));
		else
			for (size_t i = 0; i < n; i++) out[i] = byte_f32(f[i]);
	} else {
		const double *f = (const double *)p;
		for (size_t i = 0; i < n; i++) out[i] = byte_f64(normalize ? (f[i] - lo) / range : f[i]);
	}
out:
	if (!cc) st = lm_last_status();
	lm_tensor_release(cc);
	lm_tensor_release(v);
	lm_tensor_release(cpu);
	lm_tensor_release(d);
	return st;
}

/* The bytes (N, C, H, W) into the picture (gh, gw, C), interleaved, zeros between the images. */
static void lay_out(const grid *g, const uint8_t *in, uint8_t *pic)
{
	size_t c = (size_t)g->c, hw = (size_t)g->h * (size_t)g->w;
	for (int64_t k = 0; k < g->n; k++) {
		int64_t y0 = k / g->cols * (g->h + g->pad) + g->pad, x0 = k % g->cols * (g->w + g->pad) + g->pad;
		for (int64_t y = 0; y < g->h; y++) {
			uint8_t *row = pic + ((size_t)(y0 + y) * (size_t)g->gw + (size_t)x0) * c;
			const uint8_t *src = in + (size_t)k * c * hw + (size_t)y * (size_t)g->w;
			for (int64_t xx = 0; xx < g->w; xx++)
				for (size_t ch = 0; ch < c; ch++) row[(size_t)xx * c + ch] = src[ch * hw + (size_t)xx];
		}
	}
}

#ifndef LUMEN_NO_PNG
/* libpng's simplified writer reports errors in the png_image, never by a longjmp through ours. */
static lm_status write_png(lm_file_writer *w, const grid *g, const uint8_t *pic, const char *path)
{
	static const png_uint_32 formats[5] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
	png_image im;
	memset(&im, 0, sizeof im);
	im.version = PNG_IMAGE_VERSION;
	im.width = (png_uint_32)g->gw;
	im.height = (png_uint_32)g->gh;
	im.format = formats[g->c];
	if (png_image_write_to_stdio(&im, lm_file_stream(w), 0, pic, 0, NULL)) return LM_OK;
	char q[256];
	lm_status st = lmi_fail(LM_ERR_IO, "%s: cannot write %s: libpng: %s", FN_SAVE,
	                        quoted(path, q, sizeof q), im.message);
	png_image_free(&im);
	return st;
}
#endif

#ifndef LUMEN_NO_JPEG
/* The state of one JPEG write, allocated by lm_image_save (write_jpeg calls setjmp). */
typedef struct save_ctx {
	struct jpeg_compress_struct jc;
	struct jpeg_error_mgr jerr;
	jmp_buf jmp;
	char msg[JMSG_LENGTH_MAX];
} save_ctx;

static void jpeg_fail_save(j_common_ptr ci)
{
	save_ctx *c = ci->client_data;
	(*ci->err->format_message)(ci, c->msg);
	longjmp(c->jmp, 1);
}

static lm_status write_jpeg(save_ctx *c, lm_file_writer *w, const grid *g, const uint8_t *pic,
                            int quality, const char *path)
{
	j_compress_ptr ci = &c->jc;
	volatile lm_status st = LM_OK;
	char q[256];
	memset(ci, 0, sizeof *ci);
	ci->err = jpeg_std_error(&c->jerr);
	c->jerr.error_exit = jpeg_fail_save;
	c->jerr.emit_message = jpeg_quiet;
	c->jerr.output_message = jpeg_silent;
	ci->client_data = c;
	if (setjmp(c->jmp)) {
		st = lmi_fail(LM_ERR_IO, "%s: cannot write %s: libjpeg: %s", FN_SAVE, quoted(path, q, sizeof q), c->msg);
		goto out;
	}
	jpeg_create_compress(ci);
	jpeg_stdio_dest(ci, lm_file_stream(w));
	ci->image_width = (JDIMENSION)g->gw;
	ci->image_height = (JDIMENSION)g->gh;
	ci->input_components = (int)g->c;
	ci->in_color_space = g->c == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(ci);
	jpeg_set_quality(ci, quality, TRUE);
	jpeg_start_compress(ci, TRUE);
	size_t stride = (size_t)g->gw * (size_t)g->c;
	while (ci->next_scanline < ci->image_height) {
		JSAMPROW row = (JSAMPROW)(pic + (size_t)ci->next_scanline * stride);
		jpeg_write_scanlines(ci, &row, 1);
		if ((ci->next_scanline & 63) == 0 && lmi_check_interrupt()) {
			st = lmi_fail(LM_ERR_INTERRUPTED, "%s: interrupted: %s was not written (the file is as it "
			              "was)", FN_SAVE, quoted(path, q, sizeof q));
			goto out;
		}
	}
	jpeg_finish_compress(ci);
out:
	jpeg_destroy_compress(ci);
	return st;
}
#endif

static lm_status check_save_opts(const lm_image_save_opts *o)
{
	if (o->nrow < 1) return lmi_fail(LM_ERR_ARG, "%s: nrow must be at least 1, got %lld", FN_SAVE, (long long)o->nrow);
	if (o->padding < 0 || o->padding > 1000000)
		return lmi_fail(LM_ERR_ARG, "%s: padding must be in 0..1000000, got %lld", FN_SAVE, (long long)o->padding);
	if (o->quality < 1 || o->quality > 100)
		return lmi_fail(LM_ERR_ARG, "%s: quality must be in 1..100, got %d", FN_SAVE, o->quality);
	return LM_OK;
}

lm_status lm_image_save(const char *path, const lm_tensor *x, const lm_image_save_opts *opts)
{
	static const lm_image_save_opts defaults = LM_IMAGE_SAVE_DEFAULTS;
	const lm_image_save_opts *o = opts ? opts : &defaults;
	image_format f = FMT_PNG;
	grid g = {0};
	lm_status st;
	if (!path || !*path) return lmi_fail(LM_ERR_ARG, "%s: the path is empty", FN_SAVE);
	if (!x) return lmi_fail(LM_ERR_ARG, "%s: the tensor is NULL", FN_SAVE);
	if ((st = format_of(path, &f)) || (st = check_save_opts(o)) || (st = plan(x, o, f, &g))) return st;
#ifdef LUMEN_NO_PNG
	if (f == FMT_PNG) return lmi_fail(LM_ERR_UNSUPPORTED, "%s: cannot write a PNG: " NEED_PNG, FN_SAVE);
#endif
#ifdef LUMEN_NO_JPEG
	if (f == FMT_JPEG) return lmi_fail(LM_ERR_UNSUPPORTED, "%s: cannot write a JPEG: " NEED_JPEG, FN_SAVE);
#endif
	/* bounded: each side was checked at most 1000000 and c at most 4; n * c * h * w is a tensor's numel */
	size_t nin = (size_t)lm_tensor_numel(x), npic = (size_t)g.gh * (size_t)g.gw * (size_t)g.c;
	uint8_t *in = lm_alloc(nin), *pic = in ? lm_alloc(npic) : NULL;
	lm_file_writer *w = NULL;
	if (!pic) {
		char why[300];
		snprintf(why, sizeof why, "%s", lm_last_error());
		st = lmi_fail(lm_last_status(), "%s: cannot allocate the bytes of a %lld x %lld picture (%s)", FN_SAVE,
		              (long long)g.gw, (long long)g.gh, why);
		goto out;
	}
	memset(pic, 0, npic); /* the padding: 0, as make_grid's pad_value */
	if ((st = to_bytes(x, o->normalize, in, nin))) goto out;
	lay_out(&g, in, pic);
	if ((st = lm_file_begin(FN_SAVE, path, &w))) goto out;
#ifndef LUMEN_NO_PNG
	if (f == FMT_PNG) st = write_png(w, &g, pic, path);
#endif
#ifndef LUMEN_NO_JPEG
	if (f == FMT_JPEG) {
		save_ctx *c = lm_alloc(sizeof *c);
		st = c ? write_jpeg(c, w, &g, pic, o->quality, path) : lm_last_status();
		if (c) lm_free(c, sizeof *c);
	}
#endif
	if (st) lm_file_abort(w);
	else st = lm_file_commit(w);
out:
	if (pic) lm_free(pic, npic);
	if (in) lm_free(in, nin);
	return st;
}
