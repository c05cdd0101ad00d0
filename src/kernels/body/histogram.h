/*
 * histogram.h — the histogram kernels of the course (PMPP chapter 9), written once for CUDA and
 * the emulator.
 *
 * Every element of data falls into one bin; the kernels count how many fall into each. Many
 * threads add to the same counter, so the additions must be atomic, and same-address atomics are
 * executed one after the other (the trace shows the queue: aux is an atomic's place in it). The
 * versions differ in where the atomics go and how many there are:
 *   v1 global atomic  one atomicAdd on the global histogram per element: many threads of a block
 *                     hit the same bins in the same step, each atomic a long global round trip
 *   v2 privatized     each block counts into its own copy in shared memory (short latency, and
 *                     only its own threads contend), then adds its non-zero bins to the global
 *                     histogram: at most bins global atomics per block
 *   v3 aggregated     privatized, and each thread takes `coarsen` consecutive elements, counting
 *                     a run of equal bins locally and adding it with one atomic when the bin
 *                     changes: on inputs with long runs (images, sorted data) far fewer atomics
 * v1 and v2 partition the input interleaved (thread i takes i, i + all threads, ...), so that a
 * warp's loads are consecutive (coalesced); v3 partitions it contiguously, so that runs in the
 * input stay runs in each thread's sequence, which aggregation needs.
 *
 * The includer defines T (the element type of data: unsigned char or int) and KFN (the kernel
 * name with the type's suffix); macros: simt_macros.h. No include guard.
 * Host code: ../histogram_emu.c (emulator), ../cuda/histogram.cu (CUDA).
 */

/* The bin of a value: the value itself (bin indices, checked by the host), or for the bytes of a
 * text (scaled != 0) b * bins / 256, so that the 256 byte values spread evenly over the bins. */
DEVICE unsigned KFN(histogram_bin)(T v, unsigned bins, int scaled)
{
	return scaled ? (unsigned)v * bins / 256u : (unsigned)v;
}

/* v1: one global atomic per element. */
KERNEL KFN(histogram_global_atomic)(GLOBAL const T *data, unsigned n, GLOBAL unsigned *histo, unsigned bins,
                                    int scaled)
{
	unsigned stride = blockDim.x * gridDim.x;
	for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		T v = LOAD(data, i);
		ATOMIC_ADD(histo, KFN(histogram_bin)(v, bins, scaled), 1u);
	}
}

/* v2: a private histogram per block in shared memory (bins counters, zeroed first), merged into
 * the global one after a barrier: only bins that the block saw cost a global atomic. */
KERNEL KFN(histogram_privatized)(GLOBAL const T *data, unsigned n, GLOBAL unsigned *histo, unsigned bins,
                                 int scaled SHARED_DYN_ARG)
{
	SHARED_DYN(unsigned, histo_s); /* histo_s: (bins) */
	for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) STORE(histo_s, b, 0u);
	__syncthreads();
	unsigned stride = blockDim.x * gridDim.x;
	for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		T v = LOAD(data, i);
		ATOMIC_ADD(histo_s, KFN(histogram_bin)(v, bins, scaled), 1u);
	}
	__syncthreads();
	for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) {
		unsigned count = LOAD(histo_s, b);
		if (count > 0) ATOMIC_ADD(histo, b, count);
	}
}

/* v3: privatized, with coarsening (coarsen consecutive elements per thread) and aggregation: a
 * thread counts a run of one bin in a register (accumulator) and adds it with a single atomic
 * when the bin changes, and once more at the end. */
KERNEL KFN(histogram_aggregated)(GLOBAL const T *data, unsigned n, GLOBAL unsigned *histo, unsigned bins,
                                 int scaled, unsigned coarsen SHARED_DYN_ARG)
{
	SHARED_DYN(unsigned, histo_s); /* histo_s: (bins) */
	for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) STORE(histo_s, b, 0u);
	__syncthreads();
	unsigned first = (blockIdx.x * blockDim.x + threadIdx.x) * coarsen;
	unsigned accumulator = 0, prev_bin = 0; /* a run of accumulator elements in prev_bin */
	for (unsigned i = first; i < first + coarsen && i < n; i++) {
		T v = LOAD(data, i);
		unsigned bin = KFN(histogram_bin)(v, bins, scaled);
		if (bin == prev_bin) {
			accumulator++;
		} else {
			if (accumulator > 0) ATOMIC_ADD(histo_s, prev_bin, accumulator);
			accumulator = 1;
			prev_bin = bin;
		}
	}
	if (accumulator > 0) ATOMIC_ADD(histo_s, prev_bin, accumulator);
	__syncthreads();
	for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) {
		unsigned count = LOAD(histo_s, b);
		if (count > 0) ATOMIC_ADD(histo, b, count);
	}
}
