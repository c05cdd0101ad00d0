/*
 * idx.c — the IDX format of MNIST and Fashion-MNIST, gzip'ed (as distributed) or plain.
 *
 * Layout: a big-endian magic 0x0000TTNN (TT the element type, NN the number of dims), NN
 * big-endian u32 dims, then the elements, big-endian, in C order. The dims are checked against
 * the bytes the file can hold before anything is allocated: exactly for a plain file, against
 * deflate's 1032:1 limit for a compressed one (whose true size is known only at its end). The
 * elements are streamed through zlib in chunks straight into the tensor, converted on the way
 * (uint8 images to float32 x scale, so 60,000 images are one 188 MB tensor and never a second
 * copy); the end of the data is checked too (a longer file has "trailing bytes"). Read next:
 * ../lua/io.c, lua/lumen/data/.
 */
#include <string.h>

#include "ioi.h"

typedef struct idx_type {
	unsigned char code;
	size_t size;
	lm_dtype dt;
	const char *name;
} idx_type;

static const idx_type types[] = {
	{0x08, 1, LM_UINT8, "unsigned byte"}, {0x09, 1, LM_INT32, "signed byte"},
	{0x0B, 2, LM_INT32, "short"},         {0x0C, 4, LM_INT32, "int"},
	{0x0D, 4, LM_FLOAT32, "float"},       {0x0E, 8, LM_FLOAT64, "double"},
};

/* Converts k big-endian elements of type ty at in into out (dtype dt), times scale for floats. */
static void convert(const idx_type *ty, const unsigned char *in, char *out, size_t k, lm_dtype dt,
                    double scale)
{
	const lm_dtype_traits *to = lm_dtype_traits_of(dt);
	for (size_t i = 0; i < k; i++) {
		const unsigned char *p = in + i * ty->size;
		double v;
		int32_t iv = 0;
		switch (ty->code) {
		case 0x08: v = iv = p[0]; break;
		case 0x09: v = iv = (int8_t)p[0]; break;
		case 0x0B: v = iv = (int16_t)(uint16_t)(p[0] << 8 | p[1]); break;
		case 0x0C: v = iv = (int32_t)lmi_be32(p); break;
		case 0x0D: {
			uint32_t w = lmi_be32(p);
			float f;
			memcpy(&f, &w, 4);
			v = f;
			break;
		}
		default: {
			uint64_t w = (uint64_t)lmi_be32(p) << 32 | lmi_be32(p + 4);
			memcpy(&v, &w, 8);
			break;
		}
		}
		if (to->is_int)
			to->set_int(out + i * to->type_size, iv);
		else
			to->set(out + i * to->type_size, v * scale);
	}
}

/* The magic and dims; fills ty, ndim, shape. */
static lm_status read_header(lmi_src *s, const idx_type **ty, int *ndim, int64_t *shape)
{
	unsigned char m[4];
	if (lmi_src_read_exact(s, m, 4, "the magic number")) return lm_last_status();
	if (m[0] || m[1])
		return lmi_src_fail(s, LM_ERR_IO, "not an IDX file: the magic number 0x%02x%02x%02x%02x "
		                    "does not start with two zero bytes%s", m[0], m[1], m[2], m[3],
		                    s->gz ? "" : " (is it gzip'ed under another name?)");
	*ty = NULL;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (types[i].code == m[2]) *ty = &types[i];
	if (!*ty)
		return lmi_src_fail(s, LM_ERR_IO, "unknown IDX element type 0x%02x in the magic number "
		                    "0x0000%02x%02x (expected 08, 09, 0B, 0C, 0D or 0E)", m[2], m[2], m[3]);
	if (m[3] < 1 || m[3] > LM_MAX_DIMS)
		return lmi_src_fail(s, LM_ERR_IO, "the magic number 0x0000%02x%02x gives %d dims (Lumen "
		                    "reads 1 to %d)", m[2], m[3], m[3], LM_MAX_DIMS);
	*ndim = m[3];
	unsigned char d[4 * LM_MAX_DIMS];
	if (lmi_src_read_exact(s, d, 4 * (size_t)*ndim, "the dims")) return lm_last_status();
	for (int i = 0; i < *ndim; i++) shape[i] = lmi_be32(d + 4 * i);
	return LM_OK;
}

/* The data must fit what the source can deliver. */
static lm_status check_size(lmi_src *s, const idx_type *ty, int ndim, const int64_t *shape,
                            uint64_t *nbytes)
{
	int64_t numel;
	if (lmi_numel_checked(s->fname, ndim, shape, &numel) || (uint64_t)numel > UINT64_MAX / ty->size)
		return lmi_src_fail(s, LM_ERR_IO, "dims %s are too large", lmi_dims_s(ndim, shape));
	*nbytes = (uint64_t)numel * ty->size;
	uint64_t head = 4 + 4 * (uint64_t)ndim, max = lmi_src_max_bytes(s);
	if (!s->gz && head + *nbytes != s->raw_size)
		return lmi_src_fail(s, LM_ERR_IO, "%s: dims %s of %s need %llu bytes of data, the file "
		                    "holds %llu", head + *nbytes > s->raw_size ? "truncated" : "trailing bytes",
		                    lmi_dims_s(ndim, shape), ty->name, (unsigned long long)*nbytes,
		                    (unsigned long long)(s->raw_size - head));
	if (s->gz && *nbytes > max - head)
		return lmi_src_fail(s, LM_ERR_IO, "truncated: dims %s of %s need %llu bytes of data, more "
		                    "than a %llu-byte compressed file can hold", lmi_dims_s(ndim, shape),
		                    ty->name, (unsigned long long)*nbytes, (unsigned long long)s->raw_size);
	return LM_OK;
}

/* Streams n elements into t (its dtype), converting. */
static lm_status read_elements(lmi_src *s, const idx_type *ty, lm_tensor *t, size_t n, double scale)
{
	lm_dtype dt = lm_tensor_dtype(t);
	size_t isz = lm_dtype_size(dt);
	if (ty->code == 0x08 && dt == LM_UINT8) return lmi_src_read_exact(s, lmi_data(t), n, "the data");
	enum { CHUNK = 1 << 16 };
	unsigned char *buf = lm_alloc(CHUNK);
	if (!buf) return lm_last_status();
	size_t per = CHUNK / ty->size;
	lm_status r = LM_OK;
	for (size_t i = 0; i < n && !r; i += per) {
		size_t k = n - i < per ? n - i : per;
		if ((r = lmi_src_read_exact(s, buf, k * ty->size, "the data"))) break;
		if (ty->code == 0x08 && dt == LM_FLOAT32) { /* images: the common case, vectorised */
			float *out = (float *)lmi_data(t) + i;
			for (size_t j = 0; j < k; j++) out[j] = (float)(buf[j] * scale);
		} else {
			convert(ty, buf, lmi_data(t) + i * isz, k, dt, scale);
		}
	}
	lm_free(buf, CHUNK);
	return r;
}

static lm_tensor *load(lmi_src *s, const lm_idx_opts *o)
{
	lm_idx_opts none = {0};
	if (!o) o = &none;
	if (o->limit < 0) return lmi_fail_null(LM_ERR_ARG, "%s: limit %lld is negative", s->fname,
	                                       (long long)o->limit);
	const idx_type *ty = NULL;
	int ndim = 0;
	int64_t shape[LM_MAX_DIMS] = {0};
	uint64_t nbytes = 0;
	if (read_header(s, &ty, &ndim, shape) || check_size(s, ty, ndim, shape, &nbytes)) return NULL;
	bool partial = o->limit > 0 && o->limit < shape[0];
	int64_t out_shape[LM_MAX_DIMS];
	memcpy(out_shape, shape, sizeof shape);
	if (partial) out_shape[0] = o->limit;
	lm_dtype dt = o->to_float32 ? LM_FLOAT32 : ty->dt;
	double scale = o->to_float32 && o->scale != 0 ? o->scale : 1;
	lm_tensor *t = lmi_empty(s->fname, ndim, out_shape, dt);
	if (!t) return NULL;
	lm_status r = read_elements(s, ty, t, (size_t)lm_tensor_numel(t), scale);
	if (!r && !partial) {
		int end = lmi_src_at_end(s);
		if (end < 0) r = lm_last_status();
		else if (!end)
			r = lmi_src_fail(s, LM_ERR_IO, "trailing bytes: the data goes on past the %llu bytes "
			                 "that dims %s of %s take", (unsigned long long)nbytes,
			                 lmi_dims_s(ndim, shape), ty->name);
	}
	if (r) {
		lm_tensor_release(t);
		return NULL;
	}
	return t;
}

lm_tensor *lm_idx_load(const char *path, const lm_idx_opts *opts)
{
	lmi_src s;
	if (lmi_src_open_file(&s, "idx_load", path, true)) return NULL;
	lm_tensor *t = load(&s, opts);
	lmi_src_close(&s);
	return t;
}

lm_tensor *lm_idx_parse(const void *buf, size_t len, const char *what, const lm_idx_opts *opts)
{
	lmi_src s;
	if (lmi_src_open_mem(&s, "idx_load", buf, len, what, true)) return NULL;
	lm_tensor *t = load(&s, opts);
	lmi_src_close(&s);
	return t;
}
