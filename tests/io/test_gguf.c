/*
 * test_gguf.c — GGUF (src/io/gguf.c): round trips of every dtype GGUF and Lumen share, the block
 * types byte for byte; the layout ggml reads (alignment, ne order, a 0-d tensor as ne [1]);
 * metadata of every value type read back as text; what the writer refuses (uint8, long names,
 * more than 4 dims); and every malformed-file error the reader promises, each with its message,
 * every truncation of a valid file, and an allocation-failure sweep. The fuzzer's GGUF seeds are
 * in test_io_fuzz.c; the gguf Python package reads Lumen's files in tests/io/gguf_check.py.
 */
#include <math.h>
#include <unistd.h>

#include "iotest.h"

static char tmpdir[256];

static int make_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/lumen-gguf-XXXXXX");
	return mkdtemp(tmpdir) ? lmt_leak_setup(state) : -1;
}

static int drop_tmp(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0) return -1;
	return lmt_leak_teardown(state);
}

#define TMP_TEST(f) cmocka_unit_test_setup_teardown(f, make_tmp, drop_tmp)

static const char *tmp(const char *name)
{
	static char p[400];
	snprintf(p, sizeof p, "%s/%s", tmpdir, name);
	return p;
}

/* Random values x 4 in dtype dt (a block type: quantized from float32). */
static lm_tensor *sample(lm_dtype dt, int nd, const int64_t *shape)
{
	lm_tensor *a = lm_randn(nd, shape, LM_FLOAT32);
	lm_tensor *b = lm_binary_scalar(LM_MUL, a, 4);
	lm_tensor *c = lm_to_dtype(b, dt);
	lm_tensor_release(a);
	lm_tensor_release(b);
	return c;
}

/* a and b hold the same dtype, shape and bytes (both contiguous). */
static void assert_bytes(const lm_tensor *a, const lm_tensor *b, const char *what)
{
	if (lm_tensor_dtype(a) != lm_tensor_dtype(b))
		fail_msg("%s: dtype %s vs %s", what, lm_dtype_name(lm_tensor_dtype(a)), lm_dtype_name(lm_tensor_dtype(b)));
	assert_int_equal(lm_tensor_ndim(a), lm_tensor_ndim(b));
	for (int i = 0; i < lm_tensor_ndim(a); i++) assert_int_equal(lm_tensor_shape(a)[i], lm_tensor_shape(b)[i]);
	assert_int_equal(lm_tensor_nbytes(a), lm_tensor_nbytes(b));
	if (lm_tensor_nbytes(a) && memcmp(lm_tensor_data(a), lm_tensor_data(b), lm_tensor_nbytes(a)))
		fail_msg("%s: the bytes differ", what);
}

static const char *meta(const lm_tensor_map *m, const char *key)
{
	for (int64_t i = 0; i < m->nmeta; i++)
		if (strcmp(m->meta_keys[i], key) == 0) return m->meta_values[i];
	return NULL;
}

static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	return n;
}

/* ---------------------------------------------------------------- round trips */

static void test_round_trip(void **state)
{
	(void)state;
	static const lm_dtype dts[] = {LM_FLOAT32, LM_FLOAT64, LM_INT32, LM_INT64, LM_INT8,
	                               LM_FLOAT16, LM_BFLOAT16, LM_Q8_0, LM_Q4_0};
	enum { ND = sizeof dts / sizeof dts[0], NS = 4 };
	static const int64_t shapes[NS][4] = {{3, 64}, {2, 1, 3, 32}, {96}, {0, 32}};
	static const int nds[NS] = {2, 4, 1, 2};
	lm_tensor *ts[ND * NS];
	char names[ND * NS][32];
	const char *np[ND * NS];
	for (int d = 0; d < ND; d++)
		for (int k = 0; k < NS; k++) {
			int i = d * NS + k;
			ts[i] = sample(dts[d], nds[k], shapes[k]);
			if (!ts[i]) fail_msg("%s", lm_last_error());
			snprintf(names[i], sizeof names[i], "blk.%d.%s", k, lm_dtype_name(dts[d]));
			np[i] = names[i];
		}
	const char *mk[] = {"general.name", "note"}, *mv[] = {"lumen test", "caf\xc3\xa9 \"quoted\"\n"};
	assert_int_equal(lm_gguf_save(tmp("a.gguf"), ND * NS, np, (const lm_tensor *const *)ts, 2, mk, mv), LM_OK);
	assert_int_equal(file_size(tmp("a.gguf")) % 32, 0); /* the last tensor padded too, as ggml writes */
	lm_tensor_map m;
	if (lm_gguf_load(tmp("a.gguf"), &m)) fail_msg("%s", lm_last_error());
	assert_int_equal(m.n, ND * NS);
	for (int i = 0; i < ND * NS; i++) { /* in the order written */
		assert_string_equal(m.names[i], names[i]);
		assert_bytes(ts[i], m.tensors[i], names[i]);
	}
	assert_int_equal(m.nmeta, 3);
	assert_string_equal(m.meta_keys[0], "general.architecture"); /* added first */
	assert_string_equal(m.meta_values[0], "lumen");
	assert_string_equal(meta(&m, "note"), mv[1]);
	assert_string_equal(meta(&m, "general.name"), mv[0]);
	lm_tensor_map_free(&m);
	for (int i = 0; i < ND * NS; i++) lm_tensor_release(ts[i]);
}

static void test_layout(void **state)
{
	(void)state;
	/* a non-contiguous tensor is written in C order; a 0-d one as ne [1], read back as [1] */
	lm_tensor *a = sample(LM_FLOAT32, 2, (int64_t[]){4, 6}), *at = lm_transpose(a, 0, 1);
	lm_tensor *s = lm_scalar(2.5, LM_FLOAT32), *c = lm_contiguous(at);
	const char *names[] = {"t", "s"};
	const lm_tensor *ts[] = {at, s};
	const char *mk[] = {"general.alignment", "general.architecture"}, *mv[] = {"64", "llama"};
	assert_int_equal(lm_gguf_save(tmp("b.gguf"), 2, names, ts, 2, mk, mv), LM_OK);
	assert_int_equal(file_size(tmp("b.gguf")) % 64, 0);
	lm_tensor_map m;
	if (lm_gguf_load(tmp("b.gguf"), &m)) fail_msg("%s", lm_last_error());
	assert_bytes(c, m.tensors[0], "transposed");
	assert_int_equal(lm_tensor_ndim(m.tensors[1]), 1);
	assert_int_equal(lm_tensor_shape(m.tensors[1])[0], 1);
	assert_true(((float *)lm_tensor_data(m.tensors[1]))[0] == 2.5f);
	assert_int_equal(m.nmeta, 2); /* the user's architecture, not Lumen's */
	assert_string_equal(meta(&m, "general.architecture"), "llama");
	assert_string_equal(meta(&m, "general.alignment"), "64");
	lm_tensor_map_free(&m);
	/* the bytes ggml reads: magic, version, counts, the first info's ne in ggml order (6, 4) */
	FILE *f = fopen(tmp("b.gguf"), "rb");
	unsigned char h[24];
	assert_int_equal(fread(h, 1, 24, f), 24);
	fclose(f);
	assert_memory_equal(h, "GGUF\x03\0\0\0\x02\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0", 24);
	/* a hand-made file: n_dims 0 reads as a 0-d tensor; ne reversed into the C-order shape */
	iobuf b = {0};
	gguf_head(&b, 2, 0);
	gguf_info(&b, "scalar", 0, NULL, 0, 0);
	gguf_info(&b, "m", 2, (const uint64_t[]){3, 2}, 26, 32);
	iob_pad(&b, 32);
	float one = 1;
	iob_add(&b, &one, 4);
	iob_pad(&b, 32);
	int32_t v[6] = {1, 2, 3, 4, 5, 6};
	iob_add(&b, v, sizeof v);
	if (lm_gguf_parse(b.p, b.n, "'hand.gguf'", &m)) fail_msg("%s", lm_last_error());
	assert_int_equal(lm_tensor_ndim(m.tensors[0]), 0);
	assert_int_equal(lm_tensor_ndim(m.tensors[1]), 2);
	assert_int_equal(lm_tensor_shape(m.tensors[1])[0], 2);
	assert_int_equal(lm_tensor_shape(m.tensors[1])[1], 3);
	assert_int_equal(lm_tensor_dtype(m.tensors[1]), LM_INT32);
	assert_memory_equal(lm_tensor_data(m.tensors[1]), v, sizeof v);
	lm_tensor_map_free(&m);
	iob_free(&b);
	lm_tensor *objs[] = {a, at, s, c};
	for (int i = 0; i < 4; i++) lm_tensor_release(objs[i]);
}

/* Every value type of the metadata, read back as text. */
static void test_metadata_values(void **state)
{
	(void)state;
	iobuf b = {0};
	gguf_head(&b, 0, 13);
	static const struct { const char *key; uint32_t type; int size; uint64_t bits; const char *want; } scalars[] = {
		{"u8", 0, 1, 200, "200"},
		{"i8", 1, 1, 0xfe, "-2"},
		{"u16", 2, 2, 65535, "65535"},
		{"i16", 3, 2, 0x8000, "-32768"},
		{"u32", 4, 4, 4000000000u, "4000000000"},
		{"i32", 5, 4, 0xffffffffu, "-1"},
		{"f32", 6, 4, 0x3dcccccdu, "0.1"}, /* 0.1f: the fewest digits that read back */
		{"bool", 7, 1, 1, "true"},
		{"u64", 10, 8, UINT64_MAX, "18446744073709551615"},
		{"i64", 11, 8, (uint64_t)INT64_MIN, "-9223372036854775808"},
		{"f64", 12, 8, 0x3fb999999999999aull, "0.1"},
	};
	for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
		iob_gstr(&b, scalars[i].key);
		iob_u32(&b, scalars[i].type);
		for (int k = 0; k < scalars[i].size; k++) {
			unsigned char c = (unsigned char)(scalars[i].bits >> (8 * k));
			iob_add(&b, &c, 1);
		}
	}
	iob_gstr(&b, "strs"); /* ["a", "q\"uote"] */
	iob_u32(&b, 9);
	iob_u32(&b, 8);
	iob_u64(&b, 2);
	iob_gstr(&b, "a");
	iob_gstr(&b, "q\"uote");
	iob_gstr(&b, "nested"); /* [[1, 2], []] of int32 */
	iob_u32(&b, 9);
	iob_u32(&b, 9);
	iob_u64(&b, 2);
	iob_u32(&b, 5);
	iob_u64(&b, 2);
	iob_u32(&b, 1);
	iob_u32(&b, 2);
	iob_u32(&b, 5);
	iob_u64(&b, 0);
	lm_tensor_map m;
	if (lm_gguf_parse(b.p, b.n, "'meta.gguf'", &m)) fail_msg("%s", lm_last_error());
	assert_int_equal(m.nmeta, 13);
	assert_int_equal(m.n, 0);
	for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
		assert_string_equal(m.meta_keys[i], scalars[i].key);
		assert_string_equal(m.meta_values[i], scalars[i].want);
	}
	assert_string_equal(meta(&m, "strs"), "[\"a\",\"q\\\"uote\"]");
	assert_string_equal(meta(&m, "nested"), "[[1,2],[]]");
	lm_tensor_map_free(&m);
	iob_free(&b);
}

/* ---------------------------------------------------------------- what the writer refuses */

static void test_save_errors(void **state)
{
	(void)state;
	lm_tensor *x = lm_zeros(1, (int64_t[]){2}, LM_FLOAT32), *u = lm_zeros(1, (int64_t[]){2}, LM_UINT8);
	lm_tensor *d5 = lm_zeros(5, (int64_t[]){1, 1, 1, 1, 2}, LM_FLOAT32);
	const char *one[] = {"w"}, *dup[] = {"a", "a"}, *bad[] = {"\xff"}, *empty[] = {""};
	const char *longname[] = {"a.very.long.name.that.ggml.cannot.hold.in.its.sixty.four.byte.buffer"};
	const lm_tensor *const xs[] = {x, x};
	EXPECT_STATUS(lm_gguf_save(tmp("x.gguf"), 1, one, (const lm_tensor *const[]){u}, 0, NULL, NULL),
	              LM_ERR_DTYPE, "tensor 'w' is uint8, which GGUF has no type for");
	EXPECT_STATUS(lm_gguf_save(tmp("x.gguf"), 1, one, (const lm_tensor *const[]){d5}, 0, NULL, NULL),
	              LM_ERR_SHAPE, "has 5 dims; ggml reads at most 4");
	EXPECT_STATUS(lm_gguf_save(tmp("x.gguf"), 1, longname, xs, 0, NULL, NULL), LM_ERR_ARG,
	              "ggml reads names of at most 63");
	EXPECT_STATUS(lm_gguf_save(tmp("x.gguf"), 2, dup, xs, 0, NULL, NULL), LM_ERR_ARG, "'a' is given twice");
	EXPECT_STATUS(lm_gguf_save(tmp("x.gguf"), 1, bad, xs, 0, NULL, NULL), LM_ERR_ARG, "not valid UTF-8");
	EXPECT_STATUS(lm_gguf_save(tmp("x.gguf"), 1, empty, xs, 0, NULL, NULL), LM_ERR_ARG, "empty name");
	const char *mk[] = {"k", "k"}, *mv[] = {"1", "2"}, *ak[] = {"general.alignment"}, *av[] = {"48"};
	EXPECT_STATUS(lm_gguf_save(tmp("x.gguf"), 1, one, xs, 2, mk, mv), LM_ERR_ARG,
	              "the metadata key 'k' is given twice");
	EXPECT_STATUS(lm_gguf_save(tmp("x.gguf"), 1, one, xs, 1, ak, av), LM_ERR_ARG,
	              "general.alignment must be a power of two");
	EXPECT_STATUS(lm_gguf_save("/nonexistent-dir/x.gguf", 1, one, xs, 0, NULL, NULL), LM_ERR_IO,
	              "cannot write '/nonexistent-dir/x.gguf'");
	assert_int_equal(access(tmp("x.gguf"), F_OK), -1); /* nothing written */
	lm_tensor_release(x);
	lm_tensor_release(u);
	lm_tensor_release(d5);
}

/* ---------------------------------------------------------------- what the reader refuses */

#define GG_BAD(buf, status, text)                                                                  \
	do {                                                                                         \
		lm_tensor_map m_;                                                                        \
		EXPECT_STATUS(lm_gguf_parse((buf).p, (buf).n, "'bad.gguf'", &m_), status, text);         \
		assert_non_null(strstr(lm_last_error(), "gguf_load: 'bad.gguf': "));                     \
		assert_int_equal(m_.n, 0);                                                               \
		assert_int_equal(m_.nmeta, 0);                                                           \
		iob_free(&(buf));                                                                        \
	} while (0)

/* A file of one kv (key, type, value bytes) and no tensors. */
static iobuf one_kv(const char *key, uint32_t type, const void *value, size_t n)
{
	iobuf b = {0};
	gguf_head(&b, 0, 1);
	iob_gstr(&b, key);
	iob_u32(&b, type);
	iob_add(&b, value, n);
	return b;
}

/* A file of one tensor info (and alignment's kv when align != 32) and nbytes of data. */
static iobuf one_tensor(uint32_t nd, const uint64_t *ne, uint32_t type, uint64_t offset, size_t nbytes,
                        uint32_t align)
{
	iobuf b = {0};
	gguf_head(&b, 1, align != 32);
	if (align != 32) {
		iob_gstr(&b, "general.alignment");
		iob_u32(&b, 4);
		iob_u32(&b, align);
	}
	gguf_info(&b, "w", nd, ne, type, offset);
	iob_pad(&b, align);
	for (size_t i = 0; i < nbytes; i++) iob_add(&b, "\x11", 1);
	return b;
}

static void test_header_errors(void **state)
{
	(void)state;
	iobuf b = {0};
	iob_add(&b, "GGUF\x03\0\0\0", 8);
	GG_BAD(b, LM_ERR_IO, "too short for a GGUF file (8 bytes");
	b = (iobuf){0};
	iob_add(&b, "GGML", 4);
	for (int i = 0; i < 20; i++) iob_add(&b, "", 1);
	GG_BAD(b, LM_ERR_IO, "not a GGUF file: it starts with 47 47 4d 4c");
	b = npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "12345678", 8);
	GG_BAD(b, LM_ERR_IO, "this is a NumPy .npy file, not GGUF (read it with lm.load_npy)");
	b = st_image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}", "123456789012345678901234", 24);
	GG_BAD(b, LM_ERR_IO, "this is a safetensors file, not GGUF (read it with lm.load)");
	b = (iobuf){0};
	gguf_head(&b, 0, 0);
	b.p[4] = 1;
	GG_BAD(b, LM_ERR_UNSUPPORTED, "GGUF version 1 is not supported");
	b = (iobuf){0};
	gguf_head(&b, 0, 0);
	b.p[4] = 0, b.p[7] = 3;
	GG_BAD(b, LM_ERR_UNSUPPORTED, "a big-endian GGUF file");
	b = (iobuf){0};
	gguf_head(&b, 0, 0);
	b.p[4] = 9;
	GG_BAD(b, LM_ERR_IO, "unknown GGUF version 9");
	b = (iobuf){0};
	gguf_head(&b, UINT64_MAX, 0);
	GG_BAD(b, LM_ERR_IO, "18446744073709551615 tensors and 0 kvs cannot fit in the 0 bytes left");
	b = (iobuf){0};
	gguf_head(&b, 0, 1000);
	iob_add(&b, "0123456789012", 13);
	GG_BAD(b, LM_ERR_IO, "0 tensors and 1000 kvs cannot fit in the 13 bytes left");
	/* version 2 reads as 3 does */
	b = (iobuf){0};
	gguf_head(&b, 0, 0);
	b.p[4] = 2;
	lm_tensor_map m;
	assert_int_equal(lm_gguf_parse(b.p, b.n, "'v2.gguf'", &m), LM_OK);
	lm_tensor_map_free(&m);
	iob_free(&b);
}

static void test_kv_errors(void **state)
{
	(void)state;
	uint32_t u = 5;
	iobuf b = one_kv("k", 13, &u, 4);
	GG_BAD(b, LM_ERR_IO, "kv 'k': unknown value type 13");
	b = (iobuf){0};
	gguf_head(&b, 0, 1);
	iob_u64(&b, 1000);
	iob_add(&b, "key", 3);
	iob_u32(&b, 4);
	iob_u32(&b, 4);
	GG_BAD(b, LM_ERR_IO, "the key of kv 1: a string of 1000 bytes runs past the end of the file");
	b = (iobuf){0};
	gguf_head(&b, 0, 1);
	iob_u64(&b, 3);
	iob_add(&b, "k\0x", 3);
	iob_u32(&b, 4);
	iob_u32(&b, 4);
	GG_BAD(b, LM_ERR_IO, "the key of kv 1 holds a NUL character");
	unsigned char sv[12] = {4, 0, 0, 0, 0, 0, 0, 0, 'a', 0, 'b', 'c'};
	b = one_kv("s", 8, sv, 12);
	GG_BAD(b, LM_ERR_IO, "kv 's': the string holds a NUL character");
	unsigned char arr[12] = {4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0}; /* 2^48 uint32 */
	b = one_kv("a", 9, arr, 12);
	GG_BAD(b, LM_ERR_IO, "kv 'a': an array of 281474976710655 uint32 values needs at least 4 bytes each");
	unsigned char bad_et[12] = {77, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
	b = one_kv("a", 9, bad_et, 12);
	GG_BAD(b, LM_ERR_IO, "kv 'a': an array of unknown value type 77");
	b = (iobuf){0}; /* arrays of arrays of arrays of arrays */
	gguf_head(&b, 0, 1);
	iob_gstr(&b, "deep");
	iob_u32(&b, 9);
	for (int i = 0; i < 5; i++) {
		iob_u32(&b, 9);
		iob_u64(&b, 1);
	}
	GG_BAD(b, LM_ERR_IO, "kv 'deep': arrays nested deeper than 4");
	b = one_kv("general.alignment", 4, (uint32_t[]){48}, 4);
	GG_BAD(b, LM_ERR_IO, "general.alignment (at offset 53) must be a uint32 power of two, got uint32 48");
	b = one_kv("general.alignment", 10, (uint64_t[]){64}, 8);
	GG_BAD(b, LM_ERR_IO, "must be a uint32 power of two, got uint64 64");
	b = (iobuf){0};
	gguf_head(&b, 0, 2);
	for (int i = 0; i < 2; i++) {
		iob_gstr(&b, "same");
		iob_u32(&b, 4);
		iob_u32(&b, 1);
	}
	GG_BAD(b, LM_ERR_IO, "kv key 'same' appears twice");
	b = one_kv("u", 4, &u, 3);
	GG_BAD(b, LM_ERR_IO, "truncated: the file ends at byte 40, inside the value of kv 'u'");
}

static void test_tensor_errors(void **state)
{
	(void)state;
	iobuf b = one_tensor(9, (const uint64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 0, 4, 32);
	GG_BAD(b, LM_ERR_IO, "tensor 'w' has 9 dims; Lumen supports at most 8");
	b = one_tensor(1, (const uint64_t[]){(uint64_t)1 << 63}, 0, 0, 4, 32);
	GG_BAD(b, LM_ERR_IO, "tensor 'w': ne[0] = 9223372036854775808 is past 2^63");
	b = one_tensor(2, (const uint64_t[]){1ull << 40, 1ull << 40}, 0, 0, 4, 32);
	GG_BAD(b, LM_ERR_IO, "tensor 'w': shape [1099511627776, 1099511627776] is too large");
	b = one_tensor(1, (const uint64_t[]){256}, 12, 0, 144, 32);
	GG_BAD(b, LM_ERR_UNSUPPORTED, "tensor 'w': ggml type Q4_K (12) is not a Lumen dtype (Lumen reads F32,");
	b = one_tensor(1, (const uint64_t[]){4}, 25, 0, 8, 32);
	GG_BAD(b, LM_ERR_UNSUPPORTED, "ggml type I16 (25) is not a Lumen dtype");
	b = one_tensor(1, (const uint64_t[]){4}, 99, 0, 8, 32);
	GG_BAD(b, LM_ERR_IO, "tensor 'w': unknown ggml type 99");
	b = one_tensor(1, (const uint64_t[]){33}, 2, 0, 36, 32);
	GG_BAD(b, LM_ERR_IO, "tensor 'w': Q4_0 holds blocks of 32 values along ne[0] (the last dim), and shape [33]'s");
	b = one_tensor(0, NULL, 8, 0, 34, 32);
	GG_BAD(b, LM_ERR_IO, "tensor 'w': Q8_0 holds blocks of 32 values");
	b = one_tensor(1, (const uint64_t[]){4}, 0, 16, 32, 32);
	GG_BAD(b, LM_ERR_IO, "tensor 'w': offset 16 is not a multiple of the alignment (32)");
	b = one_tensor(1, (const uint64_t[]){4}, 0, 64, 80, 64); /* general.alignment 64 */
	lm_tensor_map m;
	if (lm_gguf_parse(b.p, b.n, "'align64.gguf'", &m)) fail_msg("%s", lm_last_error());
	assert_memory_equal(lm_tensor_data(m.tensors[0]), "\x11\x11\x11\x11\x11\x11\x11\x11", 8);
	assert_string_equal(meta(&m, "general.alignment"), "64");
	lm_tensor_map_free(&m);
	iob_free(&b);
	b = one_tensor(1, (const uint64_t[]){4}, 0, 0, 15, 32);
	GG_BAD(b, LM_ERR_IO, "tensor 'w': its 16 bytes at offset 0 of the data section (which starts at byte "
	       "64) run past the end of the file (79 bytes)");
	b = one_tensor(1, (const uint64_t[]){4}, 0, UINT64_MAX - 31, 16, 32);
	GG_BAD(b, LM_ERR_IO, "run past the end of the file");
	/* overlapping tensors, duplicate names, a NUL in a name */
	b = (iobuf){0};
	gguf_head(&b, 2, 0);
	gguf_info(&b, "a", 1, (const uint64_t[]){16}, 0, 0);
	gguf_info(&b, "b", 1, (const uint64_t[]){4}, 0, 32);
	iob_pad(&b, 32);
	for (int i = 0; i < 64; i++) iob_add(&b, "", 1);
	GG_BAD(b, LM_ERR_IO, "tensors 'a' and 'b' overlap (bytes 0 to 64 and from 32 of the data section)");
	b = (iobuf){0};
	gguf_head(&b, 2, 0);
	gguf_info(&b, "a", 1, (const uint64_t[]){4}, 0, 0);
	gguf_info(&b, "a", 1, (const uint64_t[]){4}, 0, 32);
	iob_pad(&b, 32);
	for (int i = 0; i < 48; i++) iob_add(&b, "", 1);
	GG_BAD(b, LM_ERR_IO, "tensor name 'a' appears twice");
	b = (iobuf){0};
	gguf_head(&b, 1, 0);
	iob_u64(&b, 3);
	iob_add(&b, "a\0b", 3);
	iob_u32(&b, 1);
	iob_u64(&b, 1);
	iob_u32(&b, 0);
	iob_u64(&b, 0);
	iob_pad(&b, 32);
	iob_add(&b, "1234", 4);
	GG_BAD(b, LM_ERR_IO, "the name of tensor 1 holds a NUL character");
	/* an empty tensor takes no bytes and may sit anywhere aligned; padding is not checked */
	b = (iobuf){0};
	gguf_head(&b, 2, 0);
	gguf_info(&b, "a", 1, (const uint64_t[]){16}, 0, 0);
	gguf_info(&b, "e", 2, (const uint64_t[]){0, 5}, 0, 32);
	iob_pad(&b, 32);
	for (int i = 0; i < 64; i++) iob_add(&b, "\x7f", 1);
	if (lm_gguf_parse(b.p, b.n, "'empty.gguf'", &m)) fail_msg("%s", lm_last_error());
	assert_int_equal(lm_tensor_numel(m.tensors[1]), 0);
	lm_tensor_map_free(&m);
	iob_free(&b);
}

/* Every prefix of a valid file is refused with a message, and nothing leaks. */
static void test_truncation(void **state)
{
	(void)state;
	lm_tensor *w = sample(LM_Q4_0, 2, (int64_t[]){2, 32}), *v = sample(LM_FLOAT16, 1, (int64_t[]){3});
	const char *names[] = {"w", "v"}, *mk[] = {"k"}, *mv[] = {"v"};
	assert_int_equal(lm_gguf_save(tmp("t.gguf"), 2, names, (const lm_tensor *const[]){w, v}, 1, mk, mv), LM_OK);
	FILE *f = fopen(tmp("t.gguf"), "rb");
	unsigned char buf[512];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	/* the last tensor's padding is not needed: the file ends at the end of its bytes */
	size_t need = n - (32 - 6) % 32;
	for (size_t k = 0; k < need; k++) {
		lm_tensor_map m;
		lm_memory_stats before, after;
		lm_memory_stats_get(&before);
		lm_status s = lm_gguf_parse(buf, k, "'cut.gguf'", &m);
		lm_memory_stats_get(&after);
		if (s == LM_OK) fail_msg("a prefix of %zu of %zu bytes was accepted", k, need);
		assert_non_null(strstr(lm_last_error(), "gguf_load: 'cut.gguf': "));
		assert_int_equal(after.live_bytes, before.live_bytes);
	}
	lm_tensor_map m;
	if (lm_gguf_parse(buf, need, "'whole.gguf'", &m)) fail_msg("%s", lm_last_error());
	assert_bytes(w, m.tensors[0], "w");
	lm_tensor_map_free(&m);
	lm_tensor_release(w);
	lm_tensor_release(v);
}

static void test_allocation_failures(void **state)
{
	(void)state;
	lm_tensor *w = sample(LM_Q8_0, 2, (int64_t[]){2, 64}), *v = sample(LM_INT64, 1, (int64_t[]){3});
	const char *names[] = {"w", "v"}, *mk[] = {"k"}, *mv[] = {"v"};
	assert_int_equal(lm_gguf_save(tmp("f.gguf"), 2, names, (const lm_tensor *const[]){w, v}, 1, mk, mv), LM_OK);
	bool done = false;
	for (uint64_t k = 1; k < 200 && !done; k++) {
		lm_memory_fail_after(k);
		lm_tensor_map m;
		done = lm_gguf_load(tmp("f.gguf"), &m) == LM_OK;
		lm_status s = lm_last_status();
		lm_tensor_map_free(&m);
		lm_memory_fail_after(0);
		if (!done && s != LM_ERR_NOMEM) fail_msg("allocation %d: %s", (int)k, lm_last_error());
	}
	assert_true(done);
	lm_tensor_release(w);
	lm_tensor_release(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TMP_TEST(test_round_trip),
		TMP_TEST(test_layout),
		LEAK_TEST(test_metadata_values),
		TMP_TEST(test_save_errors),
		LEAK_TEST(test_header_errors),
		LEAK_TEST(test_kv_errors),
		LEAK_TEST(test_tensor_errors),
		TMP_TEST(test_truncation),
		TMP_TEST(test_allocation_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
