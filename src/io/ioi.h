/*
 * ioi.h (internal) — what the file-format readers share: a byte source over a file or a buffer,
 * optionally inflated through zlib (gzip or zlib streams, detected by their magic), with error
 * messages that name the reader and the file; little-endian and big-endian loads; the strict JSON
 * reader of the safetensors header (json.c).
 * Read next: source.c, json.c.
 */
#ifndef LUMEN_IOI_H
#define LUMEN_IOI_H

#include <stdio.h>
#ifndef LUMEN_NO_ZLIB
#include <zlib.h>
#endif

#include "core/lmi.h"
#include "lumen/io.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "Lumen's file readers assume a little-endian host (data is read straight into tensors)"
#endif

/* ---------------------------------------------------------------- byte sources */

typedef struct lmi_src {
	const char *fname;        /* the reader, for messages ("safetensors_load") */
	char what[256];           /* the file's path (quoted in messages) or a description */
	FILE *f;                  /* a file, or NULL for a buffer */
	const unsigned char *mem; /* the buffer */
	size_t mem_len, mem_pos;
	uint64_t raw_size;        /* bytes of the file or buffer */
	/* inflating */
	bool gz;
	bool z_live;              /* inflateInit2 done */
	bool z_end;               /* the last stream ended (and nothing follows) */
#ifndef LUMEN_NO_ZLIB
	z_stream z;
#endif
	unsigned char *zin;       /* input buffer of a file source (ZIN_SIZE bytes) */
	uint64_t delivered;       /* bytes handed out by lmi_src_read */
} lmi_src;

/* Opens path for reading (a regular file); with allow_gz, a gzip/zlib magic starts inflating. */
lm_status lmi_src_open_file(lmi_src *s, const char *fname, const char *path, bool allow_gz);
/* A buffer source; what names it in messages. */
lm_status lmi_src_open_mem(lmi_src *s, const char *fname, const void *buf, size_t len,
                           const char *what, bool allow_gz);
/* Reads up to n bytes into buf; returns how many (fewer only at the end of the data), or -1 with
 * the error set (i/o error, corrupt compressed data, interrupted). */
int64_t lmi_src_read(lmi_src *s, void *buf, size_t n);
/* Reads exactly n bytes; a short read is an error "<what>: truncated: <context> needs N bytes,
 * the file has M". */
lm_status lmi_src_read_exact(lmi_src *s, void *buf, size_t n, const char *context);
/* Whether more data follows (reads one byte ahead; -1 on error). */
int lmi_src_at_end(lmi_src *s);
void lmi_src_close(lmi_src *s);

/* A reader of a tensor map (safetensors, GGUF) from an open source. lmi_map_load_file and
 * lmi_map_load_mem open the source (fname names the caller in errors), clear out, run load and
 * close; lmi_map_abandon frees a half-read map and keeps the thread's error. */
typedef lm_status (*lmi_map_loader)(lmi_src *s, lm_tensor_map *out);
lm_status lmi_map_load_file(const char *fname, const char *path, lmi_map_loader load, lm_tensor_map *out);
lm_status lmi_map_load_mem(const char *fname, const void *buf, size_t len, const char *what, lmi_map_loader load,
                           lm_tensor_map *out);
lm_status lmi_map_abandon(lm_tensor_map *out);

/* Sets an LM_ERR_IO error "<fname>: <what>: <message>" and returns it. */
lm_status lmi_src_fail(const lmi_src *s, lm_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An upper bound of the decompressed bytes the source can deliver (raw size for plain data, the
 * deflate limit of 1032:1 for compressed data). */
uint64_t lmi_src_max_bytes(const lmi_src *s);

/* ---------------------------------------------------------------- byte order */

static inline uint32_t lmi_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t lmi_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
	return v;
}
/* Reverses the bytes of each of n items of size sz in place. */
void lmi_byteswap(void *data, size_t n, size_t sz);

/* ---------------------------------------------------------------- writing */

/* A file being written whole (lm_file_begin: src/io/file.c), committed by lmi_out_commit. */
typedef struct lmi_out {
	const char *fname;
	lm_file_writer *w;
} lmi_out;
lm_status lmi_out_open(lmi_out *o, const char *fname, const char *path);
lm_status lmi_out_write(lmi_out *o, const void *buf, size_t n);
/* Writes t's elements in C order (a contiguous copy for other layouts, in slices). */
lm_status lmi_out_write_tensor(lmi_out *o, const lm_tensor *t);
lm_status lmi_out_commit(lmi_out *o);
void lmi_out_abort(lmi_out *o); /* removes the temporary (no-op after commit) */

/* ---------------------------------------------------------------- strings */

/* A NUL-terminated copy through lm_alloc (freed with lmi_str_free); NULL on failure (set). */
char *lmi_strndup(const char *s, size_t n);
void lmi_str_free(char *s);
/* Whether s[0..n) is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF). */
bool lmi_utf8_valid(const char *s, size_t n);

/* ---------------------------------------------------------------- JSON (json.c) */

typedef enum lmj_type {
	LMJ_NULL = 0,
	LMJ_FALSE,
	LMJ_TRUE,
	LMJ_NUMBER,
	LMJ_STRING,
	LMJ_ARRAY,
	LMJ_OBJECT
} lmj_type;

/* A value: containers list their children through child/next; an object's children carry their
 * key. Strings are decoded (escapes resolved), NUL-terminated, in the document's pool. */
typedef struct lmj_node {
	lmj_type type;
	int32_t child, next; /* -1 when none */
	int32_t count;       /* children of a container */
	uint32_t key, key_len; /* member key: offset and length in the pool */
	uint32_t str, str_len; /* string value */
	double num;
	uint64_t u;          /* the value of a non-negative integer literal (is_uint) */
	bool is_uint;
} lmj_node;

typedef struct lmj_doc {
	lmj_node *nodes;
	int32_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
	char err[160];       /* why parsing failed, with the byte offset */
	bool nomem;          /* it failed for lack of memory */
} lmj_doc;

#define LMJ_MAX_DEPTH 64
/* Parses text[0..len) as one JSON value (RFC 8259: UTF-8, no trailing commas, no comments),
 * surrounded by optional whitespace. Root is node 0. On failure returns LM_ERR_IO and doc->err says
 * why (nothing to free); on success free with lmj_free. */
lm_status lmj_parse(const char *text, size_t len, lmj_doc *doc);
void lmj_free(lmj_doc *doc);
static inline const char *lmj_str(const lmj_doc *d, const lmj_node *n) { return d->pool + n->str; }
static inline const char *lmj_key(const lmj_doc *d, const lmj_node *n) { return d->pool + n->key; }
static inline const lmj_node *lmj_at(const lmj_doc *d, int32_t i) { return i < 0 ? NULL : &d->nodes[i]; }
const char *lmj_type_name(lmj_type t);
/* Writes s[0..n) as a JSON string literal (with quotes) into the growing buffer. */
typedef struct lmi_buf {
	char *p;
	size_t len, cap;
	bool failed;
} lmi_buf;
void lmi_buf_add(lmi_buf *b, const void *s, size_t n);
void lmi_buf_addf(lmi_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lmi_buf_add_json_string(lmi_buf *b, const char *s, size_t n);
void lmi_buf_free(lmi_buf *b);

#endif
