/*
 * vector_add.h — the vector addition of the streams lecture (PMPP chapter 20 / ECE408 "streams
 * and task parallelism"), written once for CUDA and the emulator: C = A + B, one thread per
 * element. Launched once per segment on the segment's part of the vectors.
 * Included once (float only); macros: simt_macros.h. No include guard.
 * Host code: ../streams.c (emulator), ../cuda/streams.cu (CUDA).
 */

KERNEL vector_add(GLOBAL const float *A, GLOBAL const float *B, GLOBAL float *C, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float a = LOAD(A, i);
		float b = LOAD(B, i);
		STORE(C, i, ADD(a, b));
	}
}
