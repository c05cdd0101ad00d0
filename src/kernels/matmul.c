/*
 * matmul.c — lm_kernel_matmul: C = A B, run on the emulator, natively on the CPU (naive or tiled
 * with the tile width asked) or on a GPU (see scan.c for the shape of a pattern call).
 *
 * Design: the tile width sets the block (tile x tile threads), so matmul takes `tile`, not
 * `block`. The cpu run of 'tiled' also takes its own cache tiles (tile_m, tile_n, tile_k, default
 * tile) and loop order (cpu_tiling; lm.tune searches them), which the GPU runs refuse. Counters
 * of every run add flops (2 m k n); measured runs count as bytes what an ideal run must move (A
 * and B read once, C written once).
 * Read next: matmul_emu.c, body/matmul_plan.h, body/matmul.h, cpu_dense.c.
 */
#include <stdio.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

static const char *const algos[LMI_MATMUL_ALGO_COUNT] = {
	[LMI_MATMUL_NAIVE] = "naive",
	[LMI_MATMUL_TILED] = "tiled",
};

static int matmul_cpu(const lmi_kcall *k, void *run)
{
	const lmi_matmul_run *r = run;
	const lmi_matmul_call *c = &r->c;
	const atomic_int *stop = &lmi_interrupt_flag;
	(void)k;
	if (c->algo == LMI_MATMUL_NAIVE && c->is_double)
		return lmi_cpu_matmul_naive_f64(c->a, c->b, c->c, c->m, c->k, c->n, stop);
	if (c->algo == LMI_MATMUL_NAIVE)
		return lmi_cpu_matmul_naive_f32(c->a, c->b, c->c, c->m, c->k, c->n, stop);
	if (c->is_double)
		return lmi_cpu_matmul_tiled_ord_f64(c->a, c->b, c->c, c->m, c->k, c->n, &r->cpu,
		                                    stop);
	return lmi_cpu_matmul_tiled_ord_f32(c->a, c->b, c->c, c->m, c->k, c->n, &r->cpu, stop);
}

static int matmul_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                       lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	(void)k;
	return api->matmul(&((lmi_matmul_run *)run)->c, t, msg, msg_cap);
}

static lm_status matmul_finish(lm_kernel_info *info, const lmi_kcall *k, void *run,
                               const lmi_simt_counters *emu)
{
	(void)emu;
	lmi_info_add(info, "tile", ((lmi_matmul_run *)run)->c.tile);
	lmi_info_add(info, "flops", k->flops);
	return LM_OK;
}

/* The two CPU loops of cpu_dense.c: each is its variant. */
static unsigned matmul_cpu_impl(const lmi_kcall *k, const void *run, char *buf, size_t cap)
{
	const lmi_matmul_run *r = run;
	const lmi_matmul_call *c = &r->c;
	(void)k;
	if (c->algo == LMI_MATMUL_NAIVE)
		snprintf(buf, cap, "naive triple loop (B read down a column), %d threads",
		         lmi_cpu_kernel_threads());
	else if (!r->cpu_given)
		snprintf(buf, cap, "tiled: %u x %u blocks of C, k in slices of %u, held in L1; %d threads, "
		         "%s", c->tile, c->tile, c->tile, lmi_cpu_kernel_threads(),
		         lmi_cpu_isa_name(lmi_cpu_isa()));
	else
		snprintf(buf, cap, "tiled: %lld x %lld blocks of C, k in slices of %lld, tile loops "
		         "in order %s; %d threads, %s", (long long)r->cpu.tm, (long long)r->cpu.tn,
		         (long long)r->cpu.tk, lmi_cpu_matmul_orders[r->cpu.order],
		         lmi_cpu_kernel_threads(), lmi_cpu_isa_name(lmi_cpu_isa()));
	return LMI_CPU_IS_VARIANT | (c->algo == LMI_MATMUL_TILED ? LMI_CPU_USES_TILE : 0);
}

static const lmi_pattern pattern = {
	.name = "matmul",
	.body = "body/matmul.h",
	.emu = lmi_emu_matmul,
	.cpu = matmul_cpu,
	.cuda = matmul_cuda,
	.finish = matmul_finish,
	.cpu_impl = matmul_cpu_impl,
};

/* The second matrix and the shapes, after lmi_kcall_resolve checked the first. */
static lm_status check_shapes(const lmi_kcall *k, const lm_tensor *a, const lm_tensor *b,
                              lmi_matmul_call *c)
{
	const char *f = k->fname;
	if (!b) return lmi_fail(LM_ERR_ARG, "%s: the second matrix is NULL", f);
	if (lm_tensor_device(b) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: the second matrix is on %s; pass a CPU tensor", f,
		                lm_device_name(lm_tensor_device(b)));
	if (lm_tensor_ndim(a) != 2 || lm_tensor_ndim(b) != 2)
		return lmi_fail(LM_ERR_SHAPE, "%s: a %s and b %s must both be matrices (2-D)", f,
		                lmi_shape_s(a), lmi_shape_s(b));
	if (lm_tensor_dtype(b) != k->dtype)
		return lmi_fail(LM_ERR_DTYPE, "%s: a is %s and b %s; give both the same float dtype", f,
		                lm_dtype_name(k->dtype), lm_dtype_name(lm_tensor_dtype(b)));
	c->m = lm_tensor_size(a, 0), c->k = lm_tensor_size(a, 1), c->n = lm_tensor_size(b, 1);
	if (lm_tensor_size(b, 0) != c->k)
		return lmi_fail(LM_ERR_SHAPE, "%s: a %s and b %s do not chain (a's columns %lld, b's rows "
		                "%lld)", f, lmi_shape_s(a), lmi_shape_s(b), (long long)c->k,
		                (long long)lm_tensor_size(b, 0));
	if (c->n == 0) return lmi_fail(LM_ERR_ARG, "%s: b %s is empty", f, lmi_shape_s(b));
	if (k->backend != LMI_BACKEND_CPU && (c->m * c->n > INT32_MAX || c->k * c->n > INT32_MAX))
		return lmi_fail(LM_ERR_ARG, "%s: %s x %s has more elements than the %s run's 32-bit indices "
		                "allow", f, lmi_shape_s(a), lmi_shape_s(b),
		                lmi_backend_name(k->backend));
	return LM_OK;
}

#define NO_ORDER "the GPU's threads have no loop order"
#define NO_TILES "the naive loop has no tiles"

/* The cpu run's knobs (tile_m, tile_n, tile_k, order): only the tiled cpu run has them; each tile
 * 1..LM_KERNEL_MAX_CPU_TILE, 0 for `tile`; the order one of lmi_cpu_matmul_orders. */
static lm_status cpu_tiling(const lmi_kcall *k, const lm_kernel_opts *o, lmi_matmul_run *r)
{
	const char *f = k->fname, *keys[3] = {"tile_m", "tile_n", "tile_k"};
	const int64_t v[3] = {o->tile_m, o->tile_n, o->tile_k};
	int64_t *dst[3] = {&r->cpu.tm, &r->cpu.tn, &r->cpu.tk};
	r->cpu.order = LMI_MM_IJK;
	for (int i = 0; i < 3; i++) {
		lm_status st = LM_OK;
		if (k->backend != LMI_BACKEND_CPU)
			st = lmi_kcall_unused(k, keys[i], v[i] != 0, "it is the CPU's cache tile; the "
			                      "GPU's is tile");
		else if (k->algo != LMI_MATMUL_TILED)
			st = lmi_kcall_unused(k, keys[i], v[i] != 0, NO_TILES);
		if (st) return st;
		if (v[i] < 0 || v[i] > LM_KERNEL_MAX_CPU_TILE)
			return lmi_fail(LM_ERR_ARG, "%s: %s = %lld must be between 1 and %d (0: tile)",
			                f, keys[i], (long long)v[i], LM_KERNEL_MAX_CPU_TILE);
		*dst[i] = v[i] ? v[i] : r->c.tile;
	}
	if (o->order) {
		lm_status st = k->backend != LMI_BACKEND_CPU
		                       ? lmi_kcall_unused(k, "order", true, NO_ORDER)
		               : k->algo != LMI_MATMUL_TILED
		                       ? lmi_kcall_unused(k, "order", true, NO_TILES)
		                       : lmi_name_lookup(f, "order", o->order, lmi_cpu_matmul_orders,
		                                         LMI_MM_ORDER_COUNT, &r->cpu.order);
		if (st) return st;
	}
	r->cpu_given = o->tile_m || o->tile_n || o->tile_k || o->order;
	return LM_OK;
}

lm_status lm_kernel_matmul(const lm_tensor *a, const lm_tensor *b, const lm_kernel_opts *opts,
                           lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.matmul";
	lmi_kcall k;
	lm_kernel_opts o = lmi_opts_cpu_if_auto(opts);
	lm_status st = lmi_kcall_start(f, out, info);
	if (st || (st = lmi_kcall_resolve(f, a, &o, algos, LMI_MATMUL_ALGO_COUNT, LMI_MATMUL_TILED,
	                                  &k)) != LM_OK)
		return st;
	lmi_matmul_run r = {.c = {.algo = k.algo, .is_double = k.dtype == LM_FLOAT64}};
	lmi_matmul_call *c = &r.c;
	if ((st = check_shapes(&k, a, b, c)) != LM_OK || (st = lmi_kcall_tile(&k, &o, &c->tile)) ||
	    (st = cpu_tiling(&k, &o, &r)))
		return st;
	k.block = c->tile * c->tile;

	c->a = lmi_kcall_input(&k, a);
	c->b = lmi_kcall_input(&k, b);
	c->c = lmi_kcall_output(&k, lm_empty(2, (int64_t[]){c->m, c->n}, k.dtype));
	snprintf(k.name, sizeof k.name, "matmul %s %lldx%lldx%lld tile %u %s", k.algo_name,
	         (long long)c->m, (long long)c->k, (long long)c->n, c->tile, lm_dtype_name(k.dtype));
	k.flops = 2.0 * (double)c->m * (double)c->k * (double)c->n;
	k.bytes = (double)(c->m * c->k + c->k * c->n + c->m * c->n) * (double)lm_dtype_size(k.dtype);
	return lmi_pattern_run(&pattern, &k, &r, out, info);
}
