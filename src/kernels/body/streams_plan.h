/*
 * streams_plan.h — the launches of the streams lecture, written once for both hosts
 * (../streams_emu.c and ../cuda/streams.cu): the call, the vector add of vector_add.h with its
 * arguments, the segments and the launch of each.
 *
 * Design: the vectors are cut into `segments` parts (segment s: elements [n s / segments,
 * n (s + 1) / segments)); each segment's vector add is one launch of ceil(len / block) blocks on
 * that part (an offset pointer), in the segment's stream on a GPU.
 * Read next: vector_add.h (the kernel), plan.h, ../streams.c (the modelled timeline).
 */
#ifndef LUMEN_KERNELS_BODY_STREAMS_PLAN_H
#define LUMEN_KERNELS_BODY_STREAMS_PLAN_H

#include "kernels/body/plan.h"

#define LMI_STREAMS_MAX_SEGMENTS 255 /* launches of one trace */

/* C = A + B over n floats (host arrays) in segments. */
typedef struct lmi_streams_call {
	int64_t n;
	int segments; /* 1..LMI_STREAMS_MAX_SEGMENTS */
	unsigned block;
	const float *a, *b;
	float *c;
} lmi_streams_call;

typedef struct lmk_add_args {
	LMK_PTR A;
	LMK_PTR B;
	LMK_PTR C;
	unsigned n;
} lmk_add_args;

/* One kernel, float only. */
#define LMK_STREAMS_KERNELS(K_) K_(vector_add, (a->A, a->B, a->C, a->n))
enum { LMK_STREAMS_KERNELS(LMK_KERNEL_ID) LMK_STREAMS_KERNEL_COUNT };

/* Segment s of the call: its first element and its length. */
static inline void lmk_segment(const lmi_streams_call *c, int s, int64_t *lo, int64_t *len)
{
	*lo = c->n * s / c->segments;
	*len = c->n * (s + 1) / c->segments - *lo;
}

/* The launch of a segment of len elements. */
static inline lmk_launch lmk_segment_launch(const lmi_streams_call *c, int64_t len)
{
	lmk_launch l = lmk_launch_1d(LMK_K_vector_add, lmk_blocks(len, c->block), c->block, 0);
	return l;
}

#endif
