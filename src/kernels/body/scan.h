/*
 * scan.h — the scan (prefix sum) kernels of the course, written once for CUDA and the emulator.
 *
 *   inclusive: Y[i] = X[0] + X[1] + ... + X[i]
 *   exclusive: Y[i] = X[0] + ... + X[i-1], Y[0] = 0   (= the inclusive scan of X shifted right)
 *
 * Each block scans one section of the input in shared memory. With S != NULL a block also writes
 * its section's total to S[blockIdx.x]; the host then scans S (recursively, the same way) and
 * launches scan_add_sums, which adds S[b - 1] to every element of section b: the hierarchical scan
 * of any length (PMPP 11.5). The host code: ../scan_emu.c (emulator), ../cuda/scan.cu (CUDA).
 *
 * The includer defines T (float or double) and KFN (the kernel name with the type's suffix);
 * macros: simt_macros.h. No include guard: included once per element type.
 * Read next: reduce.h, simt_macros.h.
 */

/* The element a scan of X reads at position i: 0 past the end; shifted by one when exclusive. */
DEVICE T KFN(scan_input)(GLOBAL const T *X, unsigned i, unsigned n, int exclusive)
{
	if (exclusive) return (i >= 1 && i - 1 < n) ? LOAD(X, i - 1) : (T)0;
	return i < n ? LOAD(X, i) : (T)0;
}

/*
 * v1 Kogge-Stone (PMPP 11.2): one element per thread; a section is blockDim.x elements.
 * In the step with stride s every thread t >= s adds the element s places to its left, so after
 * log2(blockDim) steps XY[t] holds the sum of XY[0..t]. Fast (log2 n steps) but not
 * work-efficient: n*log2(n) - (n - 1) adds where a sequential loop needs n - 1. Threads past the
 * end of the data (i >= n: the section is padded with zeros) add padding (ADD_PAD).
 * The barrier between reading and writing is essential: without it a thread could overwrite its
 * element before its right-hand neighbour has read the old value (a write-after-read race).
 */
KERNEL KFN(scan_kogge_stone)(GLOBAL const T *X, GLOBAL T *Y, unsigned n, int exclusive, GLOBAL T *S SHARED_DYN_ARG)
{
	SHARED_DYN(T, XY); /* XY: (blockDim.x) */
	unsigned t = threadIdx.x;
	unsigned i = blockIdx.x * blockDim.x + t;
	STORE(XY, t, KFN(scan_input)(X, i, n, exclusive));
	for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
		__syncthreads();
		T temp = (T)0;
		int adds = BRANCH(t >= stride); /* this thread adds in this step (and stores after) */
		if (adds) {
			T mine = LOAD(XY, t);
			T left = LOAD(XY, t - stride);
			temp = ADD_PAD(mine, left, i >= n);
		}
		__syncthreads();
		if (adds) STORE(XY, t, temp);
	}
	if (i < n) STORE(Y, i, LOAD(XY, t));
	if (S != NULL && t == blockDim.x - 1) STORE(S, blockIdx.x, LOAD(XY, t));
}

/*
 * v2 Brent-Kung (PMPP 11.4): two elements per thread; a section is 2*blockDim.x elements.
 * Up-sweep, a reduction tree: after the step with stride s, XY[k*2s - 1] holds the sum of the 2s
 * elements ending there. Down-sweep, a distribution tree: each partial sum is added to the position
 * stride places to its right that still lacks it. 2*log2(n) - 1 steps, but only 2n - 2 - log2(n)
 * adds: work-efficient. Fewer and fewer threads are active in the middle steps (see the trace).
 * An add whose result lies past the end of the data (its position >= n) works on padding.
 */
KERNEL KFN(scan_brent_kung)(GLOBAL const T *X, GLOBAL T *Y, unsigned n, int exclusive, GLOBAL T *S SHARED_DYN_ARG)
{
	SHARED_DYN(T, XY); /* XY: (2 * blockDim.x) */
	unsigned t = threadIdx.x, section = 2 * blockDim.x;
	unsigned i = blockIdx.x * section + t;
	STORE(XY, t, KFN(scan_input)(X, i, n, exclusive));
	STORE(XY, t + blockDim.x, KFN(scan_input)(X, i + blockDim.x, n, exclusive));
	for (unsigned stride = 1; stride <= blockDim.x; stride *= 2) {
		__syncthreads();
		unsigned index = (t + 1) * 2 * stride - 1;
		if (BRANCH(index < section)) {
			T mine = LOAD(XY, index);
			T left = LOAD(XY, index - stride);
			STORE(XY, index, ADD_PAD(mine, left, blockIdx.x * section + index >= n));
		}
	}
	for (unsigned stride = section / 4; stride > 0; stride /= 2) {
		__syncthreads();
		unsigned index = (t + 1) * stride * 2 - 1;
		if (BRANCH(index + stride < section)) {
			unsigned to = index + stride; /* the position that gains the partial sum */
			T mine = LOAD(XY, to);
			T left = LOAD(XY, index);
			STORE(XY, to, ADD_PAD(mine, left, blockIdx.x * section + to >= n));
		}
	}
	__syncthreads();
	if (i < n) STORE(Y, i, LOAD(XY, t));
	if (i + blockDim.x < n) STORE(Y, i + blockDim.x, LOAD(XY, t + blockDim.x));
	if (S != NULL && t == blockDim.x - 1) STORE(S, blockIdx.x, LOAD(XY, section - 1));
}

/*
 * v3 three-phase scan with thread coarsening (PMPP 11.5): a section is coarsen*blockDim.x
 * elements, thread t owning the `coarsen` consecutive ones from t*coarsen.
 *   load:    consecutive threads read consecutive elements (coalesced), into shared memory;
 *   phase 1: each thread scans its own subsection sequentially (no barrier needed);
 *   phase 2: Kogge-Stone over the subsection totals, the last element of each subsection;
 *   phase 3: each thread adds the total of all subsections before it to its other elements.
 * About 2n + (n/coarsen)*log2(blockDim) adds: nearly work-efficient, with few barriers. A thread's
 * adds of phases 1 and 3 come one after another: coarsen - 1 dependent steps each (`steps`).
 * Adds whose result lies past the end of the data (base + k >= n) work on padding.
 */
KERNEL KFN(scan_coarsened)(GLOBAL const T *X, GLOBAL T *Y, unsigned n, int exclusive, GLOBAL T *S, unsigned coarsen SHARED_DYN_ARG)
{
	SHARED_DYN(T, XY); /* XY: (coarsen * blockDim.x) */
	unsigned t = threadIdx.x, B = blockDim.x, section = coarsen * B;
	unsigned base = blockIdx.x * section;
	for (unsigned k = 0; k < coarsen; k++)
		STORE(XY, k * B + t, KFN(scan_input)(X, base + k * B + t, n, exclusive));
	__syncthreads();
	unsigned first = t * coarsen, last = first + coarsen - 1;
	for (unsigned k = first + 1; k <= last; k++) { /* phase 1 */
		T mine = LOAD(XY, k);
		T left = LOAD(XY, k - 1);
		STORE(XY, k, ADD_PAD(mine, left, base + k >= n));
	}
	for (unsigned stride = 1; stride < B; stride *= 2) { /* phase 2 */
		__syncthreads();
		T temp = (T)0;
		int adds = BRANCH(t >= stride);
		if (adds) {
			T mine = LOAD(XY, last);
			T left = LOAD(XY, last - stride * coarsen);
			temp = ADD_PAD(mine, left, base + last >= n);
		}
		__syncthreads();
		if (adds) STORE(XY, last, temp);
	}
	__syncthreads();
	if (BRANCH(t > 0)) { /* phase 3 */
		T before = LOAD(XY, first - 1);
		for (unsigned k = first; k < last; k++) {
			T mine = LOAD(XY, k);
			STORE(XY, k, ADD_PAD(mine, before, base + k >= n));
		}
	}
	__syncthreads();
	for (unsigned k = 0; k < coarsen; k++) {
		unsigned j = base + k * B + t;
		if (j < n) STORE(Y, j, LOAD(XY, k * B + t));
	}
	if (S != NULL && t == B - 1) STORE(S, blockIdx.x, LOAD(XY, section - 1));
}

/*
 * The last kernel of the hierarchical scan: block b adds S[b] (after S was scanned: the total of
 * sections 0..b) to every element of section b + 1. Launched with one block fewer than sections.
 */
KERNEL KFN(scan_add_sums)(GLOBAL T *Y, GLOBAL const T *S, unsigned n, unsigned section)
{
	unsigned b = blockIdx.x + 1;
	T before = LOAD(S, b - 1);
	for (unsigned k = threadIdx.x; k < section; k += blockDim.x) {
		unsigned i = b * section + k;
		if (i < n) STORE(Y, i, ADD(LOAD(Y, i), before));
	}
}
