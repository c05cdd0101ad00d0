/*
 * test_trace.c — the trace as scenes and the Lua binding read it: fixed-size events, the cap and
 * its "truncated" flag (counters stay complete), filters, steps and launches that index the
 * events, and the latency model (defaults, validation, its effect on the cycles).
 */
#include "ktest.h"

static lm_kernel_info *scan(int64_t n, int64_t block, const char *algo, int64_t cap)
{
	lm_manual_seed(42); /* the same input every time */
	lm_tensor *x = kt_ints(n, LM_FLOAT32, 0, 4), *y;
	lm_kernel_info *info;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.algo = algo;
	o.block = block;
	o.trace_cap = cap;
	assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
	lm_tensor_release(y);
	lm_tensor_release(x);
	return info;
}

static void test_record_size(void **state)
{
	(void)state;
	assert_int_equal(sizeof(lm_trace_event), 56);
}

static void test_truncation(void **state)
{
	(void)state;
	lm_kernel_info *full = scan(256, 256, "kogge-stone", 0), *cut = scan(256, 256, "kogge-stone", 1000);
	const lm_trace *tf = lm_kernel_info_trace(full), *tc = lm_kernel_info_trace(cut);
	assert_false(lm_trace_truncated(tf));
	assert_true(lm_trace_truncated(tc));
	assert_int_equal(lm_trace_count(tc), 1000);
	assert_int_equal(lm_trace_cap(tc), 1000);
	assert_int_equal(lm_trace_seen(tc), lm_trace_count(tf));
	/* the kept events are the first ones, and the counters are complete */
	for (int64_t i = 0; i < 1000; i++)
		assert_memory_equal(lm_trace_event_get(tc, i), lm_trace_event_get(tf, i), sizeof(lm_trace_event));
	for (int i = 0; i < lm_kernel_info_counter_count(full); i++)
		assert_true(lm_kernel_info_counter_value(full, i) == lm_kernel_info_counter_value(cut, i));
	assert_null(lm_trace_event_get(tc, 1000));
	assert_int_equal(lm_last_status(), LM_ERR_INDEX);
	lm_kernel_info_free(full);
	lm_kernel_info_free(cut);
}

static void test_filters_and_steps(void **state)
{
	(void)state;
	lm_kernel_info *info = scan(64, 32, "brent-kung", 0); /* 32 threads: one warp */
	lm_trace *t = lm_trace_retain(lm_kernel_info_trace(info));
	lm_kernel_info_free(info); /* the trace outlives the info it came with */
	lm_trace_filter f;
	lm_trace_filter_init(&f);
	assert_int_equal(lm_trace_find(t, &f, 0), 0);
	/* every add event, found by filter, lies in a step whose summary counts it */
	f.kind = LM_TRACE_ADD;
	int64_t adds = 0;
	for (int64_t i = lm_trace_find(t, &f, 0); i >= 0; i = lm_trace_find(t, &f, i + 1)) adds++;
	assert_int_equal(adds, 2 * 64 - 2 - 6);
	int64_t step_adds = 0, events = 0;
	uint64_t end = 0;
	for (int64_t s = 0; s < lm_trace_step_count(t); s++) {
		lm_trace_step st;
		assert_int_equal(lm_trace_step_get(t, s, &st), LM_OK);
		assert_int_equal(st.step, (uint32_t)s);
		assert_int_equal(st.first, events); /* steps tile the events in order */
		assert_true(st.start_cycle == end);
		end = st.start_cycle + st.cycles;
		events += st.count;
		step_adds += st.adds;
		for (int64_t i = st.first; i < st.first + st.count; i++)
			assert_int_equal(lm_trace_event_get(t, i)->step, (uint32_t)s);
		assert_int_equal(st.barrier, s + 1 < lm_trace_step_count(t));
	}
	assert_int_equal(events, lm_trace_count(t));
	assert_int_equal(step_adds, adds);
	/* filter by step and warp and lane: lane 0 adds in the up-sweep's first step */
	lm_trace_filter_init(&f);
	f.step = 1;
	f.lane = 0;
	f.kind = LM_TRACE_ADD;
	int64_t i = lm_trace_find(t, &f, 0);
	assert_true(i >= 0);
	assert_true(lm_trace_event_get(t, i)->value == (float)lm_trace_event_get(t, i)->value);
	f.warp = 1; /* there is no warp 1 */
	assert_int_equal(lm_trace_find(t, &f, 0), -1);
	/* barrier events: every lane of the block waits at each barrier */
	lm_trace_filter_init(&f);
	f.kind = LM_TRACE_BARRIER;
	int64_t waits = 0;
	for (int64_t k = lm_trace_find(t, &f, 0); k >= 0; k = lm_trace_find(t, &f, k + 1)) waits++;
	assert_int_equal(waits, 32 * (lm_trace_step_count(t) - 1));
	/* arrays by name */
	bool seen_x = false, seen_xy = false;
	for (int a = 0; a < lm_trace_array_count(t); a++) {
		lm_trace_array ar;
		assert_int_equal(lm_trace_array_get(t, a, &ar), LM_OK);
		seen_x |= strcmp(ar.name, "X") == 0 && ar.space == LM_SPACE_GLOBAL && ar.length == 64;
		seen_xy |= strcmp(ar.name, "XY") == 0 && ar.space == LM_SPACE_SHARED && ar.length == 64;
	}
	assert_true(seen_x && seen_xy);
	assert_string_equal(lm_trace_name(t), "scan brent-kung inclusive float32");
	assert_int_equal(lm_trace_dtype(t), LM_FLOAT32);
	lm_trace_release(t);
}

static void test_names(void **state)
{
	(void)state;
	const char *kinds[] = {"load", "store", "add", "atomic", "barrier", "branch"};
	for (int k = 0; k < LM_TRACE_KIND_COUNT; k++) {
		int got = -1;
		assert_string_equal(lm_trace_kind_name(k), kinds[k]);
		assert_int_equal(lm_trace_kind_from_name(kinds[k], &got), LM_OK);
		assert_int_equal(got, k);
	}
	int got;
	KT_EXPECT_ERROR(lm_trace_kind_from_name("fetch", &got), LM_ERR_ARG, "unknown event kind 'fetch'");
	assert_string_equal(lm_trace_space_name(LM_SPACE_SHARED), "shared");
	assert_string_equal(lm_trace_kind_name(99), "?");
}

static void test_latency_model(void **state)
{
	(void)state;
	lm_latency_model m, d;
	lm_kernel_latency_default(&d);
	assert_true(d.global == 400 && d.shared == 20 && d.constant == 4 && d.arith == 4 &&
	            d.barrier == 20 && d.sms == 1 && d.issue == 1 && d.sector == 2 &&
	            d.warps_per_sm == 64 && d.blocks_per_sm == 32 && d.shared_per_sm == 65536);
	lm_kernel_latency_get(&m);
	assert_memory_equal(&m, &d, sizeof m);
	lm_kernel_info *slow = scan(32, 32, "kogge-stone", 0);
	/* a Kogge-Stone step with a 0-cycle memory, free issue and memory pipe: only the arithmetic and the
	 * barriers remain */
	m.global = 0;
	m.shared = 0;
	m.issue = 0;
	m.sector = 0;
	assert_int_equal(lm_kernel_latency_set(&m), LM_OK);
	lm_kernel_info *fast = scan(32, 32, "kogge-stone", 0);
	lm_trace_latency(lm_kernel_info_trace(fast), &d);
	assert_true(d.global == 0 && d.issue == 0);
	/* 5 steps with a branch and an add (4 cycles each), 5 without adds (the stores), 10 barriers */
	assert_int_equal(kt_counter(fast, "modelled_cycles"), 5 * (4 + 4) + 10 * 20 + 0);
	assert_true(kt_counter(slow, "modelled_cycles") > kt_counter(fast, "modelled_cycles"));
	m.global = -1;
	KT_EXPECT_ERROR(lm_kernel_latency_set(&m), LM_ERR_ARG,
	                "kernels.latency: global = -1 must be a whole number of cycles");
	m.global = 400;
	m.sms = 0;
	KT_EXPECT_ERROR(lm_kernel_latency_set(&m), LM_ERR_ARG, "kernels.latency: sms = 0 must be an integer in 1..65536");
	m.sms = 2.5;
	KT_EXPECT_ERROR(lm_kernel_latency_set(&m), LM_ERR_ARG, "sms = 2.5");
	m.sms = 1;
	m.warps_per_sm = 65;
	KT_EXPECT_ERROR(lm_kernel_latency_set(&m), LM_ERR_ARG, "warps_per_sm = 65 must be an integer in 1..64");
	m.warps_per_sm = 64;
	m.shared_per_sm = 1024;
	KT_EXPECT_ERROR(lm_kernel_latency_set(&m), LM_ERR_ARG, "shared_per_sm = 1024 must be a number of bytes in 49152..");
	m.shared_per_sm = 65536;
	m.sector = NAN;
	KT_EXPECT_ERROR(lm_kernel_latency_set(&m), LM_ERR_ARG, "sector = nan must be a whole number of cycles");
	/* two multiprocessors: two blocks of the same work run side by side (with one block
	 * resident per SM; else the one SM overlaps them as well) */
	lm_kernel_latency_reset();
	lm_kernel_latency_get(&m);
	m.blocks_per_sm = 1;
	assert_int_equal(lm_kernel_latency_set(&m), LM_OK);
	lm_kernel_info *one = scan(64, 32, "kogge-stone", 0);
	m.sms = 2;
	assert_int_equal(lm_kernel_latency_set(&m), LM_OK);
	lm_kernel_info *two = scan(64, 32, "kogge-stone", 0);
	assert_true(kt_counter(two, "modelled_cycles") < kt_counter(one, "modelled_cycles"));
	lm_kernel_latency_reset();
	lm_kernel_info_free(one);
	lm_kernel_info_free(two);
	lm_kernel_info_free(slow);
	lm_kernel_info_free(fast);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_size),  cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_filters_and_steps), cmocka_unit_test(test_names),
		cmocka_unit_test(test_latency_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
