/*
 * test_simt_external.c — kernels whose threads the caller runs (lumen/launch.h), from C: a
 * Kogge-Stone scan written as a resumable function per thread gives the outputs, the counters and
 * the trace events of body/scan.h's kernel; the checks (an out-of-bounds index, a read-only array,
 * a deadlock, a thread's own failure, an interrupt) fail the launch with messages naming thread,
 * block, array and index; the race check finds a planted race, is silent once the barrier is back,
 * and can be switched off; bad descriptions are refused. The Lua side: tests/lua/test_launch.lua.
 */
#include "ktest.h"
#include "lumen/launch.h"

/* ---------------------------------------------------------------- Kogge-Stone, resumable */

enum { KS_X, KS_Y, KS_XY };

typedef struct ks_thread {
	int pc;
	unsigned stride;
	double temp;
	bool adds;
} ks_thread;

typedef struct ks_ctx {
	unsigned n;
	bool racy; /* without the barrier between reading and writing */
	ks_thread th[1024];
} ks_ctx;

#define TRY(call)                                                                                  \
	do {                                                                                       \
		if ((call) != LM_OK) return LM_LAUNCH_FAULT;                                       \
	} while (0)

/* body/scan.h's scan_kogge_stone, one barrier phase per call */
static int ks_run(void *ctx, lm_launch *l, int thread, bool first)
{
	ks_ctx *c = ctx;
	ks_thread *th = &c->th[thread];
	unsigned tid[3], blk[3], bd[3];
	lm_launch_where(l, tid, blk, bd, NULL);
	unsigned t = tid[0], i = blk[0] * bd[0] + t;
	if (first) *th = (ks_thread){.pc = 0, .stride = 1};
	for (;;) {
		double v = 0, mine, left;
		switch (th->pc) {
		case 0:
			if (i < c->n) TRY(lm_launch_load(l, KS_X, i, __LINE__, &v));
			TRY(lm_launch_store(l, KS_XY, t, v, __LINE__));
			th->pc = 1;
			break;
		case 1:
			if (th->stride >= bd[0]) {
				th->pc = 4;
				break;
			}
			TRY(lm_launch_sync(l, __LINE__));
			th->pc = 2;
			return LM_LAUNCH_WAIT;
		case 2:
			th->temp = 0;
			th->adds = t >= th->stride;
			TRY(lm_launch_branch(l, th->adds, __LINE__));
			if (th->adds) {
				TRY(lm_launch_load(l, KS_XY, t, __LINE__, &mine));
				TRY(lm_launch_load(l, KS_XY, t - th->stride, __LINE__, &left));
				th->temp = (float)(mine + left);
				TRY(lm_launch_add(l, th->temp, i >= c->n, __LINE__));
			}
			th->pc = 3;
			if (!c->racy) {
				TRY(lm_launch_sync(l, __LINE__));
				return LM_LAUNCH_WAIT;
			}
			break;
		case 3:
			if (th->adds) TRY(lm_launch_store(l, KS_XY, t, th->temp, __LINE__));
			th->stride *= 2;
			th->pc = 1;
			break;
		default:
			if (i < c->n) {
				TRY(lm_launch_load(l, KS_XY, t, __LINE__, &v));
				TRY(lm_launch_store(l, KS_Y, i, v, __LINE__));
			}
			return LM_LAUNCH_DONE;
		}
	}
}

static lm_launch_desc ks_desc(ks_ctx *c, lm_launch_array *arrays, float *x, float *y, unsigned block)
{
	arrays[KS_X] = (lm_launch_array){.name = "X", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32,
	                                 .data = x, .length = c->n, .readonly = true};
	arrays[KS_Y] = (lm_launch_array){.name = "Y", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32,
	                                 .data = y, .length = c->n};
	arrays[KS_XY] = (lm_launch_array){.name = "XY", .space = LM_SPACE_SHARED, .dtype = LM_FLOAT32,
	                                  .length = block};
	return (lm_launch_desc){.fname = "test", .kernel = "ks", .where = "test_simt_external.c",
	                        .grid = {1, 1, 1}, .block = {block, 1, 1}, .arrays = arrays,
	                        .narrays = 3, .dtype = LM_FLOAT32, .run = ks_run, .ctx = c};
}

static const char *array_name(const lm_trace *t, int id)
{
	static lm_trace_array a;
	if (id == LM_TRACE_NO_ARRAY || lm_trace_array_get(t, id, &a) != LM_OK) return "";
	return a.name;
}

static void same_events(const lm_trace *tc, const lm_trace *te)
{
	assert_int_equal(lm_trace_count(te), lm_trace_count(tc));
	assert_int_equal(lm_trace_step_count(te), lm_trace_step_count(tc));
	for (int64_t i = 0; i < lm_trace_count(tc); i++) {
		const lm_trace_event *a = lm_trace_event_get(tc, i), *b = lm_trace_event_get(te, i);
		char what[64];
		snprintf(what, sizeof what, "event %lld", (long long)i);
		if (a->value != b->value || a->cycle != b->cycle || a->latency != b->latency ||
		    a->index != b->index || a->block != b->block || a->step != b->step ||
		    a->mask != b->mask || a->aux != b->aux || a->warp != b->warp || a->lane != b->lane ||
		    a->kind != b->kind || a->space != b->space || a->launch != b->launch ||
		    strcmp(array_name(tc, a->array), array_name(te, b->array)) != 0)
			fail_msg("%s differs: kind %d/%d index %u/%u cycle %llu/%llu value %g/%g", what, a->kind,
			         b->kind, a->index, b->index, (unsigned long long)a->cycle,
			         (unsigned long long)b->cycle, a->value, b->value);
	}
}

static void test_kogge_stone_equals_the_body(void **state)
{
	(void)state;
	static const unsigned cases[][2] = {{16, 16}, {37, 64}, {5, 8}, {1, 1}};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		unsigned n = cases[k][0], block = cases[k][1];
		lm_tensor *x = kt_ints(n, LM_FLOAT32, -5, 9);
		lm_kernel_opts o;
		lm_kernel_opts_init(&o);
		o.backend = "emu";
		o.algo = "kogge-stone";
		o.block = block;
		lm_tensor *yc;
		lm_kernel_info *ic, *ie;
		assert_int_equal(lm_kernel_scan(x, &o, &yc, &ic), LM_OK);
		ks_ctx *c = calloc(1, sizeof *c);
		c->n = n;
		float *y = calloc(n, sizeof *y);
		lm_launch_array arrays[3];
		lm_launch_desc d = ks_desc(c, arrays, lm_tensor_data(x), y, block);
		assert_int_equal(lm_kernel_launch(&d, &ie), LM_OK);
		for (unsigned i = 0; i < n; i++) assert_true(y[i] == ((float *)lm_tensor_data(yc))[i]);
		for (int i = 0; i < lm_kernel_info_counter_count(ic); i++) {
			double v;
			const char *name = lm_kernel_info_counter_name(ic, i);
			assert_true(lm_kernel_info_counter(ie, name, &v));
			if (v != lm_kernel_info_counter_value(ic, i))
				fail_msg("n %u: counter %s: %g, the body's %g", n, name, v,
				         lm_kernel_info_counter_value(ic, i));
		}
		assert_string_equal(lm_kernel_info_source(ie), "emu");
		assert_string_equal(lm_kernel_info_pattern(ie), "launch");
		assert_string_equal(lm_kernel_info_algo(ie), "ks");
		assert_string_equal(lm_kernel_info_impl(ie), "emu: ks (test_simt_external.c)");
		same_events(lm_kernel_info_trace(ic), lm_kernel_info_trace(ie));
		lm_kernel_info_free(ic);
		lm_kernel_info_free(ie);
		lm_tensor_release(yc);
		lm_tensor_release(x);
		free(y);
		free(c);
	}
}

/* ---------------------------------------------------------------- the race check */

static void test_race_found_and_fixed(void **state)
{
	(void)state;
	ks_ctx *c = calloc(1, sizeof *c);
	c->n = 8;
	c->racy = true;
	float x[8] = {1, 1, 1, 1, 1, 1, 1, 1}, y[8] = {0};
	lm_launch_array arrays[3];
	lm_launch_desc d = ks_desc(c, arrays, x, y, 8);
	lm_kernel_info *info = NULL;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_ERR_STATE);
	assert_null(info);
	const char *m = lm_last_error();
	assert_non_null(strstr(m, "test: read-after-write race on shared array 'XY' at index 1 (0-based) in "
	                          "block (0,0,0) (kernel ks): thread (1,0,0) wrote it at line "));
	assert_non_null(strstr(m, "and thread (2,0,0) read it at line "));
	assert_non_null(strstr(m, "in the same barrier phase (phase 1 of the block, counted from 0)"));
	/* the check off: the racy scan runs, and in the emulator's order its sums come out wrong */
	d.no_racecheck = true;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_OK);
	assert_true(y[7] != 8);
	lm_kernel_info_free(info);
	assert_true(lm_kernel_set_racecheck(false));
	d.no_racecheck = false;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_OK);
	lm_kernel_info_free(info);
	assert_false(lm_kernel_set_racecheck(true));
	assert_true(lm_kernel_racecheck());
	/* the barrier back: no race, the right sums */
	c->racy = false;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_OK);
	for (int i = 0; i < 8; i++) assert_true(y[i] == (float)(i + 1));
	lm_kernel_info_free(info);
	free(c);
}

/* The shipped kernels run with the race check on (the default) and pass: they are race-free. */
static void test_shipped_kernels_are_race_free(void **state)
{
	(void)state;
	assert_true(lm_kernel_racecheck());
	lm_tensor *x = kt_ints(1000, LM_FLOAT32, 0, 9);
	static const char *const scans[] = {"kogge-stone", "brent-kung", "hierarchical"};
	static const char *const reduces[] = {"naive", "convergent", "shared", "coarsened"};
	lm_kernel_opts o;
	lm_tensor *y;
	lm_kernel_info *info;
	for (int k = 0; k < 3; k++) {
		lm_kernel_opts_init(&o);
		o.backend = "emu";
		o.algo = scans[k];
		o.block = 64;
		assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
		lm_tensor_release(y);
		lm_kernel_info_free(info);
	}
	for (int k = 0; k < 4; k++) {
		lm_kernel_opts_init(&o);
		o.backend = "emu";
		o.algo = reduces[k];
		assert_int_equal(lm_kernel_reduce(x, &o, &y, &info), LM_OK);
		lm_tensor_release(y);
		lm_kernel_info_free(info);
	}
	lm_tensor_release(x);
}

/* ---------------------------------------------------------------- failures of a thread */

typedef struct probe_ctx {
	int what;
	int calls;
	int bad; /* a line of probe_run where a call did not fail as it should (no asserts in there) */
	float data[4];
} probe_ctx;

enum { P_OOB, P_READONLY, P_FAIL, P_DEADLOCK, P_NO_SYNC, P_TWO_SYNCS, P_INTERRUPT, P_STORE_RANGE,
       P_COUNT };

static int probe_run(void *ctx, lm_launch *l, int thread, bool first)
{
	probe_ctx *c = ctx;
	double v = 0;
	c->calls++;
	switch (c->what) {
	case P_OOB:
		if (thread == 3) {
			if (lm_launch_load(l, 0, 4, 77, &v) != LM_ERR_INDEX || !lm_launch_failed(l)) c->bad = __LINE__;
			/* every later call of the failed thread fails too */
			if (lm_launch_store(l, 1, 0, 1, 78) == LM_OK) c->bad = __LINE__;
			return LM_LAUNCH_FAULT;
		}
		return LM_LAUNCH_DONE;
	case P_READONLY:
		return lm_launch_store(l, 0, 1, 2, 12) ? LM_LAUNCH_FAULT : LM_LAUNCH_DONE;
	case P_FAIL:
		if (thread == 2) return lm_launch_fail(l, LM_ERR_ARG, "my own reason"), LM_LAUNCH_FAULT;
		return LM_LAUNCH_DONE;
	case P_DEADLOCK:
		if (thread == 0 && first) return lm_launch_sync(l, 40) ? LM_LAUNCH_FAULT : LM_LAUNCH_WAIT;
		return LM_LAUNCH_DONE;
	case P_NO_SYNC: return LM_LAUNCH_WAIT;
	case P_TWO_SYNCS:
		if (lm_launch_sync(l, 3) != LM_OK) c->bad = __LINE__;
		return lm_launch_sync(l, 4) ? LM_LAUNCH_FAULT : LM_LAUNCH_WAIT;
	case P_INTERRUPT:
		if (c->calls == 3) lm_interrupt();
		for (int k = 0; k < 3000; k++)
			if (lm_launch_load(l, 0, 0, 9, &v)) return LM_LAUNCH_FAULT;
		return LM_LAUNCH_DONE;
	case P_STORE_RANGE:
		return lm_launch_store(l, 2, 0, 300, 5) ? LM_LAUNCH_FAULT : LM_LAUNCH_DONE;
	default: return LM_LAUNCH_DONE;
	}
}

static lm_status probe(probe_ctx *c, int what, unsigned threads)
{
	static unsigned char bytes[2];
	lm_launch_array a[3] = {
		{.name = "in", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = c->data, .length = 4,
		 .readonly = true},
		{.name = "out", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = c->data, .length = 4},
		{.name = "b", .space = LM_SPACE_GLOBAL, .dtype = LM_UINT8, .data = bytes, .length = 2},
	};
	c->what = what;
	c->calls = 0;
	lm_launch_desc d = {.fname = "probe", .kernel = "p", .grid = {2, 1, 1}, .block = {threads, 1, 1},
	                    .arrays = a, .narrays = 3, .run = probe_run, .ctx = c};
	lm_kernel_info *info = NULL;
	lm_status st = lm_kernel_launch(&d, &info);
	lm_kernel_info_free(info);
	if (st == LM_OK) assert_non_null(info);
	return st;
}

static void test_failures_name_the_thread(void **state)
{
	(void)state;
	probe_ctx c = {0};
	assert_int_equal(probe(&c, P_OOB, 8), LM_ERR_INDEX);
	assert_int_equal(c.bad, 0);
	assert_string_equal(lm_last_error(), "probe: out-of-bounds load of global array 'in' at index 4 "
	                    "(length 4; arrays are indexed from 0, as in CUDA C) at line 77 by thread "
	                    "(3,0,0) in block (0,0,0) (kernel p)");
	assert_int_equal(probe(&c, P_READONLY, 2), LM_ERR_ARG);
	assert_string_equal(lm_last_error(), "probe: store to read-only global array 'in' at index 1 at "
	                    "line 12 by thread (0,0,0) in block (0,0,0) (kernel p)");
	assert_int_equal(probe(&c, P_FAIL, 4), LM_ERR_ARG);
	assert_string_equal(lm_last_error(), "probe: my own reason by thread (2,0,0) in block (0,0,0) (kernel p)");
	assert_int_equal(probe(&c, P_DEADLOCK, 4), LM_ERR_STATE);
	assert_non_null(strstr(lm_last_error(), "deadlock in block (0,0,0) (kernel p): warp 0 lanes 0 wait at "
	                                        "__syncthreads on line 40, which warp 0 lanes 1-3 never reach"));
	assert_int_equal(probe(&c, P_NO_SYNC, 1), LM_ERR_INTERNAL);
	assert_non_null(strstr(lm_last_error(), "returned 0 without lm_launch_sync"));
	assert_int_equal(probe(&c, P_TWO_SYNCS, 1), LM_ERR_STATE);
	assert_non_null(strstr(lm_last_error(), "a second barrier at line 4 before the thread's run returned"));
	assert_int_equal(c.bad, 0);
	assert_int_equal(probe(&c, P_STORE_RANGE, 1), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "store of 300 to global array 'b' at index 0 at line 5: the "
	                                        "value does not fit in uint8"));
	assert_int_equal(probe(&c, P_INTERRUPT, 4), LM_ERR_INTERRUPTED);
	assert_non_null(strstr(lm_last_error(), "interrupted"));
	lm_interrupt_clear();
	/* the emulator works again, and runs every thread of every block */
	assert_int_equal(probe(&c, P_COUNT, 1024), LM_OK);
	assert_int_equal(c.calls, 2048);
}

static int nothing(void *ctx, lm_launch *l, int thread, bool first)
{
	(void)ctx, (void)l, (void)thread, (void)first;
	return LM_LAUNCH_DONE;
}

static void test_bad_descriptions(void **state)
{
	(void)state;
	float f[4];
	lm_launch_array big[2] = {
		{.name = "a", .space = LM_SPACE_SHARED, .dtype = LM_FLOAT64, .length = 4096},
		{.name = "b", .space = LM_SPACE_SHARED, .dtype = LM_FLOAT32, .length = 4097},
	};
	lm_launch_desc d = {.fname = "t", .kernel = "k", .grid = {1, 1, 1}, .block = {4, 1, 1},
	                    .arrays = big, .narrays = 2, .run = nothing};
	lm_kernel_info *info = NULL;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_ERR_ARG);
	assert_string_equal(lm_last_error(), "t: shared memory: 'b' (4097 x float32 = 16388 bytes) brings "
	                    "the block's shared arrays to 49156 bytes, over the limit of 48 KiB (49152 "
	                    "bytes) per block");
	d.narrays = 1;
	d.block[0] = 1025;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "exceeds the limit of 1024 threads per block"));
	d.block[0] = 4;
	lm_launch_array two[2] = {
		{.name = "a", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = f, .length = 4},
		{.name = "a", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = f, .length = 4},
	};
	d.arrays = two;
	d.narrays = 2;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_ERR_ARG);
	assert_string_equal(lm_last_error(), "t: two arrays are called 'a'");
	two[1].name = "b";
	two[1].dtype = LM_DTYPE_COUNT;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_ERR_DTYPE);
	two[1].dtype = LM_FLOAT32;
	two[1].data = NULL;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "cannot be emulated"));
	d.run = NULL;
	assert_int_equal(lm_kernel_launch(&d, &info), LM_ERR_ARG);
	assert_null(info);
	assert_int_equal(lm_kernel_launch(NULL, &info), LM_ERR_ARG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kogge_stone_equals_the_body),
		cmocka_unit_test(test_race_found_and_fixed),
		cmocka_unit_test(test_shipped_kernels_are_race_free),
		cmocka_unit_test(test_failures_name_the_thread),
		cmocka_unit_test(test_bad_descriptions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
