/*
 * rng.c — counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11).
 *
 * State is (seed, offset). Block b of a call is philox(ctr = {lo(offset+b), hi(offset+b), 0, 0},
 * key = {lo(seed), hi(seed)}), 4 words; a call that needs B blocks advances offset by B. The same
 * (seed, offset) gives the same stream on any device and any thread count, and blocks can be made
 * in parallel. Words per value: uniform float32 1 (24 bits), uniform float64 2 (53 bits),
 * normal: 4 words give 2 values (Box-Muller on two 53-bit uniforms), randint 2 (64 bits).
 */
#include <math.h>
#include <string.h>

#include "iter.h"
#include "philox.h"

void lm_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
	lmi_philox_rounds(ctr, key, out);
}

static uint64_t g_seed = 0x853c49e6748fea9bull, g_offset;

void lm_manual_seed(uint64_t seed)
{
	g_seed = seed;
	g_offset = 0;
}
uint64_t lm_rng_seed(void) { return g_seed; }
uint64_t lm_rng_offset(void) { return g_offset; }
void lm_rng_set_state(uint64_t seed, uint64_t offset)
{
	g_seed = seed;
	g_offset = offset;
}

enum { K_UNIFORM = LMI_RNG_UNIFORM, K_NORMAL = LMI_RNG_NORMAL, K_RANDINT = LMI_RNG_RANDINT,
       K_BERNOULLI = LMI_RNG_BERNOULLI };
typedef int kind;

typedef struct gen {
	kind k;
	lm_dtype dt;
	double a, b;   /* uniform [a, b), normal (mean a, std b), bernoulli p = a */
	int64_t lo;    /* randint */
	uint64_t range;
	uint64_t seed, offset;
} gen;

static int per_block(const gen *g) { return lmi_rng_per_block(g->k, g->dt == LM_FLOAT64); }

/* Values of block bi into v[0..per_block) (philox.h: the same arithmetic as the GPU's). */
static void values(const gen *g, uint64_t bi, double *v)
{
	uint32_t w[4];
	lmi_philox_block(g->seed, g->offset + bi, w);
	lmi_rng_values(g->k, g->dt == LM_FLOAT64, g->a, g->b, w, v);
}

/* randint's values of block bi: lo + (64 random bits mod range), in unsigned arithmetic (the sum
 * always lands in [lo, hi), which is in int64 range) and never through a double, which would
 * round values beyond 2^53 (even to outside [lo, hi)). */
static void randint_values(const gen *g, uint64_t bi, int64_t *v)
{
	uint32_t w[4];
	lmi_philox_block(g->seed, g->offset + bi, w);
	lmi_rng_randint(w, g->lo, g->range, v);
}

/* The values of generator g for elements 0..n of contiguous host memory d of dtype dt. */
static void fill_blocks(const gen *g, char *d, lm_dtype dt, int64_t n)
{
	int pb = per_block(g);
	uint64_t nblocks = (uint64_t)((n + pb - 1) / pb);
	size_t es = lmi_elem_size(dt);
	void (*set_int)(void *, int64_t) = lm_dtype_traits_of(dt)->set_int;
	int64_t nb = (int64_t)nblocks;
#pragma omp parallel for schedule(static) if (n > LMI_PARALLEL_GRAIN)
	for (int64_t bi = 0; bi < nb; bi++) {
		double v[4];
		if (g->k == K_RANDINT) {
			int64_t iv[2];
			randint_values(g, (uint64_t)bi, iv);
			for (int i = 0; i < 2 && bi * 2 + i < n; i++) {
				int64_t j = bi * 2 + i;
				set_int(d + j * (int64_t)es, iv[i]); /* lm_randint checked that it fits */
			}
			continue;
		}
		values(g, (uint64_t)bi, v);
		for (int i = 0; i < pb && bi * pb + i < n; i++) {
			int64_t j = bi * pb + i;
			if (dt == LM_FLOAT32)
				((float *)d)[j] = (float)v[i];
			else if (dt == LM_FLOAT64)
				((double *)d)[j] = v[i];
			else
				lmi_store(d + j * (int64_t)es, dt, v[i]);
		}
	}
}

lm_status lmi_rng_fill_host(void *d, lm_dtype dt, int64_t n, const lmi_rng_call *c)
{
	gen g = {.k = c->kind, .dt = dt, .a = c->a, .b = c->b, .lo = c->lo, .range = c->range,
	         .seed = c->seed, .offset = c->offset}; /* c->f64 is dt == LM_FLOAT64 */
	fill_blocks(&g, d, dt, n);
	return LM_OK;
}

/* Fills contiguous t (numel n) from the generator; advances the global offset. A tensor on
 * another device is filled there by its device's loop (lmi_device_ops.random), which draws the
 * same blocks (philox.h). */
static lm_status generate_(gen *g, lm_tensor *t);
static lm_status generate(gen *g, lm_tensor *t)
{
	int d = lmi_capture_enter();
	lm_status s = generate_(g, t);
	lmi_capture_leave(d);
	if (d == 0 && !s) {
		lmi_rng_call c = {g->k, g->dt == LM_FLOAT64, g->a, g->b, g->lo, g->range, 0, 0};
		lmi_capture_random(t, &c, g->dt);
	}
	return s;
}

lm_status lmi_rng_redraw(lm_tensor *t, const lmi_rng_call *c, lm_dtype gen_dt)
{
	gen g = {.k = c->kind, .dt = gen_dt, .a = c->a, .b = c->b, .lo = c->lo, .range = c->range};
	return generate(&g, t);
}

static lm_status generate_(gen *g, lm_tensor *t)
{
	int64_t n = lm_tensor_numel(t);
	int pb = per_block(g);
	uint64_t nblocks = (uint64_t)((n + pb - 1) / pb);
	g->seed = g_seed;
	g->offset = g_offset;
	g_offset += nblocks;
	if (t->storage->device != LM_CPU) {
		const lmi_device_ops *dev = lmi_device_ops_for(t->storage->device);
		lmi_rng_call c = {g->k, g->dt == LM_FLOAT64, g->a, g->b, g->lo, g->range, g->seed, g->offset};
		if (!dev) return lmi_fail(LM_ERR_DEVICE, "random: no %s device", lm_device_name(t->storage->device));
		return n ? dev->random(t, &c) : LM_OK;
	}
	fill_blocks(g, lmi_data(t), t->dtype, n);
	return LM_OK;
}

/* Generates into t, through a contiguous temporary when t is a strided view. */
static lm_status generate_into(const char *fname, gen *g, lm_tensor *t)
{
	lm_status s = lmi_check_not_block(fname, t);
	if (!s) s = lmi_inplace_check(fname, t);
	if (s) return s;
	g->dt = t->dtype;
	lmi_bump_version(t);
	if (lm_tensor_is_contiguous(t)) return generate(g, t);
	lm_tensor *tmp = lmi_empty_on(fname, t->storage->device, t->ndim, t->shape, t->dtype);
	if (!tmp) return lm_last_status();
	s = generate(g, tmp);
	if (!s) s = lmi_copy(t, tmp);
	lm_tensor_release(tmp);
	return s;
}

lm_status lm_uniform_(lm_tensor *t, double lo, double hi)
{
	if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi))
		return lmi_fail(LM_ERR_ARG, "uniform_: bounds [%g, %g) must be finite with lo <= hi", lo, hi);
	if (!lm_dtype_is_float(t->dtype))
		return lmi_fail(LM_ERR_DTYPE, "uniform_: needs a float tensor, got %s",
		                lm_dtype_name(t->dtype));
	gen g = {.k = K_UNIFORM, .a = lo, .b = hi};
	return generate_into("uniform_", &g, t);
}

lm_status lm_normal_(lm_tensor *t, double mean, double std)
{
	if (!(std >= 0) || !isfinite(mean) || !isfinite(std))
		return lmi_fail(LM_ERR_ARG, "normal_: mean %g and std %g must be finite, std >= 0", mean, std);
	if (!lm_dtype_is_float(t->dtype))
		return lmi_fail(LM_ERR_DTYPE, "normal_: needs a float tensor, got %s",
		                lm_dtype_name(t->dtype));
	gen g = {.k = K_NORMAL, .a = mean, .b = std};
	return generate_into("normal_", &g, t);
}

lm_status lm_bernoulli_(lm_tensor *t, double p)
{
	if (!(p >= 0 && p <= 1))
		return lmi_fail(LM_ERR_ARG, "bernoulli_: probability %g is outside [0, 1]", p);
	gen g = {.k = K_BERNOULLI, .a = p};
	/* uniform words at float32 resolution for every non-float64 dtype */
	lm_status s = lmi_inplace_check("bernoulli_", t);
	if (s) return s;
	g.dt = t->dtype == LM_FLOAT64 ? LM_FLOAT64 : LM_FLOAT32;
	lmi_bump_version(t);
	lm_tensor *tmp = lm_tensor_is_contiguous(t)
	                     ? lm_tensor_retain(t)
	                     : lmi_empty_on("bernoulli_", t->storage->device, t->ndim, t->shape, t->dtype);
	if (!tmp) return lm_last_status();
	s = generate(&g, tmp);
	if (!s && tmp != t) s = lmi_copy(t, tmp);
	lm_tensor_release(tmp);
	return s;
}

static lm_tensor *make(const char *fname, gen *g, int ndim, const int64_t *shape, lm_dtype dt)
{
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse(fname, dt), NULL;
	lm_tensor *t = lmi_empty(fname, ndim, shape, dt);
	if (!t) return NULL;
	g->dt = dt;
	generate(g, t); /* a CPU tensor: cannot fail */
	return t;
}

lm_tensor *lm_rand(int ndim, const int64_t *shape, lm_dtype dt)
{
	if (!lm_dtype_is_float(dt))
		return lmi_fail_null(LM_ERR_DTYPE, "rand: needs a float dtype, got %s", lm_dtype_name(dt));
	gen g = {.k = K_UNIFORM, .a = 0, .b = 1};
	return make("rand", &g, ndim, shape, dt);
}

lm_tensor *lm_randn(int ndim, const int64_t *shape, lm_dtype dt)
{
	if (!lm_dtype_is_float(dt))
		return lmi_fail_null(LM_ERR_DTYPE, "randn: needs a float dtype, got %s", lm_dtype_name(dt));
	gen g = {.k = K_NORMAL, .a = 0, .b = 1};
	return make("randn", &g, ndim, shape, dt);
}

lm_tensor *lm_randint(int64_t lo, int64_t hi, int ndim, const int64_t *shape, lm_dtype dt)
{
	if (hi <= lo)
		return lmi_fail_null(LM_ERR_ARG, "randint: empty range [%lld, %lld)", (long long)lo,
		                     (long long)hi);
	if (dt < 0 || dt >= LM_DTYPE_COUNT || lmi_is_block(dt))
		return dt < 0 || dt >= LM_DTYPE_COUNT ? lmi_fail_null(LM_ERR_DTYPE, "randint: invalid dtype %d", (int)dt)
		                                      : (lmi_block_refuse("randint", dt), NULL);
	const lm_dtype_traits *tr = &lmi_dtypes[dt];
	int64_t dmin = tr->is_int ? tr->min : INT64_MIN, dmax = tr->is_int ? tr->max : INT64_MAX;
	if (lo < dmin || hi - 1 > dmax) /* hi > lo: hi - 1 cannot overflow */
		return lmi_fail_null(LM_ERR_ARG, "randint: range [%lld, %lld) does not fit %s (%lld..%lld)",
		                     (long long)lo, (long long)hi, lm_dtype_name(dt), (long long)dmin,
		                     (long long)dmax);
	uint64_t range = (uint64_t)hi - (uint64_t)lo;
	gen g = {.k = K_RANDINT, .lo = lo, .range = range};
	return make("randint", &g, ndim, shape, dt);
}
