/*
 * cpu_loops_sumscan.h (internal) — the sum and the scan of one dtype at one register width, written
 * once for the vector paths: cpu_loops_avx2.c and cpu_loops_avx512.c include it twice each (float32
 * and float64) inside their target region, after defining what a register is and does:
 *
 *   SS_T       the element type           SS_V       the register type
 *   SS_SUF     the name suffix (f32)      SS_W       lanes per register
 *   SS_OP(op)  the intrinsic of op (setzero, set1, loadu, storeu, stream, add) for SS_V
 *   SS_HSUM(v) the lanes' sum, as SS_T    SS_SCAN(v) inclusive scan of the lanes
 *   SS_SHIFT1(v) lanes up by one, lane 0 = 0 (inclusive -> exclusive)
 *   SS_LAST(v) the last lane in every lane    SS_FIRST(v) lane 0 as SS_T
 *
 * Both walk 4 registers a step. The sums keep four register accumulators; the running sum the
 * scan returns adds the same registers in the same order, so it equals sum_* bit for bit. The scan
 * scans each register in place, then offsets it by the running carry plus the totals of the
 * registers before it; outputs go to memory with streaming stores where aligned to a register.
 * The macros are undefined at the end, ready for the next dtype.
 */
#define SS_CAT_(a, b) a##b
#define SS_CAT(a, b) SS_CAT_(a, b)

static double SS_CAT(sum_, SS_SUF)(const void *xv, int64_t n)
{
	const SS_T *x = xv;
	int64_t i = 0;
	SS_V a = SS_OP(setzero)(), b = a, c = a, d = a;
	for (; i + 4 * SS_W <= n; i += 4 * SS_W) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 2 * SS_W);
		a = SS_OP(add)(a, SS_OP(loadu)(x + i));
		b = SS_OP(add)(b, SS_OP(loadu)(x + i + SS_W));
		c = SS_OP(add)(c, SS_OP(loadu)(x + i + 2 * SS_W));
		d = SS_OP(add)(d, SS_OP(loadu)(x + i + 3 * SS_W));
	}
	SS_T s = SS_HSUM(SS_OP(add)(SS_OP(add)(a, b), SS_OP(add)(c, d)));
	for (; i < n; i++) s += x[i];
	return s;
}

static double SS_CAT(scan_, SS_SUF)(const void *xv, void *yv, int64_t n, double carry_in,
                                    int exclusive, int stream)
{
	const SS_T *x = xv;
	SS_T *y = yv, carry = (SS_T)carry_in;
	int64_t i = 0;
	stream = stream && ((uintptr_t)y & (sizeof(SS_V) - 1)) == 0;
	SS_V sa = SS_OP(setzero)(), sb = sa, sc = sa, sd = sa, c = SS_OP(set1)(carry);
	for (; i + 4 * SS_W <= n; i += 4 * SS_W) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 2 * SS_W);
		SS_V xa = SS_OP(loadu)(x + i), xb = SS_OP(loadu)(x + i + SS_W);
		SS_V xe = SS_OP(loadu)(x + i + 2 * SS_W), xf = SS_OP(loadu)(x + i + 3 * SS_W);
		sa = SS_OP(add)(sa, xa), sb = SS_OP(add)(sb, xb);
		sc = SS_OP(add)(sc, xe), sd = SS_OP(add)(sd, xf);
		SS_V a = SS_SCAN(xa), b = SS_SCAN(xb), e = SS_SCAN(xe), f = SS_SCAN(xf);
		/* the carry into each register: c, then c plus the totals of the registers before it */
		SS_V cb = SS_OP(add)(c, SS_LAST(a)), ce = SS_OP(add)(cb, SS_LAST(b));
		SS_V cf = SS_OP(add)(ce, SS_LAST(e)), next = SS_OP(add)(cf, SS_LAST(f));
		if (exclusive) a = SS_SHIFT1(a), b = SS_SHIFT1(b), e = SS_SHIFT1(e), f = SS_SHIFT1(f);
		a = SS_OP(add)(a, c), b = SS_OP(add)(b, cb);
		e = SS_OP(add)(e, ce), f = SS_OP(add)(f, cf);
		c = next;
		if (stream) {
			SS_OP(stream)(y + i, a), SS_OP(stream)(y + i + SS_W, b);
			SS_OP(stream)(y + i + 2 * SS_W, e), SS_OP(stream)(y + i + 3 * SS_W, f);
		} else {
			SS_OP(storeu)(y + i, a), SS_OP(storeu)(y + i + SS_W, b);
			SS_OP(storeu)(y + i + 2 * SS_W, e), SS_OP(storeu)(y + i + 3 * SS_W, f);
		}
	}
	carry = SS_FIRST(c);
	SS_T s = SS_HSUM(SS_OP(add)(SS_OP(add)(sa, sb), SS_OP(add)(sc, sd)));
	for (; i < n; i++) {
		SS_T v = x[i];
		y[i] = exclusive ? carry : carry + v;
		carry += v;
		s += v;
	}
	if (stream) _mm_sfence(); /* streaming stores are weakly ordered */
	return s;
}

#undef SS_CAT
#undef SS_CAT_
#undef SS_T
#undef SS_V
#undef SS_SUF
#undef SS_W
#undef SS_OP
#undef SS_HSUM
#undef SS_SCAN
#undef SS_SHIFT1
#undef SS_LAST
#undef SS_FIRST
