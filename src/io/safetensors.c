/*
 * safetensors.c — the safetensors format (Hugging Face): named tensors behind a JSON header.
 *
 * Layout: u64 little-endian N; N bytes of JSON {name: {"dtype": "F32", "shape": [2, 3],
 * "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}}, padded with spaces; then
 * the data, little-endian and C order, offsets relative to its start. The reader checks what the
 * reference library checks — header size (at most 100 MB) against the file, the JSON, each entry's
 * dtype, shape and offsets, end - begin == numel x itemsize, offsets that tile the data exactly
 * (sorted, no gaps, no overlap, ending at the end of the file) — and that names are unique, all
 * before allocating any tensor. The writer sorts as the library does (larger itemsize first, then
 * name), so every tensor is aligned to its itemsize. A block tensor (q8_0, q4_0), which the format
 * has no dtype for, is written as its bytes (U8, the last dim in bytes) with two metadata keys that
 * say how to read it back: lumen.dtype.<name> ("q4_0") and lumen.shape.<name> ("[4,64]", the
 * element shape); the reader checks them against the entry and consumes them. Read next: gguf.c,
 * npy.c.
 */
#include <stdlib.h>
#include <string.h>

#include "ioi.h"

/* The metadata keys of a block tensor (followed by its name). */
#define KEY_DTYPE "lumen.dtype."
#define KEY_SHAPE "lumen.shape."
#define KEY_LEN 12

/* ---------------------------------------------------------------- dtypes */

typedef struct st_dtype {
	const char *name;
	size_t size;   /* bytes per element in the file */
	lm_dtype dt;   /* what it loads as */
	int conv;      /* 0: as it is, 1: bool, 5: i16, 6: u16, 7: u32 */
} st_dtype;

static const st_dtype dtypes[] = {
	{"F64", 8, LM_FLOAT64, 0}, {"F32", 4, LM_FLOAT32, 0}, {"I64", 8, LM_INT64, 0},
	{"I32", 4, LM_INT32, 0},   {"U8", 1, LM_UINT8, 0},    {"BOOL", 1, LM_UINT8, 1},
	{"F16", 2, LM_FLOAT16, 0}, {"BF16", 2, LM_BFLOAT16, 0}, {"I8", 1, LM_INT8, 0},
	{"I16", 2, LM_INT32, 5},   {"U16", 2, LM_INT32, 6},   {"U32", 4, LM_INT64, 7},
};
static const char *const unsupported[] = {"U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3",
                                          "F6_E3M2", "C64", NULL};

static const st_dtype *find_dtype(const char *s)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (strcmp(dtypes[i].name, s) == 0) return &dtypes[i];
	return NULL;
}

static const char *dtype_code(lm_dtype dt)
{
	static const char *const code[LM_DTYPE_COUNT] = {
		[LM_FLOAT32] = "F32",
		[LM_FLOAT64] = "F64",
		[LM_INT32] = "I32",
		[LM_INT64] = "I64",
		[LM_UINT8] = "U8",
		[LM_INT8] = "I8",
		[LM_FLOAT16] = "F16",
		[LM_BFLOAT16] = "BF16",
		[LM_Q8_0] = "U8", /* the blocks' bytes, described by the metadata */
		[LM_Q4_0] = "U8",
	};
	return dt >= 0 && dt < LM_DTYPE_COUNT ? code[dt] : NULL;
}

/* Converts n elements of the file's dtype at in to the tensor's dtype at out. */
static void convert(const st_dtype *d, const unsigned char *in, void *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = in + i * d->size;
		uint16_t h;
		uint32_t w;
		switch (d->conv) {
		case 1: ((uint8_t *)out)[i] = p[0] != 0; break;
		case 5: memcpy(&h, p, 2); ((int32_t *)out)[i] = (int16_t)h; break;
		case 6: memcpy(&h, p, 2); ((int32_t *)out)[i] = h; break;
		case 7: memcpy(&w, p, 4); ((int64_t *)out)[i] = w; break;
		default: break;
		}
	}
}

/* ---------------------------------------------------------------- maps */

void lm_tensor_map_free(lm_tensor_map *m)
{
	if (!m) return;
	for (int64_t i = 0; i < m->n; i++) {
		if (m->names) lmi_str_free(m->names[i]);
		if (m->tensors) lm_tensor_release(m->tensors[i]);
	}
	for (int64_t i = 0; i < m->nmeta; i++) {
		if (m->meta_keys) lmi_str_free(m->meta_keys[i]);
		if (m->meta_values) lmi_str_free(m->meta_values[i]);
	}
	/* the arrays were allocated with max(count, 1) entries */
	size_t n = (size_t)(m->n > 0 ? m->n : 1), k = (size_t)(m->nmeta > 0 ? m->nmeta : 1);
	if (m->names) lm_free(m->names, n * sizeof(char *));
	if (m->tensors) lm_free(m->tensors, n * sizeof(lm_tensor *));
	if (m->meta_keys) lm_free(m->meta_keys, k * sizeof(char *));
	if (m->meta_values) lm_free(m->meta_values, k * sizeof(char *));
	memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- reading */

typedef struct entry {
	const lmj_node *node; /* the entry's object (its key is the name) */
	const st_dtype *dtype;
	lm_dtype dt;          /* what it loads as: dtype->dt, or a block type */
	int ndim;
	int64_t shape[LM_MAX_DIMS]; /* the entry's, or a block tensor's element shape */
	uint64_t begin, end;
	int64_t order; /* position in the header */
	const lmj_node *bdtype, *bshape; /* lumen.dtype.<name> and lumen.shape.<name>, when present */
} entry;

static int by_offset(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end) return x->end < y->end ? -1 : 1;
	return 0;
}

typedef struct named {
	const char *name;
	size_t len;
} named;

static int by_name(const void *a, const void *b)
{
	const named *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* A JSON member by key in an object node, or NULL. */
static const lmj_node *member(const lmj_doc *d, const lmj_node *obj, const char *key)
{
	for (const lmj_node *c = lmj_at(d, obj->child); c; c = lmj_at(d, c->next))
		if (strcmp(lmj_key(d, c), key) == 0 && strlen(key) == c->key_len) return c;
	return NULL;
}

/* Reads the entry of tensor node n (its key is the name) into e. */
static lm_status check_entry(lmi_src *s, const lmj_doc *d, const lmj_node *n, entry *e)
{
	const char *name = lmj_key(d, n);
	if (n->type != LMJ_OBJECT)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': expected an object, got %s", name,
		                    lmj_type_name(n->type));
	const lmj_node *dt = member(d, n, "dtype"), *sh = member(d, n, "shape"),
	               *of = member(d, n, "data_offsets");
	if (!dt || !sh || !of)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s' lacks %s", name,
		                    !dt ? "\"dtype\"" : !sh ? "\"shape\"" : "\"data_offsets\"");
	if (dt->type != LMJ_STRING)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': dtype must be a string, got %s", name,
		                    lmj_type_name(dt->type));
	if (memchr(lmj_str(d, dt), 0, dt->str_len)) /* "F32\u0000..." would pass as F32 */
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': the dtype holds a NUL character", name);
	e->dtype = find_dtype(lmj_str(d, dt));
	if (!e->dtype) {
		for (int i = 0; unsupported[i]; i++)
			if (strcmp(unsupported[i], lmj_str(d, dt)) == 0)
				return lmi_src_fail(s, LM_ERR_UNSUPPORTED, "tensor '%.60s': dtype %s is not "
				                    "supported (Lumen holds float32, float64, int32, int64 and "
				                    "uint8)", name, lmj_str(d, dt));
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': unknown dtype '%.20s'", name,
		                    lmj_str(d, dt));
	}
	e->dt = e->dtype->dt;
	if (sh->type != LMJ_ARRAY)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': shape must be an array, got %s", name,
		                    lmj_type_name(sh->type));
	if (sh->count > LM_MAX_DIMS)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s' has %d dims; Lumen supports at most %d",
		                    name, sh->count, LM_MAX_DIMS);
	e->ndim = 0;
	uint64_t numel = 1;
	bool over = false;
	for (const lmj_node *c = lmj_at(d, sh->child); c; c = lmj_at(d, c->next)) {
		if (c->type != LMJ_NUMBER || !c->is_uint || c->u > (uint64_t)INT64_MAX)
			return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': shape entries must be "
			                    "non-negative integers", name);
		e->shape[e->ndim++] = (int64_t)c->u;
		if (c->u && numel > UINT64_MAX / c->u) over = true;
		numel *= c->u;
	}
	int64_t cnt;
	if (lmi_numel_checked(s->fname, e->ndim, e->shape, &cnt))
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': shape %s is too large", name,
		                    lmi_dims_s(e->ndim, e->shape));
	if (of->type != LMJ_ARRAY || of->count != 2)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': data_offsets must be [begin, end]", name);
	const lmj_node *b = lmj_at(d, of->child), *en = lmj_at(d, b->next);
	if (b->type != LMJ_NUMBER || !b->is_uint || en->type != LMJ_NUMBER || !en->is_uint)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': data_offsets must be non-negative "
		                    "integers", name);
	e->begin = b->u;
	e->end = en->u;
	if (e->end < e->begin)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': data_offsets [%llu, %llu] end before "
		                    "they begin", name, (unsigned long long)e->begin,
		                    (unsigned long long)e->end);
	over = over || numel > (uint64_t)INT64_MAX / e->dtype->size;
	if (over || numel * e->dtype->size != e->end - e->begin) {
		char need[32];
		if (over) snprintf(need, sizeof need, "more than 2^63");
		else snprintf(need, sizeof need, "%llu", (unsigned long long)(numel * e->dtype->size));
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': shape %s of %s needs %s bytes but "
		                    "data_offsets [%llu, %llu] hold %llu", name,
		                    lmi_dims_s(e->ndim, e->shape), e->dtype->name, need,
		                    (unsigned long long)e->begin, (unsigned long long)e->end,
		                    (unsigned long long)(e->end - e->begin));
	}
	return LM_OK;
}

/* Offsets must tile [0, data_len) exactly, in order (entries sorted by offset). */
static lm_status check_tiling(lmi_src *s, const lmj_doc *d, entry *es, int64_t n, uint64_t data_len)
{
	uint64_t at = 0;
	for (int64_t i = 0; i < n; i++) {
		const char *name = lmj_key(d, es[i].node);
		if (es[i].begin != at)
			return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': data_offsets [%llu, %llu] %s (the "
			                    "previous tensor ends at %llu)", name,
			                    (unsigned long long)es[i].begin, (unsigned long long)es[i].end,
			                    es[i].begin < at ? "overlap another tensor" : "leave a gap",
			                    (unsigned long long)at);
		at = es[i].end;
	}
	if (at != data_len)
		return lmi_src_fail(s, LM_ERR_IO, "the tensors' data_offsets %s: they cover %llu bytes, "
		                    "the file holds %llu bytes of data",
		                    at > data_len ? "run past the end of the file" : "leave bytes unused at the end",
		                    (unsigned long long)at, (unsigned long long)data_len);
	return LM_OK;
}

/* Names must be unique (JSON objects may repeat keys; the header must not). */
static lm_status check_unique(lmi_src *s, const lmj_doc *d, const lmj_node *obj, const char *what)
{
	if (obj->count < 2) return LM_OK;
	named *ns = lm_alloc((size_t)obj->count * sizeof *ns);
	if (!ns) return lm_last_status();
	int32_t k = 0;
	for (const lmj_node *c = lmj_at(d, obj->child); c; c = lmj_at(d, c->next))
		ns[k++] = (named){lmj_key(d, c), c->key_len};
	qsort(ns, (size_t)k, sizeof *ns, by_name);
	lm_status r = LM_OK;
	for (int32_t i = 1; i < k && !r; i++)
		if (!by_name(&ns[i - 1], &ns[i]))
			r = lmi_src_fail(s, LM_ERR_IO, "%s '%.60s' appears twice in the header", what, ns[i].name);
	lm_free(ns, (size_t)obj->count * sizeof *ns);
	return r;
}

static bool is_block_key(const char *key)
{
	return strncmp(key, KEY_DTYPE, KEY_LEN) == 0 || strncmp(key, KEY_SHAPE, KEY_LEN) == 0;
}

/* ---------------------------------------------------------------- block tensors */

/* An entry found by name: its name first, so by_name sorts and searches these. */
typedef struct slot {
	named key;
	int64_t i;
} slot;

static int slot_by_name(const void *a, const void *b)
{
	return by_name(&((const slot *)a)->key, &((const slot *)b)->key);
}

/* The element shape of lumen.shape.<name> (a JSON list of sizes) into e->shape; the entry holds
 * the bytes: U8 [d1, ..., dn / block_size * type_size]. */
static lm_status check_block(lmi_src *s, const lmj_doc *d, entry *e)
{
	const char *name = lmj_key(d, e->node);
	if (!e->bdtype || !e->bshape)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': the metadata has %s%.60s but no %s%.60s",
		                    name, e->bdtype ? KEY_DTYPE : KEY_SHAPE, name,
		                    e->bdtype ? KEY_SHAPE : KEY_DTYPE, name);
	const char *tn = lmj_str(d, e->bdtype), *sv = lmj_str(d, e->bshape);
	lm_dtype bt;
	if (lm_dtype_from_name(tn, &bt) != LM_OK || !lm_dtype_is_block(bt) || strcmp(tn, lm_dtype_name(bt)))
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': " KEY_DTYPE "%.60s is '%.20s', not a block "
		                    "type Lumen knows (q8_0, q4_0)", name, name, tn);
	if (e->dtype->dt != LM_UINT8 || e->dtype->conv)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': a %s tensor must be stored as U8 (its "
		                    "bytes), not %s", name, tn, e->dtype->name);
	const lm_dtype_traits *tr = lm_dtype_traits_of(bt);
	lmj_doc sd;
	int nd = 0;
	int64_t shape[LM_MAX_DIMS];
	bool ok = lmj_parse(sv, e->bshape->str_len, &sd) == LM_OK;
	if (ok) {
		const lmj_node *root = &sd.nodes[0];
		ok = root->type == LMJ_ARRAY && root->count >= 1 && root->count <= LM_MAX_DIMS;
		for (const lmj_node *c = ok ? lmj_at(&sd, root->child) : NULL; c && ok; c = lmj_at(&sd, c->next)) {
			ok = c->type == LMJ_NUMBER && c->is_uint && c->u <= (uint64_t)INT64_MAX;
			shape[nd++] = ok ? (int64_t)c->u : 0;
		}
		lmj_free(&sd);
	}
	int64_t numel;
	if (!ok || lmi_numel_checked(s->fname, nd, shape, &numel) || shape[nd - 1] % tr->block_size)
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': " KEY_SHAPE "%.60s is '%.40s', not a list "
		                    "of 1 to %d sizes whose last is a multiple of %lld", name, name, sv,
		                    LM_MAX_DIMS, (long long)tr->block_size);
	bool same = e->ndim == nd;
	for (int i = 0; same && i < nd; i++)
		same = e->shape[i] == (i < nd - 1 ? shape[i] : shape[i] / tr->block_size * (int64_t)tr->type_size);
	if (!same) {
		int64_t want[LM_MAX_DIMS];
		memcpy(want, shape, sizeof want);
		want[nd - 1] = shape[nd - 1] / tr->block_size * (int64_t)tr->type_size;
		return lmi_src_fail(s, LM_ERR_IO, "tensor '%.60s': %s of shape %s is stored as U8 %s, but "
		                    "the file holds U8 %s", name, tn, lmi_dims_s(nd, shape),
		                    lmi_dims_s(nd, want), lmi_dims_s(e->ndim, e->shape));
	}
	e->dt = bt;
	e->ndim = nd;
	memcpy(e->shape, shape, sizeof shape);
	return LM_OK;
}

/* Pairs each lumen.dtype.<name> / lumen.shape.<name> key of the metadata m (NULL: none) with its
 * entry, then checks the block tensors they describe. A key naming no tensor is an error. */
static lm_status apply_blocks(lmi_src *s, const lmj_doc *d, const lmj_node *m, entry *es, int64_t n)
{
	if (!m) return LM_OK;
	size_t cap = (size_t)(n ? n : 1);
	slot *byname = lm_alloc(cap * sizeof *byname);
	if (!byname) return lm_last_status();
	for (int64_t i = 0; i < n; i++)
		byname[i] = (slot){{lmj_key(d, es[i].node), es[i].node->key_len}, i};
	qsort(byname, (size_t)n, sizeof *byname, slot_by_name);
	lm_status r = LM_OK;
	for (const lmj_node *c = lmj_at(d, m->child); c && !r; c = lmj_at(d, c->next)) {
		const char *key = lmj_key(d, c);
		if (!is_block_key(key)) continue;
		slot want = {{key + KEY_LEN, c->key_len - KEY_LEN}, 0};
		const slot *hit = n ? bsearch(&want, byname, (size_t)n, sizeof *byname, slot_by_name) : NULL;
		if (!hit)
			r = lmi_src_fail(s, LM_ERR_IO, "__metadata__ key '%.60s' names no tensor of the file", key);
		else if (strncmp(key, KEY_DTYPE, KEY_LEN) == 0)
			es[hit->i].bdtype = c;
		else
			es[hit->i].bshape = c;
	}
	for (int64_t i = 0; i < n && !r; i++)
		if (es[i].bdtype || es[i].bshape) r = check_block(s, d, &es[i]);
	lm_free(byname, cap * sizeof *byname);
	return r;
}

static lm_status read_metadata(lmi_src *s, const lmj_doc *d, const lmj_node *m, lm_tensor_map *out)
{
	if (m->type != LMJ_OBJECT)
		return lmi_src_fail(s, LM_ERR_IO, "__metadata__ must be an object of strings, got %s",
		                    lmj_type_name(m->type));
	lm_status r = check_unique(s, d, m, "metadata key");
	if (r) return r;
	int64_t n = 0; /* the keys kept: not those of block tensors, which the tensors consume */
	for (const lmj_node *c = lmj_at(d, m->child); c; c = lmj_at(d, c->next)) {
		if (c->type != LMJ_STRING)
			return lmi_src_fail(s, LM_ERR_IO, "__metadata__ value of '%.60s' must be a string, got "
			                    "%s", lmj_key(d, c), lmj_type_name(c->type));
		if (memchr(lmj_key(d, c), 0, c->key_len) || memchr(lmj_str(d, c), 0, c->str_len))
			return lmi_src_fail(s, LM_ERR_IO, "__metadata__ holds a NUL character");
		n += !is_block_key(lmj_key(d, c));
	}
	size_t k = (size_t)(n ? n : 1);
	out->nmeta = n; /* first: lm_tensor_map_free frees the arrays by this size */
	if ((out->meta_keys = lm_alloc(k * sizeof(char *)))) memset(out->meta_keys, 0, k * sizeof(char *));
	if ((out->meta_values = lm_alloc(k * sizeof(char *)))) memset(out->meta_values, 0, k * sizeof(char *));
	if (!out->meta_keys || !out->meta_values) return lm_last_status();
	int64_t i = 0;
	for (const lmj_node *c = lmj_at(d, m->child); c; c = lmj_at(d, c->next)) {
		if (is_block_key(lmj_key(d, c))) continue;
		out->meta_keys[i] = lmi_strndup(lmj_key(d, c), c->key_len);
		out->meta_values[i] = lmi_strndup(lmj_str(d, c), c->str_len);
		if (!out->meta_keys[i] || !out->meta_values[i]) return lm_last_status();
		i++;
	}
	return LM_OK;
}

/* Reads one tensor's bytes (the source is at its begin) into a new tensor. */
static lm_tensor *read_tensor(lmi_src *s, const entry *e, const char *name)
{
	lm_tensor *t = lmi_empty(s->fname, e->ndim, e->shape, e->dt);
	if (!t) return NULL;
	size_t n = (size_t)lm_tensor_numel(t);
	char ctx[100];
	snprintf(ctx, sizeof ctx, "tensor '%.60s'", name);
	lm_status r = LM_OK;
	if (!e->dtype->conv) { /* the bytes as they are (a block tensor's too) */
		r = lmi_src_read_exact(s, lmi_data(t), (size_t)(e->end - e->begin), ctx);
	} else { /* through a small buffer */
		enum { CHUNK = 16384 };
		unsigned char buf[CHUNK * 4];
		size_t per = sizeof buf / e->dtype->size, isz = lm_dtype_size(e->dtype->dt);
		for (size_t i = 0; i < n && !r; i += per) {
			size_t k = n - i < per ? n - i : per;
			if (!(r = lmi_src_read_exact(s, buf, k * e->dtype->size, ctx)))
				convert(e->dtype, buf, lmi_data(t) + i * isz, k);
		}
	}
	if (r) {
		lm_tensor_release(t);
		return NULL;
	}
	return t;
}

static lm_status load_entries(lmi_src *s, const lmj_doc *d, entry *es, int64_t n, lm_tensor_map *out)
{
	size_t k = (size_t)(n ? n : 1);
	out->n = n; /* first: lm_tensor_map_free frees the arrays by this size */
	if ((out->names = lm_alloc(k * sizeof(char *)))) memset(out->names, 0, k * sizeof(char *));
	if ((out->tensors = lm_alloc(k * sizeof(lm_tensor *)))) memset(out->tensors, 0, k * sizeof(lm_tensor *));
	if (!out->names || !out->tensors) return lm_last_status();
	for (int64_t i = 0; i < n; i++) { /* in file order; stored in header order */
		const lmj_node *node = es[i].node;
		int64_t at = es[i].order;
		if (memchr(lmj_key(d, node), 0, node->key_len))
			return lmi_src_fail(s, LM_ERR_IO, "a tensor name holds a NUL character");
		out->names[at] = lmi_strndup(lmj_key(d, node), node->key_len);
		if (!out->names[at]) return lm_last_status();
		out->tensors[at] = read_tensor(s, &es[i], out->names[at]);
		if (!out->tensors[at]) return lm_last_status();
	}
	return LM_OK;
}

/* The header (JSON object) is parsed; check and load everything. */
static lm_status load_header(lmi_src *s, const lmj_doc *d, uint64_t data_len, lm_tensor_map *out)
{
	const lmj_node *root = &d->nodes[0];
	if (root->type != LMJ_OBJECT)
		return lmi_src_fail(s, LM_ERR_IO, "the header must be a JSON object, got %s",
		                    lmj_type_name(root->type));
	lm_status r = check_unique(s, d, root, "tensor");
	if (r) return r;
	size_t cap = (size_t)(root->count ? root->count : 1);
	entry *es = lm_alloc(cap * sizeof *es);
	if (!es) return lm_last_status();
	int64_t n = 0;
	const lmj_node *meta = NULL;
	for (const lmj_node *c = lmj_at(d, root->child); c && !r; c = lmj_at(d, c->next)) {
		if (c->key_len == 12 && memcmp(lmj_key(d, c), "__metadata__", 12) == 0) { /* "__metadata__\u0000" is a name */
			r = read_metadata(s, d, c, out);
			meta = c;
			continue;
		}
		es[n] = (entry){.node = c, .order = n};
		r = check_entry(s, d, c, &es[n]);
		n++;
	}
	if (!r) {
		qsort(es, (size_t)n, sizeof *es, by_offset);
		r = check_tiling(s, d, es, n, data_len);
	}
	if (!r) r = apply_blocks(s, d, meta, es, n);
	if (!r) r = load_entries(s, d, es, n, out);
	lm_free(es, cap * sizeof *es);
	return r;
}

static lm_status load(lmi_src *s, lm_tensor_map *out)
{
	memset(out, 0, sizeof *out);
	unsigned char h8[8];
	if (s->raw_size < 8)
		return lmi_src_fail(s, LM_ERR_IO, "too short for a safetensors file (%llu bytes; the "
		                    "header length alone takes 8)", (unsigned long long)s->raw_size);
	lm_status r = lmi_src_read_exact(s, h8, 8, "the header length");
	if (r) return r;
	uint64_t hn = lmi_le64(h8);
	if (memcmp(h8, "\x93NUMPY", 6) == 0)
		return lmi_src_fail(s, LM_ERR_IO, "this is a NumPy .npy file, not safetensors (read it with "
		                    "lm.load_npy)");
	if (memcmp(h8, "GGUF", 4) == 0)
		return lmi_src_fail(s, LM_ERR_IO, "this is a GGUF file, not safetensors (read it with "
		                    "lm.load_gguf)");
	if (hn > LM_SAFETENSORS_MAX_HEADER)
		return lmi_src_fail(s, LM_ERR_IO, "header length %llu is over the limit of %llu bytes "
		                    "(not a safetensors file?)", (unsigned long long)hn,
		                    (unsigned long long)LM_SAFETENSORS_MAX_HEADER);
	if (hn > s->raw_size - 8)
		return lmi_src_fail(s, LM_ERR_IO, "header length %llu runs past the end of the file (%llu "
		                    "bytes)", (unsigned long long)hn, (unsigned long long)s->raw_size);
	if (hn < 2)
		return lmi_src_fail(s, LM_ERR_IO, "header length %llu is too short for a JSON object",
		                    (unsigned long long)hn);
	char *text = lm_alloc(hn);
	if (!text) return lm_last_status();
	r = lmi_src_read_exact(s, text, hn, "the header");
	lmj_doc doc;
	if (!r && text[0] != '{')
		r = lmi_src_fail(s, LM_ERR_IO, "the header does not start with '{' (not a safetensors "
		                 "file?)");
	lm_status js = r ? LM_OK : lmj_parse(text, hn, &doc);
	if (js) r = lmi_src_fail(s, js, "header: %s", doc.err);
	else if (!r) {
		r = load_header(s, &doc, s->raw_size - 8 - hn, out);
		lmj_free(&doc);
	}
	lm_free(text, hn);
	if (r) lmi_map_abandon(out);
	return r;
}

lm_status lm_safetensors_load(const char *path, lm_tensor_map *out)
{
	return lmi_map_load_file("safetensors_load", path, load, out);
}

lm_status lm_safetensors_parse(const void *buf, size_t len, const char *what, lm_tensor_map *out)
{
	return lmi_map_load_mem("safetensors_load", buf, len, what, load, out);
}

/* ---------------------------------------------------------------- writing */

typedef struct out_entry {
	const char *name;
	size_t len;
	const lm_tensor *t;
} out_entry;

/* The itemsize in the file: a block tensor's bytes are U8. */
static size_t file_itemsize(const lm_tensor *t)
{
	return lm_dtype_is_block(lm_tensor_dtype(t)) ? 1 : lm_dtype_size(lm_tensor_dtype(t));
}

static int by_size_then_name(const void *a, const void *b)
{
	const out_entry *x = a, *y = b;
	size_t sx = file_itemsize(x->t), sy = file_itemsize(y->t);
	if (sx != sy) return sx > sy ? -1 : 1;
	return by_name(&(named){x->name, x->len}, &(named){y->name, y->len});
}

static lm_status check_save_args(int64_t n, const char *const *names, const lm_tensor *const *ts,
                                 int64_t nmeta, const char *const *mk, const char *const *mv)
{
	if (n < 0 || nmeta < 0 || (n && (!names || !ts)) || (nmeta && (!mk || !mv)))
		return lmi_fail(LM_ERR_ARG, "safetensors_save: bad counts or NULL arrays");
	for (int64_t i = 0; i < n; i++) {
		if (!names[i] || !*names[i])
			return lmi_fail(LM_ERR_ARG, "safetensors_save: tensor %lld has an empty name", (long long)i + 1);
		if (!lmi_utf8_valid(names[i], strlen(names[i])))
			return lmi_fail(LM_ERR_ARG, "safetensors_save: the name of tensor %lld is not valid "
			                "UTF-8", (long long)i + 1);
		if (strcmp(names[i], "__metadata__") == 0)
			return lmi_fail(LM_ERR_ARG, "safetensors_save: '__metadata__' is reserved and cannot "
			                "name a tensor");
		if (!ts[i]) return lmi_fail(LM_ERR_ARG, "safetensors_save: tensor '%.60s' is NULL", names[i]);
		if (!dtype_code(lm_tensor_dtype(ts[i])))
			return lmi_fail(LM_ERR_DTYPE, "safetensors_save: tensor '%.60s' has a bad dtype", names[i]);
		if (lm_tensor_device(ts[i]) != LM_CPU)
			return lmi_fail(LM_ERR_DEVICE, "safetensors_save: tensor '%.60s' is not on the CPU", names[i]);
	}
	for (int64_t i = 0; i < nmeta; i++) {
		if (!mk[i] || !mv[i] || !lmi_utf8_valid(mk[i], strlen(mk[i])) ||
		    !lmi_utf8_valid(mv[i], strlen(mv[i])))
			return lmi_fail(LM_ERR_ARG, "safetensors_save: metadata entry %lld is not a pair of "
			                "UTF-8 strings", (long long)i + 1);
		if (is_block_key(mk[i]))
			return lmi_fail(LM_ERR_ARG, "safetensors_save: the metadata key '%.60s' is Lumen's own: "
			                KEY_DTYPE "<name> and " KEY_SHAPE "<name> say how to read the block "
			                "tensors (q8_0, q4_0); use another key", mk[i]);
	}
	return LM_OK;
}

/* ,"lumen.dtype.<name>":"q4_0","lumen.shape.<name>":"[4,64]" of a block tensor (comma: one
 * before the first). */
static void add_block_keys(lmi_buf *b, const out_entry *e, bool comma)
{
	lmi_buf q = {0}, v = {0};
	lmi_buf_add_json_string(&q, e->name, e->len); /* "name": the prefix goes after its quote */
	const lm_tensor *t = e->t;
	lmi_buf_add(&v, "[", 1);
	for (int k = 0; k < lm_tensor_ndim(t); k++)
		lmi_buf_addf(&v, "%s%lld", k ? "," : "", (long long)lm_tensor_shape(t)[k]);
	lmi_buf_add(&v, "]", 1);
	if (q.failed || v.failed) b->failed = true;
	for (int key = 0; key < 2 && !b->failed; key++) {
		if (comma || key) lmi_buf_add(b, ",", 1);
		lmi_buf_add(b, key ? "\"" KEY_SHAPE : "\"" KEY_DTYPE, 1 + KEY_LEN);
		lmi_buf_add(b, q.p + 1, q.len - 1);
		lmi_buf_add(b, ":", 1);
		if (key) lmi_buf_add_json_string(b, v.p, v.len);
		else lmi_buf_add_json_string(b, lm_dtype_name(lm_tensor_dtype(t)), strlen(lm_dtype_name(lm_tensor_dtype(t))));
	}
	lmi_buf_free(&q);
	lmi_buf_free(&v);
}

/* The JSON header for the sorted entries, padded with spaces so the data starts 8-aligned. */
static lm_status build_header(lmi_buf *b, const out_entry *es, int64_t n, int64_t nmeta,
                              const char *const *mk, const char *const *mv)
{
	lmi_buf_add(b, "{", 1);
	int64_t nblock = 0;
	for (int64_t i = 0; i < n; i++) nblock += lm_dtype_is_block(lm_tensor_dtype(es[i].t));
	if (nmeta || nblock) {
		lmi_buf_add(b, "\"__metadata__\":{", 16);
		for (int64_t i = 0; i < nmeta; i++) {
			if (i) lmi_buf_add(b, ",", 1);
			lmi_buf_add_json_string(b, mk[i], strlen(mk[i]));
			lmi_buf_add(b, ":", 1);
			lmi_buf_add_json_string(b, mv[i], strlen(mv[i]));
		}
		for (int64_t i = 0, k = nmeta; i < n; i++) /* how to read each block tensor back */
			if (lm_dtype_is_block(lm_tensor_dtype(es[i].t))) {
				add_block_keys(b, &es[i], k > 0);
				k += 2;
			}
		lmi_buf_add(b, "}", 1);
	}
	uint64_t at = 0;
	for (int64_t i = 0; i < n; i++) {
		const lm_tensor *t = es[i].t;
		if (i || nmeta || nblock) lmi_buf_add(b, ",", 1);
		lmi_buf_add_json_string(b, es[i].name, es[i].len);
		lmi_buf_addf(b, ":{\"dtype\":\"%s\",\"shape\":[", dtype_code(lm_tensor_dtype(t)));
		const lm_dtype_traits *tr = lm_dtype_traits_of(lm_tensor_dtype(t));
		for (int k = 0; k < lm_tensor_ndim(t); k++) {
			int64_t d = lm_tensor_shape(t)[k];
			if (k == lm_tensor_ndim(t) - 1 && tr->block_size > 1) /* the row in bytes */
				d = d / tr->block_size * (int64_t)tr->type_size;
			lmi_buf_addf(b, "%s%lld", k ? "," : "", (long long)d);
		}
		uint64_t nb = lm_tensor_nbytes(t);
		lmi_buf_addf(b, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)at,
		             (unsigned long long)(at + nb));
		at += nb;
	}
	lmi_buf_add(b, "}", 1);
	while (!b->failed && (b->len + 8) % 8) lmi_buf_add(b, " ", 1);
	if (b->failed) return lmi_fail(LM_ERR_NOMEM, "safetensors_save: out of memory for the header");
	if (b->len > LM_SAFETENSORS_MAX_HEADER)
		return lmi_fail(LM_ERR_ARG, "safetensors_save: the header would take %zu bytes, over the "
		                "format's limit of %llu", b->len, (unsigned long long)LM_SAFETENSORS_MAX_HEADER);
	return LM_OK;
}

lm_status lm_safetensors_save(const char *path, int64_t n, const char *const *names,
                              const lm_tensor *const *ts, int64_t nmeta,
                              const char *const *mk, const char *const *mv)
{
	lm_status r = check_save_args(n, names, ts, nmeta, mk, mv);
	if (r) return r;
	size_t cap = (size_t)(n ? n : 1);
	out_entry *es = lm_alloc(cap * sizeof *es);
	if (!es) return lm_last_status();
	for (int64_t i = 0; i < n; i++) es[i] = (out_entry){names[i], strlen(names[i]), ts[i]};
	qsort(es, (size_t)n, sizeof *es, by_size_then_name);
	for (int64_t i = 1; i < n && !r; i++)
		if (strcmp(es[i - 1].name, es[i].name) == 0)
			r = lmi_fail(LM_ERR_ARG, "safetensors_save: the name '%.60s' is given twice", es[i].name);
	lmi_buf b = {0};
	if (!r) r = build_header(&b, es, n, nmeta, mk, mv);
	lmi_out o;
	if (!r) r = lmi_out_open(&o, "safetensors_save", path);
	if (!r) {
		unsigned char h8[8];
		for (int i = 0; i < 8; i++) h8[i] = (unsigned char)((uint64_t)b.len >> (8 * i));
		r = lmi_out_write(&o, h8, 8);
		if (!r) r = lmi_out_write(&o, b.p, b.len);
		for (int64_t i = 0; i < n && !r; i++) r = lmi_out_write_tensor(&o, es[i].t);
		if (!r) r = lmi_out_commit(&o);
		else lmi_out_abort(&o);
	}
	lmi_buf_free(&b);
	lm_free(es, cap * sizeof *es);
	return r;
}
