/*
 * reduce.h — the sum-reduction kernels of the course (PMPP chapter 10), written once for CUDA and
 * the emulator.
 *
 * Each block reduces one segment of the input to a partial sum and adds it to output[0] with one
 * atomicAdd (the host zeroes output first): a segmented reduction of any length in one launch.
 * The versions differ in which threads add in each step, and where the partial sums live:
 *   v1 naive       in global memory; thread t owns element 2t; active threads spread apart, so
 *                  the warps keep issuing with fewer and fewer useful lanes (control divergence)
 *   v2 convergent  in global memory; the active threads stay packed at the front: whole warps
 *                  retire and the rest run full (and their accesses are coalesced)
 *   v3 shared      as v2 but in shared memory: one global read per element, then only shared traffic
 *   v4 coarsened   as v3, each thread first summing 2*coarsen elements serially: fewer blocks,
 *                  fewer barriers and fewer idle steps for the same input
 * In every tree step, thread t adds the partial sum `stride` places to its right, which starts at
 * element i + stride: when that is past the end of the data (i + stride >= n) the thread adds
 * padding zeros (ADD_PAD), so the data adds of a block are its elements - 1 (n - blocks in all).
 * The includer defines T and KFN (see scan.h); macros: simt_macros.h. No include guard.
 * Host code: ../reduce_emu.c (emulator), ../cuda/reduce.cu (CUDA).
 */

/* v1: segment = 2*blockDim.x elements of input, reduced in place (the host pads a copy of the
 * n elements with zeros). */
KERNEL KFN(reduce_naive)(GLOBAL T *input, GLOBAL T *output, unsigned n)
{
	unsigned segment = 2 * blockDim.x * blockIdx.x;
	unsigned i = segment + 2 * threadIdx.x;
	for (unsigned stride = 1; stride <= blockDim.x; stride *= 2) {
		if (BRANCH(threadIdx.x % stride == 0)) {
			T mine = LOAD(input, i);
			T right = LOAD(input, i + stride);
			STORE(input, i, ADD_PAD(mine, right, i + stride >= n));
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) ATOMIC_ADD(output, 0, LOAD(input, segment));
}

/* v2: the same segment, thread t adding element t + stride into element t. */
KERNEL KFN(reduce_convergent)(GLOBAL T *input, GLOBAL T *output, unsigned n)
{
	unsigned segment = 2 * blockDim.x * blockIdx.x;
	unsigned i = segment + threadIdx.x;
	for (unsigned stride = blockDim.x; stride >= 1; stride /= 2) {
		if (BRANCH(threadIdx.x < stride)) {
			T mine = LOAD(input, i);
			T right = LOAD(input, i + stride);
			STORE(input, i, ADD_PAD(mine, right, i + stride >= n));
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) ATOMIC_ADD(output, 0, LOAD(input, segment));
}

/* v3: the first step reads two elements from global memory; the tree runs in shared memory. */
KERNEL KFN(reduce_shared)(GLOBAL const T *input, GLOBAL T *output, unsigned n SHARED_DYN_ARG)
{
	SHARED_DYN(T, input_s); /* input_s: (blockDim.x) */
	unsigned segment = 2 * blockDim.x * blockIdx.x;
	unsigned t = threadIdx.x, i = segment + t;
	T a = i < n ? LOAD(input, i) : (T)0;
	T b = i + blockDim.x < n ? LOAD(input, i + blockDim.x) : (T)0;
	STORE(input_s, t, ADD_PAD(a, b, i + blockDim.x >= n));
	for (unsigned stride = blockDim.x / 2; stride >= 1; stride /= 2) {
		__syncthreads();
		if (BRANCH(t < stride)) {
			T mine = LOAD(input_s, t);
			T right = LOAD(input_s, t + stride);
			STORE(input_s, t, ADD_PAD(mine, right, i + stride >= n));
		}
	}
	if (t == 0) ATOMIC_ADD(output, 0, LOAD(input_s, 0));
}

/* v4: segment = 2*coarsen*blockDim.x; each thread sums its 2*coarsen elements (stride
 * blockDim.x apart, so a warp's loads stay coalesced) before the shared-memory tree: 2*coarsen - 1
 * adds one after another, each a dependent step. */
KERNEL KFN(reduce_coarsened)(GLOBAL const T *input, GLOBAL T *output, unsigned n, unsigned coarsen SHARED_DYN_ARG)
{
	SHARED_DYN(T, input_s); /* input_s: (blockDim.x) */
	unsigned segment = coarsen * 2 * blockDim.x * blockIdx.x;
	unsigned t = threadIdx.x, i = segment + t;
	T sum = i < n ? LOAD(input, i) : (T)0;
	for (unsigned tile = 1; tile < coarsen * 2; tile++) {
		unsigned j = i + tile * blockDim.x;
		if (j < n) sum = ADD(sum, LOAD(input, j));
	}
	STORE(input_s, t, sum);
	for (unsigned stride = blockDim.x / 2; stride >= 1; stride /= 2) {
		__syncthreads();
		if (BRANCH(t < stride)) {
			T mine = LOAD(input_s, t);
			T right = LOAD(input_s, t + stride);
			STORE(input_s, t, ADD_PAD(mine, right, i + stride >= n));
		}
	}
	if (t == 0) ATOMIC_ADD(output, 0, LOAD(input_s, 0));
}
