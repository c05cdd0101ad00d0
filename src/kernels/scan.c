/*
 * scan.c — lm_kernel_scan: prefix sums, run on the emulator, natively on the CPU or on a GPU.
 *
 * Design: a pattern call is its checks plus three callbacks (patterns.h). The checks resolve the
 * options (kernels.c) and fill the run: the call of body/scan_plan.h with the contiguous input
 * and the output, and the cpu run's scratch. The driver (driver.c) then runs it: the emulator
 * (scan_emu.c) with a trace and the counters taken from it, the CPU (cpu_kernels.c) timed as the
 * median of several runs, or the CUDA module (cuda/scan.cu) timed with CUDA events.
 * Read next: scan_emu.c, body/scan_plan.h, body/scan.h, driver.c.
 */
#include <stdio.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

static const char *const algos[LMI_SCAN_ALGO_COUNT] = {
	[LMI_SCAN_KOGGE_STONE] = "kogge-stone",
	[LMI_SCAN_BRENT_KUNG] = "brent-kung",
	[LMI_SCAN_HIERARCHICAL] = "hierarchical",
};

static int scan_cpu(const lmi_kcall *k, void *run)
{
	const lmi_scan_run *r = run;
	const lmi_scan_call *c = &r->c;
	const atomic_int *stop = &lmi_interrupt_flag;
	(void)k;
	if (c->algo == LMI_SCAN_KOGGE_STONE) /* the work-inefficient scan, sections of block */
		return c->is_double ? lmi_cpu_scan_kogge_stone_f64(c->x, c->y, c->n, !c->inclusive,
		                                                   c->block, stop, r->scratch)
		                    : lmi_cpu_scan_kogge_stone_f32(c->x, c->y, c->n, !c->inclusive,
		                                                   c->block, stop, r->scratch);
	if (c->is_double) return lmi_cpu_scan_f64(c->x, c->y, c->n, !c->inclusive, stop, r->scratch);
	return lmi_cpu_scan_f32(c->x, c->y, c->n, !c->inclusive, stop, r->scratch);
}

static int scan_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                     lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	(void)k;
	return api->scan(&((lmi_scan_run *)run)->c, t, msg, msg_cap);
}

/* The CPU's scans (cpu_kernels.c): kogge-stone is the work-inefficient one; brent-kung and
 * hierarchical share the work-efficient one, so those names apply to emu and cuda only. */
static unsigned scan_cpu_impl(const lmi_kcall *k, const void *run, char *buf, size_t cap)
{
	const lmi_scan_call *c = &((const lmi_scan_run *)run)->c;
	const char *isa = lmi_cpu_isa_name(lmi_cpu_isa());
	int nt = lmi_cpu_kernel_threads();
	(void)k;
	if (c->algo == LMI_SCAN_KOGGE_STONE) {
		snprintf(buf, cap, "kogge-stone, work-inefficient: sections of %u elements, each scanned in "
		         "log2(%u) Kogge-Stone steps in L1, chained; %d threads, %s", c->block, c->block,
		         nt, isa);
		return LMI_CPU_IS_VARIANT | LMI_CPU_USES_BLOCK;
	}
	snprintf(buf, cap, "work-efficient single-pass chained scan over L2-sized chunks (%s); %d "
	         "threads, %s", lmi_cpu_scan_how(), nt, isa);
	return 0;
}

static const lmi_pattern pattern = {
	.name = "scan",
	.body = "body/scan.h",
	.emu = lmi_emu_scan,
	.cpu = scan_cpu,
	.cuda = scan_cuda,
	.cpu_impl = scan_cpu_impl,
};

lm_status lm_kernel_scan(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                         lm_kernel_info **info)
{
	const char *f = "kernels.scan";
	lmi_kcall k;
	lm_status st = lmi_kcall_start(f, out, info);
	if (st || (st = lmi_kcall_resolve(f, x, opts, algos, LMI_SCAN_ALGO_COUNT, LMI_SCAN_KOGGE_STONE,
	                                  &k)) != LM_OK)
		return st;
	bool hier = k.algo == LMI_SCAN_HIERARCHICAL;
	unsigned per_thread = k.algo == LMI_SCAN_BRENT_KUNG ? 2 : 1;
	if ((st = lmi_kcall_shape(&k, opts, hier, hier ? 4 : 1, per_thread)) != LM_OK) return st;
	/* the section lives in shared memory */
	if ((st = lmi_kcall_check_shared(&k, (int64_t)k.block * per_thread * k.coarsen)) != LM_OK)
		return st;

	size_t elem = lm_dtype_size(k.dtype);
	lmi_scan_run r = {.c = {.is_double = k.dtype == LM_FLOAT64, .algo = k.algo, .n = k.n,
	                        .block = k.block, .coarsen = k.coarsen, .inclusive = k.inclusive}};
	r.c.x = lmi_kcall_input(&k, x);
	r.c.y = lmi_kcall_output(&k, lm_empty(lm_tensor_ndim(x), lm_tensor_shape(x), k.dtype));
	if (k.backend == LMI_BACKEND_CPU)
		r.scratch = lmi_kcall_alloc(&k, lmi_cpu_scratch_bytes(k.n, elem));
	snprintf(k.name, sizeof k.name, "scan %s %s %s", k.algo_name,
	         k.inclusive ? "inclusive" : "exclusive", lm_dtype_name(k.dtype));
	k.bytes = 2.0 * (double)k.n * (double)elem; /* one read and one write of every element */
	return lmi_pattern_run(&pattern, &k, &r, out, info);
}
