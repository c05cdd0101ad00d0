/*
 * test_io_fuzz.c — a mutation fuzzer over the file parsers (safetensors, npy, IDX plain and
 * gzip'ed, GGUF). Valid images of each format are mutated (bit flips, interesting bytes and integers in
 * length fields, digits in the text headers replaced by huge numbers, JSON and dict tokens
 * inserted, ranges deleted or duplicated, truncation, bytes appended), then parsed. Each result
 * must be a usable tensor or an error with a message naming the reader; the memory a parse
 * allocates must stay within a fixed multiple of the input's size (no allocation the file cannot
 * back), and nothing may leak. ASan runs it too (./test.sh).
 *
 * In the suite: LUMEN_FUZZ_CASES cases per format (default 5000: about 0.1 s, 1 s with ASan); for a long run,
 *   LUMEN_FUZZ_CASES=200000 LUMEN_FUZZ_SEED=7 build/tests/test_io_fuzz
 * A failure prints the format, seed and case number, and writes the input to
 * /tmp/lumen-fuzz-failure.bin.
 */
#include "iotest.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static size_t rndn(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static long env_long(const char *name, long def)
{
	const char *s = getenv(name);
	return s && *s ? strtol(s, NULL, 10) : def;
}

/* ---------------------------------------------------------------- seeds */

typedef enum { F_ST, F_NPY, F_IDX, F_IDX_GZ, F_GGUF, F_COUNT } format;
static const char *const format_names[] = {"safetensors", "npy", "idx", "idx.gz", "gguf"};

/* GGUF seeds: kvs of several value types (arrays, nested ones), tensors of the block types and
 * others, an empty one, a 0-d one; variant 1 with general.alignment 64. */
static iobuf gguf_seed(int variant, const unsigned char *data)
{
	iobuf b = {0};
	uint32_t align = variant % 3 == 1 ? 64 : 32;
	gguf_head(&b, variant % 3 == 2 ? 1 : 4, 3);
	iob_gstr(&b, "general.alignment");
	iob_u32(&b, 4);
	iob_u32(&b, align);
	iob_gstr(&b, "tokens"); /* ["ab", "c"] */
	iob_u32(&b, 9);
	iob_u32(&b, 8);
	iob_u64(&b, 2);
	iob_gstr(&b, "ab");
	iob_gstr(&b, "c");
	iob_gstr(&b, "nested"); /* [[1.5], []] of float32 */
	iob_u32(&b, 9);
	iob_u32(&b, 9);
	iob_u64(&b, 2);
	iob_u32(&b, 6);
	iob_u64(&b, 1);
	iob_add(&b, "\0\0\xc0\x3f", 4);
	iob_u32(&b, 6);
	iob_u64(&b, 0);
	if (variant % 3 == 2) {
		gguf_info(&b, "s", 0, NULL, 28, 0);
		iob_pad(&b, align);
		iob_add(&b, data, 8);
		return b;
	}
	gguf_info(&b, "blk.0.q4", 2, (const uint64_t[]){32, 2}, 2, 0);       /* 36 bytes */
	gguf_info(&b, "blk.0.q8", 1, (const uint64_t[]){64}, 8, align * 2); /* 68 bytes */
	gguf_info(&b, "e", 2, (const uint64_t[]){0, 3}, 0, align * 5);
	gguf_info(&b, "h", 1, (const uint64_t[]){3}, 30, align * 5);        /* 6 bytes */
	iob_pad(&b, align);
	size_t start = b.n;
	iob_add(&b, data, 36);
	while (b.n < start + align * 2) iob_add(&b, "", 1); /* a gap of more than the padding */
	iob_add(&b, data + 40, 68);
	while (b.n < start + align * 5) iob_add(&b, "", 1);
	iob_add(&b, data + 120, 6);
	return b;
}

static iobuf seed_image(format f, int variant)
{
	static unsigned char data[256];
	for (int i = 0; i < 256; i++) data[i] = (unsigned char)(i * 37 + 11);
	switch (f) {
	case F_ST: {
		static const char *const headers[] = {
			"{\"__metadata__\":{\"format\":\"pt\"},\"a.weight\":{\"dtype\":\"F32\",\"shape\":[2,3],"
			"\"data_offsets\":[0,24]},\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[24,40]},"
			"\"c\":{\"dtype\":\"BOOL\",\"shape\":[],\"data_offsets\":[40,41]}}",
			"{\"x\":{\"dtype\":\"F16\",\"shape\":[4,1],\"data_offsets\":[0,8]},\"y\":{\"dtype\":\"BF16\","
			"\"shape\":[2],\"data_offsets\":[8,12]},\"z\":{\"dtype\":\"U8\",\"shape\":[0,9],"
			"\"data_offsets\":[12,12]},\"\\u00e9\\n\":{\"dtype\":\"I16\",\"shape\":[3],\"data_offsets\":[12,18]}}",
			"{\"__metadata__\":{\"lumen.dtype.q\":\"q4_0\",\"lumen.shape.q\":\"[2,32]\",\"lumen.dtype.r\":"
			"\"q8_0\",\"lumen.shape.r\":\"[1,1,32]\"},\"q\":{\"dtype\":\"U8\",\"shape\":[2,18],"
			"\"data_offsets\":[0,36]},\"r\":{\"dtype\":\"U8\",\"shape\":[1,1,34],\"data_offsets\":[36,70]}}",
		};
		static const size_t nd[] = {41, 18, 70};
		return st_image(headers[variant % 3], data, nd[variant % 3]);
	}
	case F_NPY: {
		static const char *const dicts[] = {
			"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }",
			"{'descr': '>i8', 'fortran_order': True, 'shape': (2, 3, 2), }",
			"{'descr': '|b1', 'fortran_order': False, 'shape': (), }",
			"{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }",
		};
		static const size_t nd[] = {48, 96, 1, 10};
		return npy_image(1 + variant % 3, dicts[variant % 4], data, nd[variant % 4]);
	}
	case F_IDX:
	case F_IDX_GZ: {
		static const uint32_t d3[] = {3, 4, 5}, d1[] = {7}, d2[] = {2, 3};
		static const unsigned char types[] = {0x08, 0x08, 0x0D};
		const uint32_t *dims = variant % 3 == 0 ? d3 : variant % 3 == 1 ? d1 : d2;
		int n = variant % 3 == 0 ? 3 : variant % 3 == 1 ? 1 : 2;
		size_t bytes = variant % 3 == 0 ? 60 : variant % 3 == 1 ? 7 : 24;
		iobuf b = idx_image(types[variant % 3], n, dims, data, bytes);
		if (f == F_IDX) return b;
		iobuf z = gzip_image(b.p, b.n);
		iob_free(&b);
		return z;
	}
	case F_GGUF: return gguf_seed(variant, data);
	default: break;
	}
	return (iobuf){0};
}

/* ---------------------------------------------------------------- mutations */

static const char *const tokens[] = {"{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "null", "true",
                                     "1e999", "-0", "18446744073709551616", "9223372036854775807",
                                     "4294967295", "(", ")", "'", "True", "False", "L", "\xff",
                                     "\xc3", "__metadata__", "data_offsets", "shape", "dtype",
                                     "descr", "fortran_order", "\n", " ", "0", "-1"};

static void put_u64(unsigned char *p, uint64_t v, int bytes, int big)
{
	for (int i = 0; i < bytes; i++)
		p[big ? bytes - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static void mutate(iobuf *b, format f)
{
	int kind = (int)rndn(10);
	size_t at = rndn(b->n ? b->n : 1);
	static const uint64_t interesting[] = {0, 1, 2, 7, 8, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff,
	                                       0xffffffff, 0x100000000ull, UINT64_MAX, 1ull << 62};
	switch (kind) {
	case 0: /* bit flips */
		for (int k = 0; k < 1 + (int)rndn(4) && b->n; k++) b->p[rndn(b->n)] ^= (unsigned char)(1u << rndn(8));
		break;
	case 1: /* an interesting byte */
		if (b->n) b->p[at] = (unsigned char)interesting[rndn(8)];
		break;
	case 2: { /* an interesting integer where lengths and dims live */
		size_t lim = f == F_ST ? 8 : f == F_NPY ? 12 : f == F_GGUF ? 40 : 16;
		int bytes = f == F_ST || f == F_GGUF ? 8 : f == F_NPY ? 2 : 4;
		size_t pos = f == F_NPY ? 8 : f == F_ST ? 0 : f == F_GGUF ? 8 * (1 + rndn(4)) : 4 * rndn(4);
		if (b->n >= lim && pos + (size_t)bytes <= b->n)
			put_u64(b->p + pos, interesting[rndn(14)], bytes, f == F_IDX || f == F_IDX_GZ);
		break;
	}
	case 3: { /* a digit run replaced by a big number */
		size_t i = at;
		while (i < b->n && !(b->p[i] >= '0' && b->p[i] <= '9')) i++;
		if (i >= b->n) break;
		size_t j = i;
		while (j < b->n && b->p[j] >= '0' && b->p[j] <= '9') j++;
		const char *num = tokens[11 + rndn(4)];
		iobuf o = {0};
		iob_add(&o, b->p, i);
		iob_add(&o, num, strlen(num));
		iob_add(&o, b->p + j, b->n - j);
		iob_free(b);
		*b = o;
		break;
	}
	case 4: { /* a token inserted */
		const char *t = tokens[rndn(sizeof tokens / sizeof tokens[0])];
		iobuf o = {0};
		iob_add(&o, b->p, at);
		iob_add(&o, t, strlen(t));
		iob_add(&o, b->p + at, b->n - at);
		iob_free(b);
		*b = o;
		break;
	}
	case 5: { /* a range deleted */
		size_t len = rndn(b->n - at + 1);
		if (b->n - at - len) memmove(b->p + at, b->p + at + len, b->n - at - len); /* b->p is NULL when empty */
		b->n -= len;
		break;
	}
	case 6: { /* a range duplicated */
		size_t len = rndn(b->n - at + 1) % 32;
		iobuf o = {0};
		iob_add(&o, b->p, at + len);
		iob_add(&o, b->p + at, len);
		iob_add(&o, b->p + at + len, b->n - at - len);
		iob_free(b);
		*b = o;
		break;
	}
	case 7: /* truncated */
		b->n = at;
		break;
	case 8: { /* bytes appended */
		unsigned char junk[16];
		for (int i = 0; i < 16; i++) junk[i] = (unsigned char)rnd();
		iob_add(b, junk, 1 + rndn(16));
		break;
	}
	default: /* random bytes */
		for (int k = 0; k < 1 + (int)rndn(8) && b->n; k++) b->p[rndn(b->n)] = (unsigned char)rnd();
		break;
	}
}

/* ---------------------------------------------------------------- one case */

static void fail_case(format f, long seed, long c, const iobuf *b, const char *why)
{
	FILE *out = fopen("/tmp/lumen-fuzz-failure.bin", "wb");
	if (out) {
		fwrite(b->p, 1, b->n, out);
		fclose(out);
	}
	fail_msg("%s, seed %ld, case %ld (%zu bytes, written to /tmp/lumen-fuzz-failure.bin): %s",
	         format_names[f], seed, c, b->n, why);
}

/* Parses b; checks the outcome and the memory used. Returns 1 when it parsed. */
static int run_case(format f, const iobuf *b, long seed, long c)
{
	lm_memory_stats before, after;
	lm_memory_stats_get(&before);
	lm_memory_reset_peak();
	lm_clear_error();
	int ok = 0;
	if (f == F_ST || f == F_GGUF) {
		lm_tensor_map m;
		ok = (f == F_ST ? lm_safetensors_parse(b->p, b->n, "'fuzz'", &m)
		                : lm_gguf_parse(b->p, b->n, "'fuzz'", &m)) == LM_OK;
		for (int64_t i = 0; ok && i < m.n; i++)
			if (!m.names[i] || !m.tensors[i] || lm_tensor_numel(m.tensors[i]) < 0)
				fail_case(f, seed, c, b, "a map entry is incomplete");
		lm_tensor_map_free(&m);
	} else {
		lm_tensor *t = f == F_NPY ? lm_npy_parse(b->p, b->n, "'fuzz'") : lm_idx_parse(b->p, b->n, "'fuzz'", NULL);
		ok = t != NULL;
		if (t && (uint64_t)lm_tensor_nbytes(t) > 8 * (uint64_t)b->n * (f == F_IDX_GZ ? 1032 : 1) + 64)
			fail_case(f, seed, c, b, "a tensor larger than the file can hold");
		lm_tensor_release(t);
	}
	if (!ok) {
		const char *e = lm_last_error();
		static const char *const reader[] = {"safetensors_load", "npy_load", "idx_load", "idx_load",
		                                     "gguf_load"};
		if (!*e || !strstr(e, reader[f]) || !strstr(e, "'fuzz'"))
			fail_case(f, seed, c, b, *e ? e : "an error without a message");
		lm_status s = lm_last_status();
		if (s != LM_ERR_IO && s != LM_ERR_UNSUPPORTED) fail_case(f, seed, c, b, e);
	}
	lm_memory_stats_get(&after);
	uint64_t bound = (f == F_IDX_GZ ? 1100 : 64) * (uint64_t)b->n + ((uint64_t)2 << 20);
	if (after.peak_bytes > before.live_bytes + bound) fail_case(f, seed, c, b, "a large allocation");
	if (after.live_bytes != before.live_bytes || after.live_tensors != before.live_tensors)
		fail_case(f, seed, c, b, "memory leaked");
	return ok;
}

static void fuzz_format(format f)
{
	long cases = env_long("LUMEN_FUZZ_CASES", 5000), seed = env_long("LUMEN_FUZZ_SEED", 1);
	rng_state = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 1000003u + (uint64_t)f * 7919u);
	long parsed = 0;
	for (long c = 0; c < cases; c++) {
		iobuf b = seed_image(f, (int)(c % 6));
		if (c >= 6) /* the first cases are the seeds themselves, which must parse */
			for (int k = 0; k < 1 + (int)rndn(3); k++) mutate(&b, f);
		int ok = run_case(f, &b, seed, c);
		if (c < 6 && !ok) fail_case(f, seed, c, &b, lm_last_error());
		parsed += ok;
		iob_free(&b);
	}
	print_message("%s: %ld cases, %ld parsed, %ld refused with a message\n", format_names[f], cases,
	              parsed, cases - parsed);
}

/*
 * Headers with what a hostile file may hold in the places the parser keys on: a second (third)
 * __metadata__ member before, between and after the tensors, and a NUL character (\u0000) at
 * every position of every string (keys, metadata keys and values, dtype names). Every one must be
 * refused with a message (duplicate keys and NUL-bearing names are errors: the map could not hold
 * them as given), with no memory left behind: lm's own accounting here, and LeakSanitizer's in the
 * ASan build.
 */
static void test_safetensors_keys(void **state)
{
	(void)state;
	static const char *const meta[] = {"\"__metadata__\":{\"a\":\"1\"},", "\"__metadata__\":{\"b\":\"2\",\"c\":\"3\"},"};
	static const char *const body = "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
	                                "\"v\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}";
	static unsigned char data[8];
	long cases = 0, refused = 0;
	char h[512];
	/* two or three __metadata__ members around the tensors */
	for (int mask = 0; mask < 8; mask++) {
		if (__builtin_popcount((unsigned)mask) < 2) continue;
		int n = snprintf(h, sizeof h, "{%s%s", mask & 1 ? meta[0] : "", body);
		n += snprintf(h + n, sizeof h - (size_t)n, ",%s%s", mask & 2 ? meta[1] : "", mask & 4 ? meta[0] : "");
		if (h[n - 1] == ',') n--;
		snprintf(h + n, sizeof h - (size_t)n, "}");
		iobuf b = st_image(h, data, 8);
		lm_tensor_map m;
		lm_memory_stats before, after;
		lm_memory_stats_get(&before);
		lm_status st = lm_safetensors_parse(b.p, b.n, "'keys'", &m);
		if (st == LM_OK) lm_tensor_map_free(&m);
		lm_memory_stats_get(&after);
		if (st == LM_OK) fail_msg("two __metadata__ were accepted: %s", h);
		assert_non_null(strstr(lm_last_error(), "'__metadata__' appears twice"));
		assert_int_equal(after.live_bytes, before.live_bytes);
		cases++, refused++;
		iob_free(&b);
	}
	/* a NUL (as \u0000) at every position of every string of a valid header */
	const char *valid = "{\"__metadata__\":{\"format\":\"pt\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2],"
	                    "\"data_offsets\":[0,8]}}";
	size_t len = strlen(valid);
	for (size_t at = 0; at < len; at++) {
		int q = 0; /* inside a string: an odd number of quotes before (the header has no escapes) */
		for (size_t k = 0; k < at; k++) q += valid[k] == '"';
		if (q % 2 == 0) continue;
		snprintf(h, sizeof h, "%.*s\\u0000%s", (int)at, valid, valid + at);
		iobuf b = st_image(h, data, 8);
		lm_tensor_map m;
		lm_memory_stats before, after;
		lm_memory_stats_get(&before);
		lm_status st = lm_safetensors_parse(b.p, b.n, "'keys'", &m);
		if (st == LM_OK) lm_tensor_map_free(&m);
		lm_memory_stats_get(&after);
		if (st == LM_OK) fail_msg("a NUL at %zu was accepted: %s", at, h);
		assert_non_null(strstr(lm_last_error(), "safetensors_load"));
		assert_int_equal(after.live_bytes, before.live_bytes);
		cases++, refused += st != LM_OK;
		iob_free(&b);
	}
	print_message("safetensors keys: %ld cases (duplicate __metadata__, NUL in every string position), "
	              "%ld refused with a message, no memory left\n", cases, refused);
}

static void test_fuzz_safetensors(void **state) { (void)state; fuzz_format(F_ST); }
static void test_fuzz_npy(void **state) { (void)state; fuzz_format(F_NPY); }
static void test_fuzz_idx(void **state) { (void)state; fuzz_format(F_IDX); }
static void test_fuzz_idx_gz(void **state) { (void)state; fuzz_format(F_IDX_GZ); }
static void test_fuzz_gguf(void **state) { (void)state; fuzz_format(F_GGUF); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		LEAK_TEST(test_fuzz_safetensors),
		LEAK_TEST(test_safetensors_keys),
		LEAK_TEST(test_fuzz_npy),
		LEAK_TEST(test_fuzz_idx),
		LEAK_TEST(test_fuzz_idx_gz),
		LEAK_TEST(test_fuzz_gguf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
