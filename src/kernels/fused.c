/*
 * fused.c — a compiled program's fused group (lm.graph; ../ops/program.c) run as one of the
 * course's kernels: emulated (body/fused.h on the SIMT emulator: a trace the threads scene draws,
 * each input loaded once and each result stored once per thread, modelled cycles), on the CPU (the
 * engine's own fused kernel, generated C or interpreted, timed) or on a GPU (body/fused.h under
 * nvcc: a generic kernel that interprets the group, timed). The program's runs themselves use
 * the engine's kernel; this is how a student looks inside one.
 *
 * Design: the program (../ops/program.c, lm_program_kernel) maps the engine's instructions to
 * the body's codes and the group's geometry to at most 4 merged dims (body/fused_plan.h's
 * lmi_fused_call) and says how its CPU runs the group (lmi_fused_cpu); lmi_kernel_fused hands
 * them to the pattern driver.
 * Read next: body/fused_plan.h, body/fused.h, fused_emu.c.
 */
#include <stdio.h>

#include "kernels/patterns.h"

static int fused_cpu(const lmi_kcall *k, void *run)
{
	const lmi_fused_run *r = run;
	(void)k;
	return r->cpu->run(r->cpu->ud);
}

static unsigned fused_cpu_impl(const lmi_kcall *k, const void *run, char *buf, size_t cap)
{
	const lmi_fused_run *r = run;
	(void)k;
	snprintf(buf, cap, "the engine's fused kernel: %s", r->cpu->impl(r->cpu->ud));
	return LMI_CPU_IS_VARIANT;
}

static int fused_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run, lmi_cuda_timing *t, char *msg,
                      size_t msg_cap)
{
	(void)k;
	if (!api->fused) {
		snprintf(msg, msg_cap, "this device table has no fused kernel");
		return 1;
	}
	return api->fused(&((lmi_fused_run *)run)->c, t, msg, msg_cap);
}

static lm_status fused_finish(lm_kernel_info *info, const lmi_kcall *k, void *run, const lmi_simt_counters *emu)
{
	const lmi_fused_run *r = run;
	(void)k, (void)emu;
	lmi_info_add(info, "instructions", r->c.prog.ninstr);
	lmi_info_add(info, "inputs", r->c.prog.nin);
	lmi_info_add(info, "outputs", r->c.prog.nout);
	return LM_OK;
}

static const lmi_pattern pattern = {
	.name = "fused",
	.body = "body/fused.h",
	.emu = lmi_emu_fused,
	.cpu = fused_cpu,
	.cuda = fused_cuda,
	.finish = fused_finish,
	.cpu_impl = fused_cpu_impl,
};

lm_status lmi_kernel_fused(const char *fname, const lmi_fused_call *call, lm_tensor *const *ops,
                           const lmi_fused_cpu *cpu, const char *what, const lm_kernel_opts *opts, lm_tensor **out,
                           lm_kernel_info **info)
{
	lmi_kcall k;
	lmi_fused_run r;
	memset(&r, 0, sizeof r);
	lm_status st = lmi_kcall_start(fname, out, info);
	if (st) return st;
	r.c = *call;
	r.cpu = cpu;
	int nops = r.c.prog.nout + r.c.prog.nin;
	lm_dtype dt = r.c.is_double ? LM_FLOAT64 : LM_FLOAT32;
	static const char *const algos[] = {"fused"};
	if ((st = lmi_kcall_begin(fname, opts, algos, 1, 0, LMI_RUNS_ALL, r.c.prog.n, dt, &k)) != LM_OK) return st;
	k.any_block = true;
	if ((st = lmi_kcall_shape(&k, opts, false, 1, 1)) != LM_OK) return st;
	r.c.block = k.block;
	lmi_kcall_output(&k, lm_tensor_retain(ops[0]));
	double bytes = 0;
	for (int j = 0; j < nops; j++) {
		lmi_kcall_operand(&k, r.c.op[j], (size_t)r.c.len[j] * lm_dtype_size(dt));
		bytes += (double)r.c.len[j];
	}
	snprintf(k.name, sizeof k.name, "fused %s %s", what, lm_dtype_name(dt));
	k.bytes = bytes * (double)lm_dtype_size(dt);
	return lmi_pattern_run(&pattern, &k, &r, out, info);
}
