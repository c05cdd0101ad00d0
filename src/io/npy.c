/*
 * npy.c — NumPy's .npy format: one array behind a Python-literal header.
 *
 * Layout: "\x93NUMPY", major and minor version, the header length (u16 in 1.0, u32 in 2.0 and
 * 3.0), then an ASCII (3.0: UTF-8) dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline so the data starts on a 64-byte boundary (16 in old files),
 * then the data. The header is read by a small parser of exactly that dict (strings, booleans,
 * tuples of integers; keys in any order, each once); the data size must match the file.
 * Fortran-order data is read as the transposed shape and permuted to C order. The writer pads
 * the header to 64 bytes as numpy does (format 1.0; numpy.load reads it). Read next: idx.c.
 */
#include <stdlib.h>
#include <string.h>

#include "ioi.h"
#include "lumen/ops.h"

#define NPY_MAX_HEADER (1u << 24)

/* ---------------------------------------------------------------- dtypes */

typedef struct npy_dtype {
	char kind;     /* f i u b */
	size_t size;
	lm_dtype dt;   /* what it loads as */
	bool direct;   /* same bytes as the tensor's dtype (after a byte swap if big-endian) */
} npy_dtype;

static const npy_dtype npy_dtypes[] = {
	{'f', 4, LM_FLOAT32, true}, {'f', 8, LM_FLOAT64, true}, {'i', 4, LM_INT32, true},
	{'i', 8, LM_INT64, true},   {'u', 1, LM_UINT8, true},   {'b', 1, LM_UINT8, false},
	{'f', 2, LM_FLOAT16, true}, {'i', 1, LM_INT8, true},    {'i', 2, LM_INT32, false},
	{'u', 2, LM_INT32, false},  {'u', 4, LM_INT64, false},
};

/* descr such as '<f4', '|u1', '>i8': the dtype and whether it is big-endian. */
static const npy_dtype *parse_descr(const char *d, bool *big)
{
	if (strlen(d) < 3 || (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '=')) return NULL;
	*big = d[0] == '>';
	char *end;
	long sz = strtol(d + 2, &end, 10);
	if (*end || sz <= 0) return NULL;
	for (size_t i = 0; i < sizeof npy_dtypes / sizeof npy_dtypes[0]; i++)
		if (npy_dtypes[i].kind == d[1] && npy_dtypes[i].size == (size_t)sz) return &npy_dtypes[i];
	return NULL;
}

static const char *descr_of(lm_dtype dt)
{
	static const char *const code[LM_DTYPE_COUNT] = {
		[LM_FLOAT32] = "<f4",
		[LM_FLOAT64] = "<f8",
		[LM_INT32] = "<i4",
		[LM_INT64] = "<i8",
		[LM_UINT8] = "|u1",
		[LM_INT8] = "|i1",
		[LM_FLOAT16] = "<f2",
	};
	return dt >= 0 && dt < LM_DTYPE_COUNT ? code[dt] : NULL;
}

static void convert(const npy_dtype *d, const unsigned char *in, void *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = in + i * d->size;
		uint16_t h;
		uint32_t w;
		switch (d->kind) {
		case 'b': ((uint8_t *)out)[i] = p[0] != 0; break;
		case 'i': memcpy(&h, p, 2); ((int32_t *)out)[i] = (int16_t)h; break;
		default:
			if (d->size == 2) { memcpy(&h, p, 2); ((int32_t *)out)[i] = h; }
			else { memcpy(&w, p, 4); ((int64_t *)out)[i] = w; }
			break;
		}
	}
}

/* ---------------------------------------------------------------- the header dict */

typedef struct hdr {
	const char *s;
	size_t n, pos;
	char descr[32];
	bool fortran;
	int ndim;
	int64_t shape[LM_MAX_DIMS];
	const char *err;
} hdr;

static void ws(hdr *h)
{
	while (h->pos < h->n && (h->s[h->pos] == ' ' || h->s[h->pos] == '\t' || h->s[h->pos] == '\n' ||
	                         h->s[h->pos] == '\r'))
		h->pos++;
}

static bool lit(hdr *h, char c)
{
	ws(h);
	if (h->pos < h->n && h->s[h->pos] == c) {
		h->pos++;
		return true;
	}
	return false;
}

/* A quoted Python string without escapes (what numpy writes) into out. */
static bool pystr(hdr *h, char *out, size_t cap)
{
	ws(h);
	if (h->pos >= h->n || (h->s[h->pos] != '\'' && h->s[h->pos] != '"')) return false;
	char q = h->s[h->pos++];
	size_t k = 0;
	while (h->pos < h->n && h->s[h->pos] != q) {
		char c = h->s[h->pos++];
		if (c == '\\' || (unsigned char)c < 0x20 || k + 1 >= cap) return false;
		out[k++] = c;
	}
	if (h->pos >= h->n) return false;
	h->pos++;
	out[k] = '\0';
	return true;
}

static bool pyint(hdr *h, int64_t *v)
{
	ws(h);
	size_t start = h->pos;
	uint64_t u = 0;
	while (h->pos < h->n && h->s[h->pos] >= '0' && h->s[h->pos] <= '9') {
		unsigned d = (unsigned)(h->s[h->pos++] - '0');
		if (u > ((uint64_t)INT64_MAX - d) / 10) return false;
		u = u * 10 + d;
	}
	if (h->pos == start) return false;
	if (h->pos < h->n && h->s[h->pos] == 'L') h->pos++; /* Python 2 longs */
	*v = (int64_t)u;
	return true;
}

static bool shape_tuple(hdr *h)
{
	if (!lit(h, '(')) return false;
	h->ndim = 0;
	for (;;) {
		if (lit(h, ')')) return true;
		int64_t v;
		if (h->ndim == LM_MAX_DIMS) {
			h->err = "the shape has more than 8 dims (Lumen's limit)";
			return false;
		}
		if (!pyint(h, &v)) return false;
		h->shape[h->ndim++] = v;
		if (lit(h, ',')) continue;
		if (lit(h, ')')) return true; /* "(3)" is accepted too, though numpy writes (3,) */
		return false;
	}
}

static bool word(hdr *h, const char *w)
{
	ws(h);
	size_t n = strlen(w);
	if (h->pos + n > h->n || memcmp(h->s + h->pos, w, n) != 0) return false;
	h->pos += n;
	return true;
}

/* The dict; sets h->err on failure. */
static bool parse_dict(hdr *h)
{
	bool seen[3] = {false, false, false};
	if (!lit(h, '{')) return h->err = "the header is not a Python dict", false;
	for (;;) {
		if (lit(h, '}')) break;
		char key[32];
		if (!pystr(h, key, sizeof key) || !lit(h, ':')) return h->err = "a bad key in the header dict", false;
		int k = strcmp(key, "descr") == 0 ? 0 : strcmp(key, "fortran_order") == 0 ? 1
		        : strcmp(key, "shape") == 0 ? 2 : -1;
		if (k < 0) return h->err = "an unknown key in the header dict", false;
		if (seen[k]) return h->err = "a key appears twice in the header dict", false;
		seen[k] = true;
		bool ok = k == 0 ? pystr(h, h->descr, sizeof h->descr)
		          : k == 1 ? (word(h, "True") ? (h->fortran = true) : word(h, "False") ? !(h->fortran = false) : false)
		          : shape_tuple(h);
		if (!ok) {
			if (!h->err)
				h->err = k == 0 ? "descr must be a string such as '<f4' (structured dtypes are not "
				                  "supported)"
				         : k == 1 ? "fortran_order must be True or False"
				                  : "shape must be a tuple of non-negative integers";
			return false;
		}
		if (lit(h, ',')) continue;
		if (lit(h, '}')) break;
		return h->err = "expected ',' or '}' in the header dict", false;
	}
	ws(h);
	if (h->pos != h->n) return h->err = "text after the header dict", false;
	if (!seen[0] || !seen[1] || !seen[2])
		return h->err = "the header dict lacks descr, fortran_order or shape", false;
	return true;
}

/* ---------------------------------------------------------------- reading */

/* Reads the data (numel elements of d) into a new tensor of the given shape. */
static lm_tensor *read_data(lmi_src *s, const npy_dtype *d, bool big, int ndim, const int64_t *shape)
{
	lm_tensor *t = lmi_empty(s->fname, ndim, shape, d->dt);
	if (!t) return NULL;
	size_t n = (size_t)lm_tensor_numel(t);
	lm_status r = LM_OK;
	if (d->direct) {
		r = lmi_src_read_exact(s, lmi_data(t), n * d->size, "the data");
		if (!r && big) lmi_byteswap(lmi_data(t), n, d->size);
	} else {
		unsigned char buf[65536];
		size_t per = sizeof buf / d->size, isz = lm_dtype_size(d->dt);
		for (size_t i = 0; i < n && !r; i += per) {
			size_t k = n - i < per ? n - i : per;
			if ((r = lmi_src_read_exact(s, buf, k * d->size, "the data"))) break;
			if (big) lmi_byteswap(buf, k, d->size);
			convert(d, buf, lmi_data(t) + i * isz, k);
		}
	}
	if (r) {
		lm_tensor_release(t);
		return NULL;
	}
	return t;
}

/* Fortran order: the data is the C-order array of the reversed shape; permute it back. */
static lm_tensor *from_fortran(lm_tensor *rev)
{
	int nd = lm_tensor_ndim(rev), perm[LM_MAX_DIMS];
	for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
	lm_tensor *p = lm_permute(rev, perm);
	lm_tensor *c = p ? lm_contiguous(p) : NULL;
	lm_tensor_release(p);
	lm_tensor_release(rev);
	return c;
}

static lm_tensor *load(lmi_src *s)
{
	unsigned char pre[12];
	if (s->raw_size < 10)
		return lmi_src_fail(s, LM_ERR_IO, "too short for a .npy file (%llu bytes)",
		                    (unsigned long long)s->raw_size), NULL;
	if (lmi_src_read_exact(s, pre, 10, "the preamble")) return NULL;
	if (memcmp(pre, "\x93NUMPY", 6) != 0)
		return lmi_src_fail(s, LM_ERR_IO, "not a .npy file (the magic \\x93NUMPY is missing%s)",
		                    pre[7] == 0 && pre[8] == '{' ? "; a safetensors file? read it with lm.load"
		                                                 : ""), NULL;
	int major = pre[6];
	if (major < 1 || major > 3)
		return lmi_src_fail(s, LM_ERR_IO, "format version %d.%d is not supported (1.0, 2.0 or 3.0)",
		                    pre[6], pre[7]), NULL;
	uint64_t hn = (uint64_t)pre[8] | (uint64_t)pre[9] << 8, start = 10;
	if (major >= 2) {
		if (lmi_src_read_exact(s, pre + 10, 2, "the header length")) return NULL;
		hn |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
		start = 12;
	}
	if (hn > NPY_MAX_HEADER || hn > s->raw_size - start)
		return lmi_src_fail(s, LM_ERR_IO, "header length %llu runs past the end of the file (%llu "
		                    "bytes)", (unsigned long long)hn, (unsigned long long)s->raw_size), NULL;
	char *text = lm_alloc(hn + 1);
	if (!text) return NULL;
	lm_tensor *t = NULL;
	hdr h = {text, hn, 0, {0}, false, 0, {0}, NULL};
	if (lmi_src_read_exact(s, text, hn, "the header")) goto out;
	text[hn] = '\0';
	if (major < 3 && memchr(text, 0, hn)) h.err = "the header holds a NUL byte";
	if (h.err || !parse_dict(&h)) {
		lmi_src_fail(s, LM_ERR_IO, "header: %s", h.err);
		goto out;
	}
	bool big = false;
	const npy_dtype *d = parse_descr(h.descr, &big);
	if (!d) {
		lmi_src_fail(s, h.descr[1] == 'O' || h.descr[1] == 'V' ? LM_ERR_UNSUPPORTED : LM_ERR_IO,
		             "dtype '%.20s' is not supported (float32/64, int8/16/32/64, uint8/16/32, bool, "
		             "float16; object arrays and structured dtypes cannot be read)", h.descr);
		goto out;
	}
	int64_t numel;
	uint64_t have = s->raw_size - start - hn;
	if (lmi_numel_checked(s->fname, h.ndim, h.shape, &numel) ||
	    (uint64_t)numel > UINT64_MAX / d->size) {
		lmi_src_fail(s, LM_ERR_IO, "shape %s is too large (the file holds %llu bytes of data)",
		             lmi_dims_s(h.ndim, h.shape), (unsigned long long)have);
		goto out;
	}
	if ((uint64_t)numel * d->size != have) {
		lmi_src_fail(s, LM_ERR_IO, "%s: shape %s of %s needs %llu bytes of data, the file holds "
		             "%llu", have < (uint64_t)numel * d->size ? "truncated" : "trailing bytes",
		             lmi_dims_s(h.ndim, h.shape), h.descr,
		             (unsigned long long)((uint64_t)numel * d->size), (unsigned long long)have);
		goto out;
	}
	int64_t rev[LM_MAX_DIMS];
	for (int i = 0; i < h.ndim; i++) rev[i] = h.shape[h.fortran ? h.ndim - 1 - i : i];
	t = read_data(s, d, big, h.ndim, rev);
	if (t && h.fortran && h.ndim > 1) t = from_fortran(t);
out:
	lm_free(text, hn + 1);
	return t;
}

lm_tensor *lm_npy_load(const char *path)
{
	lmi_src s;
	if (lmi_src_open_file(&s, "npy_load", path, false)) return NULL;
	lm_tensor *t = load(&s);
	lmi_src_close(&s);
	return t;
}

lm_tensor *lm_npy_parse(const void *buf, size_t len, const char *what)
{
	lmi_src s;
	if (lmi_src_open_mem(&s, "npy_load", buf, len, what, false)) return NULL;
	lm_tensor *t = load(&s);
	lmi_src_close(&s);
	return t;
}

/* ---------------------------------------------------------------- writing */

lm_status lm_npy_save(const char *path, const lm_tensor *t)
{
	if (!t) return lmi_fail(LM_ERR_ARG, "npy_save: the tensor is NULL");
	const char *descr = descr_of(lm_tensor_dtype(t));
	if (!descr)
		return lmi_fail(LM_ERR_DTYPE, "npy_save: numpy has no %s dtype; save it with save_safetensors%s, or "
		                "convert it first (x:float())", lm_dtype_name(lm_tensor_dtype(t)),
		                lm_dtype_is_block(lm_tensor_dtype(t)) ? " or save_gguf" : "");
	char dict[512];
	int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (int i = 0; i < lm_tensor_ndim(t); i++)
		k += snprintf(dict + k, sizeof dict - (size_t)k, "%lld,%s", (long long)lm_tensor_shape(t)[i],
		              i + 1 < lm_tensor_ndim(t) ? " " : "");
	if (lm_tensor_ndim(t) > 1) k--; /* numpy writes (2, 3) but (3,) */
	k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
	/* magic(6) + version(2) + length(2) + dict + spaces + '\n' is a multiple of 64 */
	size_t total = 10 + (size_t)k + 1;
	size_t padded = (total + 63) / 64 * 64;
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
	size_t hn = padded - 10;
	pre[8] = (unsigned char)(hn & 0xff);
	pre[9] = (unsigned char)(hn >> 8);
	char header[600];
	memcpy(header, dict, (size_t)k);
	memset(header + k, ' ', hn - (size_t)k - 1);
	header[hn - 1] = '\n';
	lmi_out o;
	lm_status r = lmi_out_open(&o, "npy_save", path);
	if (r) return r;
	if (!(r = lmi_out_write(&o, pre, 10)) && !(r = lmi_out_write(&o, header, hn)) &&
	    !(r = lmi_out_write_tensor(&o, t)))
		return lmi_out_commit(&o);
	lmi_out_abort(&o);
	return r;
}
