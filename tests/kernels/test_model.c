/*
 * test_model.c — the latency model teaches what the lectures say (issue 17, Must 3), and every run
 * names what ran (Must 1).
 *   rankings: the naive reduction slower than the convergent one; the divergent branch of the
 *     demo costing one path's length more; strided reads slower than coalesced ones; CSR with a
 *     thread per row slower than ELL's column-major slots on equal rows; a padded shared tile
 *     removing the bank conflicts of a transpose;
 *   its parts: 32-byte sectors and 128-byte lines per warp instruction (global_transactions),
 *     32 banks (bank_conflicts), stores that do not wait, occupancy (resident blocks hiding
 *     latency), info.model;
 *   info.impl and the label: the kernels that ran, the CPU's implementation, never a variant that
 *     did not run;
 *   the demos' results (kernels.coalescing, kernels.transpose) against references on every layout,
 *     and their bad input.
 */
#include "ktest.h"

static double cyc(const lm_kernel_info *i) { return kt_counter(i, "modelled_cycles"); }

static lm_kernel_opts opts_for(const char *backend, const char *algo)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.algo = algo;
	return o;
}

static lm_kernel_info *reduce(const char *backend, const char *algo, int64_t n, int64_t block)
{
	lm_tensor *x = kt_ints(n, LM_FLOAT32, 0, 4), *y;
	lm_kernel_info *info;
	lm_kernel_opts o = opts_for(backend, algo);
	o.block = block;
	assert_int_equal(lm_kernel_reduce(x, &o, &y, &info), LM_OK);
	assert_true(kt_get(y, 0) == kt_sum(x));
	lm_tensor_release(x);
	lm_tensor_release(y);
	return info;
}

static lm_kernel_info *access(const char *call, const char *algo, const lm_tensor *x,
                              lm_tensor **out)
{
	lm_kernel_info *info;
	lm_tensor *y;
	lm_kernel_opts o = opts_for("emu", algo);
	lm_status st = strcmp(call, "transpose") == 0 ? lm_kernel_transpose(x, &o, &y, &info)
	                                              : lm_kernel_coalescing(x, &o, &y, &info);
	if (st) fail_msg("%s %s: %s", call, algo, lm_last_error());
	if (out) *out = y;
	else lm_tensor_release(y);
	return info;
}

static lm_kernel_info *divergence(const char *pattern)
{
	lm_kernel_opts o = opts_for("emu", NULL);
	o.pattern = pattern;
	lm_tensor *y;
	lm_kernel_info *info;
	assert_int_equal(lm_kernel_divergence(&o, &y, &info), LM_OK);
	lm_tensor_release(y);
	return info;
}

/* A sparse matrix of m rows of per nonzeros each, at scattered columns of n. */
static lm_sparse *equal_rows(int64_t m, int64_t per, int64_t n)
{
	int64_t nnz = m * per;
	lm_tensor *r = lm_empty(1, &nnz, LM_INT32), *c = lm_empty(1, &nnz, LM_INT32);
	lm_tensor *v = lm_ones(1, &nnz, LM_FLOAT32);
	int32_t *rp = lm_tensor_data(r), *cp = lm_tensor_data(c);
	for (int64_t i = 0; i < nnz; i++) {
		rp[i] = (int32_t)(i / per);
		cp[i] = (int32_t)((i % per) * (n / per) + (i * 7919) % (n / per));
	}
	lm_sparse *a = lm_sparse_from_coo(r, c, v, m, n, 0);
	assert_non_null(a);
	lm_tensor_release(r);
	lm_tensor_release(c);
	lm_tensor_release(v);
	return a;
}

/* ---------------------------------------------------------------- the rankings */

static void test_reduce_naive_slower(void **state)
{
	(void)state;
	lm_kernel_info *naive = reduce("emu", "naive", 4096, 0), *conv = reduce("emu", "convergent", 4096, 0);
	/* the same adds and loads; the naive tree keeps every warp issuing, its lanes spread over
	 * twice the lines, so its blocks move more sectors than the SM's memory pipe hides */
	assert_int_equal(kt_counter(naive, "adds"), kt_counter(conv, "adds"));
	assert_int_equal(kt_counter(naive, "global_loads"), kt_counter(conv, "global_loads"));
	assert_true(kt_counter(naive, "global_transactions") > 3 * kt_counter(conv, "global_transactions"));
	assert_true(cyc(naive) > 1.3 * cyc(conv));
	lm_kernel_info_free(naive);
	lm_kernel_info_free(conv);
}

static void test_divergence_costs_a_path(void **state)
{
	(void)state;
	lm_latency_model m;
	lm_kernel_latency_get(&m);
	double path = 4 * m.arith; /* each path is four dependent adds */
	lm_kernel_info *eo = divergence("even-odd"), *half = divergence("half-warp"),
	               *warp = divergence("warp"), *none = divergence("none");
	/* both have the branch; the divergent one runs the second path after the first */
	assert_true(cyc(eo) - cyc(warp) == path);
	assert_true(cyc(half) == cyc(eo));
	assert_true(cyc(warp) - cyc(none) == m.arith); /* the branch itself */
	assert_true(kt_counter(eo, "region_cycles") == 2 * path);
	assert_true(kt_counter(warp, "region_cycles") == path);
	assert_true(kt_counter(none, "region_cycles") == path);
	lm_kernel_info *list[] = {eo, half, warp, none};
	for (int i = 0; i < 4; i++) lm_kernel_info_free(list[i]);
}

static void test_strided_slower(void **state)
{
	(void)state;
	int64_t r = 256, c = 256;
	lm_tensor *x = kt_ints(r * c, LM_FLOAT32, 0, 4), *m = lm_view(x, 2, (int64_t[]){r, c});
	lm_kernel_info *co = access("coalescing", "coalesced", m, NULL), *st = access("coalescing", "strided", m, NULL);
	assert_int_equal(kt_counter(co, "adds"), kt_counter(st, "adds"));
	/* per step, a warp's 32 lanes read one line (4 sectors) or 32 lines (32 sectors) */
	assert_int_equal(kt_counter(co, "global_transactions"), r * (c / 32) * 4 + (c / 32) * 4);
	assert_int_equal(kt_counter(st, "global_transactions"), (r / 32) * c * 32 + (r / 32) * 4);
	assert_true(cyc(st) > 1.2 * cyc(co));
	/* with more warps per SM the memory pipe, not the latency, decides: the gap grows */
	lm_tensor *x2 = kt_ints(1024 * 128, LM_FLOAT32, 0, 4), *wide = lm_view(x2, 2, (int64_t[]){128, 1024}),
	          *tall = lm_view(x2, 2, (int64_t[]){1024, 128});
	lm_kernel_info *co2 = access("coalescing", "coalesced", wide, NULL), *st2 = access("coalescing", "strided", tall, NULL);
	assert_true(cyc(st2) / cyc(co2) > cyc(st) / cyc(co));
	lm_kernel_info *list[] = {co, st, co2, st2};
	for (int i = 0; i < 4; i++) lm_kernel_info_free(list[i]);
	lm_tensor *ts[] = {x, m, x2, wide, tall};
	for (int i = 0; i < 5; i++) lm_tensor_release(ts[i]);
}

static void test_csr_slower_than_ell(void **state)
{
	(void)state;
	lm_sparse *a = equal_rows(1024, 16, 1024);
	int64_t n = 1024;
	lm_tensor *x = lm_ones(1, &n, LM_FLOAT32), *y;
	lm_kernel_info *info[2];
	static const char *const formats[] = {"csr", "ell"};
	for (int f = 0; f < 2; f++) {
		lm_kernel_opts o = opts_for("emu", NULL);
		o.format = formats[f];
		assert_int_equal(lm_kernel_spmv(a, x, &o, &y, &info[f]), LM_OK);
		for (int64_t i = 0; i < n; i++) assert_true(kt_get(y, i) == 16);
		lm_tensor_release(y);
	}
	/* equal rows: no padding, the same work; only the layout differs */
	assert_int_equal(kt_counter(info[1], "padding"), 0);
	assert_int_equal(kt_counter(info[0], "adds"), kt_counter(info[1], "adds"));
	assert_true(kt_counter(info[0], "global_transactions") > 2 * kt_counter(info[1], "global_transactions"));
	assert_true(cyc(info[0]) > 2 * cyc(info[1]));
	lm_kernel_info_free(info[0]);
	lm_kernel_info_free(info[1]);
	lm_tensor_release(x);
	lm_sparse_release(a);
}

static void test_padding_removes_bank_conflicts(void **state)
{
	(void)state;
	int64_t r = 64, c = 96;
	lm_tensor *x = kt_ints(r * c, LM_FLOAT32, 0, 100), *m = lm_view(x, 2, (int64_t[]){r, c});
	lm_kernel_info *naive = access("transpose", "naive", m, NULL),
	               *shared = access("transpose", "shared", m, NULL),
	               *padded = access("transpose", "padded", m, NULL);
	/* reading a 32 x 32 tile down a column: all 32 lanes in one bank, 31 replays per load; the
	 * tiles are 2 x 3, each read by 8 warps x 4 rows of loads */
	assert_int_equal(kt_counter(shared, "bank_conflicts"), 2 * 3 * 32 * 31);
	assert_int_equal(kt_counter(padded, "bank_conflicts"), 0);
	assert_int_equal(kt_counter(naive, "bank_conflicts"), 0);
	assert_true(cyc(padded) < cyc(shared));
	/* the tiles make both global accesses coalesced: the naive one writes 32 lines a warp */
	assert_true(kt_counter(naive, "global_transactions") > 2 * kt_counter(padded, "global_transactions"));
	assert_int_equal(kt_counter(shared, "global_transactions"), kt_counter(padded, "global_transactions"));
	assert_true(cyc(naive) > cyc(padded));
	lm_kernel_info *list[] = {naive, shared, padded};
	for (int i = 0; i < 3; i++) lm_kernel_info_free(list[i]);
	lm_tensor_release(x);
	lm_tensor_release(m);
}

/* ---------------------------------------------------------------- the model's parts */

/* The trace events of the first warp instruction at (kind, space) of launch 0. */
static const lm_trace_event *first_event(const lm_kernel_info *info, int kind, int space)
{
	lm_trace_filter f;
	lm_trace_filter_init(&f);
	f.kind = kind;
	f.space = space;
	int64_t i = lm_trace_find(lm_kernel_info_trace(info), &f, 0);
	assert_true(i >= 0);
	return lm_trace_event_get(lm_kernel_info_trace(info), i);
}

static void test_sectors_lines_and_stores(void **state)
{
	(void)state;
	lm_latency_model m;
	lm_kernel_latency_get(&m);
	/* one warp: 32 consecutive floats are one line of four sectors, doubles two lines of eight */
	for (int d = 0; d < 2; d++) {
		lm_tensor *x = lm_ones(2, (int64_t[]){2, 32}, d ? LM_FLOAT64 : LM_FLOAT32);
		lm_kernel_info *co = access("coalescing", "coalesced", x, NULL);
		int per = d ? 8 : 4;
		assert_int_equal(kt_counter(co, "global_transactions"), 2 * per + per);
		const lm_trace_event *ld = first_event(co, LM_TRACE_LOAD, LM_SPACE_GLOBAL);
		assert_int_equal(ld->latency, m.global + (d ? 1 : 0) * m.issue); /* a second line: a replay */
		const lm_trace_event *stv = first_event(co, LM_TRACE_STORE, LM_SPACE_GLOBAL);
		assert_int_equal(stv->latency, (d ? 2 : 1) * m.issue); /* a store does not wait */
		lm_kernel_info_free(co);
		lm_tensor_release(x);
	}
	/* strided: a load of 32 lanes a row of 64 floats apart touches 32 lines */
	lm_tensor *x = lm_ones(2, (int64_t[]){32, 64}, LM_FLOAT32);
	lm_kernel_info *st = access("coalescing", "strided", x, NULL);
	assert_int_equal(first_event(st, LM_TRACE_LOAD, LM_SPACE_GLOBAL)->latency, m.global + 31 * m.issue);
	lm_kernel_info_free(st);
	lm_tensor_release(x);
}

static void test_occupancy_hides_latency(void **state)
{
	(void)state;
	/* 64 blocks of 256 threads: 8 blocks (64 warps) resident per SM, their latency overlapping */
	lm_kernel_info *full = reduce("emu", "shared", 1 << 15, 256);
	assert_true(kt_counter(full, "occupancy") == 1.0);
	lm_latency_model m, d;
	lm_kernel_latency_get(&d);
	m = d;
	m.blocks_per_sm = 1; /* one block at a time: every block waits for its own loads */
	assert_int_equal(lm_kernel_latency_set(&m), LM_OK);
	lm_kernel_info *one = reduce("emu", "shared", 1 << 15, 256);
	assert_true(kt_counter(one, "occupancy") == 8.0 / 64);
	assert_true(cyc(one) > 4 * cyc(full));
	/* shared memory limits residency too: 48 KiB per block leaves one of 64 KiB resident */
	m = d;
	m.shared_per_sm = 65536;
	assert_int_equal(lm_kernel_latency_set(&m), LM_OK);
	lm_tensor *x = kt_ints(1 << 16, LM_FLOAT32, 0, 4), *y;
	lm_kernel_info *big;
	lm_kernel_opts o = opts_for("emu", "hierarchical");
	o.block = 1024;
	o.coarsen = 12; /* a section of 12288 floats: 48 KiB */
	assert_int_equal(lm_kernel_scan(x, &o, &y, &big), LM_OK);
	assert_true(kt_counter(big, "occupancy") == 32.0 / 64);
	lm_tensor_release(x);
	lm_tensor_release(y);
	/* the model is stated in the info, with its values */
	assert_non_null(strstr(lm_kernel_info_model(big), "65536 bytes of shared memory"));
	assert_non_null(strstr(lm_kernel_info_model(big), "Ignores: caches"));
	lm_kernel_latency_reset();
	lm_kernel_info *cpu = reduce("cpu", "shared", 1000, 0);
	assert_null(lm_kernel_info_model(cpu));
	lm_kernel_info *list[] = {full, one, big, cpu};
	for (int i = 0; i < 4; i++) lm_kernel_info_free(list[i]);
}

/* ---------------------------------------------------------------- what ran */

static bool has(const char *s, const char *part) { return strstr(s, part) != NULL; }

static void test_impl_and_label(void **state)
{
	(void)state;
	/* emulated: the kernels launched, from their body */
	lm_kernel_info *info = reduce("emu", "naive", 100, 0);
	assert_string_equal(lm_kernel_info_impl(info), "emu: reduce_naive (body/reduce.h)");
	assert_true(has(lm_kernel_info_label(info), "reduce naive: emulated, modelled cycles"));
	lm_kernel_info_free(info);
	lm_tensor *x = kt_ints(3000, LM_FLOAT32, 0, 4), *y;
	lm_kernel_opts o = opts_for("emu", "kogge-stone");
	assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
	assert_string_equal(lm_kernel_info_impl(info), "emu: scan_kogge_stone + scan_add_sums (body/scan.h)");
	lm_tensor_release(y);
	lm_kernel_info_free(info);

	/* on the CPU: one implementation for every algo says so, and the label leaves the algo out */
	o = opts_for("cpu", "brent-kung");
	assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
	assert_true(has(lm_kernel_info_impl(info), "cpu: work-efficient"));
	assert_true(has(lm_kernel_info_impl(info), "algo 'brent-kung' applies to emu and cuda only"));
	assert_true(has(lm_kernel_info_label(info), "scan: CPU, measured"));
	assert_false(has(lm_kernel_info_label(info), "brent-kung"));
	lm_tensor_release(y);
	lm_kernel_info_free(info);
	/* options only the GPU runs follow are named */
	info = reduce("cpu", "shared", 1000, 64);
	assert_true(has(lm_kernel_info_impl(info), "algo 'shared' and block 64 apply to emu and cuda only"));
	lm_kernel_info_free(info);
	o = opts_for("cpu", "kogge-stone");
	o.block = 64;
	assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK); /* its CPU scan uses the block */
	assert_true(has(lm_kernel_info_impl(info), "cpu: kogge-stone, work-inefficient: sections of 64"));
	assert_false(has(lm_kernel_info_impl(info), "applies to"));
	assert_true(has(lm_kernel_info_label(info), "scan kogge-stone: CPU, measured"));
	lm_tensor_release(y);
	lm_kernel_info_free(info);
	lm_tensor_release(x);

	/* never a label naming a variant that did not run: where the label names it, so does impl */
	const struct {
		const char *pattern;
		const char *const algos[5];
	} calls[] = {
		{"scan", {"kogge-stone", "brent-kung", "hierarchical"}},
		{"reduce", {"naive", "convergent", "shared", "coarsened"}},
		{"histogram", {"global-atomic", "privatized", "aggregated"}},
		{"matmul", {"naive", "tiled"}},
		{"conv2d", {"naive", "constant", "tiled", "tiled-input", "tiled-output"}},
	};
	lm_tensor *v = kt_ints(500, LM_FLOAT32, 0, 4), *bins = lm_randint(0, 8, 1, (int64_t[]){500}, LM_UINT8);
	lm_tensor *mat = lm_ones(2, (int64_t[]){9, 9}, LM_FLOAT32), *mask = lm_ones(2, (int64_t[]){3, 3}, LM_FLOAT32);
	for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++)
		for (int a = 0; a < 5 && calls[c].algos[a]; a++) {
			const char *p = calls[c].pattern, *al = calls[c].algos[a];
			o = opts_for("cpu", al);
			o.repeats = 1;
			lm_status st = strcmp(p, "scan") == 0     ? lm_kernel_scan(v, &o, &y, &info)
			               : strcmp(p, "reduce") == 0 ? lm_kernel_reduce(v, &o, &y, &info)
			               : strcmp(p, "histogram") == 0 ? lm_kernel_histogram(bins, 8, &o, &y, &info)
			               : strcmp(p, "matmul") == 0 ? lm_kernel_matmul(mat, mat, &o, &y, &info)
			                                          : lm_kernel_conv2d(mat, mask, &o, &y, &info);
			assert_int_equal(st, LM_OK);
			char named[64], unused[96];
			snprintf(named, sizeof named, "%s %s: ", p, al);
			snprintf(unused, sizeof unused, "algo '%s' applies to emu and cuda only", al);
			const char *impl = lm_kernel_info_impl(info), *label = lm_kernel_info_label(info);
			assert_true(strncmp(impl, "cpu: ", 5) == 0);
			if (has(label, named)) {
				if (!has(impl, al)) fail_msg("label '%s' but impl '%s'", label, impl);
			} else if (!has(impl, unused)) {
				fail_msg("label '%s' leaves %s out but impl '%s' does not say why", label, al, impl);
			}
			lm_tensor_release(y);
			lm_kernel_info_free(info);
		}
	lm_tensor *ts[] = {v, bins, mat, mask};
	for (int i = 0; i < 4; i++) lm_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- the demos' results */

static void test_demo_results(void **state)
{
	(void)state;
	const int64_t shapes[][2] = {{1, 1}, {37, 70}, {64, 32}, {33, 1}, {5, 130}};
	for (int d = 0; d < 2; d++)
		for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
			for (int layout = 0; layout < KT_LAYOUTS; layout++) {
				int64_t r = shapes[s][0], c = shapes[s][1];
				lm_tensor *flat = kt_ints(r * c, d ? LM_FLOAT64 : LM_FLOAT32, -3, 4);
				lm_tensor *m0 = lm_view(flat, 2, (int64_t[]){r, c}), *m = kt_layout(m0, layout), *y;
				static const char *const ta[] = {"naive", "shared", "padded"};
				for (int a = 0; a < 3; a++) {
					lm_kernel_info_free(access("transpose", ta[a], m, &y));
					assert_int_equal(lm_tensor_size(y, 0), c);
					assert_int_equal(lm_tensor_size(y, 1), r);
					for (int64_t i = 0; i < r; i++)
						for (int64_t j = 0; j < c; j++)
							if (kt_get(y, j * r + i) != kt_get(flat, i * c + j))
								fail_msg("transpose %s %lldx%lld %s: out[%lld][%lld] = %g, want %g",
								         ta[a], (long long)r, (long long)c, kt_layout_name[layout],
								         (long long)j, (long long)i, kt_get(y, j * r + i),
								         kt_get(flat, i * c + j));
					lm_tensor_release(y);
				}
				for (int a = 0; a < 2; a++) {
					lm_kernel_info_free(access("coalescing", a ? "strided" : "coalesced", m, &y));
					int64_t outer = a ? r : c, inner = a ? c : r;
					assert_int_equal(lm_tensor_numel(y), outer);
					for (int64_t k = 0; k < outer; k++) {
						double want = 0;
						for (int64_t q = 0; q < inner; q++)
							want += kt_get(flat, a ? k * c + q : q * c + k);
						assert_true(kt_get(y, k) == want);
					}
					lm_tensor_release(y);
				}
				lm_tensor_release(flat);
				lm_tensor_release(m0);
				lm_tensor_release(m);
			}
}

static void test_bad_input(void **state)
{
	(void)state;
	lm_tensor *m = lm_ones(2, (int64_t[]){4, 4}, LM_FLOAT32), *v = lm_ones(1, (int64_t[]){4}, LM_FLOAT32);
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	lm_kernel_opts o = opts_for("emu", "shared");
	o.block = 64;
	KT_EXPECT_ERROR(lm_kernel_transpose(m, &o, &y, &info), LM_ERR_ARG,
	                "kernels.transpose: option block is not used by the emu run of 'shared'",
	                "32 x 8 threads");
	o = opts_for("emu", "padded");
	o.coarsen = 2;
	KT_EXPECT_ERROR(lm_kernel_transpose(m, &o, &y, &info), LM_ERR_ARG, "option coarsen is not used");
	o = opts_for("emu", "coalesced");
	o.tile = 8;
	KT_EXPECT_ERROR(lm_kernel_coalescing(m, &o, &y, &info), LM_ERR_ARG,
	                "kernels.coalescing: option tile is not used by the emu run of 'coalesced'");
	o = opts_for("cpu", "coalesced");
	KT_EXPECT_ERROR(lm_kernel_coalescing(m, &o, &y, &info), LM_ERR_UNSUPPORTED,
	                "kernels.coalescing: there is no cpu run");
	o = opts_for("emu", NULL);
	KT_EXPECT_ERROR(lm_kernel_transpose(v, &o, &y, &info), LM_ERR_SHAPE, "must be a matrix (2-D)");
	KT_EXPECT_ERROR(lm_kernel_transpose(NULL, &o, &y, &info), LM_ERR_ARG, "the input tensor is NULL");
	o = opts_for("emu", "diagonal");
	KT_EXPECT_ERROR(lm_kernel_transpose(m, &o, &y, &info), LM_ERR_ARG,
	                "unknown algo 'diagonal' (expected 'naive', 'shared' or 'padded')");
	/* tile where no tiling exists, on every run */
	static const char *const backends[] = {"emu", "cpu"};
	for (int b = 0; b < 2; b++) {
		o = opts_for(backends[b], "kogge-stone");
		o.tile = 4;
		KT_EXPECT_ERROR(lm_kernel_scan(v, &o, &y, &info), LM_ERR_ARG, "kernels.scan: option tile is not used",
		                "it has no tiles");
		o = opts_for(backends[b], NULL);
		o.tile = 4;
		KT_EXPECT_ERROR(lm_kernel_reduce(v, &o, &y, &info), LM_ERR_ARG, "kernels.reduce: option tile");
	}
	o = opts_for("emu", NULL);
	o.tile = 2;
	KT_EXPECT_ERROR(lm_kernel_divergence(&o, &y, &info), LM_ERR_ARG, "kernels.divergence: option tile");
	/* coarsen on a kernel without coarsening */
	o = opts_for("emu", "brent-kung");
	o.coarsen = 4;
	KT_EXPECT_ERROR(lm_kernel_scan(v, &o, &y, &info), LM_ERR_ARG, "algo 'brent-kung' does not coarsen");
	assert_null(y);
	assert_null(info);
	lm_tensor_release(m);
	lm_tensor_release(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduce_naive_slower),
		cmocka_unit_test(test_divergence_costs_a_path),
		cmocka_unit_test(test_strided_slower),
		cmocka_unit_test(test_csr_slower_than_ell),
		cmocka_unit_test(test_padding_removes_bank_conflicts),
		cmocka_unit_test(test_sectors_lines_and_stores),
		cmocka_unit_test(test_occupancy_hides_latency),
		cmocka_unit_test(test_impl_and_label),
		cmocka_unit_test(test_demo_results),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
