/*
 * matmul.c — lm_kernel_matmul: C = A B, run on the emulator, natively on the CPU (naive or cache
 * blocked) or on a GPU (see scan.c for the shape of a pattern call).
 *
 * Design: the tile width sets the block (tile x tile threads), so matmul takes `tile`, not
 * `block`. Counters of every run add flops (2 m k n); measured runs count as bytes what an ideal
 * run must move (A and B read once, C written once).
 * Read next: matmul_emu.c, body/matmul.h, cpu_dense.c.
 */
#include <stdio.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

static const char *const algos[LMI_MATMUL_ALGO_COUNT] = {
	[LMI_MATMUL_NAIVE] = "naive",
	[LMI_MATMUL_TILED] = "tiled",
};

typedef struct mm {
	const void *a, *b;
	void *c;
	int64_t m, k, n;
	unsigned tile;
} mm;

typedef struct cpu_run {
	const lmi_kcall *kc;
	const mm *p;
} cpu_run;

static int cpu_once(void *arg)
{
	cpu_run *r = arg;
	const mm *p = r->p;
	const atomic_int *stop = &lmi_interrupt_flag;
	bool naive = r->kc->algo == LMI_MATMUL_NAIVE;
	if (r->kc->dtype == LM_FLOAT64)
		return naive ? lmi_cpu_matmul_naive_f64(p->a, p->b, p->c, p->m, p->k, p->n, stop)
		             : lmi_cpu_matmul_blocked_f64(p->a, p->b, p->c, p->m, p->k, p->n, stop);
	return naive ? lmi_cpu_matmul_naive_f32(p->a, p->b, p->c, p->m, p->k, p->n, stop)
	             : lmi_cpu_matmul_blocked_f32(p->a, p->b, p->c, p->m, p->k, p->n, stop);
}

static double ideal_bytes(const lmi_kcall *k, const mm *p)
{
	return (double)(p->m * p->k + p->k * p->n + p->m * p->n) * (double)lm_dtype_size(k->dtype);
}

static lm_status run(const lmi_kcall *k, const mm *p, lm_kernel_info *info)
{
	double flops = 2.0 * (double)p->m * (double)p->k * (double)p->n;
	lm_status st = LM_OK;
	switch (k->backend) {
	case LMI_BACKEND_EMU: {
		char name[128];
		snprintf(name, sizeof name, "matmul %s %lldx%lldx%lld tile %u %s", k->algo_name,
		         (long long)p->m, (long long)p->k, (long long)p->n, p->tile, lm_dtype_name(k->dtype));
		lmi_simt *s;
		if ((st = lmi_emu_start(k, name, info, 0, &s)) != LM_OK) return st;
		st = lmi_emu_matmul(s, k, p->a, p->b, p->c, p->m, p->k, p->n, p->tile);
		if (st == LM_OK) lmi_info_add_emu(info, lmi_simt_counters_get(s), k);
		lmi_simt_free(s);
		break;
	}
	case LMI_BACKEND_CPU: {
		cpu_run r = {k, p};
		double ms;
		if ((st = lmi_time_median(k->fname, k->repeats, cpu_once, NULL, &r, &ms)) != LM_OK) return st;
		lmi_info_add_measured(info, ms, ideal_bytes(k, p));
		lmi_info_add(info, "gflops", flops / (ms * 1e6));
		lmi_info_add(info, "threads", lmi_cpu_kernel_threads());
		break;
	}
	case LMI_BACKEND_CUDA: {
		const lmi_cuda_kernels *api = lmi_cuda_kernels_get(k->fname);
		if (!api) return lm_last_status();
		lmi_cuda_matmul_call c = {
			.algo = k->algo, .is_double = k->dtype == LM_FLOAT64, .a = p->a, .b = p->b,
			.c = p->c, .m = p->m, .k = p->k, .n = p->n, .tile = p->tile, .repeats = k->repeats,
		};
		char msg[512] = "";
		if (api->matmul(&c, msg, sizeof msg)) return lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
		lmi_info_add_measured(info, c.time_ms, ideal_bytes(k, p));
		lmi_info_add(info, "gflops", flops / (c.time_ms * 1e6));
		lmi_info_add(info, "block", k->block);
		break;
	}
	}
	if (st) return st;
	lmi_info_add(info, "tile", p->tile);
	lmi_info_add(info, "flops", flops);
	return LM_OK;
}

lm_status lmi_kcall_tile(lmi_kcall *k, const lm_kernel_opts *opts, unsigned *tile)
{
	const char *f = k->fname;
	if (opts && opts->block)
		return lmi_fail(LM_ERR_ARG, "%s: give tile, not block (the block is tile x tile threads)", f);
	if (opts && opts->coarsen > 1)
		return lmi_fail(LM_ERR_ARG, "%s: algo '%s' does not coarsen (coarsen %lld; only 1 here)", f,
		                k->algo_name, (long long)opts->coarsen);
	int64_t t = opts && opts->tile ? opts->tile : 16;
	if (t < 1 || t > 32)
		return lmi_fail(LM_ERR_ARG, "%s: tile %lld must be in 1..32 (a block of tile x tile threads "
		                "has at most %d)", f, (long long)t, LM_KERNEL_MAX_BLOCK);
	*tile = (unsigned)t;
	k->coarsen = 1;
	return LM_OK;
}

lm_status lm_kernel_matmul(const lm_tensor *a, const lm_tensor *b, const lm_kernel_opts *opts,
                           lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.matmul";
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
	lmi_kcall k;
	lm_status st = lmi_kcall_resolve(f, a, opts, algos, LMI_MATMUL_ALGO_COUNT, LMI_MATMUL_TILED, &k);
	if (st) return st;
	if (!b) return lmi_fail(LM_ERR_ARG, "%s: the second matrix is NULL", f);
	if (lm_tensor_device(b) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: the second matrix is on %s; pass a CPU tensor", f,
		                lm_device_name(lm_tensor_device(b)));
	if (lm_tensor_ndim(a) != 2 || lm_tensor_ndim(b) != 2)
		return lmi_fail(LM_ERR_SHAPE, "%s: a %s and b %s must both be matrices (2-D)", f,
		                lmi_shape_s(a), lmi_shape_s(b));
	if (lm_tensor_dtype(b) != k.dtype)
		return lmi_fail(LM_ERR_DTYPE, "%s: a is %s and b %s; give both the same float dtype", f,
		                lm_dtype_name(k.dtype), lm_dtype_name(lm_tensor_dtype(b)));
	mm p = {.m = lm_tensor_size(a, 0), .k = lm_tensor_size(a, 1), .n = lm_tensor_size(b, 1)};
	if (lm_tensor_size(b, 0) != p.k)
		return lmi_fail(LM_ERR_SHAPE, "%s: a %s and b %s do not chain (a's columns %lld, b's rows "
		                "%lld)", f, lmi_shape_s(a), lmi_shape_s(b), (long long)p.k,
		                (long long)lm_tensor_size(b, 0));
	if (p.n == 0) return lmi_fail(LM_ERR_ARG, "%s: b %s is empty", f, lmi_shape_s(b));
	if (k.backend != LMI_BACKEND_CPU && (p.m * p.n > INT32_MAX || p.k * p.n > INT32_MAX))
		return lmi_fail(LM_ERR_ARG, "%s: %s x %s has more elements than the %s run's 32-bit indices "
		                "allow", f, lmi_shape_s(a), lmi_shape_s(b),
		                k.backend == LMI_BACKEND_EMU ? "emu" : "cuda");
	if ((st = lmi_kcall_tile(&k, opts, &p.tile)) != LM_OK) return st;
	k.block = p.tile * p.tile;

	lm_tensor *ac = lm_contiguous(a), *bc = ac ? lm_contiguous(b) : NULL;
	lm_tensor *c = bc ? lm_empty(2, (int64_t[]){p.m, p.n}, k.dtype) : NULL;
	lm_kernel_info *inf = c ? lmi_info_new(&k, "matmul") : NULL;
	if (!inf) {
		st = lm_last_status();
		goto out_fail;
	}
	p.a = lm_tensor_data(ac);
	p.b = lm_tensor_data(bc);
	p.c = lm_tensor_data(c);
	if ((st = run(&k, &p, inf)) != LM_OK) goto out_fail;
	lm_tensor_release(ac);
	lm_tensor_release(bc);
	*out = c;
	*info = inf;
	return LM_OK;
out_fail:
	lm_kernel_info_free(inf);
	lm_tensor_release(c);
	lm_tensor_release(bc);
	lm_tensor_release(ac);
	return st;
}
