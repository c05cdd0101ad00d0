/*
 * reduce.c — lm_kernel_reduce: the sum of all elements, run on the emulator, natively on the CPU
 * or on a GPU (see scan.c for the shape of a pattern call).
 * Read next: reduce_emu.c, body/reduce_plan.h, body/reduce.h, cpu_kernels.c.
 */
#include <stdio.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

static const char *const algos[LMI_REDUCE_ALGO_COUNT] = {
	[LMI_REDUCE_NAIVE] = "naive",
	[LMI_REDUCE_CONVERGENT] = "convergent",
	[LMI_REDUCE_SHARED] = "shared",
	[LMI_REDUCE_COARSENED] = "coarsened",
};

static int reduce_cpu(const lmi_kcall *k, void *run)
{
	const lmi_reduce_run *r = run;
	const lmi_reduce_call *c = &r->c;
	(void)k;
	if (c->is_double) return lmi_cpu_sum_f64(c->x, c->n, c->y, &lmi_interrupt_flag, r->scratch);
	return lmi_cpu_sum_f32(c->x, c->n, c->y, &lmi_interrupt_flag, r->scratch);
}

static int reduce_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                       lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	(void)k;
	return api->reduce(&((lmi_reduce_run *)run)->c, t, msg, msg_cap);
}

/* One CPU sum for every algo (cpu_kernels.c). */
static unsigned reduce_cpu_impl(const lmi_kcall *k, const void *run, char *buf, size_t cap)
{
	(void)k, (void)run;
	snprintf(buf, cap, "chunked sum (L2-sized chunks summed in vector accumulators, added in chunk "
	         "order); %d threads, %s", lmi_cpu_kernel_threads(), lmi_cpu_isa_name(lmi_cpu_isa()));
	return 0;
}

static const lmi_pattern pattern = {
	.name = "reduce",
	.body = "body/reduce.h",
	.emu = lmi_emu_reduce,
	.cpu = reduce_cpu,
	.cuda = reduce_cuda,
	.cpu_impl = reduce_cpu_impl,
};

lm_status lm_kernel_reduce(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                           lm_kernel_info **info)
{
	const char *f = "kernels.reduce";
	lmi_kcall k;
	lm_status st = lmi_kcall_start(f, out, info);
	if (st || (st = lmi_kcall_resolve(f, x, opts, algos, LMI_REDUCE_ALGO_COUNT, LMI_REDUCE_SHARED,
	                                  &k)) != LM_OK)
		return st;
	bool coarsened = k.algo == LMI_REDUCE_COARSENED;
	if ((st = lmi_kcall_shape(&k, opts, coarsened, coarsened ? 4 : 1, 2)) != LM_OK) return st;
	bool uses_shared = k.algo == LMI_REDUCE_SHARED || coarsened;
	if (uses_shared && (st = lmi_kcall_check_shared(&k, k.block)) != LM_OK) return st;

	size_t elem = lm_dtype_size(k.dtype);
	lmi_reduce_run r = {.c = {.is_double = k.dtype == LM_FLOAT64, .algo = k.algo, .n = k.n,
	                          .block = k.block, .coarsen = k.coarsen}};
	r.c.x = lmi_kcall_input(&k, x);
	r.c.y = lmi_kcall_output(&k, lm_empty(0, NULL, k.dtype));
	if (k.backend == LMI_BACKEND_CPU)
		r.scratch = lmi_kcall_alloc(&k, lmi_cpu_scratch_bytes(k.n, elem));
	snprintf(k.name, sizeof k.name, "reduce %s %s", k.algo_name, lm_dtype_name(k.dtype));
	k.bytes = (double)k.n * (double)elem; /* one read */
	return lmi_pattern_run(&pattern, &k, &r, out, info);
}
