/*
 * scan_plan.h — the launches of a scan, written once for both hosts (../scan_emu.c and
 * ../cuda/scan.cu): the call, the kernels of scan.h with their arguments, and the hierarchical
 * plan.
 *
 * Design: level 0 scans the n input elements in sections of `section` elements (block,
 * 2 * block or coarsen * block, by variant), one block each. With more than one section every
 * block also writes its section's total to S; level 1 scans S in place (the same kernel,
 * inclusive), and so on until a level fits one section; then scan_add_sums adds each section's
 * predecessor totals back, from the deepest level up. A level whose section would be a single
 * element (Kogge-Stone with block 1) uses blocks of 2 so that each level shrinks.
 * Launch order: scan level 0, 1, ..., L-1, then add_sums level L-2, ..., 0.
 * Read next: scan.h (the kernels), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_SCAN_PLAN_H
#define LUMEN_KERNELS_BODY_SCAN_PLAN_H

#include "kernels/body/plan.h"

enum { LMI_SCAN_KOGGE_STONE = 0, LMI_SCAN_BRENT_KUNG, LMI_SCAN_HIERARCHICAL, LMI_SCAN_ALGO_COUNT };

/* A scan as asked: Y = the scan of X, n elements of host memory. */
typedef struct lmi_scan_call {
	int is_double;    /* element type: float (0) or double (1) */
	int algo;         /* LMI_SCAN_* */
	const void *x;    /* n input elements */
	void *y;          /* n output elements */
	int64_t n;        /* 1 .. 2^31 - 1 */
	unsigned block;   /* threads per block: a power of two, 1..1024 */
	unsigned coarsen; /* elements per thread (hierarchical; else 1) */
	int inclusive;
} lmi_scan_call;

/* The kernels' arguments; a level scans X (n elements) into Y, its block sums into S. */
typedef struct lmk_scan_args {
	LMK_PTR X;
	LMK_PTR Y;
	LMK_PTR S; /* NULL at the last level */
	unsigned n, coarsen, section;
	int exclusive;
} lmk_scan_args;

/* The kernels, in the order of LMI_SCAN_* (the block scans), then scan_add_sums. */
#define LMK_SCAN_KERNELS(K_)                                                                       \
	K_(scan_kogge_stone, (a->X, a->Y, a->n, a->exclusive, a->S))                               \
	K_(scan_brent_kung, (a->X, a->Y, a->n, a->exclusive, a->S))                                \
	K_(scan_coarsened, (a->X, a->Y, a->n, a->exclusive, a->S, a->coarsen))                     \
	K_(scan_add_sums, (a->Y, a->S, a->n, a->section))
enum { LMK_SCAN_KERNELS(LMK_KERNEL_ID) LMK_SCAN_KERNEL_COUNT };
LMK_STATIC_ASSERT((int)LMK_K_scan_coarsened == (int)LMI_SCAN_HIERARCHICAL,
                  "a variant is the index of its block scan");

#define LMK_SCAN_MAX_LEVELS 40

typedef struct lmk_scan_plan {
	int levels;
	unsigned section[LMK_SCAN_MAX_LEVELS];  /* elements per block at the level */
	unsigned sections[LMK_SCAN_MAX_LEVELS]; /* blocks of the level's scan: its block sums */
	int64_t len[LMK_SCAN_MAX_LEVELS];       /* elements the level scans */
	int nlaunches;
	lmk_launch launch[2 * LMK_SCAN_MAX_LEVELS];
} lmk_scan_plan;

static inline unsigned lmk_scan_section(int algo, unsigned block, unsigned coarsen)
{
	return algo == LMI_SCAN_BRENT_KUNG    ? 2 * block
	       : algo == LMI_SCAN_HIERARCHICAL ? coarsen * block
	                                       : block;
}

/* The levels and launches of c; elem: bytes per element (the section lives in shared memory). */
static inline void lmk_scan_plan_make(lmk_scan_plan *p, const lmi_scan_call *c, size_t elem)
{
	int64_t n = c->n;
	unsigned block[LMK_SCAN_MAX_LEVELS];
	p->levels = 0;
	p->nlaunches = 0;
	for (int l = 0; l < LMK_SCAN_MAX_LEVELS; l++) {
		block[l] = c->block;
		if (l > 0 && lmk_scan_section(c->algo, block[l], c->coarsen) < 2) block[l] = 2;
		p->section[l] = lmk_scan_section(c->algo, block[l], c->coarsen);
		p->sections[l] = lmk_blocks(n, p->section[l]);
		p->len[l] = n;
		p->levels = l + 1;
		lmk_launch s = lmk_launch_1d(c->algo, p->sections[l], block[l], p->section[l] * elem);
		s.part = l;
		p->launch[p->nlaunches++] = s;
		if (p->sections[l] <= 1) break;
		n = p->sections[l];
	}
	for (int l = p->levels - 2; l >= 0; l--) {
		lmk_launch s = lmk_launch_1d(LMK_K_scan_add_sums, p->sections[l] - 1, block[l], 0);
		s.part = l;
		p->launch[p->nlaunches++] = s;
	}
}

/* The arguments of launch l: level 0 reads x and writes y, deeper levels scan the block sums of
 * the level above in place; sums[k] holds level k's block sums. */
static inline lmk_scan_args lmk_scan_args_of(const lmk_scan_plan *p, const lmk_launch *l,
                                            const lmi_scan_call *c, LMK_PTR x, LMK_PTR y,
                                            LMK_PTR const *sums)
{
	int v = l->part;
	lmk_scan_args a = {v == 0 ? x : sums[v - 1], v == 0 ? y : sums[v - 1],
	                   v + 1 < p->levels ? sums[v] : LMK_NULL, (unsigned)p->len[v], c->coarsen,
	                   p->section[v], v == 0 && l->kernel != LMK_K_scan_add_sums && !c->inclusive};
	return a;
}

#endif
