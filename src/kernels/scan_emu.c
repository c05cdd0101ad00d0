/*
 * scan_emu.c — the host code of the emulated scans: the kernels of body/scan.h compiled for the
 * emulator, and the launches of body/scan_plan.h, as the CUDA host code (cuda/scan.cu) makes them.
 *
 * Design: the block sums of every level are allocated up front; each launch gets the arrays it
 * may touch, named as the kernels name them (X, Y; a level's sums S, S2, ..., S8), so a buffer
 * that several launches use keeps one trace array.
 * Read next: body/scan_plan.h (the launches), body/scan.h (the kernels), scan.c (the public call).
 */
#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define LMK_BODY "kernels/body/scan.h"
#include "kernels/body/both_types.h"

#define LMK_ARGS lmk_scan_args
LMI_EMU_KERNELS(LMK_SCAN_KERNELS, kernels)

/* The name of level v's block sums. */
static const char *sums_name(int v)
{
	static const char *const names[] = {"S", "S2", "S3", "S4", "S5", "S6", "S7", "S8"};
	return names[v < 8 ? v : 7];
}

static lm_status run_launches(lmi_simt *s, const lmi_scan_call *c, const lmk_scan_plan *p,
                              void *const *sums)
{
	lm_dtype dt = c->is_double ? LM_FLOAT64 : LM_FLOAT32;
	for (int i = 0; i < p->nlaunches; i++) {
		const lmk_launch *l = &p->launch[i];
		lmk_scan_args a = lmk_scan_args_of(p, l, c, (void *)c->x, c->y, sums);
		int v = l->part;
		bool add = l->kernel == LMK_K_scan_add_sums;
		lmi_simt_array arrays[3];
		int na = 0;
		if (!add && a.X != a.Y) arrays[na++] = lmi_emu_array("X", dt, a.X, p->len[v], 0, 0, true);
		arrays[na++] = lmi_emu_array(v ? sums_name(v - 1) : "Y", dt, a.Y, p->len[v], 0, 0, false);
		if (a.S) arrays[na++] = lmi_emu_array(sums_name(v), dt, a.S, p->sections[v], 0, 0, add);
		lmi_simt_launch L = lmi_emu_launch(kernels, c->is_double, l, &a, arrays, na);
		lm_status st = lmi_simt_run(s, &L);
		if (st) return st;
	}
	return LM_OK;
}

lm_status lmi_emu_scan(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_scan_call *c = &((lmi_scan_run *)run)->c;
	size_t elem = lm_dtype_size(k->dtype);
	lmk_scan_plan p;
	lmk_scan_plan_make(&p, c, elem);
	void *sums[LMK_SCAN_MAX_LEVELS] = {0};
	lm_status st = LM_OK;
	for (int l = 0; l + 1 < p.levels && st == LM_OK; l++)
		if (!(sums[l] = lm_alloc(p.sections[l] * elem)))
			st = lmi_fail(LM_ERR_NOMEM, "%s: out of memory for %u block sums", k->fname,
			              p.sections[l]);
	if (st == LM_OK) st = run_launches(s, c, &p, sums);
	for (int l = 0; l + 1 < p.levels; l++)
		if (sums[l]) lm_free(sums[l], p.sections[l] * elem);
	return st;
}
