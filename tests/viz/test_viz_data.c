/*
 * test_viz_data.c — what the scenes read out of traces, checked against the textbook without a
 * window: the data flow of Kogge-Stone, Brent-Kung and the naive reduction (which elements each
 * add reads and writes, per step), an input read back from its trace, the counters of a run made
 * from a trace alone; options (parsing, checking against a scene's table), the palette, and an
 * empty trace refused by every scene (this one opens an offscreen window).
 * Read next: test_scenes.lua (the pictures), src/viz/scenes/addnet.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/trace.h"
#include "testutil.h"
#include "viz/scenes/vzs.h"

static lm_viz_run traced(const char *pattern, const char *algo, int64_t n, int64_t block)
{
	lm_viz_run r;
	double x[2048];
	for (int64_t i = 0; i < n; i++) x[i] = (double)(i + 1);
	lm_status st = strcmp(pattern, "scan") == 0 ? vzs_run_scan(x, n, algo, block, false, &r, "test")
	                                            : vzs_run_reduce(x, n, algo, block, &r, "test");
	if (st != LM_OK) fail_msg("%s", lm_last_error());
	return r;
}

/* Kogge-Stone: in step s (stride 2^(s-1)) every thread t >= stride adds XY[t - stride] into XY[t]. */
static void test_kogge_stone_flow(void **state)
{
	(void)state;
	lm_viz_run r = traced("scan", "kogge-stone", 16, 0);
	vzs_addnet n;
	assert_int_equal(vzs_addnet_build(r.trace, 0, 0, &n), LM_OK);
	assert_int_equal(n.nsteps, 4);
	assert_int_equal(n.length, 16);
	assert_int_equal(n.nadds, 49);
	for (int s = 0; s < 4; s++) {
		int stride = 1 << s;
		const vzs_step *st = &n.steps[s];
		assert_int_equal(st->count, 16 - stride);
		assert_int_equal(st->stride, stride);
		for (int i = st->first; i < st->first + st->count; i++) {
			const vzs_add *a = &n.adds[i];
			assert_true(a->thread >= stride);
			assert_int_equal(a->dst, a->thread);
			assert_int_equal(a->src[0], a->thread);
			assert_int_equal(a->src[1], a->thread - stride);
		}
	}
	double v[16];
	vzs_addnet_values(&n, 4, v);
	for (int i = 0; i < 16; i++) assert_true(v[i] == (i + 1) * (i + 2) / 2);
	vzs_addnet_values(&n, 0, v);
	for (int i = 0; i < 16; i++) assert_true(v[i] == i + 1);
	vzs_addnet_free(&n);
	vz_run_clear(&r);
}

/* Brent-Kung on 16 elements (8 threads): up-sweep strides 1, 2, 4, 8 write (t + 1) 2 stride - 1
 * from the element stride before; the down-sweep (4, 2, 1) writes index + stride. */
static void test_brent_kung_flow(void **state)
{
	(void)state;
	lm_viz_run r = traced("scan", "brent-kung", 16, 8);
	vzs_addnet n;
	assert_int_equal(vzs_addnet_build(r.trace, 0, 0, &n), LM_OK);
	assert_int_equal(n.nsteps, 7);
	assert_int_equal(n.nadds, 26);
	static const int strides[7] = {1, 2, 4, 8, 4, 2, 1};
	for (int s = 0; s < 7; s++) {
		const vzs_step *st = &n.steps[s];
		int stride = strides[s];
		assert_int_equal(st->stride, stride);
		for (int i = st->first; i < st->first + st->count; i++) {
			const vzs_add *a = &n.adds[i];
			int index = (a->thread + 1) * 2 * stride - 1;
			if (s < 4) {
				assert_int_equal(a->dst, index);
				assert_int_equal(a->src[0], index);
				assert_int_equal(a->src[1], index - stride);
			} else {
				assert_int_equal(a->dst, index + stride);
				assert_int_equal(a->src[0], index + stride);
				assert_int_equal(a->src[1], index);
			}
		}
	}
	vzs_addnet_free(&n);
	vz_run_clear(&r);
}

/* The naive reduction: thread t owns element 2t and adds element 2t + stride, for t % stride == 0;
 * the active lanes per warp follow (a warp issues the add while any of its threads is active). */
static void test_reduce_flow(void **state)
{
	(void)state;
	lm_viz_run r = traced("reduce", "naive", 128, 0);
	vzs_addnet n;
	assert_int_equal(vzs_addnet_build(r.trace, 0, 0, &n), LM_OK);
	assert_int_equal(n.threads, 64);
	assert_int_equal(n.nsteps, 7);
	for (int s = 0; s < 7; s++) {
		int stride = 1 << s;
		const vzs_step *st = &n.steps[s];
		assert_int_equal(st->count, 64 / stride);
		assert_int_equal(st->warps_issued, stride <= 32 ? 2 : 1);
		assert_int_equal(st->lanes, 64 / stride);
		for (int i = st->first; i < st->first + st->count; i++) {
			const vzs_add *a = &n.adds[i];
			assert_int_equal(a->thread % stride, 0);
			assert_int_equal(a->dst, 2 * a->thread);
			assert_int_equal(a->src[1], 2 * a->thread + stride);
		}
	}
	vzs_addnet_free(&n);
	/* the convergent kernel keeps the active threads at the front: whole warps retire */
	lm_viz_run c = traced("reduce", "convergent", 128, 0);
	assert_int_equal(vzs_addnet_build(c.trace, 0, 0, &n), LM_OK);
	for (int s = 0; s < 7; s++) assert_int_equal(n.steps[s].warps_issued, s == 0 ? 2 : 1);
	vzs_addnet_free(&n);
	vz_run_clear(&c);
	vz_run_clear(&r);
}

static void test_input_and_counters_from_a_trace(void **state)
{
	(void)state;
	lm_viz_run r = traced("scan", "brent-kung", 12, 0);
	int64_t n;
	double *x = vz_trace_input(r.trace, "X", &n);
	assert_non_null(x);
	assert_int_equal(n, 12);
	for (int i = 0; i < 12; i++) assert_true(x[i] == i + 1);
	vz_free(x); /* the visualizer's heap (vz.h) */
	assert_null(vz_trace_input(r.trace, "nope", &n));
	assert_non_null(strstr(lm_last_error(), "no global array 'nope'"));
	/* counters counted from the trace alone equal the kernel's own */
	lm_viz_run t;
	lm_viz_run_from_trace(&t, r.trace);
	assert_string_equal(t.pattern, "scan");
	assert_string_equal(t.algo, "brent-kung");
	static const char *const same[] = {"steps", "adds", "modelled_cycles", "shared_loads",
	                                   "shared_stores", "global_loads", "barriers", NULL};
	for (int i = 0; same[i]; i++) {
		if (vz_run_counter(&t, same[i], -1) != vz_run_counter(&r, same[i], -2))
			fail_msg("%s: %g from the trace, %g from the kernel", same[i], vz_run_counter(&t, same[i], -1),
			         vz_run_counter(&r, same[i], -2));
	}
	char buf[96];
	assert_string_equal(vz_run_source_label(&r, buf, sizeof buf), "emulated (modelled cycles)");
	lm_viz_run cpu = r;
	snprintf(cpu.source, sizeof cpu.source, "cpu");
	snprintf(cpu.device, sizeof cpu.device, "AMD EPYC");
	assert_string_equal(vz_run_source_label(&cpu, buf, sizeof buf), "CPU AMD EPYC, measured");
	snprintf(cpu.source, sizeof cpu.source, "cuda");
	snprintf(cpu.device, sizeof cpu.device, "NVIDIA H100");
	assert_string_equal(vz_run_source_label(&cpu, buf, sizeof buf), "CUDA NVIDIA H100, measured");
	vz_run_clear(&r);
}

/* The steps counter from a trace alone is the kernel's own when a thread makes several dependent
 * adds in one barrier phase (the coarsened reduction: its first phase is coarsen-1 steps deep) and
 * when a scan takes several launches (hierarchical). */
static void test_steps_from_a_trace(void **state)
{
	(void)state;
	static const char *const runs[][2] = {{"reduce", "coarsened"}, {"reduce", "shared"},
	                                      {"scan", "hierarchical"}, {"scan", "kogge-stone"}};
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		lm_viz_run r = traced(runs[i][0], runs[i][1], 2000, 64), t;
		lm_viz_run_from_trace(&t, r.trace);
		double want = vz_run_counter(&r, "steps", -2), got = vz_run_counter(&t, "steps", -1);
		if (got != want || want <= 0)
			fail_msg("%s %s: steps %g from the trace, %g from the kernel", runs[i][0], runs[i][1], got,
			         want);
		vz_run_clear(&r); /* t borrowed r's trace */
	}
}

static void test_options(void **state)
{
	(void)state;
	lm_viz_opts o;
	memset(&o, 0, sizeof o);
	assert_int_equal(lm_viz_opts_parse(&o, "n=8,input=pmpp,step=2", "t"), LM_OK);
	assert_int_equal(o.n, 3);
	assert_true(o.kv[0].is_number && o.kv[0].num == 8);
	assert_false(o.kv[1].is_number);
	assert_int_equal(vz_opts_check(&vz_scene_scan, &o, "t"), LM_OK);
	assert_int_equal(vz_opt_int(&o, "n", 0), 8);
	assert_string_equal(vz_opt_string(&o, "input", ""), "pmpp");
	assert_int_equal(vz_opt_int(&o, "block", 7), 7);
	assert_int_equal(vz_opts_check(&vz_scene_reduce, &o, "t"), LM_OK);
	assert_int_equal(vz_opts_check(&vz_scene_divergence, &o, "t"), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "t: unknown option 'n' for scene 'divergence' (its options: pattern, warps, block, step"));
	memset(&o, 0, sizeof o);
	assert_int_equal(lm_viz_opts_parse(&o, "n=8,n=9", "t"), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "option n given twice"));
	memset(&o, 0, sizeof o);
	assert_int_equal(lm_viz_opts_parse(&o, "warps=1e9", "t"), LM_OK);
	assert_int_equal(vz_opts_check(&vz_scene_divergence, &o, "t"), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "option warps of scene 'divergence' must lie in 1..256, got 1e9"));
	memset(&o, 0, sizeof o);
	assert_int_equal(lm_viz_opts_parse(&o, "pattern=diagonal", "t"), LM_OK);
	assert_int_equal(vz_opts_check(&vz_scene_divergence, &o, "t"), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "must be one of even-odd|half-warp|data|warp|none, got 'diagonal'"));
	assert_int_equal(lm_viz_opts_parse(&o, "=3", "t"), LM_ERR_ARG);
}

static void test_palette(void **state)
{
	(void)state;
	vz_color a = vz_viridis(0), b = vz_viridis(1), m = vz_viridis(0.5);
	assert_int_equal(a.r, 68), assert_int_equal(a.g, 1), assert_int_equal(a.b, 84);
	assert_int_equal(b.r, 253), assert_int_equal(b.g, 231), assert_int_equal(b.b, 37);
	assert_true(m.g > 130 && m.g < 150 && m.b > 135); /* teal in the middle */
	vz_color n = vz_viridis(NAN);
	assert_int_equal(n.r, 68);
	assert_int_equal(vz_okabe_ito[VZ_OI_ORANGE].r, 230);
	assert_int_equal(vz_okabe_ito[VZ_OI_BLUE].b, 178);
	for (int i = 0; i < 7; i++) /* categories never repeat within seven */
		for (int j = 0; j < i; j++) {
			vz_color ci = vz_category(i), cj = vz_category(j);
			assert_true(ci.r != cj.r || ci.g != cj.g || ci.b != cj.b);
		}
}

/* A trace with no events (made as the emulator makes one, then left empty). */
static void test_empty_trace(void **state)
{
	(void)state;
	lm_latency_model lat;
	lm_kernel_latency_default(&lat);
	static const char *const names[] = {"scan kogge-stone inclusive float32", "reduce naive float32",
	                                    "histogram privatized 4 bins int32", "divergence even-odd 1 warps"};
	for (int i = 0; i < 4; i++) {
		lm_trace *t = lmi_trace_new(names[i], LM_FLOAT32, 16, &lat);
		assert_non_null(t);
		lm_viz_run r;
		lm_viz_run_from_trace(&r, t);
		lm_viz_opts o = {0};
		if (lm_viz_show(&r, 1, NULL, &o, "viz.show") == LM_OK) fail_msg("%s: shown", names[i]);
		if (!strstr(lm_last_error(), "viz.show: the trace is empty (0 events)"))
			fail_msg("%s: %s", names[i], lm_last_error());
		lm_trace_release(t);
	}
	lm_viz_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kogge_stone_flow),
		cmocka_unit_test(test_brent_kung_flow),
		cmocka_unit_test(test_reduce_flow),
		cmocka_unit_test(test_input_and_counters_from_a_trace),
		cmocka_unit_test(test_steps_from_a_trace),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_palette),
		cmocka_unit_test(test_empty_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
