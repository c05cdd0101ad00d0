/*
 * winograd_loops.h — the inner loops of the Winograd F(2x2, 3x3) convolution (winograd.c has the
 * algorithm, the layouts and the drivers). A template: the includer defines
 *   WT       the element type (float, double)        WV      its vector type (or WT itself)
 *   WVW      lanes of WV                             WLOAD(p), WSTORE(p, v), WZERO()
 *   WFN(n)   the name of function n for this type (n ## _f32, n ## _f64)
 * and gets four transforms, each vectorised across channels (the innermost dim of every buffer):
 *   in_tf      V[16][t][cp]  = B^T d B    of each tile's 4x4 input patch d
 *   out_tf     y (2x2)       = A^T M A    of each tile's 16 products, plus the bias
 *   out_tf_adj dM[16][t][kp] = A g A^T    (the adjoint of out_tf: g the tile's 2x2 gradient)
 *   in_tf_adj  dx (4x4)     += B dV B^T   (the adjoint of in_tf, overlapping patches added)
 *       B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  A^T = [1 1 1 0; 0 1 -1 -1]
 * Buffers: the image padded, as (rows, wp pixels, cp channels); V and dM as 16 planes of ld rows
 * (tiles) by cp (or kp) channels; y / g as (oh, ow, kp). Tile t of a block starting at t0 has its
 * patch's top-left pixel at (2 ty, 2 tx), ty = t / tw, tx = t % tw; output pixels beyond (oh, ow)
 * (odd sizes) are neither written nor read (read as 0). Channel counts are multiples of 16.
 * Read next: winograd.c.
 */

/* d rows -> B^T d (applied to 4 rows of 4) and the same on columns. */
#define WBT(a0, a1, a2, a3, o0, o1, o2, o3)                                                         \
	do {                                                                                        \
		o0 = a0 - a2;                                                                           \
		o1 = a1 + a2;                                                                           \
		o2 = a2 - a1;                                                                           \
		o3 = a1 - a3;                                                                           \
	} while (0)
/* the adjoint: B applied to 4 values */
#define WB(a0, a1, a2, a3, o0, o1, o2, o3)                                                          \
	do {                                                                                        \
		o0 = a0;                                                                                \
		o1 = a1 - a2 + a3;                                                                      \
		o2 = a1 + a2 - a0;                                                                      \
		o3 = -a3;                                                                               \
	} while (0)

static void WFN(in_tf)(const WT *xp, int64_t wp, int64_t cp, int64_t t0, int64_t nt, int64_t tw,
                       WT *v, int64_t ldv)
{
	for (int64_t t = 0; t < nt; t++) {
		int64_t ty = (t0 + t) / tw, tx = (t0 + t) % tw;
		const WT *p = xp + (2 * ty * wp + 2 * tx) * cp;
		WT *o = v + t * cp;
		for (int64_t c = 0; c < cp; c += WVW) {
			WV d[4][4], r[4][4];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++) d[i][j] = WLOAD(p + (i * wp + j) * cp + c);
			for (int j = 0; j < 4; j++) WBT(d[0][j], d[1][j], d[2][j], d[3][j], r[0][j], r[1][j], r[2][j], r[3][j]);
			for (int i = 0; i < 4; i++) {
				WV q0, q1, q2, q3;
				WBT(r[i][0], r[i][1], r[i][2], r[i][3], q0, q1, q2, q3);
				WSTORE(o + (4 * i + 0) * ldv * cp + c, q0);
				WSTORE(o + (4 * i + 1) * ldv * cp + c, q1);
				WSTORE(o + (4 * i + 2) * ldv * cp + c, q2);
				WSTORE(o + (4 * i + 3) * ldv * cp + c, q3);
			}
		}
	}
}

static void WFN(out_tf)(const WT *m, int64_t ldm, int64_t kp, int64_t t0, int64_t nt, int64_t tw,
                        const WT *bias, WT *y, int64_t oh, int64_t ow)
{
	for (int64_t t = 0; t < nt; t++) {
		int64_t ty = (t0 + t) / tw, tx = (t0 + t) % tw;
		const WT *src = m + t * kp;
		bool r1 = 2 * ty + 1 < oh, c1 = 2 * tx + 1 < ow;
		WT *o = y + (2 * ty * ow + 2 * tx) * kp;
		for (int64_t k = 0; k < kp; k += WVW) {
			WV s[4][4], a[2][4];
			for (int x = 0; x < 16; x++) s[x / 4][x % 4] = WLOAD(src + x * ldm * kp + k);
			for (int j = 0; j < 4; j++) {
				a[0][j] = s[0][j] + s[1][j] + s[2][j];
				a[1][j] = s[1][j] - s[2][j] - s[3][j];
			}
			WV bv = bias ? WLOAD(bias + k) : WZERO();
			for (int i = 0; i < 2; i++) {
				if (i && !r1) break;
				WSTORE(o + i * ow * kp + k, a[i][0] + a[i][1] + a[i][2] + bv);
				if (c1) WSTORE(o + (i * ow + 1) * kp + k, a[i][1] - a[i][2] - a[i][3] + bv);
			}
		}
	}
}

static void WFN(out_tf_adj)(const WT *gy, int64_t oh, int64_t ow, int64_t kp, int64_t t0,
                            int64_t nt, int64_t tw, WT *dm, int64_t ldm)
{
	for (int64_t t = 0; t < nt; t++) {
		int64_t ty = (t0 + t) / tw, tx = (t0 + t) % tw;
		bool r1 = 2 * ty + 1 < oh, c1 = 2 * tx + 1 < ow;
		const WT *g = gy + (2 * ty * ow + 2 * tx) * kp;
		WT *o = dm + t * kp;
		for (int64_t k = 0; k < kp; k += WVW) {
			WV z = WZERO();
			WV g00 = WLOAD(g + k), g01 = c1 ? WLOAD(g + kp + k) : z;
			WV g10 = r1 ? WLOAD(g + ow * kp + k) : z, g11 = r1 && c1 ? WLOAD(g + (ow + 1) * kp + k) : z;
			/* A g: rows g0, g0 + g1, g0 - g1, -g1 of the 2x2 (rows of 2); then the same on columns */
			WV r[4][2] = {{g00, g01}, {g00 + g10, g01 + g11}, {g00 - g10, g01 - g11}, {-g10, -g11}};
			for (int i = 0; i < 4; i++) {
				WSTORE(o + (4 * i + 0) * ldm * kp + k, r[i][0]);
				WSTORE(o + (4 * i + 1) * ldm * kp + k, r[i][0] + r[i][1]);
				WSTORE(o + (4 * i + 2) * ldm * kp + k, r[i][0] - r[i][1]);
				WSTORE(o + (4 * i + 3) * ldm * kp + k, -r[i][1]);
			}
		}
	}
}

static void WFN(in_tf_adj)(const WT *dv, int64_t ldv, int64_t cp, int64_t t0, int64_t nt,
                           int64_t tw, WT *dxp, int64_t wp)
{
	for (int64_t t = 0; t < nt; t++) {
		int64_t ty = (t0 + t) / tw, tx = (t0 + t) % tw;
		const WT *src = dv + t * cp;
		WT *p = dxp + (2 * ty * wp + 2 * tx) * cp;
		for (int64_t c = 0; c < cp; c += WVW) {
			WV s[4][4], r[4][4];
			for (int x = 0; x < 16; x++) s[x / 4][x % 4] = WLOAD(src + x * ldv * cp + c);
			for (int j = 0; j < 4; j++) WB(s[0][j], s[1][j], s[2][j], s[3][j], r[0][j], r[1][j], r[2][j], r[3][j]);
			for (int i = 0; i < 4; i++) {
				WV q[4];
				WB(r[i][0], r[i][1], r[i][2], r[i][3], q[0], q[1], q[2], q[3]);
				for (int j = 0; j < 4; j++) {
					WT *d = p + (i * wp + j) * cp + c;
					WSTORE(d, WLOAD(d) + q[j]);
				}
			}
		}
	}
}

#undef WBT
#undef WB
