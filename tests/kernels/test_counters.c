/*
 * test_counters.c — the counters mean what the textbook means, for every size (issue 17, Must 2):
 * `adds` counts additions of data only (a Kogge-Stone scan of n = 100 adds sum over s = 1, 2, 4,
 * ... < 100 of (100 - s) = 573, not the 769 of its 128-thread block), the additions of padding
 * lanes are `idle_lanes`, and `steps` counts dependent steps (a thread's serial adds are steps one
 * after another). The references below are the textbook's counts of each algorithm written as
 * plain loops over its sections (PMPP 10, 11), independent of the emulator; they are checked for
 * n = 1, 3, 100, 1000, 1025, 5000, for multi-block scans of two and more levels, and against the
 * closed forms at powers of two. The trace's step table adds up to the same counters.
 */
#include "ktest.h"

/* ---------------------------------------------------------------- the textbook counts */

typedef struct counts {
	int64_t adds, steps;
} counts;

static int64_t ceil_log2(int64_t v)
{
	int64_t k = 0;
	while (((int64_t)1 << k) < v) k++;
	return k;
}

/* Kogge-Stone over a section holding len elements of data: in the step with stride s, each of the
 * len - s elements from s on adds the one s to its left. */
static counts ks_section(int64_t len)
{
	counts c = {0, 0};
	for (int64_t s = 1; s < len; s *= 2) c.adds += len - s, c.steps++;
	return c;
}

/* Brent-Kung over a section of `section` slots holding len elements: the reduction tree adds into
 * positions 2s j - 1, the distribution tree into 2s j + s - 1, those inside the data. */
static counts bk_section(int64_t len, int64_t section)
{
	counts c = {0, 0};
	for (int64_t s = 1; s <= section / 2; s *= 2) {
		int64_t k = len / (2 * s);
		c.adds += k, c.steps += k > 0;
	}
	for (int64_t s = section / 4; s >= 1; s /= 2) {
		int64_t k = len >= s ? (len - s) / (2 * s) : 0;
		c.adds += k, c.steps += k > 0;
	}
	return c;
}

/* The three-phase scan of a section of `coarsen` elements for each of `block` threads, holding
 * len elements: each thread scans its own subsection (its elements - 1 serial adds), Kogge-Stone
 * over the totals of the full subsections, then each thread but the first adds the total before
 * it to its other elements (serially again). */
static counts three_phase_section(int64_t len, int64_t coarsen)
{
	counts c = {0, 0};
	int64_t full = len / coarsen, longest = len < coarsen ? len : coarsen;
	for (int64_t first = 0; first < len; first += coarsen) {
		int64_t mine = len - first < coarsen ? len - first : coarsen;
		c.adds += mine - 1; /* phase 1 */
		if (first > 0) c.adds += mine < coarsen - 1 ? mine : coarsen - 1; /* phase 3 */
	}
	counts kogge = ks_section(full); /* phase 2 */
	c.adds += kogge.adds;
	int64_t after_first = len - coarsen < coarsen - 1 ? len - coarsen : coarsen - 1;
	c.steps = (longest - 1) + kogge.steps + (after_first > 0 ? after_first : 0);
	return c;
}

enum { KS, BK, THREE_PHASE };

/* A scan of n elements: at each level the block scans of its sections (the first, fullest one
 * sets the level's steps), then the block sums of the level, scanned at the next level, added
 * into every section but the first (each thread adding section / block of them). */
static counts scan_counts(int algo, int64_t n, int64_t block, int64_t coarsen)
{
	counts total = {0, 0};
	for (int64_t len = n, level = 0;; level++) {
		int64_t b = block;
		int64_t per = algo == BK ? 2 : algo == THREE_PHASE ? coarsen : 1;
		if (level > 0 && b * per < 2) b = 2; /* a level of one-element sections would not shrink */
		int64_t section = b * per, sections = (len + section - 1) / section;
		for (int64_t g = 0; g < sections; g++) {
			int64_t l = len - g * section < section ? len - g * section : section;
			counts c = algo == KS ? ks_section(l) : algo == BK ? bk_section(l, section)
			                                                   : three_phase_section(l, coarsen);
			total.adds += c.adds;
			if (g == 0) total.steps += c.steps;
		}
		if (sections <= 1) break;
		int64_t rest = len - section, widest = rest < section ? rest : section;
		total.adds += rest;
		total.steps += (widest + b - 1) / b;
		len = sections;
	}
	return total;
}

/* A reduction of n elements in segments of 2 * block (* coarsen): every segment's tree adds its
 * elements - 1 (the rest go in by atomics: n - segments adds); its depth is log2 of the first
 * segment's elements, after coarsen x 2 serial adds per thread for the coarsened kernel. */
static counts reduce_counts(bool coarsened, int64_t n, int64_t block, int64_t coarsen)
{
	int64_t segment = 2 * block * (coarsened ? coarsen : 1);
	int64_t segments = (n + segment - 1) / segment, first = n < segment ? n : segment;
	counts c = {n - segments, ceil_log2(first)};
	if (coarsened) {
		int64_t serial = (first + block - 1) / block; /* thread 0's elements, block apart */
		c.steps = (serial - 1) + ceil_log2(first < block ? first : block);
	}
	return c;
}

/* ---------------------------------------------------------------- runs */

static lm_kernel_info *run(const char *pattern, const char *algo, int64_t n, int64_t block,
                           int64_t coarsen)
{
	lm_tensor *x = kt_ints(n, LM_FLOAT32, 0, 4), *y;
	lm_kernel_info *info;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.algo = algo;
	o.block = block;
	o.coarsen = coarsen;
	lm_status st = strcmp(pattern, "scan") == 0 ? lm_kernel_scan(x, &o, &y, &info)
	                                            : lm_kernel_reduce(x, &o, &y, &info);
	if (st) fail_msg("%s %s n=%lld block=%lld: %s", pattern, algo, (long long)n, (long long)block,
	                 lm_last_error());
	/* the result is right, whatever the counting */
	if (strcmp(pattern, "scan") == 0) assert_int_equal(kt_scan_mismatch(x, y, true, 0), -1);
	else assert_true(kt_get(y, 0) == kt_sum(x));
	lm_tensor_release(x);
	lm_tensor_release(y);
	return info;
}

/* The trace's steps add up to the counters: data adds, padding adds, and per launch the most
 * dependent steps of a block. */
static void trace_agrees(const lm_kernel_info *info)
{
	const lm_trace *t = lm_kernel_info_trace(info);
	int64_t adds = 0, idle = 0, steps = 0;
	for (int l = 0; l < lm_trace_launch_count(t); l++) {
		lm_trace_launch la;
		assert_int_equal(lm_trace_launch_get(t, l, &la), LM_OK);
		int64_t best = 0, cur = 0;
		uint32_t block = UINT32_MAX;
		for (int64_t i = la.first_step; i < la.first_step + la.nsteps; i++) {
			lm_trace_step s;
			assert_int_equal(lm_trace_step_get(t, i, &s), LM_OK);
			if (s.block != block) block = s.block, cur = 0;
			cur += s.depth;
			if (cur > best) best = cur;
			adds += s.adds;
			idle += s.idle_adds;
		}
		steps += best;
	}
	assert_int_equal(adds, kt_counter(info, "adds"));
	assert_int_equal(idle, kt_counter(info, "idle_lanes"));
	assert_int_equal(steps, kt_counter(info, "steps"));
	/* every add event is one or the other */
	lm_trace_filter f;
	lm_trace_filter_init(&f);
	f.kind = LM_TRACE_ADD;
	int64_t events = 0, padding = 0;
	for (int64_t i = lm_trace_find(t, &f, 0); i >= 0; i = lm_trace_find(t, &f, i + 1)) {
		events++;
		padding += lm_trace_event_get(t, i)->aux == 1;
	}
	if (!lm_trace_truncated(t)) {
		assert_int_equal(events, adds + idle);
		assert_int_equal(padding, idle);
	}
}

static void check_scan(const char *algo, int kind, int64_t n, int64_t block, int64_t coarsen)
{
	lm_kernel_info *info = run("scan", algo, n, block, coarsen);
	counts want = scan_counts(kind, n, (int64_t)kt_counter(info, "block"), kind == THREE_PHASE ? (coarsen ? coarsen : 4) : 1);
	double adds = kt_counter(info, "adds"), steps = kt_counter(info, "steps");
	if (adds != want.adds || steps != want.steps)
		fail_msg("scan %s n=%lld block=%g: adds %g steps %g, the textbook's %lld and %lld", algo,
		         (long long)n, kt_counter(info, "block"), adds, steps, (long long)want.adds,
		         (long long)want.steps);
	trace_agrees(info);
	lm_kernel_info_free(info);
}

static const int64_t sizes[] = {1, 3, 100, 1000, 1025, 5000};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static void test_kogge_stone(void **state)
{
	(void)state;
	for (int i = 0; i < NSIZES; i++) check_scan("kogge-stone", KS, sizes[i], 0, 0);
	/* the example: 573 adds of data, the 196 others of the 128-thread block are idle */
	lm_kernel_info *info = run("scan", "kogge-stone", 100, 0, 0);
	assert_int_equal(kt_counter(info, "block"), 128);
	assert_int_equal(kt_counter(info, "adds"), 573);
	assert_int_equal(kt_counter(info, "idle_lanes"), 769 - 573);
	assert_int_equal(kt_counter(info, "steps"), 7);
	lm_kernel_info_free(info);
	/* the closed form at a power of two: n log2 n - (n - 1) */
	info = run("scan", "kogge-stone", 512, 0, 0);
	assert_int_equal(kt_counter(info, "adds"), 512 * 9 - 511);
	assert_int_equal(kt_counter(info, "idle_lanes"), 0);
	lm_kernel_info_free(info);
	/* a block far larger than the data: the steps are the data's, not the block's */
	info = run("scan", "kogge-stone", 3, 1024, 0);
	assert_int_equal(kt_counter(info, "adds"), 3);
	assert_int_equal(kt_counter(info, "steps"), 2);
	lm_kernel_info_free(info);
}

static void test_brent_kung(void **state)
{
	(void)state;
	for (int i = 0; i < NSIZES; i++) check_scan("brent-kung", BK, sizes[i], 0, 0);
	/* 2n - 2 - log2 n adds in 2 log2 n - 1 steps */
	lm_kernel_info *info = run("scan", "brent-kung", 1024, 0, 0);
	assert_int_equal(kt_counter(info, "adds"), 2 * 1024 - 2 - 10);
	assert_int_equal(kt_counter(info, "steps"), 2 * 10 - 1);
	lm_kernel_info_free(info);
}

static void test_three_phase(void **state)
{
	(void)state;
	for (int i = 0; i < NSIZES; i++) check_scan("hierarchical", THREE_PHASE, sizes[i], 0, 0);
	for (int i = 0; i < NSIZES; i++) check_scan("hierarchical", THREE_PHASE, sizes[i], 32, 8);
	/* a thread's serial adds are steps: coarsen 8, one block of 4 threads over 32 elements: 7
	 * serial adds, Kogge-Stone over 4 totals (2 steps), 7 serial adds again */
	lm_kernel_info *info = run("scan", "hierarchical", 32, 4, 8);
	assert_int_equal(kt_counter(info, "steps"), 7 + 2 + 7);
	lm_kernel_info_free(info);
}

static void test_multi_block_scans(void **state)
{
	(void)state;
	/* two levels: 1000 elements in sections of 32, their 32 sums in one; three and more levels:
	 * 5000 in sections of 16 (313 sums, then 20, then 2) */
	const struct {
		const char *algo;
		int kind;
		int64_t n, block, coarsen;
	} cases[] = {
		{"kogge-stone", KS, 1000, 32, 0},    {"kogge-stone", KS, 5000, 16, 0},
		{"kogge-stone", KS, 1025, 1, 0},     {"brent-kung", BK, 1000, 16, 0},
		{"brent-kung", BK, 5000, 8, 0},      {"brent-kung", BK, 1025, 1, 0},
		{"hierarchical", THREE_PHASE, 1000, 8, 4}, {"hierarchical", THREE_PHASE, 5000, 4, 2},
		{"hierarchical", THREE_PHASE, 1025, 1, 1},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		check_scan(cases[c].algo, cases[c].kind, cases[c].n, cases[c].block, cases[c].coarsen);
	/* the block sums' padding is idle: 1025 elements in sections of 256 give 5 sums, scanned in
	 * a block of 256 (8 adds of data) */
	lm_kernel_info *info = run("scan", "kogge-stone", 1025, 256, 0);
	int64_t want = 4 * (8 * 256 - 255) + 0 + (4 + 3 + 1) + (1025 - 256);
	assert_int_equal(kt_counter(info, "adds"), want);
	assert_true(kt_counter(info, "idle_lanes") > 0);
	assert_int_equal(kt_counter(info, "launches"), 3);
	lm_kernel_info_free(info);
}

static void test_reductions(void **state)
{
	(void)state;
	static const char *const algos[] = {"naive", "convergent", "shared", "coarsened"};
	for (int a = 0; a < 4; a++)
		for (int i = 0; i < NSIZES; i++)
			for (int64_t block = 0; block <= 64; block += 64) {
				lm_kernel_info *info = run("reduce", algos[a], sizes[i], block, 0);
				counts want = reduce_counts(a == 3, sizes[i], (int64_t)kt_counter(info, "block"), 4);
				if (kt_counter(info, "adds") != want.adds || kt_counter(info, "steps") != want.steps)
					fail_msg("reduce %s n=%lld block=%g: adds %g steps %g, the textbook's %lld "
					         "and %lld", algos[a], (long long)sizes[i], kt_counter(info, "block"),
					         kt_counter(info, "adds"), kt_counter(info, "steps"),
					         (long long)want.adds, (long long)want.steps);
				trace_agrees(info);
				lm_kernel_info_free(info);
			}
	/* the example: 16 elements per thread summed serially are 15 steps, then the tree */
	lm_kernel_info *info = run("reduce", "coarsened", 1024, 64, 8);
	assert_int_equal(kt_counter(info, "adds"), 1023);
	assert_int_equal(kt_counter(info, "steps"), 15 + 6);
	lm_kernel_info_free(info);
}

/* Tiles past the matrices' edges and ghost cells add zeros: idle lanes, not the textbook's work
 * (m k n multiply-adds; the outputs' in-image mask positions). */
static void test_padding_of_tiles(void **state)
{
	(void)state;
	int64_t m = 13, k = 7, n = 9;
	lm_tensor *a = lm_randn(2, (int64_t[]){m, k}, LM_FLOAT32), *b = lm_randn(2, (int64_t[]){k, n}, LM_FLOAT32);
	lm_tensor *y;
	lm_kernel_info *info;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.tile = 4;
	static const char *const mm[] = {"naive", "tiled"};
	for (int v = 0; v < 2; v++) {
		o.algo = mm[v];
		assert_int_equal(lm_kernel_matmul(a, b, &o, &y, &info), LM_OK);
		assert_int_equal(kt_counter(info, "adds"), m * k * n);
		/* tiled: blocks of 4 x 4 over 16 x 12 outputs, 2 phases of 4: 16*12*8 products */
		assert_int_equal(kt_counter(info, "idle_lanes"), v ? 16 * 12 * 8 - m * k * n : 0);
		lm_tensor_release(y);
		lm_kernel_info_free(info);
	}
	int64_t h = 10, w = 11, r = 1;
	lm_tensor *img = lm_randn(2, (int64_t[]){h, w}, LM_FLOAT32), *mask = lm_ones(2, (int64_t[]){3, 3}, LM_FLOAT32);
	int64_t inside = 0; /* (pixel, mask cell) pairs whose input lies in the image */
	for (int64_t yy = 0; yy < h; yy++)
		for (int64_t xx = 0; xx < w; xx++)
			for (int64_t i = -r; i <= r; i++)
				for (int64_t j = -r; j <= r; j++)
					inside += yy + i >= 0 && yy + i < h && xx + j >= 0 && xx + j < w;
	static const char *const cv[] = {"naive", "constant", "tiled-input", "tiled-output"};
	for (int v = 0; v < 4; v++) {
		o.algo = cv[v];
		assert_int_equal(lm_kernel_conv2d(img, mask, &o, &y, &info), LM_OK);
		assert_int_equal(kt_counter(info, "adds"), inside);
		assert_int_equal(kt_counter(info, "idle_lanes"), v >= 2 ? h * w * 9 - inside : 0);
		lm_tensor_release(y);
		lm_kernel_info_free(info);
	}
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(img);
	lm_tensor_release(mask);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kogge_stone),      cmocka_unit_test(test_brent_kung),
		cmocka_unit_test(test_three_phase),      cmocka_unit_test(test_multi_block_scans),
		cmocka_unit_test(test_reductions),       cmocka_unit_test(test_padding_of_tiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
