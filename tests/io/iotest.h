/*
 * iotest.h — builders of file images in memory for the reader tests and the fuzzer: safetensors
 * (a JSON header and data), .npy (a dict header), IDX (magic, dims, data), GGUF (its little-endian
 * pieces), and gzip compression, plus the fixtures' value formula (tests/data/make_fixtures.py).
 */
#ifndef LUMEN_IOTEST_H
#define LUMEN_IOTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lumen/io.h"
#include "testutil.h"

typedef struct iobuf {
	unsigned char *p;
	size_t n, cap;
} iobuf;

static inline void iob_add(iobuf *b, const void *s, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n) cap *= 2;
		b->p = realloc(b->p, cap);
		b->cap = cap;
	}
	if (n) memcpy(b->p + b->n, s, n);
	b->n += n;
}

static inline void iob_free(iobuf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* u64 header length, the header text, then data bytes. */
static inline iobuf st_image(const char *header, const void *data, size_t ndata)
{
	iobuf b = {0};
	size_t hn = strlen(header);
	unsigned char h8[8];
	for (int i = 0; i < 8; i++) h8[i] = (unsigned char)((uint64_t)hn >> (8 * i));
	iob_add(&b, h8, 8);
	iob_add(&b, header, hn);
	iob_add(&b, data, ndata);
	return b;
}

/* \x93NUMPY, version major.0, the length, the dict text padded to 64 with '\n', data. */
static inline iobuf npy_image(int major, const char *dict, const void *data, size_t ndata)
{
	iobuf b = {0};
	size_t pre = major == 1 ? 10 : 12, dn = strlen(dict);
	size_t total = (pre + dn + 1 + 63) / 64 * 64, hn = total - pre;
	unsigned char p[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
	for (size_t i = 0; i < pre - 8; i++) p[8 + i] = (unsigned char)(hn >> (8 * i));
	iob_add(&b, p, pre);
	iob_add(&b, dict, dn);
	for (size_t i = dn; i + 1 < hn; i++) iob_add(&b, " ", 1);
	iob_add(&b, "\n", 1);
	iob_add(&b, data, ndata);
	return b;
}

/* IDX: magic 0x0000TTNN, big-endian dims, then raw data bytes (already big-endian). */
static inline iobuf idx_image(unsigned char type, int ndim, const uint32_t *dims, const void *data,
                              size_t ndata)
{
	iobuf b = {0};
	unsigned char m[4] = {0, 0, type, (unsigned char)ndim};
	iob_add(&b, m, 4);
	for (int i = 0; i < ndim; i++) {
		unsigned char d[4] = {(unsigned char)(dims[i] >> 24), (unsigned char)(dims[i] >> 16),
		                      (unsigned char)(dims[i] >> 8), (unsigned char)dims[i]};
		iob_add(&b, d, 4);
	}
	iob_add(&b, data, ndata);
	return b;
}

/* GGUF pieces: little-endian integers, a gguf string (u64 length, bytes), zeros to an alignment. */
static inline void iob_u32(iobuf *b, uint32_t v)
{
	unsigned char p[4];
	for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
	iob_add(b, p, 4);
}
static inline void iob_u64(iobuf *b, uint64_t v)
{
	unsigned char p[8];
	for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
	iob_add(b, p, 8);
}
static inline void iob_gstr(iobuf *b, const char *s)
{
	iob_u64(b, strlen(s));
	iob_add(b, s, strlen(s));
}
static inline void iob_pad(iobuf *b, size_t align)
{
	static const unsigned char z[64];
	while (b->n % align) iob_add(b, z, 1);
}
/* "GGUF", version 3, the counts. */
static inline void gguf_head(iobuf *b, uint64_t ntensors, uint64_t nkv)
{
	iob_add(b, "GGUF", 4);
	iob_u32(b, 3);
	iob_u64(b, ntensors);
	iob_u64(b, nkv);
}
/* A tensor info: name, dims (ggml order: ne[0] innermost), type, offset. */
static inline void gguf_info(iobuf *b, const char *name, uint32_t nd, const uint64_t *ne,
                             uint32_t type, uint64_t offset)
{
	iob_gstr(b, name);
	iob_u32(b, nd);
	for (uint32_t i = 0; i < nd; i++) iob_u64(b, ne[i]);
	iob_u32(b, type);
	iob_u64(b, offset);
}

/* gzip (windowBits 31) of src. */
static inline iobuf gzip_image(const void *src, size_t n)
{
	iobuf b = {0};
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) return b;
	b.cap = deflateBound(&z, (uLong)n) + 32;
	b.p = malloc(b.cap);
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)n;
	z.next_out = b.p;
	z.avail_out = (uInt)b.cap;
	deflate(&z, Z_FINISH);
	b.n = b.cap - z.avail_out;
	deflateEnd(&z);
	return b;
}

/* The fixtures' values (make_fixtures.py) of flat index i. */
static inline double fixture_float(int64_t i) { return (double)((7 * i) % 11 - 5) / 4.0; }
static inline double fixture_int(int64_t i) { return (double)((7 * i) % 11 - 5); }
static inline double fixture_u8(int64_t i) { return (double)((37 * i) % 256); }

/* The i-th element (C order) of t as a double. */
static inline double elem(const lm_tensor *t, int64_t i)
{
	lm_tensor *c = lm_contiguous(t), *f = lm_to_dtype(c, LM_FLOAT64);
	double v = ((const double *)lm_tensor_data(f))[i];
	lm_tensor_release(f);
	lm_tensor_release(c);
	return v;
}

#endif
