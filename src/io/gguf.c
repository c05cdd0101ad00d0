/*
 * gguf.c — GGUF, the file format of ggml and llama.cpp: typed key-value metadata, then named
 * tensors, the block types (q8_0, q4_0) as their bytes, so a weight Lumen quantizes is the one
 * llama.cpp reads, and the reverse.
 *
 * Layout, little-endian: "GGUF", u32 version (3; 2 reads too), u64 tensor count, u64 kv count;
 * each kv: key (a gguf string: u64 length, bytes), u32 value type, the value (uint8 ... float64,
 * bool, string, or array: u32 element type, u64 count, elements); each tensor info: name, u32
 * n_dims, u64 ne[n_dims] in ggml's order (ne[0] is the innermost: the LAST dim of the C-order
 * shape), u32 ggml type, u64 offset into the data section; zero padding to the alignment (32, or
 * the u32 general.alignment); the data, each tensor at an offset that is a multiple of it.
 *
 * The reader checks every count and length against the bytes the file has left, then every
 * tensor's dims, type, size, alignment and place in the file, overlaps and duplicate names, all
 * before it allocates a tensor. Metadata comes back as text: numbers in decimal (floats with the
 * fewest digits that read back exactly), bools as true/false, strings as they are, arrays as JSON.
 * The writer lays the file out as ggml's gguf_write does (tensors in the order given, each padded
 * to the alignment), with string metadata and general.architecture = "lumen" unless given.
 * Read next: safetensors.c (the same map, the same checks in another format).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ioi.h"

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGML_MAX_DIMS 4    /* the dims ggml (and so llama.cpp) reads */
#define GGML_MAX_NAME 64   /* ggml's name buffer, the NUL included */
#define GGUF_MAX_NESTING 4 /* arrays of arrays: deeper is refused (ggml reads none) */

/* ---------------------------------------------------------------- types */

/* ggml's tensor types by number (ggml.h, enum ggml_type; 4, 5, 31-33 and 36-38 were removed). */
static const char *const ggml_names[] = {
	"F32",  "F16",     "Q4_0",   "Q4_1",    "Q4_2",   "Q4_3",   "Q5_0",   "Q5_1",    "Q8_0",
	"Q8_1", "Q2_K",    "Q3_K",   "Q4_K",    "Q5_K",   "Q6_K",   "Q8_K",   "IQ2_XXS", "IQ2_XS",
	"IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",  "IQ2_S",  "IQ4_XS", "I8",     "I16",     "I32",
	"I64",  "F64",     "IQ1_M",  "BF16",    "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0", "TQ2_0",
	"IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4", "NVFP4", "Q1_0",
};
#define GGML_NTYPES ((uint32_t)(sizeof ggml_names / sizeof ggml_names[0]))

/* The ggml types that are Lumen dtypes (uint8 has none). */
static const struct {
	uint32_t ggml;
	lm_dtype dt;
} lumen_types[] = {
	{0, LM_FLOAT32}, {1, LM_FLOAT16}, {2, LM_Q4_0},  {8, LM_Q8_0},      {24, LM_INT8},
	{26, LM_INT32},  {27, LM_INT64},  {28, LM_FLOAT64}, {30, LM_BFLOAT16},
};
#define LUMEN_TYPES "F32, F16, BF16, F64, I8, I32, I64, Q8_0 and Q4_0"

static bool dtype_of_ggml(uint32_t ty, lm_dtype *dt)
{
	for (size_t i = 0; i < sizeof lumen_types / sizeof lumen_types[0]; i++)
		if (lumen_types[i].ggml == ty) return *dt = lumen_types[i].dt, true;
	return false;
}

static int ggml_of_dtype(lm_dtype dt)
{
	for (size_t i = 0; i < sizeof lumen_types / sizeof lumen_types[0]; i++)
		if (lumen_types[i].dt == dt) return (int)lumen_types[i].ggml;
	return -1;
}

/* The value types of the metadata (gguf.h, enum gguf_type). */
enum {
	GV_UINT8, GV_INT8, GV_UINT16, GV_INT16, GV_UINT32, GV_INT32, GV_FLOAT32, GV_BOOL,
	GV_STRING, GV_ARRAY, GV_UINT64, GV_INT64, GV_FLOAT64, GV_COUNT
};
/* the fewest bytes a value takes (a string: its length; an array: its type and count) */
static const uint8_t gv_size[GV_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 8, 12, 8, 8, 8};
static const char *const gv_names[GV_COUNT] = {"uint8", "int8", "uint16", "int16", "uint32", "int32",
                                               "float32", "bool", "string", "array", "uint64",
                                               "int64", "float64"};

/* ---------------------------------------------------------------- reading: scalars and strings */

static uint64_t left(const lmi_src *s) { return s->raw_size - s->delivered; }

static lm_status get_u32(lmi_src *s, uint32_t *v, const char *what)
{
	unsigned char b[4];
	lm_status r = lmi_src_read_exact(s, b, 4, what);
	*v = r ? 0 : (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return r;
}

static lm_status get_u64(lmi_src *s, uint64_t *v, const char *what)
{
	unsigned char b[8];
	lm_status r = lmi_src_read_exact(s, b, 8, what);
	*v = r ? 0 : lmi_le64(b);
	return r;
}

/* A gguf string into a new buffer of len + 1 bytes (lm_alloc; NUL-terminated, and it may hold
 * NULs: the caller decides), its length checked against the bytes left before allocating. */
static lm_status get_bytes(lmi_src *s, char **out, uint64_t *len, const char *what)
{
	*out = NULL;
	lm_status r = get_u64(s, len, what);
	if (r) return r;
	if (*len > left(s))
		return lmi_src_fail(s, LM_ERR_IO, "%s: a string of %llu bytes runs past the end of the file "
		                    "(%llu bytes left at offset %llu)", what, (unsigned long long)*len,
		                    (unsigned long long)left(s), (unsigned long long)s->delivered);
	if (!(*out = lm_alloc(*len + 1))) return lm_last_status();
	r = lmi_src_read_exact(s, *out, *len, what);
	if (r) {
		lm_free(*out, *len + 1);
		*out = NULL;
		return r;
	}
	(*out)[*len] = '\0';
	return LM_OK;
}

/* A gguf string as a C string for the map (lmi_str_free): a NUL inside is refused. */
static lm_status get_text(lmi_src *s, char **out, const char *what)
{
	char *p;
	uint64_t n;
	lm_status r = get_bytes(s, &p, &n, what);
	if (r) return r;
	if (memchr(p, 0, n)) r = lmi_src_fail(s, LM_ERR_IO, "%s holds a NUL character", what);
	else if (!(*out = lmi_strndup(p, n))) r = lm_last_status();
	lm_free(p, n + 1);
	return r;
}

/* ---------------------------------------------------------------- reading: metadata values */

/* v as the fewest %g digits that read back to the same float (single) or double. */
static void add_float(lmi_buf *b, double v, bool single)
{
	if (isnan(v) || isinf(v)) {
		lmi_buf_addf(b, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
		return;
	}
	char t[40];
	for (int p = single ? 6 : 15; p <= 17; p++) {
		snprintf(t, sizeof t, "%.*g", p, v);
		double back = strtod(t, NULL);
		if (single ? (float)back == (float)v : back == v) break;
	}
	lmi_buf_addf(b, "%s", t);
}

/* Appends a value of type ty (its bytes next in s) to b as text; inside an array (json) a string
 * is a quoted JSON string. key names the kv in messages. */
static lm_status get_value(lmi_src *s, uint32_t ty, lmi_buf *b, int depth, const char *key)
{
	if (ty >= GV_COUNT)
		return lmi_src_fail(s, LM_ERR_IO, "kv '%.60s': unknown value type %u (GGUF has 0 to 12)",
		                    key, ty);
	char ctx[100];
	snprintf(ctx, sizeof ctx, "the value of kv '%.60s'", key);
	lm_status r = LM_OK;
	if (ty == GV_STRING) {
		char *p;
		uint64_t n;
		if ((r = get_bytes(s, &p, &n, ctx))) return r;
		if (depth) lmi_buf_add_json_string(b, p, n);
		else lmi_buf_add(b, p, n);
		lm_free(p, n + 1);
		return LM_OK;
	}
	if (ty == GV_ARRAY) {
		uint32_t et;
		uint64_t count;
		if ((r = get_u32(s, &et, ctx)) || (r = get_u64(s, &count, ctx))) return r;
		if (et >= GV_COUNT)
			return lmi_src_fail(s, LM_ERR_IO, "kv '%.60s': an array of unknown value type %u",
			                    key, et);
		if (et == GV_ARRAY && depth + 1 >= GGUF_MAX_NESTING)
			return lmi_src_fail(s, LM_ERR_IO, "kv '%.60s': arrays nested deeper than %d", key,
			                    GGUF_MAX_NESTING);
		if (count > left(s) / gv_size[et])
			return lmi_src_fail(s, LM_ERR_IO, "kv '%.60s': an array of %llu %s values needs at "
			                    "least %u bytes each, and the file has %llu bytes left", key,
			                    (unsigned long long)count, gv_names[et], gv_size[et],
			                    (unsigned long long)left(s));
		lmi_buf_add(b, "[", 1);
		for (uint64_t i = 0; i < count && !r && !b->failed; i++) {
			if (i) lmi_buf_add(b, ",", 1);
			r = get_value(s, et, b, depth + 1, key);
		}
		lmi_buf_add(b, "]", 1);
		return r;
	}
	unsigned char v[8] = {0};
	if ((r = lmi_src_read_exact(s, v, gv_size[ty], ctx))) return r;
	uint64_t u = lmi_le64(v);
	switch (ty) {
	case GV_UINT8: case GV_UINT16: case GV_UINT32: case GV_UINT64:
		lmi_buf_addf(b, "%llu", (unsigned long long)u);
		break;
	case GV_INT8: lmi_buf_addf(b, "%d", (int)(int8_t)u); break;
	case GV_INT16: lmi_buf_addf(b, "%d", (int)(int16_t)u); break;
	case GV_INT32: lmi_buf_addf(b, "%ld", (long)(int32_t)u); break;
	case GV_INT64: lmi_buf_addf(b, "%lld", (long long)(int64_t)u); break;
	case GV_BOOL: lmi_buf_addf(b, "%s", u ? "true" : "false"); break;
	case GV_FLOAT32: {
		float f;
		memcpy(&f, v, 4);
		add_float(b, f, true);
		break;
	}
	default: {
		double d;
		memcpy(&d, v, 8);
		add_float(b, d, false);
		break;
	}
	}
	return LM_OK;
}

/* Reads kv i into the map's meta_keys[i] / meta_values[i]; general.alignment sets *align. */
static lm_status get_kv(lmi_src *s, int64_t i, lm_tensor_map *out, uint32_t *align)
{
	char ctx[60];
	snprintf(ctx, sizeof ctx, "the key of kv %lld", (long long)i + 1);
	lm_status r = get_text(s, &out->meta_keys[i], ctx);
	if (r) return r;
	const char *key = out->meta_keys[i];
	uint32_t ty;
	snprintf(ctx, sizeof ctx, "the type of kv '%.30s'", key);
	if ((r = get_u32(s, &ty, ctx))) return r;
	uint64_t at = s->delivered;
	lmi_buf b = {0};
	r = get_value(s, ty, &b, 0, key);
	if (!r && b.failed) r = lm_last_status();
	if (!r && b.len && memchr(b.p, 0, b.len))
		r = lmi_src_fail(s, LM_ERR_IO, "kv '%.60s': the string holds a NUL character", key);
	if (!r && !(out->meta_values[i] = lmi_strndup(b.p ? b.p : "", b.len))) r = lm_last_status();
	lmi_buf_free(&b);
	if (r || strcmp(key, "general.alignment") != 0) return r;
	/* ggml: a uint32, a power of two */
	uint64_t a = ty == GV_UINT32 ? strtoull(out->meta_values[i], NULL, 10) : 0;
	if (ty != GV_UINT32 || a == 0 || (a & (a - 1)))
		return lmi_src_fail(s, LM_ERR_IO, "general.alignment (at offset %llu) must be a uint32 "
		                    "power of two, got %s %.40s", (unsigned long long)at, gv_names[ty],
		                    out->meta_values[i]);
	*align = (uint32_t)a;
	return LM_OK;
}

/* ---------------------------------------------------------------- reading: tensor infos */

typedef struct info {
	int ndim;
	int64_t shape[LM_MAX_DIMS]; /* C order: ne reversed */
	lm_dtype dt;
	uint64_t offset, nbytes;    /* in the data section */
	int64_t index;              /* in the file's list (the map's order) */
	const char *name;           /* the map's copy */
} info;

static lm_status get_info(lmi_src *s, int64_t i, uint32_t align, info *e, lm_tensor_map *out)
{
	char ctx[100];
	snprintf(ctx, sizeof ctx, "the name of tensor %lld", (long long)i + 1);
	lm_status r = get_text(s, &out->names[i], ctx);
	if (r) return r;
	const char *name = e->name = out->names[i];
	e->index = i;
	snprintf(ctx, sizeof ctx, "the info of tensor '%.60s'", name);
	uint32_t nd, ty;
	if ((r = get_u32(s, &nd, ctx))) return r;
	if (nd > LM_MAX_DIMS)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s' has %u dims; Lumen supports at most %d",
		                    name, nd, LM_MAX_DIMS);
	e->ndim = (int)nd;
	uint64_t ne[LM_MAX_DIMS];
	for (uint32_t j = 0; j < nd; j++) {
		if ((r = get_u64(s, &ne[j], ctx))) return r;
		if (ne[j] > (uint64_t)INT64_MAX)
			return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': ne[%u] = %llu is past 2^63", name, j,
			                    (unsigned long long)ne[j]);
		e->shape[nd - 1 - j] = (int64_t)ne[j];
	}
	int64_t numel;
	if (lmi_numel_checked(s->fname, e->ndim, e->shape, &numel))
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': shape %s is too large", name,
		                    lmi_dims_s(e->ndim, e->shape));
	if ((r = get_u32(s, &ty, ctx)) || (r = get_u64(s, &e->offset, ctx))) return r;
	if (!dtype_of_ggml(ty, &e->dt)) {
		if (ty < GGML_NTYPES)
			return lmi_src_fail(s, LM_ERR_UNSUPPORTED, "tensor '%.60s': ggml type %s (%u) is not a "
			                    "Lumen dtype (Lumen reads " LUMEN_TYPES ")", name, ggml_names[ty], ty);
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': unknown ggml type %u", name, ty);
	}
	const lm_dtype_traits *tr = lm_dtype_traits_of(e->dt);
	if (tr->block_size > 1 && (nd == 0 || ne[0] % (uint64_t)tr->block_size))
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': %s holds blocks of %lld values along "
		                    "ne[0] (the last dim), and shape %s's is not a multiple of it", name,
		                    ggml_names[ty], (long long)tr->block_size, lmi_dims_s(e->ndim, e->shape));
	uint64_t blocks = (uint64_t)numel / (uint64_t)tr->block_size;
	if (blocks > UINT64_MAX / tr->type_size)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': the byte size of shape %s overflows", name,
		                    lmi_dims_s(e->ndim, e->shape));
	e->nbytes = blocks * tr->type_size;
	if (e->offset % align)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': offset %llu is not a multiple of the "
		                    "alignment (%u)", name, (unsigned long long)e->offset, align);
	return LM_OK;
}

static int by_offset(const void *a, const void *b)
{
	const info *x = a, *y = b;
	if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
	if (x->nbytes != y->nbytes) return x->nbytes < y->nbytes ? -1 : 1;
	return 0;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names (or keys) must be unique: what says which. */
static lm_status check_unique(lmi_src *s, char **names, int64_t n, const char *what)
{
	if (n < 2) return LM_OK;
	const char **v = lm_alloc((size_t)n * sizeof *v);
	if (!v) return lm_last_status();
	memcpy(v, names, (size_t)n * sizeof *v);
	qsort(v, (size_t)n, sizeof *v, by_str);
	lm_status r = LM_OK;
	for (int64_t i = 1; i < n && !r; i++)
		if (strcmp(v[i - 1], v[i]) == 0)
			r = lmi_src_fail(s, LM_ERR_IO, "%s '%.60s' appears twice", what, v[i]);
	lm_free(v, (size_t)n * sizeof *v);
	return r;
}

/* The infos, sorted by offset, against the file: inside it, and not overlapping. */
static lm_status check_layout(lmi_src *s, const info *es, int64_t n, uint64_t data_start)
{
	uint64_t begin = 0, end = 0, room = s->raw_size > data_start ? s->raw_size - data_start : 0;
	const char *prev = NULL;
	for (int64_t i = 0; i < n; i++) {
		const info *e = &es[i];
		if (data_start > s->raw_size || e->offset > room || e->nbytes > room - e->offset)
			return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': its %llu bytes at offset %llu of the "
			                    "data section (which starts at byte %llu) run past the end of the "
			                    "file (%llu bytes)", e->name, (unsigned long long)e->nbytes,
			                    (unsigned long long)e->offset, (unsigned long long)data_start,
			                    (unsigned long long)s->raw_size);
		if (!e->nbytes) continue; /* an empty tensor takes no bytes */
		if (e->offset < end)
			return lmi_src_fail(s, LM_ERR_IO, "tensors '%.60s' and '%.60s' overlap (bytes %llu to %llu "
			                    "and from %llu of the data section)", prev, e->name,
			                    (unsigned long long)begin, (unsigned long long)end,
			                    (unsigned long long)e->offset);
		begin = e->offset;
		end = e->offset + e->nbytes;
		prev = e->name;
	}
	return LM_OK;
}

/* Reads the tensors in the order of their data (es sorted by offset) into the map. */
static lm_status read_data(lmi_src *s, const info *es, int64_t n, uint64_t data_start,
                           lm_tensor_map *out)
{
	unsigned char skip[4096];
	for (int64_t i = 0; i < n; i++) {
		const info *e = &es[i];
		lm_tensor *t = lmi_empty(s->fname, e->ndim, e->shape, e->dt);
		if (!t) return lm_last_status();
		out->tensors[e->index] = t;
		if (!e->nbytes) continue; /* empty: no bytes to find */
		while (s->delivered < data_start + e->offset) { /* padding and gaps */
			uint64_t k = data_start + e->offset - s->delivered;
			lm_status r = lmi_src_read_exact(s, skip, k < sizeof skip ? (size_t)k : sizeof skip,
			                                 "the padding before a tensor");
			if (r) return r;
		}
		char ctx[100];
		snprintf(ctx, sizeof ctx, "tensor '%.60s'", e->name);
		lm_status r = lmi_src_read_exact(s, lmi_data(t), (size_t)e->nbytes, ctx);
		if (r) return r;
	}
	return LM_OK;
}

/* The map's arrays of n names and tensors and k metadata pairs, zeroed. */
static lm_status alloc_map(lm_tensor_map *out, int64_t n, int64_t k)
{
	size_t a = (size_t)(n ? n : 1), b = (size_t)(k ? k : 1);
	out->n = n; /* first: lm_tensor_map_free frees the arrays by these sizes */
	out->nmeta = k;
	if ((out->names = lm_alloc(a * sizeof(char *)))) memset(out->names, 0, a * sizeof(char *));
	if ((out->tensors = lm_alloc(a * sizeof(lm_tensor *)))) memset(out->tensors, 0, a * sizeof(lm_tensor *));
	if ((out->meta_keys = lm_alloc(b * sizeof(char *)))) memset(out->meta_keys, 0, b * sizeof(char *));
	if ((out->meta_values = lm_alloc(b * sizeof(char *)))) memset(out->meta_values, 0, b * sizeof(char *));
	return out->names && out->tensors && out->meta_keys && out->meta_values ? LM_OK : lm_last_status();
}

/* "GGUF", the version, the counts; the counts checked against the bytes they need at least. */
static lm_status get_header(lmi_src *s, uint64_t *nt, uint64_t *nkv)
{
	unsigned char h[8];
	if (s->raw_size < 24)
		return lmi_src_fail(s, LM_ERR_IO, "too short for a GGUF file (%llu bytes; the header alone "
		                    "takes 24)", (unsigned long long)s->raw_size);
	lm_status r = lmi_src_read_exact(s, h, 8, "the magic and version");
	if (r) return r;
	if (memcmp(h, "GGUF", 4) != 0) {
		if (memcmp(h, "\x93NUMPY", 6) == 0)
			return lmi_src_fail(s, LM_ERR_IO, "this is a NumPy .npy file, not GGUF (read it with lm.load_npy)");
		unsigned char c;
		if (lmi_le64(h) < s->raw_size - 8 && lmi_src_read_exact(s, &c, 1, "the magic") == LM_OK && c == '{')
			return lmi_src_fail(s, LM_ERR_IO, "this is a safetensors file, not GGUF (read it with lm.load)");
		return lmi_src_fail(s, LM_ERR_IO, "not a GGUF file: it starts with %02x %02x %02x %02x, not "
		                    "\"GGUF\"", h[0], h[1], h[2], h[3]);
	}
	uint32_t v = (uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 24;
	if (v == 2u << 24 || v == 3u << 24)
		return lmi_src_fail(s, LM_ERR_UNSUPPORTED, "a big-endian GGUF file (Lumen reads little-endian ones)");
	if (v == 1)
		return lmi_src_fail(s, LM_ERR_UNSUPPORTED, "GGUF version 1 is not supported (Lumen reads "
		                    "versions 2 and 3)");
	if (v != 2 && v != 3)
		return lmi_src_fail(s, LM_ERR_IO, "unknown GGUF version %u (Lumen reads versions 2 and 3)", v);
	if ((r = get_u64(s, nt, "the tensor count")) || (r = get_u64(s, nkv, "the kv count"))) return r;
	/* a kv takes at least 13 bytes (key length, type, a one-byte value), a tensor info 24 */
	if (*nkv > left(s) / 13 || *nt > left(s) / 24)
		return lmi_src_fail(s, LM_ERR_IO, "%llu tensors and %llu kvs cannot fit in the %llu bytes "
		                    "left (corrupt counts?)", (unsigned long long)*nt,
		                    (unsigned long long)*nkv, (unsigned long long)left(s));
	return LM_OK;
}

static lm_status load(lmi_src *s, lm_tensor_map *out)
{
	memset(out, 0, sizeof *out);
	uint64_t nt = 0, nkv = 0;
	lm_status r = get_header(s, &nt, &nkv);
	if (!r) r = alloc_map(out, (int64_t)nt, (int64_t)nkv);
	uint32_t align = GGUF_DEFAULT_ALIGNMENT;
	for (int64_t i = 0; i < (int64_t)nkv && !r; i++) r = get_kv(s, i, out, &align);
	if (!r) r = check_unique(s, out->meta_keys, (int64_t)nkv, "kv key");
	size_t cap = (size_t)(nt ? nt : 1);
	info *es = r ? NULL : lm_alloc(cap * sizeof *es);
	if (!r && !es) r = lm_last_status();
	for (int64_t i = 0; i < (int64_t)nt && !r; i++) r = get_info(s, i, align, &es[i], out);
	if (!r) r = check_unique(s, out->names, (int64_t)nt, "tensor name");
	uint64_t data_start = s->delivered + (align - s->delivered % align) % align;
	if (!r) {
		qsort(es, (size_t)nt, sizeof *es, by_offset);
		r = check_layout(s, es, (int64_t)nt, data_start);
	}
	if (!r) r = read_data(s, es, (int64_t)nt, data_start, out);
	if (es) lm_free(es, cap * sizeof *es);
	if (r) lmi_map_abandon(out);
	return r;
}

lm_status lm_gguf_load(const char *path, lm_tensor_map *out)
{
	return lmi_map_load_file("gguf_load", path, load, out);
}

lm_status lm_gguf_parse(const void *buf, size_t len, const char *what, lm_tensor_map *out)
{
	return lmi_map_load_mem("gguf_load", buf, len, what, load, out);
}

/* ---------------------------------------------------------------- writing */

static void put_u32(lmi_buf *b, uint32_t v)
{
	unsigned char p[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
	                      (unsigned char)(v >> 24)};
	lmi_buf_add(b, p, 4);
}

static void put_u64(lmi_buf *b, uint64_t v)
{
	unsigned char p[8];
	for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
	lmi_buf_add(b, p, 8);
}

static void put_str(lmi_buf *b, const char *s)
{
	size_t n = strlen(s);
	put_u64(b, n);
	lmi_buf_add(b, s, n);
}

/* general.alignment's value as text: a power of two that a uint32 holds, else 0. */
static uint32_t parse_alignment(const char *v)
{
	uint64_t a = 0;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || a > UINT32_MAX) return 0;
		a = a * 10 + (uint64_t)(*p - '0');
	}
	return a && a <= UINT32_MAX && !(a & (a - 1)) ? (uint32_t)a : 0;
}

/* Everything the writer refuses, before it writes a byte; *align from general.alignment. */
static lm_status check_save_args(int64_t n, const char *const *names, const lm_tensor *const *ts,
                                 int64_t nmeta, const char *const *mk, const char *const *mv,
                                 uint32_t *align, bool *has_arch)
{
	if (n < 0 || nmeta < 0 || (n && (!names || !ts)) || (nmeta && (!mk || !mv)))
		return lmi_fail(LM_ERR_ARG, "gguf_save: bad counts or NULL arrays");
	for (int64_t i = 0; i < n; i++) {
		if (!names[i] || !*names[i])
			return lmi_fail(LM_ERR_ARG, "gguf_save: tensor %lld has an empty name", (long long)i + 1);
		if (!lmi_utf8_valid(names[i], strlen(names[i])))
			return lmi_fail(LM_ERR_ARG, "gguf_save: the name of tensor %lld is not valid UTF-8",
			                (long long)i + 1);
		if (strlen(names[i]) >= GGML_MAX_NAME)
			return lmi_fail(LM_ERR_ARG, "gguf_save: the name '%.60s...' has %zu bytes; ggml reads "
			                "names of at most %d", names[i], strlen(names[i]), GGML_MAX_NAME - 1);
		const lm_tensor *t = ts[i];
		if (!t) return lmi_fail(LM_ERR_ARG, "gguf_save: tensor '%.60s' is NULL", names[i]);
		if (lm_tensor_device(t) != LM_CPU)
			return lmi_fail(LM_ERR_DEVICE, "gguf_save: tensor '%.60s' is not on the CPU", names[i]);
		if (lm_tensor_dtype(t) == LM_UINT8)
			return lmi_fail(LM_ERR_DTYPE, "gguf_save: tensor '%.60s' is uint8, which GGUF has no type "
			                "for (convert it: x:int() to int32, or x:to('int8') if its values fit)",
			                names[i]);
		if (ggml_of_dtype(lm_tensor_dtype(t)) < 0)
			return lmi_fail(LM_ERR_DTYPE, "gguf_save: tensor '%.60s' has a bad dtype", names[i]);
		if (lm_tensor_ndim(t) > GGML_MAX_DIMS)
			return lmi_fail(LM_ERR_SHAPE, "gguf_save: tensor '%.60s' has %d dims; ggml reads at most "
			                "%d", names[i], lm_tensor_ndim(t), GGML_MAX_DIMS);
	}
	*align = GGUF_DEFAULT_ALIGNMENT;
	*has_arch = false;
	for (int64_t i = 0; i < nmeta; i++) {
		if (!mk[i] || !mv[i] || !*mk[i] || !lmi_utf8_valid(mk[i], strlen(mk[i])) ||
		    !lmi_utf8_valid(mv[i], strlen(mv[i])))
			return lmi_fail(LM_ERR_ARG, "gguf_save: metadata entry %lld is not a pair of UTF-8 "
			                "strings (the key not empty)", (long long)i + 1);
		*has_arch |= strcmp(mk[i], "general.architecture") == 0;
		if (strcmp(mk[i], "general.alignment") == 0 && !(*align = parse_alignment(mv[i])))
			return lmi_fail(LM_ERR_ARG, "gguf_save: general.alignment must be a power of two that "
			                "a uint32 holds, got '%.40s'", mv[i]);
	}
	/* names and keys given twice */
	int64_t most = n > nmeta ? n : nmeta;
	const char **v = lm_alloc((size_t)(most ? most : 1) * sizeof *v);
	if (!v) return lm_last_status();
	lm_status r = LM_OK;
	for (int pass = 0; pass < 2 && !r; pass++) {
		int64_t k = pass ? nmeta : n;
		if (k) memcpy(v, pass ? (const void *)mk : (const void *)names, (size_t)k * sizeof *v);
		qsort(v, (size_t)k, sizeof *v, by_str);
		for (int64_t i = 1; i < k && !r; i++)
			if (strcmp(v[i - 1], v[i]) == 0)
				r = lmi_fail(LM_ERR_ARG, "gguf_save: the %s '%.60s' is given twice",
				             pass ? "metadata key" : "name", v[i]);
	}
	lm_free(v, (size_t)(most ? most : 1) * sizeof *v);
	return r;
}

static uint64_t pad(uint64_t n, uint32_t align) { return (align - n % align) % align; }

/* The header, kvs and tensor infos, padded to the alignment. */
static lm_status build_header(lmi_buf *b, int64_t n, const char *const *names,
                              const lm_tensor *const *ts, int64_t nmeta, const char *const *mk,
                              const char *const *mv, uint32_t align, bool has_arch)
{
	lmi_buf_add(b, "GGUF", 4);
	put_u32(b, 3);
	put_u64(b, (uint64_t)n);
	put_u64(b, (uint64_t)nmeta + !has_arch);
	if (!has_arch) {
		put_str(b, "general.architecture");
		put_u32(b, GV_STRING);
		put_str(b, "lumen");
	}
	for (int64_t i = 0; i < nmeta; i++) {
		put_str(b, mk[i]);
		if (strcmp(mk[i], "general.alignment") == 0) {
			put_u32(b, GV_UINT32);
			put_u32(b, align);
		} else {
			put_u32(b, GV_STRING);
			put_str(b, mv[i]);
		}
	}
	uint64_t at = 0;
	for (int64_t i = 0; i < n; i++) {
		const lm_tensor *t = ts[i];
		int nd = lm_tensor_ndim(t);
		put_str(b, names[i]);
		put_u32(b, nd ? (uint32_t)nd : 1); /* a 0-d tensor as ne [1], as ggml writes a scalar */
		if (!nd) put_u64(b, 1);
		for (int j = nd - 1; j >= 0; j--) put_u64(b, (uint64_t)lm_tensor_shape(t)[j]);
		put_u32(b, (uint32_t)ggml_of_dtype(lm_tensor_dtype(t)));
		put_u64(b, at);
		at += lm_tensor_nbytes(t) + pad(lm_tensor_nbytes(t), align);
	}
	static const char zeros[64];
	for (uint64_t k = pad(b->len, align); k && !b->failed;) {
		size_t m = k < sizeof zeros ? (size_t)k : sizeof zeros;
		lmi_buf_add(b, zeros, m);
		k -= m;
	}
	return b->failed ? lmi_fail(LM_ERR_NOMEM, "gguf_save: out of memory for the header") : LM_OK;
}

static lm_status write_zeros(lmi_out *o, uint64_t k)
{
	static const char zeros[4096];
	lm_status r = LM_OK;
	while (k && !r) {
		size_t m = k < sizeof zeros ? (size_t)k : sizeof zeros;
		r = lmi_out_write(o, zeros, m);
		k -= m;
	}
	return r;
}

lm_status lm_gguf_save(const char *path, int64_t n, const char *const *names,
                       const lm_tensor *const *ts, int64_t nmeta, const char *const *mk,
                       const char *const *mv)
{
	uint32_t align = GGUF_DEFAULT_ALIGNMENT;
	bool has_arch = false;
	lm_status r = check_save_args(n, names, ts, nmeta, mk, mv, &align, &has_arch);
	if (r) return r;
	lmi_buf b = {0};
	r = build_header(&b, n, names, ts, nmeta, mk, mv, align, has_arch);
	lmi_out o;
	if (!r) r = lmi_out_open(&o, "gguf_save", path);
	if (!r) {
		r = lmi_out_write(&o, b.p, b.len);
		for (int64_t i = 0; i < n && !r; i++) {
			r = lmi_out_write_tensor(&o, ts[i]);
			if (!r) r = write_zeros(&o, pad(lm_tensor_nbytes(ts[i]), align));
		}
		if (!r) r = lmi_out_commit(&o);
		else lmi_out_abort(&o);
	}
	lmi_buf_free(&b);
	return r;
}
