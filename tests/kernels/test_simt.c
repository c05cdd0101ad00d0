/*
 * test_simt.c — the SIMT emulator on small kernels written for the tests: thread and block indices
 * in 1-, 2- and 3-D, 2^17 threads in one launch, shared memory and its 48 KiB limit, global and
 * shared atomics with their serialisation, constant memory, divergence, and the failures a GPU
 * would not report so kindly: out-of-bounds accesses, stores to read-only arrays, barrier deadlocks
 * and mismatches, interrupts. Each failure must come back as a status and a message, and the
 * emulator must work again afterwards.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/simt.h"
#include "kernels/trace.h"
#include "ktest.h"
#include "lumen/launch.h"

/* ---------------------------------------------------------------- kernels for the tests */

/* Every thread writes threadIdx, blockIdx (x, y, z) at its global linear id. */
KERNEL write_ids(int *out)
{
	unsigned tpb = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
	unsigned b = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
	unsigned g = b * tpb + t;
	STORE(out, g * 6 + 0, (int)threadIdx.x);
	STORE(out, g * 6 + 1, (int)threadIdx.y);
	STORE(out, g * 6 + 2, (int)threadIdx.z);
	STORE(out, g * 6 + 3, (int)blockIdx.x);
	STORE(out, g * 6 + 4, (int)blockIdx.y);
	STORE(out, g * 6 + 5, (int)blockIdx.z);
}

KERNEL write_global_id(int *out)
{
	unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
	STORE(out, g, (int)g);
}

/* Reverses each block's section through shared memory. */
KERNEL reverse_block(const int *in, int *out)
{
	SHARED(int, buf, 64);
	unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
	STORE(buf, t, LOAD(in, base + t));
	__syncthreads();
	STORE(out, base + t, LOAD(buf, blockDim.x - 1 - t));
}

KERNEL too_much_shared(double *out)
{
	SHARED(double, big, 6145); /* 49160 bytes */
	STORE(big, threadIdx.x, 1.0);
	STORE(out, 0, LOAD(big, 0));
}

KERNEL dyn_shared_sum(const float *in, float *out)
{
	SHARED_DYN(float, s);
	unsigned t = threadIdx.x;
	STORE(s, t, LOAD(in, t));
	__syncthreads();
	if (t == 0) {
		float acc = 0;
		for (unsigned k = 0; k < blockDim.x; k++) acc = ADD(acc, LOAD(s, k));
		STORE(out, 0, acc);
	}
}

/* Everyone adds 1 to out[0] and to out[1 + t % 4]. */
KERNEL atomics_global(int *out)
{
	ATOMIC_ADD(out, 0, 1);
	ATOMIC_ADD(out, 1 + threadIdx.x % 4, 1);
}

/* A privatised histogram: counts in shared memory, merged once per bin. */
KERNEL atomics_shared(const int *bins, int *hist)
{
	SHARED(int, h, 4);
	if (threadIdx.x < 4) STORE(h, threadIdx.x, 0);
	__syncthreads();
	ATOMIC_ADD(h, LOAD(bins, blockIdx.x * blockDim.x + threadIdx.x), 1);
	__syncthreads();
	if (threadIdx.x < 4) ATOMIC_ADD(hist, threadIdx.x, LOAD(h, threadIdx.x));
}

CONSTANT(float, cmask, 8);

KERNEL constant_loads(float *out)
{
	float a = LOAD(cmask, 0);               /* every lane, one address: a broadcast */
	float b = LOAD(cmask, threadIdx.x % 8); /* eight addresses: serialised */
	STORE(out, threadIdx.x, ADD(a, b));
}

KERNEL oob_read(const float *X, float *Y)
{
	unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
	STORE(Y, g, LOAD(X, g + 1)); /* the last thread reads one past the end */
}

KERNEL oob_shared(int *out)
{
	SHARED(int, buf, 32);
	STORE(buf, threadIdx.x + 1, 1); /* thread 31 writes buf[32] */
	__syncthreads();
	STORE(out, threadIdx.x, LOAD(buf, threadIdx.x));
}

KERNEL store_to_input(const float *X, float *Y)
{
	STORE(X, threadIdx.x, 0.0f); /* X is registered read-only */
	STORE(Y, threadIdx.x, 1.0f);
}

/* In block 1, only the first half of the threads reach the barrier. */
KERNEL half_barrier(int *out)
{
	if (blockIdx.x == 0 || threadIdx.x < 16) __syncthreads();
	STORE(out, blockIdx.x * blockDim.x + threadIdx.x, 1);
}

KERNEL two_barriers(int *out)
{
	if (threadIdx.x < 8)
		__syncthreads();
	else
		__syncthreads();
	STORE(out, threadIdx.x, 1);
}

KERNEL even_odd(const float *in, float *out)
{
	unsigned t = threadIdx.x;
	float v = LOAD(in, t);
	if (BRANCH(t % 2 == 0))
		v = ADD(v, 1.0f);
	else
		v = ADD(v, 2.0f);
	STORE(out, t, v);
}

KERNEL endless(float *out)
{
	float v = 0;
	for (;;) v = ADD(v, LOAD(out, 0));
}

/* Reads an element of shared memory that no thread wrote (thread 0's): the initcheck. */
KERNEL uninit_shared(int *out)
{
	SHARED(int, buf, 32);
	unsigned t = threadIdx.x;
	if (t > 0) STORE(buf, t, (int)t);
	__syncthreads();
	STORE(out, t, LOAD(buf, t));
}

/* Reads the neighbour's element without a barrier: the neighbour writes it later in the
 * emulator's order, so the read finds nothing written, but the fault is the missing barrier (a
 * race), not a missing store. */
KERNEL neighbour_no_barrier(int *out)
{
	SHARED(int, buf, 32);
	unsigned t = threadIdx.x;
	STORE(buf, t, (int)t);
	STORE(out, t, LOAD(buf, (t + 1) % 32));
}

/* Every block writes the same elements (the index forgot blockIdx). */
KERNEL blocks_collide(int *out) { STORE(out, threadIdx.x, (int)blockIdx.x); }

/* A read-modify-write of a global counter by every block. */
KERNEL blocks_rmw(int *out) { STORE(out, threadIdx.x, LOAD(out, threadIdx.x) + 1); }

/* Reads every element of in (the initcheck of global arrays with init flags). */
KERNEL read_all(const int *in, int *out) { STORE(out, threadIdx.x, LOAD(in, threadIdx.x)); }

/* Entry points: unpack the arguments and call the kernel (what cudaLaunchKernel does). */
typedef struct args {
	void *a, *b;
} args;
static void e_write_ids(void *p) { write_ids(((args *)p)->a); }
static void e_write_global_id(void *p) { write_global_id(((args *)p)->a); }
static void e_reverse_block(void *p) { reverse_block(((args *)p)->a, ((args *)p)->b); }
static void e_too_much_shared(void *p) { too_much_shared(((args *)p)->a); }
static void e_dyn_shared_sum(void *p) { dyn_shared_sum(((args *)p)->a, ((args *)p)->b); }
static void e_atomics_global(void *p) { atomics_global(((args *)p)->a); }
static void e_atomics_shared(void *p) { atomics_shared(((args *)p)->a, ((args *)p)->b); }
static void e_constant_loads(void *p) { constant_loads(((args *)p)->a); }
static void e_oob_read(void *p) { oob_read(((args *)p)->a, ((args *)p)->b); }
static void e_oob_shared(void *p) { oob_shared(((args *)p)->a); }
static void e_store_to_input(void *p) { store_to_input(((args *)p)->a, ((args *)p)->b); }
static void e_half_barrier(void *p) { half_barrier(((args *)p)->a); }
static void e_two_barriers(void *p) { two_barriers(((args *)p)->a); }
static void e_even_odd(void *p) { even_odd(((args *)p)->a, ((args *)p)->b); }
static void e_endless(void *p) { endless(((args *)p)->a); }
static void e_uninit_shared(void *p) { uninit_shared(((args *)p)->a); }
static void e_neighbour_no_barrier(void *p) { neighbour_no_barrier(((args *)p)->a); }
static void e_blocks_collide(void *p) { blocks_collide(((args *)p)->a); }
static void e_blocks_rmw(void *p) { blocks_rmw(((args *)p)->a); }
static void e_read_all(void *p) { read_all(((args *)p)->a, ((args *)p)->b); }

/* ---------------------------------------------------------------- helpers */

static lmi_simt_array garr(const char *name, void *data, int64_t n, lm_dtype dt, bool ro)
{
	return (lmi_simt_array){.name = name, .space = LM_SPACE_GLOBAL, .dtype = dt, .data = data,
	                        .length = n, .readonly = ro};
}

typedef struct fixture {
	lm_trace *trace;
	lmi_simt *sim;
} fixture;

static void open_sim(fixture *f, bool trace)
{
	lm_latency_model lat;
	lm_kernel_latency_default(&lat);
	f->trace = trace ? lmi_trace_new("test", LM_FLOAT32, 1 << 20, &lat) : NULL;
	f->sim = lmi_simt_new("test", f->trace, &lat);
	assert_non_null(f->sim);
}

static void close_sim(fixture *f)
{
	lmi_simt_free(f->sim);
	lm_trace_release(f->trace);
}

static lm_status launch(fixture *f, const char *name, void (*entry)(void *), void *a, void *b,
                        lmi_dim3 grid, lmi_dim3 block, size_t dyn, lmi_simt_array *arrays,
                        int narrays)
{
	args ar = {a, b};
	lmi_simt_launch L = {.kernel = name, .grid = grid, .block = block, .dyn_shared = dyn,
	                     .entry = entry, .args = &ar, .arrays = arrays, .narrays = narrays};
	return lmi_simt_run(f->sim, &L);
}

#define D3(x, y, z) ((lmi_dim3){(x), (y), (z)})

/* ---------------------------------------------------------------- tests */

static void test_indices_3d(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	lmi_dim3 grid = D3(2, 3, 2), block = D3(4, 2, 3);
	int nthreads = 12 * 24, *out = calloc((size_t)nthreads * 6, sizeof *out);
	lmi_simt_array a = garr("out", out, nthreads * 6, LM_INT32, false);
	assert_int_equal(launch(&f, "write_ids", e_write_ids, out, NULL, grid, block, 0, &a, 1), LM_OK);
	for (int g = 0; g < nthreads; g++) {
		int t = g % 24, b = g / 24;
		assert_int_equal(out[g * 6 + 0], t % 4);
		assert_int_equal(out[g * 6 + 1], t / 4 % 2);
		assert_int_equal(out[g * 6 + 2], t / 8);
		assert_int_equal(out[g * 6 + 3], b % 2);
		assert_int_equal(out[g * 6 + 4], b / 2 % 3);
		assert_int_equal(out[g * 6 + 5], b / 6);
	}
	assert_int_equal(lmi_simt_counters_get(f.sim)->threads, nthreads);
	assert_int_equal(lmi_simt_counters_get(f.sim)->global_stores, nthreads * 6);
	free(out);
	close_sim(&f);
}

static void test_2_to_17_threads(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	int n = 1 << 17, *out = calloc((size_t)n, sizeof *out);
	lmi_simt_array a = garr("out", out, n, LM_INT32, false);
	assert_int_equal(launch(&f, "write_global_id", e_write_global_id, out, NULL, D3(128, 1, 1),
	                        D3(1024, 1, 1), 0, &a, 1),
	                 LM_OK);
	for (int i = 0; i < n; i++)
		if (out[i] != i) fail_msg("out[%d] = %d", i, out[i]);
	assert_int_equal(lmi_simt_counters_get(f.sim)->threads, n);
	free(out);
	close_sim(&f);
}

static void test_shared_memory(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, true);
	int in[128], out[128];
	for (int i = 0; i < 128; i++) in[i] = i;
	lmi_simt_array a[2] = {garr("in", in, 128, LM_INT32, true), garr("out", out, 128, LM_INT32, false)};
	assert_int_equal(launch(&f, "reverse_block", e_reverse_block, in, out, D3(2, 1, 1),
	                        D3(64, 1, 1), 0, a, 2),
	                 LM_OK);
	for (int i = 0; i < 128; i++) assert_int_equal(out[i], (i / 64) * 64 + 63 - i % 64);
	const lmi_simt_counters *c = lmi_simt_counters_get(f.sim);
	assert_int_equal(c->shared_stores, 128);
	assert_int_equal(c->shared_loads, 128);
	assert_int_equal(c->barriers, 2); /* one per block */
	/* the shared array is in the trace, named, with its launch */
	lm_trace_array ta;
	bool found = false;
	for (int i = 0; i < lm_trace_array_count(f.trace); i++) {
		assert_int_equal(lm_trace_array_get(f.trace, i, &ta), LM_OK);
		if (strcmp(ta.name, "buf") == 0) {
			found = true;
			assert_int_equal(ta.space, LM_SPACE_SHARED);
			assert_int_equal(ta.length, 64);
			assert_int_equal(ta.launch, 0);
		}
	}
	assert_true(found);

	/* dynamic shared memory, sized at launch */
	float fin[32], fout[1];
	for (int i = 0; i < 32; i++) fin[i] = (float)i;
	lmi_simt_array b[2] = {garr("in", fin, 32, LM_FLOAT32, true), garr("out", fout, 1, LM_FLOAT32, false)};
	assert_int_equal(launch(&f, "dyn_shared_sum", e_dyn_shared_sum, fin, fout, D3(1, 1, 1),
	                        D3(32, 1, 1), 32 * sizeof(float), b, 2),
	                 LM_OK);
	assert_true(fout[0] == 496.0f);
	/* too little dynamic shared memory for what the kernel indexes: out of bounds */
	KT_EXPECT_ERROR(launch(&f, "dyn_shared_sum", e_dyn_shared_sum, fin, fout, D3(1, 1, 1),
	                       D3(32, 1, 1), 16 * sizeof(float), b, 2),
	                LM_ERR_INDEX, "out-of-bounds store of shared array 's' at index 16 (length 16)");
	close_sim(&f);
}

static void test_shared_limit(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	double out[1];
	lmi_simt_array a = garr("out", out, 1, LM_FLOAT64, false);
	KT_EXPECT_ERROR(launch(&f, "too_much_shared", e_too_much_shared, out, NULL, D3(1, 1, 1),
	                       D3(32, 1, 1), 0, &a, 1),
	                LM_ERR_ARG, "__shared__ big[6145] (49160 bytes)",
	                "over the limit of 48 KiB (49152 bytes) per block");
	KT_EXPECT_ERROR(launch(&f, "dyn_shared_sum", e_dyn_shared_sum, out, out, D3(1, 1, 1),
	                       D3(32, 1, 1), 49153, &a, 1),
	                LM_ERR_ARG, "49153 bytes of dynamic shared memory exceed the limit of 48 KiB");
	KT_EXPECT_ERROR(launch(&f, "write_ids", e_write_ids, out, NULL, D3(1, 1, 1), D3(32, 33, 1), 0,
	                       &a, 1),
	                LM_ERR_ARG, "32x33x1 = 1056 threads exceeds the limit of 1024 threads per block");
	KT_EXPECT_ERROR(launch(&f, "write_ids", e_write_ids, out, NULL, D3(0, 1, 1), D3(32, 1, 1), 0,
	                       &a, 1),
	                LM_ERR_ARG, "every dimension must be at least 1");
	close_sim(&f);
}

static void test_atomics_global(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, true);
	int out[5] = {0};
	lmi_simt_array a = garr("out", out, 5, LM_INT32, false);
	assert_int_equal(launch(&f, "atomics_global", e_atomics_global, out, NULL, D3(2, 1, 1),
	                        D3(64, 1, 1), 0, &a, 1),
	                 LM_OK);
	assert_int_equal(out[0], 128);
	for (int k = 1; k < 5; k++) assert_int_equal(out[k], 32);
	const lmi_simt_counters *c = lmi_simt_counters_get(f.sim);
	assert_int_equal(c->atomics, 256);
	assert_int_equal(c->conflicts, 256); /* every address is hit by several threads of a block */
	/* serialisation: in each block the 64th atomic on out[0] waits behind 63 others, so the
	 * second warp's instruction costs 64 x 400 cycles */
	lm_trace_filter flt;
	lm_trace_filter_init(&flt);
	flt.kind = LM_TRACE_ATOMIC;
	flt.block = 0;
	flt.warp = 1;
	flt.lane = 31;
	int64_t i = lm_trace_find(f.trace, &flt, 0);
	assert_true(i >= 0);
	const lm_trace_event *e = lm_trace_event_get(f.trace, i);
	assert_int_equal(e->index, 0);
	assert_int_equal(e->aux, 63);
	assert_int_equal(e->latency, 64 * 400);
	close_sim(&f);
}

static void test_atomics_shared(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	int bins[256], hist[4] = {0}, want[4] = {0};
	for (int i = 0; i < 256; i++) want[bins[i] = (i * 7 + i / 3) % 4]++;
	lmi_simt_array a[2] = {garr("bins", bins, 256, LM_INT32, true), garr("hist", hist, 4, LM_INT32, false)};
	assert_int_equal(launch(&f, "atomics_shared", e_atomics_shared, bins, hist, D3(4, 1, 1),
	                        D3(64, 1, 1), 0, a, 2),
	                 LM_OK);
	for (int k = 0; k < 4; k++) assert_int_equal(hist[k], want[k]);
	const lmi_simt_counters *c = lmi_simt_counters_get(f.sim);
	assert_int_equal(c->shared_atomics, 256);
	assert_int_equal(c->shared_conflicts, 256);
	assert_int_equal(c->atomics, 16); /* bins x blocks: the privatisation's point */
	assert_int_equal(c->conflicts, 0); /* within a block every bin is merged by one thread */
	close_sim(&f);
}

static void test_constant_memory(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, true);
	for (int k = 0; k < 8; k++) cmask[k] = (float)(k * 10);
	float out[32];
	lmi_simt_array a[2] = {
		garr("out", out, 32, LM_FLOAT32, false),
		{.name = "cmask", .space = LM_SPACE_CONSTANT, .dtype = LM_FLOAT32, .data = cmask,
		 .length = 8, .readonly = true},
	};
	assert_int_equal(launch(&f, "constant_loads", e_constant_loads, out, NULL, D3(1, 1, 1),
	                        D3(32, 1, 1), 0, a, 2),
	                 LM_OK);
	for (int t = 0; t < 32; t++) assert_true(out[t] == (float)((t % 8) * 10));
	assert_int_equal(lmi_simt_counters_get(f.sim)->constant_loads, 64);
	lm_trace_filter flt;
	lm_trace_filter_init(&flt);
	flt.space = LM_SPACE_CONSTANT;
	flt.lane = 0;
	int64_t i = lm_trace_find(f.trace, &flt, 0);
	assert_int_equal(lm_trace_event_get(f.trace, i)->latency, 4); /* broadcast */
	i = lm_trace_find(f.trace, &flt, i + 1);
	assert_int_equal(lm_trace_event_get(f.trace, i)->latency, 8 * 4); /* 8 addresses */
	close_sim(&f);
}

static void test_out_of_bounds_global(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	float X[64] = {0}, Y[64];
	lmi_simt_array a[2] = {garr("X", X, 64, LM_FLOAT32, true), garr("Y", Y, 64, LM_FLOAT32, false)};
	KT_EXPECT_ERROR(launch(&f, "oob_read", e_oob_read, X, Y, D3(2, 1, 1), D3(32, 1, 1), 0, a, 2),
	                LM_ERR_INDEX,
	                "test: out-of-bounds load of global array 'X' at index 64 (length 64) at line ",
	                "by thread (31,0,0) in block (1,0,0) (kernel oob_read)");
	/* the emulator, and its fibres, work again afterwards */
	int out[64];
	lmi_simt_array b = garr("out", out, 64, LM_INT32, false);
	assert_int_equal(launch(&f, "write_global_id", e_write_global_id, out, NULL, D3(2, 1, 1),
	                        D3(32, 1, 1), 0, &b, 1),
	                 LM_OK);
	assert_int_equal(out[63], 63);
	close_sim(&f);
}

static void test_out_of_bounds_shared(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	int out[32];
	lmi_simt_array a = garr("out", out, 32, LM_INT32, false);
	KT_EXPECT_ERROR(launch(&f, "oob_shared", e_oob_shared, out, NULL, D3(1, 1, 1), D3(32, 1, 1), 0,
	                       &a, 1),
	                LM_ERR_INDEX, "out-of-bounds store of shared array 'buf' at index 32 (length 32)",
	                "by thread (31,0,0) in block (0,0,0)");
	float X[32], Y[32];
	lmi_simt_array b[2] = {garr("X", X, 32, LM_FLOAT32, true), garr("Y", Y, 32, LM_FLOAT32, false)};
	KT_EXPECT_ERROR(launch(&f, "store_to_input", e_store_to_input, X, Y, D3(1, 1, 1),
	                       D3(32, 1, 1), 0, b, 2),
	                LM_ERR_ARG, "store to read-only global array 'X' at index 0",
	                "by thread (0,0,0) in block (0,0,0)");
	close_sim(&f);
}

static void test_deadlock(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	int out[64];
	lmi_simt_array a = garr("out", out, 64, LM_INT32, false);
	KT_EXPECT_ERROR(launch(&f, "half_barrier", e_half_barrier, out, NULL, D3(2, 1, 1),
	                       D3(32, 1, 1), 0, &a, 1),
	                LM_ERR_STATE, "deadlock in block (1,0,0) (kernel half_barrier)",
	                "warp 0 lanes 0-15 wait at __syncthreads on line",
	                "which warp 0 lanes 16-31 never reach (they exited)");
	KT_EXPECT_ERROR(launch(&f, "two_barriers", e_two_barriers, out, NULL, D3(1, 1, 1),
	                       D3(32, 1, 1), 0, &a, 1),
	                LM_ERR_STATE, "deadlock in block (0,0,0) (kernel two_barriers)",
	                "warp 0 lanes 0-7 wait at __syncthreads on line",
	                "warp 0 lanes 8-31 at the one on line");
	close_sim(&f);
}

/* compute-sanitizer's initcheck: shared memory holds no value until a thread of the block writes
 * it (the emulator zeroes it, so only the check can tell); a global array's init flags likewise.
 * A read that a later store of another thread in the same phase would have fed is the race of a
 * missing barrier instead. */
static void test_initcheck(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	int out[32];
	lmi_simt_array a = garr("out", out, 32, LM_INT32, false);
	KT_EXPECT_ERROR(launch(&f, "uninit_shared", e_uninit_shared, out, NULL, D3(1, 1, 1), D3(32, 1, 1),
	                       0, &a, 1),
	                LM_ERR_STATE, "uninitialized load of shared array 'buf' at index 0 (0-based) at line",
	                "by thread (0,0,0) in block (0,0,0) (kernel uninit_shared): no thread of this block");
	lm_kernel_fault flt;
	lm_kernel_last_fault(&flt);
	assert_int_equal(flt.kind, LM_FAULT_UNINIT);
	assert_string_equal(flt.array, "buf");
	assert_int_equal(flt.space, LM_SPACE_SHARED);
	assert_int_equal(flt.index, 0);
	KT_EXPECT_ERROR(launch(&f, "neighbour_no_barrier", e_neighbour_no_barrier, out, NULL, D3(1, 1, 1),
	                       D3(32, 1, 1), 0, &a, 1),
	                LM_ERR_STATE, "write-after-read race on shared array 'buf' at index 1",
	                "a barrier between them");
	lm_kernel_last_fault(&flt);
	assert_int_equal(flt.kind, LM_FAULT_RACE);
	/* global init flags: elements 0..15 hold values, 16..31 do not */
	int in[32] = {0};
	uint8_t init[32];
	for (int i = 0; i < 32; i++) init[i] = i < 16;
	lmi_simt_array b[2] = {garr("in", in, 32, LM_INT32, true), garr("out", out, 32, LM_INT32, false)};
	b[0].init = init;
	KT_EXPECT_ERROR(launch(&f, "read_all", e_read_all, in, out, D3(1, 1, 1), D3(32, 1, 1), 0, b, 2),
	                LM_ERR_STATE, "uninitialized load of global array 'in' at index 16 (0-based)",
	                "by thread (16,0,0) in block (0,0,0)");
	for (int i = 0; i < 32; i++) init[i] = 1;
	assert_int_equal(launch(&f, "read_all", e_read_all, in, out, D3(1, 1, 1), D3(32, 1, 1), 0, b, 2), LM_OK);
	lm_kernel_last_fault(&flt);
	assert_int_equal(flt.kind, LM_FAULT_NONE);
	close_sim(&f);
}

/* Blocks are never ordered: two blocks' plain accesses to one global element race whatever their
 * phases, and the report says what fixes it. */
static void test_race_across_blocks(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	int out[32] = {0};
	lmi_simt_array a = garr("out", out, 32, LM_INT32, false);
	KT_EXPECT_ERROR(launch(&f, "blocks_collide", e_blocks_collide, out, NULL, D3(2, 1, 1), D3(32, 1, 1),
	                       0, &a, 1),
	                LM_ERR_STATE, "write-after-write race across blocks on global array 'out' at index 0",
	                "thread (0,0,0) of block (0,0,0) wrote it at line",
	                "thread (0,0,0) of block (1,0,0) wrote it at line", "does the index include the block");
	KT_EXPECT_ERROR(launch(&f, "blocks_rmw", e_blocks_rmw, out, NULL, D3(3, 1, 1), D3(32, 1, 1), 0, &a, 1),
	                LM_ERR_STATE, "read-after-write race across blocks on global array 'out' at index 0",
	                "make the update atomic");
	lm_kernel_fault flt;
	lm_kernel_last_fault(&flt);
	assert_int_equal(flt.kind, LM_FAULT_RACE);
	assert_true(flt.across_blocks);
	assert_true(flt.rmw);
	assert_int_equal(flt.hazard, LM_HAZARD_RAW);
	assert_int_equal(flt.first.block[0], 0);
	assert_int_equal(flt.second.block[0], 1);
	/* one block: no race */
	assert_int_equal(launch(&f, "blocks_rmw", e_blocks_rmw, out, NULL, D3(1, 1, 1), D3(32, 1, 1), 0, &a, 1),
	                 LM_OK);
	/* with the race check off, the emulator's order */
	bool was = lm_kernel_set_racecheck(false);
	lmi_simt_free(f.sim);
	lm_latency_model lat;
	lm_kernel_latency_default(&lat);
	f.sim = lmi_simt_new("test", NULL, &lat);
	assert_int_equal(launch(&f, "blocks_rmw", e_blocks_rmw, out, NULL, D3(3, 1, 1), D3(32, 1, 1), 0, &a, 1),
	                 LM_OK);
	lm_kernel_set_racecheck(was);
	close_sim(&f);
}

static void test_interrupt(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, false);
	float out[1] = {1};
	lmi_simt_array a = garr("out", out, 1, LM_FLOAT32, false);
	lm_interrupt(); /* polled inside the kernel: the endless loop stops */
	KT_EXPECT_ERROR(launch(&f, "endless", e_endless, out, NULL, D3(1, 1, 1), D3(32, 1, 1), 0, &a, 1),
	                LM_ERR_INTERRUPTED, "interrupted", "kernel endless");
	lm_interrupt_clear();
	close_sim(&f);
}

static void test_divergence(void **state)
{
	(void)state;
	fixture f;
	open_sim(&f, true);
	float in[40], out[40];
	for (int i = 0; i < 40; i++) in[i] = (float)i;
	lmi_simt_array a[2] = {garr("in", in, 40, LM_FLOAT32, true), garr("out", out, 40, LM_FLOAT32, false)};
	/* 40 threads: warp 0 full, warp 1 has 8 lanes */
	assert_int_equal(launch(&f, "even_odd", e_even_odd, in, out, D3(1, 1, 1), D3(40, 1, 1), 0, a, 2),
	                 LM_OK);
	for (int i = 0; i < 40; i++) assert_true(out[i] == (float)i + (i % 2 ? 2.0f : 1.0f));
	lm_trace_filter flt;
	lm_trace_filter_init(&flt);
	flt.kind = LM_TRACE_BRANCH;
	flt.warp = 0;
	const lm_trace_event *e = lm_trace_event_get(f.trace, lm_trace_find(f.trace, &flt, 0));
	assert_int_equal(e->mask, 0xffffffffu);
	assert_int_equal(e->aux, 0x55555555u); /* the lanes that took it */
	/* the two paths are two issues of the warp, one after the other */
	flt.kind = LM_TRACE_ADD;
	int64_t i = lm_trace_find(f.trace, &flt, 0);
	const lm_trace_event *add1 = lm_trace_event_get(f.trace, i);
	assert_int_equal(add1->mask, 0x55555555u);
	const lm_trace_event *add2 = NULL;
	while ((i = lm_trace_find(f.trace, &flt, i + 1)) >= 0) {
		add2 = lm_trace_event_get(f.trace, i);
		if (add2->mask != add1->mask) break;
	}
	assert_non_null(add2);
	assert_int_equal(add2->mask, 0xaaaaaaaau);
	assert_true(add2->cycle >= add1->cycle + add1->latency);
	flt.kind = LM_TRACE_STORE;
	flt.warp = 1;
	assert_int_equal(lm_trace_event_get(f.trace, lm_trace_find(f.trace, &flt, 0))->mask, 0xffu);
	const lmi_simt_counters *c = lmi_simt_counters_get(f.sim);
	/* issues: load, branch, store: 32 + 8 active of 64 issued; adds 16 + 4 each of 64 */
	assert_int_equal(c->issued_lanes, 5 * 64);
	assert_int_equal(c->active_lanes, 3 * 40 + 40);
	close_sim(&f);
}

static void test_same_trace_twice(void **state)
{
	(void)state;
	fixture f1, f2;
	open_sim(&f1, true);
	open_sim(&f2, true);
	int bins[256], hist[4] = {0};
	for (int i = 0; i < 256; i++) bins[i] = (i * 5) % 4;
	lmi_simt_array a[2] = {garr("bins", bins, 256, LM_INT32, true), garr("hist", hist, 4, LM_INT32, false)};
	assert_int_equal(launch(&f1, "atomics_shared", e_atomics_shared, bins, hist, D3(4, 1, 1),
	                        D3(64, 1, 1), 0, a, 2),
	                 LM_OK);
	memset(hist, 0, sizeof hist);
	assert_int_equal(launch(&f2, "atomics_shared", e_atomics_shared, bins, hist, D3(4, 1, 1),
	                        D3(64, 1, 1), 0, a, 2),
	                 LM_OK);
	assert_int_equal(lm_trace_count(f1.trace), lm_trace_count(f2.trace));
	for (int64_t i = 0; i < lm_trace_count(f1.trace); i++)
		assert_memory_equal(lm_trace_event_get(f1.trace, i), lm_trace_event_get(f2.trace, i),
		                    sizeof(lm_trace_event));
	close_sim(&f1);
	close_sim(&f2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_indices_3d),      cmocka_unit_test(test_2_to_17_threads),
		cmocka_unit_test(test_shared_memory),   cmocka_unit_test(test_shared_limit),
		cmocka_unit_test(test_atomics_global),  cmocka_unit_test(test_atomics_shared),
		cmocka_unit_test(test_constant_memory), cmocka_unit_test(test_out_of_bounds_global),
		cmocka_unit_test(test_out_of_bounds_shared), cmocka_unit_test(test_deadlock),
		cmocka_unit_test(test_interrupt),       cmocka_unit_test(test_divergence),
		cmocka_unit_test(test_same_trace_twice), cmocka_unit_test(test_initcheck),
		cmocka_unit_test(test_race_across_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
