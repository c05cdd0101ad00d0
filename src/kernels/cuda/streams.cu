/*
 * streams.cu — the streams lecture on a real GPU: the vector add of ../body/vector_add.h over
 * segments, with pinned host memory (cudaMallocHost: asynchronous copies need it; pageable memory
 * would be staged and serialised by the driver), serially on one stream and overlapped on a
 * stream per segment, with events around every segment's copies and kernel.
 *
 * Design: the inputs are copied into pinned buffers before any timing. A schedule is: an event
 * `start` on the legacy default stream, then per segment (issued depth-first, as in the textbook
 * code): an event, the two host-to-device copies, an event, the kernel, an event, the
 * device-to-host copy, an event; then `stop` on the default stream (which waits for the blocking
 * streams). Each segment's times are its events' times after `start`: when the stream reached
 * them (a copy that waited for the engine shows as a longer copy). One warm-up pair of
 * schedules, then 3; the medians of the totals are reported, the spans of the last.
 * Read next: ../body/streams_plan.h, ../streams.c (the modelled timeline of the emulator).
 */
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#include "kernels/body/vector_add.h"

#define LMK_SFX0 /* one type: no suffix */
LMK_CUDA_KERNEL(LMK_STREAMS_KERNELS, lmk_add_args, float)

#define RUNS 3
#define MAX_SEGMENTS LMI_STREAMS_MAX_SEGMENTS

typedef struct bufs {
	float *ha, *hb, *hc; /* pinned host */
	float *da, *db, *dc; /* device */
	cudaStream_t stream[MAX_SEGMENTS];
	cudaEvent_t ev[MAX_SEGMENTS][4], start, stop;
} bufs;

/* One schedule: nstreams 1 (serial) or one per segment (overlapped). */
static int schedule(const lmi_streams_call *c, bufs *b, int nstreams, double *total,
                    lmi_cuda_span *spans, char *msg, size_t msg_cap)
{
	int rc = 0;
	float ms = 0;
	float t[4];
	CUDA_TRY(cudaEventRecord(b->start, 0));
	for (int s = 0; s < c->segments; s++) {
		int64_t lo, len;
		lmk_segment(c, s, &lo, &len);
		size_t bytes = (size_t)len * sizeof(float);
		cudaStream_t st = b->stream[nstreams == 1 ? 0 : s];
		lmk_launch l = lmk_segment_launch(c, len);
		lmk_add_args a = {b->da + lo, b->db + lo, b->dc + lo, (unsigned)len};
		CUDA_TRY(cudaEventRecord(b->ev[s][0], st));
		CUDA_TRY(cudaMemcpyAsync(b->da + lo, b->ha + lo, bytes, cudaMemcpyHostToDevice, st));
		CUDA_TRY(cudaMemcpyAsync(b->db + lo, b->hb + lo, bytes, cudaMemcpyHostToDevice, st));
		CUDA_TRY(cudaEventRecord(b->ev[s][1], st));
		lmk_run(&l, &a, st, (const float *)0);
		CUDA_LAUNCHED_PLAN(lmk_kernel_name[l.kernel], &l);
		CUDA_TRY(cudaEventRecord(b->ev[s][2], st));
		CUDA_TRY(cudaMemcpyAsync(b->hc + lo, b->dc + lo, bytes, cudaMemcpyDeviceToHost, st));
		CUDA_TRY(cudaEventRecord(b->ev[s][3], st));
	}
	CUDA_TRY(cudaEventRecord(b->stop, 0));
	CUDA_TRY(cudaEventSynchronize(b->stop));
	CUDA_TRY(cudaEventElapsedTime(&ms, b->start, b->stop));
	*total = ms;
	for (int s = 0; s < c->segments; s++) {
		for (int e = 0; e < 4; e++) CUDA_TRY(cudaEventElapsedTime(&t[e], b->start, b->ev[s][e]));
		spans[s].h2d_start = t[0];
		spans[s].h2d_end = t[1];
		spans[s].kernel_end = t[2];
		spans[s].d2h_end = t[3];
	}
out:
	return rc;
}

int lmi_cuda_streams(const lmi_streams_call *c, lmi_cuda_streams_result *res, char *msg,
                     size_t msg_cap)
{
	int rc = 0;
	bufs *b = (bufs *)calloc(1, sizeof *b);
	size_t bytes = (size_t)c->n * sizeof(float);
	double ser[RUNS], ovl[RUNS];
	if (!b) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	if (c->segments < 1 || c->segments > MAX_SEGMENTS) {
		snprintf(msg, msg_cap, "segments %d must be in 1..%d", c->segments, MAX_SEGMENTS);
		free(b);
		return (int)cudaErrorInvalidValue;
	}
	CUDA_TRY(cudaMallocHost((void **)&b->ha, bytes));
	CUDA_TRY(cudaMallocHost((void **)&b->hb, bytes));
	CUDA_TRY(cudaMallocHost((void **)&b->hc, bytes));
	CUDA_TRY(cudaMalloc((void **)&b->da, bytes));
	CUDA_TRY(cudaMalloc((void **)&b->db, bytes));
	CUDA_TRY(cudaMalloc((void **)&b->dc, bytes));
	memcpy(b->ha, c->a, bytes);
	memcpy(b->hb, c->b, bytes);
	res->pinned = 1;
	for (int s = 0; s < c->segments; s++) {
		CUDA_TRY(cudaStreamCreate(&b->stream[s]));
		for (int e = 0; e < 4; e++) CUDA_TRY(cudaEventCreate(&b->ev[s][e]));
	}
	CUDA_TRY(cudaEventCreate(&b->start));
	CUDA_TRY(cudaEventCreate(&b->stop));
	for (int r = -1; r < RUNS; r++) { /* r = -1: the warm-up */
		double ts = 0, to = 0;
		if ((rc = schedule(c, b, 1, &ts, res->serial, msg, msg_cap)) != 0) goto out;
		if ((rc = schedule(c, b, c->segments, &to, res->overlapped, msg, msg_cap)) != 0) goto out;
		if (r >= 0) ser[r] = ts, ovl[r] = to;
	}
	memcpy(c->c, b->hc, bytes);
	lmk_note_kernel(res->kernels, lmk_kernel_name[0]);
	res->serial_ms = lmk_median(ser, RUNS);
	res->overlapped_ms = lmk_median(ovl, RUNS);
out:
	for (int s = 0; s < MAX_SEGMENTS; s++) {
		if (b->stream[s]) cudaStreamDestroy(b->stream[s]);
		for (int e = 0; e < 4; e++)
			if (b->ev[s][e]) cudaEventDestroy(b->ev[s][e]);
	}
	if (b->start) cudaEventDestroy(b->start);
	if (b->stop) cudaEventDestroy(b->stop);
	if (b->ha) cudaFreeHost(b->ha);
	if (b->hb) cudaFreeHost(b->hb);
	if (b->hc) cudaFreeHost(b->hc);
	if (b->da) cudaFree(b->da);
	if (b->db) cudaFree(b->db);
	if (b->dc) cudaFree(b->dc);
	free(b);
	return rc;
}
