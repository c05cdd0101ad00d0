/*
 * test_io.c — the file readers and writers of lumen/io.h: round trips of every dtype and layout,
 * the fixtures written by numpy and the reference safetensors library (tests/data/, values from
 * make_fixtures.py), and every malformed-file error the readers promise, each with its message;
 * an allocation-failure sweep over the three loaders. The mutation fuzzer is test_io_fuzz.c.
 */
#include <math.h>
#include <unistd.h>

#include "iotest.h"

static char tmpdir[256];

static int make_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/lumen-io-XXXXXX");
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

static const char *fixture(const char *name)
{
	static char p[1024];
	const char *src = getenv("LUMEN_SOURCE_DIR");
	snprintf(p, sizeof p, "%s/tests/data/%s", src ? src : ".", name);
	return p;
}

/* t holds value(i) of the fixture formula for its dtype (u8: the uint8 formula). */
static void expect_fixture(const lm_tensor *t, int kind)
{
	for (int64_t i = 0; i < lm_tensor_numel(t); i++) {
		double want = kind == 0 ? fixture_float(i) : kind == 1 ? fixture_int(i)
		              : kind == 2 ? fixture_u8(i) : (double)(i % 3 == 0);
		if (elem(t, i) != want) fail_msg("element %lld is %g, expected %g", (long long)i, elem(t, i), want);
	}
}

static void expect_shape(const lm_tensor *t, lm_dtype dt, int nd, const int64_t *shape)
{
	assert_non_null(t);
	assert_int_equal(lm_tensor_dtype(t), dt);
	assert_int_equal(lm_tensor_ndim(t), nd);
	for (int i = 0; i < nd; i++) assert_int_equal(lm_tensor_shape(t)[i], shape[i]);
}

/* ---------------------------------------------------------------- round trips */

static lm_tensor *sample(lm_dtype dt, int nd, const int64_t *shape)
{
	lm_tensor *a = lm_randn(nd, shape, LM_FLOAT64);
	lm_tensor *b = lm_binary_scalar(LM_MUL, a, 50);
	lm_tensor *c = lm_to_dtype(b, dt);
	lm_tensor_release(a);
	lm_tensor_release(b);
	return c;
}

static void assert_same(const lm_tensor *a, const lm_tensor *b)
{
	assert_int_equal(lm_tensor_dtype(a), lm_tensor_dtype(b));
	assert_int_equal(lm_tensor_ndim(a), lm_tensor_ndim(b));
	for (int i = 0; i < lm_tensor_ndim(a); i++)
		assert_int_equal(lm_tensor_shape(a)[i], lm_tensor_shape(b)[i]);
	for (int64_t i = 0; i < lm_tensor_numel(a); i++)
		if (elem(a, i) != elem(b, i)) fail_msg("element %lld: %g vs %g", (long long)i, elem(a, i), elem(b, i));
}

static void test_npy_round_trip(void **state)
{
	(void)state;
	static const int64_t shapes[][3] = {{3, 5, 1}, {0, 4, 1}, {7, 1, 1}, {2, 3, 4}};
	static const int nds[] = {2, 2, 1, 3};
	for (int dt = 0; dt < LM_BFLOAT16; dt++) /* every dtype numpy has (int8 |i1, float16 <f2 too) */
		for (int k = 0; k < 5; k++) {
			lm_tensor *t = k < 4 ? sample((lm_dtype)dt, nds[k], shapes[k]) : sample((lm_dtype)dt, 0, NULL);
			assert_int_equal(lm_npy_save(tmp("a.npy"), t), LM_OK);
			lm_tensor *u = lm_npy_load(tmp("a.npy"));
			if (!u) fail_msg("%s", lm_last_error());
			assert_same(t, u);
			lm_tensor_release(u);
			lm_tensor_release(t);
		}
	/* a non-contiguous tensor is written in C order */
	lm_tensor *t = sample(LM_FLOAT32, 2, (int64_t[]){4, 6}), *tt = lm_transpose(t, 0, 1);
	lm_tensor *n = lm_narrow(tt, 0, 1, 3);
	assert_int_equal(lm_npy_save(tmp("b.npy"), n), LM_OK);
	lm_tensor *u = lm_npy_load(tmp("b.npy"));
	assert_same(n, u);
	assert_true(lm_tensor_is_contiguous(u));
	lm_tensor *objs[] = {t, tt, n, u};
	for (int i = 0; i < 4; i++) lm_tensor_release(objs[i]);
	/* the header is 64-byte aligned, format 1.0, as numpy writes it */
	FILE *f = fopen(tmp("b.npy"), "rb");
	unsigned char h[10];
	assert_int_equal(fread(h, 1, 10, f), 10);
	fclose(f);
	assert_int_equal(h[6], 1);
	assert_int_equal((10 + (h[8] | h[9] << 8)) % 64, 0);
}

static void test_safetensors_round_trip(void **state)
{
	(void)state;
	lm_tensor *ts[LM_INT8 + 2];
	const char *names[] = {"w.f32", "w.f64", "i32", "i64", "u8", "scalar", "empty"};
	for (int dt = 0; dt < LM_INT8; dt++) ts[dt] = sample((lm_dtype)dt, 2, (int64_t[]){3, 2 + dt});
	ts[5] = sample(LM_FLOAT32, 0, NULL);
	ts[6] = lm_zeros(2, (int64_t[]){0, 3}, LM_INT64);
	lm_tensor *tr = lm_transpose(ts[0], 0, 1); /* written in C order */
	lm_tensor *keep = ts[0];
	ts[0] = tr;
	const char *mk[] = {"format", "note"}, *mv[] = {"pt", "caf\xc3\xa9 \"quoted\"\n"};
	assert_int_equal(lm_safetensors_save(tmp("a.st"), 7, names, (const lm_tensor *const *)ts, 2, mk, mv),
	                 LM_OK);
	lm_tensor_map m;
	if (lm_safetensors_load(tmp("a.st"), &m)) fail_msg("%s", lm_last_error());
	assert_int_equal(m.n, 7);
	assert_int_equal(m.nmeta, 2);
	for (int64_t i = 0; i < m.nmeta; i++)
		assert_string_equal(m.meta_values[i], strcmp(m.meta_keys[i], "format") ? mv[1] : mv[0]);
	for (int k = 0; k < 7; k++) {
		int64_t j = 0;
		while (j < m.n && strcmp(m.names[j], names[k])) j++;
		assert_true(j < m.n);
		assert_same(ts[k], m.tensors[j]);
	}
	/* data is sorted by itemsize then name: every tensor is aligned to its itemsize */
	assert_string_equal(m.names[0], "empty"); /* int64, first by name among the 8-byte ones */
	lm_tensor_map_free(&m);
	for (int k = 0; k < 7; k++) lm_tensor_release(ts[k]);
	lm_tensor_release(keep);
	/* argument errors */
	lm_tensor *x = lm_zeros(1, (int64_t[]){2}, LM_FLOAT32);
	const char *dup[] = {"a", "a"}, *meta[] = {"__metadata__"}, *bad[] = {"\xff"}, *empty[] = {""};
	EXPECT_STATUS(lm_safetensors_save(tmp("b.st"), 2, dup, (const lm_tensor *const[]){x, x}, 0, NULL, NULL),
	              LM_ERR_ARG, "'a' is given twice");
	EXPECT_STATUS(lm_safetensors_save(tmp("b.st"), 1, meta, (const lm_tensor *const[]){x}, 0, NULL, NULL),
	              LM_ERR_ARG, "reserved");
	EXPECT_STATUS(lm_safetensors_save(tmp("b.st"), 1, bad, (const lm_tensor *const[]){x}, 0, NULL, NULL),
	              LM_ERR_ARG, "not valid UTF-8");
	EXPECT_STATUS(lm_safetensors_save(tmp("b.st"), 1, empty, (const lm_tensor *const[]){x}, 0, NULL, NULL),
	              LM_ERR_ARG, "empty name");
	EXPECT_STATUS(lm_safetensors_save("/nonexistent-dir/x.st", 1, names, (const lm_tensor *const[]){x}, 0,
	                                  NULL, NULL), LM_ERR_IO, "cannot write '/nonexistent-dir/x.st'");
	assert_int_equal(access(tmp("b.st"), F_OK), -1); /* nothing half-written */
	lm_tensor_release(x);
}

/* ---------------------------------------------------------------- fixtures */

static void test_fixtures_safetensors(void **state)
{
	(void)state;
	lm_tensor_map m;
	if (lm_safetensors_load(fixture("ref.safetensors"), &m)) fail_msg("%s", lm_last_error());
	assert_int_equal(m.n, 11);
	struct {
		const char *name;
		lm_dtype dt;
		int nd;
		int64_t shape[3];
		int kind;
	} want[] = {
		{"f32", LM_FLOAT32, 2, {2, 3}, 0}, {"f64", LM_FLOAT64, 1, {4}, 0},
		{"i32", LM_INT32, 3, {3, 1, 2}, 1}, {"i64", LM_INT64, 1, {5}, 1},
		{"u8", LM_UINT8, 2, {2, 2}, 2},    {"bool", LM_UINT8, 1, {7}, 3},
		{"f16", LM_FLOAT16, 2, {2, 2}, 0}, {"i16", LM_INT32, 1, {3}, 1},
		{"scalar", LM_FLOAT32, 0, {0}, 0}, {"empty", LM_FLOAT32, 2, {0, 3}, 0},
		{"layer.1.weight", LM_FLOAT32, 2, {3, 4}, 0},
	};
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		int64_t j = 0;
		while (j < m.n && strcmp(m.names[j], want[k].name)) j++;
		if (j == m.n) fail_msg("no tensor '%s'", want[k].name);
		expect_shape(m.tensors[j], want[k].dt, want[k].nd, want[k].shape);
		expect_fixture(m.tensors[j], want[k].kind);
	}
	assert_int_equal(m.nmeta, 2);
	lm_tensor_map_free(&m);
}

static void test_fixtures_npy(void **state)
{
	(void)state;
	struct {
		const char *file;
		lm_dtype dt;
		int nd;
		int64_t shape[3];
		int kind;
	} want[] = {
		{"v1_f32.npy", LM_FLOAT32, 2, {2, 3}, 0},   {"v2_i64.npy", LM_INT64, 2, {3, 2}, 1},
		{"v3_f64.npy", LM_FLOAT64, 3, {2, 2, 2}, 0}, {"fortran_f32.npy", LM_FLOAT32, 2, {3, 4}, 0},
		{"big_f64.npy", LM_FLOAT64, 1, {5}, 0},      {"bool.npy", LM_UINT8, 1, {4}, 3},
		{"f16.npy", LM_FLOAT16, 1, {3}, 0},          {"u8_0d.npy", LM_UINT8, 0, {0}, 2},
		{"i32_empty.npy", LM_INT32, 2, {0, 5}, 1},
	};
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		lm_tensor *t = lm_npy_load(fixture(want[k].file));
		if (!t) fail_msg("%s: %s", want[k].file, lm_last_error());
		expect_shape(t, want[k].dt, want[k].nd, want[k].shape);
		expect_fixture(t, want[k].kind);
		assert_true(lm_tensor_is_contiguous(t));
		lm_tensor_release(t);
	}
}

static void test_fixtures_idx(void **state)
{
	(void)state;
	lm_tensor *a = lm_idx_load(fixture("images-idx3-ubyte.gz"), NULL);
	lm_tensor *b = lm_idx_load(fixture("images-idx3-ubyte"), NULL);
	expect_shape(a, LM_UINT8, 3, (int64_t[]){3, 2, 4});
	expect_fixture(a, 2);
	assert_same(a, b);
	lm_idx_opts o = {true, 1.0 / 255, 2};
	lm_tensor *c = lm_idx_load(fixture("images-idx3-ubyte.gz"), &o);
	expect_shape(c, LM_FLOAT32, 3, (int64_t[]){2, 2, 4});
	for (int64_t i = 0; i < 16; i++) assert_true(fabs(elem(c, i) - fixture_u8(i) / 255) < 1e-7);
	lm_tensor *l = lm_idx_load(fixture("labels-idx1-ubyte.gz"), NULL);
	expect_shape(l, LM_UINT8, 1, (int64_t[]){3});
	assert_true(elem(l, 0) == 3 && elem(l, 1) == 0 && elem(l, 2) == 9);
	lm_tensor *f = lm_idx_load(fixture("floats-idx2.idx"), NULL);
	expect_shape(f, LM_FLOAT32, 2, (int64_t[]){2, 3});
	expect_fixture(f, 0);
	lm_tensor *objs[] = {a, b, c, l, f};
	for (int i = 0; i < 5; i++) lm_tensor_release(objs[i]);
	EXPECT_NULL(lm_idx_load(fixture("no-such-file.gz"), NULL), LM_ERR_IO, "cannot open");
	EXPECT_NULL(lm_idx_load(fixture("no-such-file.gz"), NULL), LM_ERR_IO, "no-such-file.gz");
}

/* ---------------------------------------------------------------- malformed safetensors */

#define ST_BAD(header, data, ndata, status, text)                                                   \
	do {                                                                                        \
		iobuf b_ = st_image(header, data, ndata);                                               \
		lm_tensor_map m_;                                                                       \
		EXPECT_STATUS(lm_safetensors_parse(b_.p, b_.n, "'bad.st'", &m_), status, text);         \
		assert_int_equal(m_.n, 0);                                                              \
		iob_free(&b_);                                                                          \
	} while (0)

static void test_safetensors_errors(void **state)
{
	(void)state;
	float d[6] = {0};
	const char *ok = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}";
	iobuf good = st_image(ok, d, 24);
	lm_tensor_map m;
	assert_int_equal(lm_safetensors_parse(good.p, good.n, "'good.st'", &m), LM_OK);
	lm_tensor_map_free(&m);
	/* header length */
	EXPECT_STATUS(lm_safetensors_parse(good.p, 5, "'bad.st'", &m), LM_ERR_IO, "too short");
	iobuf huge = good;
	unsigned char save[8];
	memcpy(save, good.p, 8);
	memset(good.p, 0xff, 8);
	EXPECT_STATUS(lm_safetensors_parse(huge.p, huge.n, "'bad.st'", &m), LM_ERR_IO, "over the limit");
	memcpy(good.p, save, 8);
	good.p[0] += 100;
	EXPECT_STATUS(lm_safetensors_parse(good.p, good.n, "'bad.st'", &m), LM_ERR_IO,
	              "runs past the end of the file");
	EXPECT_STATUS(lm_safetensors_parse(good.p, good.n, "'bad.st'", &m), LM_ERR_IO, "'bad.st'");
	iob_free(&good);
	/* JSON */
	ST_BAD("{\"a\":{\"dtype\":\"F32\",}}", NULL, 0, LM_ERR_IO, "trailing comma");
	ST_BAD("{\"a\" {}}", NULL, 0, LM_ERR_IO, "expected ':'");
	ST_BAD("{\"a\":{}} x", NULL, 0, LM_ERR_IO, "unexpected text after the value");
	ST_BAD("{\"a\":\"\xc3\"}", NULL, 0, LM_ERR_IO, "not valid UTF-8");
	ST_BAD("{\"a\":\"\\ud800\"}", NULL, 0, LM_ERR_IO, "surrogate");
	ST_BAD("{\"a\":01}", NULL, 0, LM_ERR_IO, "leading zero");
	ST_BAD("[1, 2]", NULL, 0, LM_ERR_IO, "does not start with '{'");
	ST_BAD("{\"a\":NaN}", NULL, 0, LM_ERR_IO, "bad JSON at byte 5");
	char deep[200] = "{\"a\":";
	for (int i = 0; i < 70; i++) strcat(deep, "[");
	ST_BAD(deep, NULL, 0, LM_ERR_IO, "deeper than 64");
	/* entries */
	ST_BAD("{\"a\":3}", NULL, 0, LM_ERR_IO, "tensor 'a': expected an object, got a number");
	ST_BAD("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", d, 4, LM_ERR_IO, "lacks \"dtype\"");
	ST_BAD("{\"a\":{\"dtype\":\"X9\",\"shape\":[1],\"data_offsets\":[0,4]}}", d, 4, LM_ERR_IO,
	       "unknown dtype 'X9'");
	ST_BAD("{\"a\":{\"dtype\":\"U64\",\"shape\":[1],\"data_offsets\":[0,8]}}", d, 8, LM_ERR_UNSUPPORTED,
	       "dtype U64 is not supported");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", d, 4, LM_ERR_IO,
	       "non-negative integers");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", d, 4, LM_ERR_IO,
	       "non-negative integers");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", d, 4,
	       LM_ERR_IO, "9 dims");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}}", d, 20, LM_ERR_IO,
	       "needs 24 bytes but data_offsets [0, 20] hold 20");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", d, 4,
	       LM_ERR_IO, "shape [4294967296, 4294967296] is too large");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1152921504606846976,4],\"data_offsets\":[0,4]}}", d, 4,
	       LM_ERR_IO, "needs more than 2^63 bytes");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}", d, 4,
	       LM_ERR_IO, "non-negative integers");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", d, 4, LM_ERR_IO,
	       "end before they begin");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", d, 4, LM_ERR_IO,
	       "must be [begin, end]");
	/* offsets out of range, overlapping, gaps */
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", d, 4, LM_ERR_IO,
	       "run past the end of the file");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", d, 8, LM_ERR_IO,
	       "leave bytes unused at the end");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
	       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", d, 12, LM_ERR_IO,
	       "overlap another tensor");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
	       "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", d, 12, LM_ERR_IO,
	       "leave a gap");
	ST_BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
	       "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", d, 8, LM_ERR_IO,
	       "tensor 'a' appears twice");
	ST_BAD("{\"__metadata__\":{\"k\":1}}", NULL, 0, LM_ERR_IO, "must be a string");
	ST_BAD("{\"__metadata__\":[]}", NULL, 0, LM_ERR_IO, "must be an object of strings");
	/* valid odd cases: empty header object, a 0-size tensor, metadata only */
	const char *fine[] = {"{}", "{\"__metadata__\":{}}   ",
	                      "{\"e\":{\"dtype\":\"I64\",\"shape\":[0,5],\"data_offsets\":[0,0]}}",
	                      "{\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]}}"};
	for (int i = 0; i < 4; i++) {
		iobuf b = st_image(fine[i], d, i == 3 ? 8 : 0);
		if (lm_safetensors_parse(b.p, b.n, "'fine.st'", &m)) fail_msg("%s: %s", fine[i], lm_last_error());
		lm_tensor_map_free(&m);
		iob_free(&b);
	}
}

/* ---------------------------------------------------------------- malformed npy */

#define NPY_BAD(major, dict, data, ndata, status, text)                                             \
	do {                                                                                        \
		iobuf b_ = npy_image(major, dict, data, ndata);                                         \
		EXPECT_NULL(lm_npy_parse(b_.p, b_.n, "'bad.npy'"), status, text);                       \
		iob_free(&b_);                                                                          \
	} while (0)

/* Block tensors (q8_0, q4_0): written as U8 bytes with lumen.dtype.<name> / lumen.shape.<name>
 * metadata, read back as themselves byte for byte, the keys consumed; metadata that does not fit
 * the entry is an error naming the tensor. */
static void test_safetensors_blocks(void **state)
{
	(void)state;
	lm_tensor *f = lm_randn(2, (int64_t[]){3, 64}, LM_FLOAT32), *g = lm_randn(3, (int64_t[]){2, 2, 32}, LM_FLOAT32);
	lm_tensor *ts[] = {lm_to_dtype(f, LM_Q8_0), lm_to_dtype(g, LM_Q4_0), lm_ones(1, (int64_t[]){2}, LM_INT8)};
	const char *names[] = {"q8", "w \"4\"", "b"}, *mk[] = {"format"}, *mv[] = {"pt"};
	assert_int_equal(lm_safetensors_save(tmp("q.st"), 3, names, (const lm_tensor *const *)ts, 1, mk, mv), LM_OK);
	lm_tensor_map m;
	if (lm_safetensors_load(tmp("q.st"), &m)) fail_msg("%s", lm_last_error());
	assert_int_equal(m.n, 3);
	assert_int_equal(m.nmeta, 1); /* the lumen.* keys are consumed */
	assert_string_equal(m.meta_keys[0], "format");
	for (int k = 0; k < 3; k++) {
		int64_t j = 0;
		while (j < m.n && strcmp(m.names[j], names[k])) j++;
		assert_true(j < m.n);
		const lm_tensor *a = ts[k], *b = m.tensors[j];
		assert_int_equal(lm_tensor_dtype(a), lm_tensor_dtype(b));
		assert_int_equal(lm_tensor_ndim(a), lm_tensor_ndim(b));
		for (int i = 0; i < lm_tensor_ndim(a); i++) assert_int_equal(lm_tensor_shape(a)[i], lm_tensor_shape(b)[i]);
		assert_int_equal(lm_tensor_nbytes(a), lm_tensor_nbytes(b));
		assert_memory_equal(lm_tensor_data(a), lm_tensor_data(b), lm_tensor_nbytes(a));
	}
	lm_tensor_map_free(&m);
	/* what the header says (the names escaped in the keys as in the entries) */
	FILE *fp = fopen(tmp("q.st"), "rb");
	char h[1024] = {0};
	assert_true(fread(h, 1, sizeof h - 1, fp) > 8);
	fclose(fp);
	assert_non_null(strstr(h + 8, "\"lumen.dtype.w \\\"4\\\"\":\"q4_0\",\"lumen.shape.w \\\"4\\\"\":\"[2,2,32]\""));
	assert_non_null(strstr(h + 8, "\"q8\":{\"dtype\":\"U8\",\"shape\":[3,68],"));
	/* a user's key may not look like Lumen's */
	const char *bad[] = {"lumen.shape.x"};
	EXPECT_STATUS(lm_safetensors_save(tmp("r.st"), 3, names, (const lm_tensor *const *)ts, 1, bad, mv),
	              LM_ERR_ARG, "the metadata key 'lumen.shape.x' is Lumen's own");
	for (int k = 0; k < 3; k++) lm_tensor_release(ts[k]);
	lm_tensor_release(f);
	lm_tensor_release(g);
	/* metadata that does not fit */
	static unsigned char d[72];
#define BLK(meta, dtype, shape) "{\"__metadata__\":{" meta "},\"w\":{\"dtype\":\"" dtype "\",\"shape\":" shape \
	",\"data_offsets\":[0,72]}}"
	ST_BAD(BLK("\"lumen.dtype.w\":\"q5_k\",\"lumen.shape.w\":\"[2,64]\"", "U8", "[2,36]"), d, 72, LM_ERR_IO,
	       "tensor 'w': lumen.dtype.w is 'q5_k', not a block type Lumen knows (q8_0, q4_0)");
	ST_BAD(BLK("\"lumen.dtype.w\":\"float32\",\"lumen.shape.w\":\"[18]\"", "U8", "[72]"), d, 72, LM_ERR_IO,
	       "is 'float32', not a block type");
	ST_BAD(BLK("\"lumen.dtype.w\":\"q4_0\",\"lumen.shape.w\":\"[2,64]\"", "U8", "[3,24]"), d, 72, LM_ERR_IO,
	       "tensor 'w': q4_0 of shape [2, 64] is stored as U8 [2, 36], but the file holds U8 [3, 24]");
	ST_BAD(BLK("\"lumen.dtype.w\":\"q8_0\",\"lumen.shape.w\":\"[2,64]\"", "U8", "[2,36]"), d, 72, LM_ERR_IO,
	       "q8_0 of shape [2, 64] is stored as U8 [2, 68]");
	ST_BAD(BLK("\"lumen.dtype.w\":\"q4_0\",\"lumen.shape.w\":\"[2,48]\"", "U8", "[2,36]"), d, 72, LM_ERR_IO,
	       "lumen.shape.w is '[2,48]', not a list of 1 to 8 sizes whose last is a multiple of 32");
	ST_BAD(BLK("\"lumen.dtype.w\":\"q4_0\",\"lumen.shape.w\":\"2x64\"", "U8", "[2,36]"), d, 72, LM_ERR_IO,
	       "lumen.shape.w is '2x64', not a list");
	ST_BAD(BLK("\"lumen.dtype.w\":\"q4_0\",\"lumen.shape.w\":\"[]\"", "U8", "[2,36]"), d, 72, LM_ERR_IO,
	       "not a list of 1 to 8 sizes");
	ST_BAD(BLK("\"lumen.dtype.w\":\"q4_0\"", "U8", "[2,36]"), d, 72, LM_ERR_IO,
	       "tensor 'w': the metadata has lumen.dtype.w but no lumen.shape.w");
	ST_BAD(BLK("\"lumen.shape.w\":\"[2,64]\"", "U8", "[2,36]"), d, 72, LM_ERR_IO,
	       "the metadata has lumen.shape.w but no lumen.dtype.w");
	ST_BAD(BLK("\"lumen.dtype.v\":\"q4_0\",\"lumen.shape.v\":\"[2,64]\"", "U8", "[2,36]"), d, 72, LM_ERR_IO,
	       "__metadata__ key 'lumen.dtype.v' names no tensor of the file");
	ST_BAD(BLK("\"lumen.dtype.w\":\"q4_0\",\"lumen.shape.w\":\"[2,64]\"", "F32", "[18]"), d, 72, LM_ERR_IO,
	       "tensor 'w': a q4_0 tensor must be stored as U8 (its bytes), not F32");
	/* the same header, consistent, loads */
	iobuf ok = st_image(BLK("\"lumen.dtype.w\":\"q4_0\",\"lumen.shape.w\":\"[2,64]\"", "U8", "[2,36]"), d, 72);
#undef BLK
	if (lm_safetensors_parse(ok.p, ok.n, "'ok.st'", &m)) fail_msg("%s", lm_last_error());
	assert_int_equal(lm_tensor_dtype(m.tensors[0]), LM_Q4_0);
	assert_int_equal(m.nmeta, 0);
	lm_tensor_map_free(&m);
	iob_free(&ok);
}

static void test_npy_errors(void **state)
{
	(void)state;
	double d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	iobuf good = npy_image(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d, 48);
	lm_tensor *t = lm_npy_parse(good.p, good.n, "'good.npy'");
	expect_shape(t, LM_FLOAT64, 2, (int64_t[]){2, 3});
	lm_tensor_release(t);
	EXPECT_NULL(lm_npy_parse(good.p, 9, "'bad.npy'"), LM_ERR_IO, "too short");
	good.p[1] = 'X';
	EXPECT_NULL(lm_npy_parse(good.p, good.n, "'bad.npy'"), LM_ERR_IO, "magic");
	good.p[1] = 'N';
	good.p[6] = 4;
	EXPECT_NULL(lm_npy_parse(good.p, good.n, "'bad.npy'"), LM_ERR_IO, "version 4.0 is not supported");
	good.p[6] = 1;
	good.p[9] = 0x7f;
	EXPECT_NULL(lm_npy_parse(good.p, good.n, "'bad.npy'"), LM_ERR_IO, "runs past the end");
	iob_free(&good);
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d, 40, LM_ERR_IO,
	        "truncated: shape [2, 3] of <f8 needs 48 bytes of data, the file holds 40");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d, 56, LM_ERR_IO,
	        "trailing bytes");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", d, 8,
	        LM_ERR_IO, "is too large");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }", d, 8,
	        LM_ERR_IO, "needs 8000000 bytes of data, the file holds 8");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 4), }", d, 8,
	        LM_ERR_IO, "too large");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", d, 8,
	        LM_ERR_IO, "shape must be a tuple");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", d, 8,
	        LM_ERR_IO, "more than 8 dims");
	NPY_BAD(1, "{'descr': '<f8', 'shape': (1,), }", d, 8, LM_ERR_IO, "lacks");
	NPY_BAD(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", d, 8,
	        LM_ERR_IO, "twice");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", d, 8, LM_ERR_IO,
	        "unknown key");
	NPY_BAD(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", d, 8, LM_ERR_UNSUPPORTED,
	        "object arrays");
	NPY_BAD(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", d, 16, LM_ERR_IO,
	        "dtype '<c16' is not supported");
	NPY_BAD(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", d, 4, LM_ERR_IO,
	        "structured");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,), }", d, 8, LM_ERR_IO,
	        "True or False");
	NPY_BAD(1, "['descr']", d, 8, LM_ERR_IO, "not a Python dict");
	NPY_BAD(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } extra", d, 8, LM_ERR_IO,
	        "text after");
	/* valid: version 2, big-endian, Fortran order of a 3-D array */
	iobuf b = npy_image(2, "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 1, 2), }",
	                    (unsigned char[]){0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4}, 16);
	t = lm_npy_parse(b.p, b.n, "'ok.npy'");
	expect_shape(t, LM_INT32, 3, (int64_t[]){2, 1, 2});
	/* Fortran order: element (i, 0, k) is at i + 2 k */
	assert_true(elem(t, 0) == 1 && elem(t, 1) == 3 && elem(t, 2) == 2 && elem(t, 3) == 4);
	lm_tensor_release(t);
	iob_free(&b);
	EXPECT_NULL(lm_npy_load(tmpdir), LM_ERR_IO, "not a regular file");
}

/* ---------------------------------------------------------------- malformed IDX */

static void test_idx_errors(void **state)
{
	(void)state;
	unsigned char px[24];
	for (int i = 0; i < 24; i++) px[i] = (unsigned char)(i * 9);
	uint32_t dims[3] = {2, 3, 4};
	iobuf b = idx_image(0x08, 3, dims, px, 24), z = gzip_image(b.p, b.n);
	lm_tensor *t = lm_idx_parse(z.p, z.n, "'x.gz'", NULL);
	expect_shape(t, LM_UINT8, 3, (int64_t[]){2, 3, 4});
	for (int i = 0; i < 24; i++) assert_true(elem(t, i) == px[i]);
	lm_tensor_release(t);
	/* truncated, plain and compressed */
	EXPECT_NULL(lm_idx_parse(b.p, b.n - 1, "'x'", NULL), LM_ERR_IO, "truncated: dims [2, 3, 4]");
	EXPECT_NULL(lm_idx_parse(z.p, z.n - 12, "'x.gz'", NULL), LM_ERR_IO, "truncated");
	EXPECT_NULL(lm_idx_parse(b.p, 6, "'x'", NULL), LM_ERR_IO, "truncated: the file ends at byte 6, inside the dims (12 bytes at offset 4)");
	/* trailing bytes, plain and compressed */
	iobuf longer = idx_image(0x08, 3, dims, px, 24);
	iob_add(&longer, "x", 1);
	iobuf zl = gzip_image(longer.p, longer.n);
	EXPECT_NULL(lm_idx_parse(longer.p, longer.n, "'x'", NULL), LM_ERR_IO, "trailing bytes");
	EXPECT_NULL(lm_idx_parse(zl.p, zl.n, "'x.gz'", NULL), LM_ERR_IO, "trailing bytes");
	/* a corrupt compressed stream */
	z.p[z.n / 2] ^= 0x55;
	z.p[z.n / 2 + 1] ^= 0x55;
	EXPECT_NULL(lm_idx_parse(z.p, z.n, "'x.gz'", NULL), LM_ERR_IO, "'x.gz'");
	/* magic */
	b.p[2] = 0x07;
	EXPECT_NULL(lm_idx_parse(b.p, b.n, "'x'", NULL), LM_ERR_IO, "unknown IDX element type 0x07");
	b.p[2] = 0x08;
	b.p[0] = 0x1f;
	EXPECT_NULL(lm_idx_parse(b.p, b.n, "'x'", NULL), LM_ERR_IO, "not an IDX file");
	b.p[0] = 0;
	b.p[3] = 0;
	EXPECT_NULL(lm_idx_parse(b.p, b.n, "'x'", NULL), LM_ERR_IO, "gives 0 dims");
	b.p[3] = 9;
	EXPECT_NULL(lm_idx_parse(b.p, b.n, "'x'", NULL), LM_ERR_IO, "gives 9 dims");
	/* huge dims: refused before any allocation, plain and compressed */
	uint32_t big[3] = {60000, 60000, 60000};
	iobuf h = idx_image(0x08, 3, big, px, 24), hz = gzip_image(h.p, h.n);
	lm_memory_reset_peak();
	EXPECT_NULL(lm_idx_parse(h.p, h.n, "'x'", NULL), LM_ERR_IO, "truncated: dims [60000, 60000, 60000]");
	EXPECT_NULL(lm_idx_parse(hz.p, hz.n, "'x.gz'", NULL), LM_ERR_IO, "more than a");
	lm_memory_stats st;
	lm_memory_stats_get(&st);
	assert_true(st.peak_bytes < ((size_t)4 << 20));
	/* other element types, converted */
	unsigned char sh[4] = {0xff, 0xfe, 0x01, 0x00}; /* shorts -2, 256 */
	iobuf s16 = idx_image(0x0B, 1, (uint32_t[]){2}, sh, 4);
	t = lm_idx_parse(s16.p, s16.n, "'s'", NULL);
	expect_shape(t, LM_INT32, 1, (int64_t[]){2});
	assert_true(elem(t, 0) == -2 && elem(t, 1) == 256);
	lm_tensor_release(t);
	iobuf all[] = {b, z, longer, zl, h, hz, s16};
	for (int i = 0; i < 7; i++) iob_free(&all[i]);
}

/* ---------------------------------------------------------------- allocation failures */

/* Every allocation of each loader, made to fail in turn: an error, and nothing leaks (the
 * teardown's check). */
static void test_allocation_failures(void **state)
{
	(void)state;
	const char *files[] = {"ref.safetensors", "fortran_f32.npy", "images-idx3-ubyte.gz"};
	for (int f = 0; f < 3; f++) {
		for (uint64_t k = 1; k < 400; k++) {
			lm_memory_fail_after(k);
			bool ok;
			if (f == 0) {
				lm_tensor_map m;
				ok = lm_safetensors_load(fixture(files[f]), &m) == LM_OK;
				lm_tensor_map_free(&m);
			} else {
				lm_tensor *t = f == 1 ? lm_npy_load(fixture(files[f])) : lm_idx_load(fixture(files[f]), NULL);
				ok = t != NULL;
				lm_tensor_release(t);
			}
			lm_memory_fail_after(0);
			if (ok) break;
			if (lm_last_status() != LM_ERR_NOMEM) fail_msg("%s, allocation %d: %s", files[f], (int)k, lm_last_error());
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TMP_TEST(test_npy_round_trip),
		TMP_TEST(test_safetensors_round_trip),
		TMP_TEST(test_safetensors_blocks),
		LEAK_TEST(test_fixtures_safetensors),
		LEAK_TEST(test_fixtures_npy),
		LEAK_TEST(test_fixtures_idx),
		LEAK_TEST(test_safetensors_errors),
		TMP_TEST(test_npy_errors),
		LEAK_TEST(test_idx_errors),
		LEAK_TEST(test_allocation_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
