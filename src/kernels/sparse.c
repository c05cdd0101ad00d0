/*
 * sparse.c — lm_sparse: a sparse matrix held in COO, CSR, ELL and JDS at once (the formats of PMPP
 * chapter 14), built from a dense matrix or from (row, col, val) triples.
 *
 * Design: the triples are checked, sorted by row then column (two stable counting sorts), and the
 * other formats built from them once (sparse_formats.c), so every SpMV call and every scene reads
 * the same arrays. COO's col and val are CSR's. Immutable and refcounted (a Lua userdata holds one
 * reference). All indices are 0-based int32, as the kernels read them.
 * Read next: sparse_formats.h (the arrays), spmv.c (the pattern).
 */
#include <stdatomic.h>
#include <string.h>

#include "kernels/patterns.h"
#include "kernels/sparse_formats.h"

struct lm_sparse {
	atomic_long refcount;
	int64_t m, n, nnz, width;
	lm_dtype dtype;
	size_t elem;
	int32_t *row, *col; /* COO, sorted by (row, col); col and val are also CSR's */
	void *val;
	int32_t *row_ptr, *row_nnz;
	int32_t *ell_col;
	void *ell_val;
	int32_t *perm, *iter_ptr, *jds_nnz, *jds_col;
	void *jds_val;
};

#define F "kernels.sparse"

/* The arrays of a, with their sizes in bytes (for allocation and freeing). */
typedef struct slot {
	void **p;
	size_t bytes;
} slot;

static int slots(lm_sparse *a, slot *s)
{
	size_t i4 = sizeof(int32_t), m = (size_t)a->m, nnz = (size_t)a->nnz, w = (size_t)a->width;
	int k = 0;
	s[k++] = (slot){(void **)&a->row, nnz * i4};
	s[k++] = (slot){(void **)&a->col, nnz * i4};
	s[k++] = (slot){&a->val, nnz * a->elem};
	s[k++] = (slot){(void **)&a->row_ptr, (m + 1) * i4};
	s[k++] = (slot){(void **)&a->row_nnz, m * i4};
	s[k++] = (slot){(void **)&a->ell_col, w * m * i4};
	s[k++] = (slot){&a->ell_val, w * m * a->elem};
	s[k++] = (slot){(void **)&a->perm, m * i4};
	s[k++] = (slot){(void **)&a->iter_ptr, (w + 1) * i4};
	s[k++] = (slot){(void **)&a->jds_nnz, m * i4};
	s[k++] = (slot){(void **)&a->jds_col, nnz * i4};
	s[k++] = (slot){&a->jds_val, nnz * a->elem};
	return k;
}

/* Allocates the arrays whose sizes are known (all when ell_too; else those before ELL's, whose
 * width is not known yet). Every array gets at least 8 bytes, so none is NULL. */
static lm_status alloc_arrays(lm_sparse *a, bool ell_too)
{
	slot s[16];
	int n = slots(a, s);
	for (int k = ell_too ? 5 : 0; k < (ell_too ? n : 5); k++) {
		if (*s[k].p) continue;
		*s[k].p = lm_alloc(s[k].bytes + 8);
		if (!*s[k].p)
			return lmi_fail(LM_ERR_NOMEM, "%s: out of memory for a %lld x %lld matrix with %lld "
			                "nonzeros", F, (long long)a->m, (long long)a->n, (long long)a->nnz);
	}
	return LM_OK;
}

static void free_arrays(lm_sparse *a)
{
	slot s[16];
	int n = slots(a, s);
	for (int k = 0; k < n; k++)
		if (*s[k].p) lm_free(*s[k].p, s[k].bytes + 8);
}

static lm_sparse *new_sparse(int64_t m, int64_t n, int64_t nnz, lm_dtype dt)
{
	if (m < 1 || n < 1 || m > INT32_MAX || n > INT32_MAX)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: shape %lld x %lld: each side must be in "
		                     "1..2147483647", F, (long long)m, (long long)n);
	if (nnz > INT32_MAX)
		return lmi_fail_null(LM_ERR_ARG, "%s: %lld nonzeros are more than the 32-bit indices of the "
		                     "formats allow", F, (long long)nnz);
	lm_sparse *a = lm_alloc(sizeof *a);
	if (!a) return lmi_fail_null(LM_ERR_NOMEM, "%s: out of memory", F);
	memset(a, 0, sizeof *a);
	atomic_init(&a->refcount, 1);
	a->m = m;
	a->n = n;
	a->nnz = nnz;
	a->dtype = dt;
	a->elem = lm_dtype_size(dt);
	if (alloc_arrays(a, false) != LM_OK) {
		free_arrays(a);
		lm_free(a, sizeof *a);
		return NULL;
	}
	return a;
}

/* COO is sorted and complete: build CSR (row_ptr), then ELL and JDS. */
static lm_sparse *finish(lm_sparse *a)
{
	a->width = lmi_sparse_csr(a->m, a->nnz, a->row, a->row_ptr, a->row_nnz);
	if (a->width * a->m > INT32_MAX) {
		lm_sparse_release(a);
		return lmi_fail_null(LM_ERR_ARG, "%s: ELL would need %lld x %lld slots, more than its "
		                     "32-bit indices allow", F, (long long)a->width, (long long)a->m);
	}
	if (alloc_arrays(a, true) != LM_OK) {
		lm_sparse_release(a);
		return NULL;
	}
	lmi_sparse_ell(a->m, a->width, a->row_ptr, a->col, a->val, a->elem, a->ell_col, a->ell_val);
	lmi_sparse_jds(a->m, a->width, a->row_ptr, a->col, a->val, a->elem, a->perm, a->iter_ptr,
	               a->jds_nnz, a->jds_col, a->jds_val);
	return a;
}

lm_sparse *lm_sparse_from_dense(const lm_tensor *dense)
{
	if (!dense) return lmi_fail_null(LM_ERR_ARG, "%s: the matrix is NULL", F);
	lm_dtype dt = lm_tensor_dtype(dense);
	if (lm_tensor_device(dense) != LM_CPU)
		return lmi_fail_null(LM_ERR_DEVICE, "%s: the matrix is on %s; pass a CPU tensor", F,
		                     lm_device_name(lm_tensor_device(dense)));
	if (dt != LM_FLOAT32 && dt != LM_FLOAT64)
		return lmi_fail_null(LM_ERR_DTYPE, "%s: the matrix has dtype %s; give float32 or float64", F,
		                     lm_dtype_name(dt));
	if (lm_tensor_ndim(dense) != 2)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: the matrix %s must be 2-D", F, lmi_shape_s(dense));
	lm_tensor *c = lm_contiguous(dense);
	if (!c) return NULL;
	int64_t m = lm_tensor_size(c, 0), n = lm_tensor_size(c, 1), nnz = 0;
	bool dbl = dt == LM_FLOAT64;
	const float *f = lm_tensor_data(c);
	const double *d = lm_tensor_data(c);
	for (int64_t i = 0; i < m * n; i++) nnz += dbl ? d[i] != 0 : f[i] != 0;
	lm_sparse *a = new_sparse(m, n, nnz, dt);
	if (a) {
		int64_t k = 0;
		for (int64_t i = 0; i < m * n; i++) {
			if (dbl ? d[i] == 0 : f[i] == 0) continue;
			a->row[k] = (int32_t)(i / n);
			a->col[k] = (int32_t)(i % n);
			if (dbl) ((double *)a->val)[k] = d[i];
			else ((float *)a->val)[k] = f[i];
			k++;
		}
		a = finish(a);
	}
	lm_tensor_release(c);
	return a;
}

static int64_t index_at(const lm_tensor *t, int64_t i)
{
	const void *d = lm_tensor_data(t);
	return lm_tensor_dtype(t) == LM_INT64 ? ((const int64_t *)d)[i] : ((const int32_t *)d)[i];
}

static lm_status check_indices(const char *what, const lm_tensor *t, int64_t nnz, int64_t hi,
                               int base, const char *side)
{
	if (!t) return lmi_fail(LM_ERR_ARG, "%s: %s is NULL", F, what);
	if (lm_tensor_dtype(t) != LM_INT32 && lm_tensor_dtype(t) != LM_INT64)
		return lmi_fail(LM_ERR_DTYPE, "%s: %s has dtype %s; give integer indices (int32 or int64)", F,
		                what, lm_dtype_name(lm_tensor_dtype(t)));
	if (lm_tensor_ndim(t) != 1 || lm_tensor_numel(t) != nnz)
		return lmi_fail(LM_ERR_SHAPE, "%s: %s %s must be 1-D with one entry per value (%lld)", F, what,
		                lmi_shape_s(t), (long long)nnz);
	int64_t v, at = lmi_first_out_of_range(t, base, hi + base, &v);
	if (at >= 0)
		return lmi_fail(LM_ERR_INDEX, "%s: %s[%lld] = %lld is out of range %d..%lld (the matrix has "
		                "%lld %s)", F, what, (long long)(at + base), (long long)v, base,
		                (long long)(hi - 1 + base), (long long)hi, side);
	return LM_OK;
}

/* Stable counting sort of the entry order `ord` by key[ord[i]] in 0..nkeys-1 into out. */
static lm_status sort_by(const int32_t *key, int64_t nkeys, const int32_t *ord, int32_t *out,
                         int64_t nnz)
{
	int64_t *start = lm_alloc((size_t)(nkeys + 1) * sizeof *start);
	if (!start) return lmi_fail(LM_ERR_NOMEM, "%s: out of memory", F);
	memset(start, 0, (size_t)(nkeys + 1) * sizeof *start);
	for (int64_t i = 0; i < nnz; i++) start[key[ord[i]] + 1]++;
	for (int64_t k = 0; k < nkeys; k++) start[k + 1] += start[k];
	for (int64_t i = 0; i < nnz; i++) out[start[key[ord[i]]]++] = ord[i];
	lm_free(start, (size_t)(nkeys + 1) * sizeof *start);
	return LM_OK;
}

lm_sparse *lm_sparse_from_coo(const lm_tensor *rows, const lm_tensor *cols, const lm_tensor *vals,
                              int64_t m, int64_t n, int base)
{
	if (base != 0 && base != 1)
		return lmi_fail_null(LM_ERR_ARG, "%s: index base %d must be 0 or 1", F, base);
	if (!vals) return lmi_fail_null(LM_ERR_ARG, "%s: vals is NULL", F);
	lm_dtype dt = lm_tensor_dtype(vals);
	if (dt != LM_FLOAT32 && dt != LM_FLOAT64)
		return lmi_fail_null(LM_ERR_DTYPE, "%s: vals has dtype %s; give float32 or float64", F,
		                     lm_dtype_name(dt));
	if (lm_tensor_ndim(vals) != 1)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: vals %s must be 1-D", F, lmi_shape_s(vals));
	int64_t nnz = lm_tensor_numel(vals);
	lm_sparse *a = new_sparse(m, n, nnz, dt);
	if (!a) return NULL;
	lm_tensor *rc = NULL, *cc = NULL, *vc = NULL;
	int32_t *r32 = NULL, *c32 = NULL, *ord = NULL, *tmp = NULL;
	size_t ib = (size_t)nnz * sizeof(int32_t) + 8;
	if (check_indices("rows", rows, nnz, m, base, "rows") != LM_OK ||
	    check_indices("cols", cols, nnz, n, base, "columns") != LM_OK)
		goto out_fail;
	rc = lm_contiguous(rows);
	cc = rc ? lm_contiguous(cols) : NULL;
	vc = cc ? lm_contiguous(vals) : NULL;
	r32 = vc ? lm_alloc(ib) : NULL;
	c32 = r32 ? lm_alloc(ib) : NULL;
	ord = c32 ? lm_alloc(ib) : NULL;
	tmp = ord ? lm_alloc(ib) : NULL;
	if (!tmp) {
		if (vc) lmi_fail(LM_ERR_NOMEM, "%s: out of memory", F);
		goto out_fail;
	}
	for (int64_t i = 0; i < nnz; i++) {
		r32[i] = (int32_t)(index_at(rc, i) - base);
		c32[i] = (int32_t)(index_at(cc, i) - base);
		ord[i] = (int32_t)i;
	}
	/* by column, then stably by row: sorted by (row, col), duplicates in the order given */
	if (sort_by(c32, n, ord, tmp, nnz) != LM_OK || sort_by(r32, m, tmp, ord, nnz) != LM_OK)
		goto out_fail;
	for (int64_t i = 0; i < nnz; i++) {
		a->row[i] = r32[ord[i]];
		a->col[i] = c32[ord[i]];
		memcpy((char *)a->val + (size_t)i * a->elem,
		       (const char *)lm_tensor_data(vc) + (size_t)ord[i] * a->elem, a->elem);
	}
	lm_free(r32, ib);
	lm_free(c32, ib);
	lm_free(ord, ib);
	lm_free(tmp, ib);
	lm_tensor_release(rc);
	lm_tensor_release(cc);
	lm_tensor_release(vc);
	return finish(a);
out_fail:
	if (r32) lm_free(r32, ib);
	if (c32) lm_free(c32, ib);
	if (ord) lm_free(ord, ib);
	if (tmp) lm_free(tmp, ib);
	lm_tensor_release(rc);
	lm_tensor_release(cc);
	lm_tensor_release(vc);
	lm_sparse_release(a);
	return NULL;
}

lm_sparse *lm_sparse_retain(lm_sparse *a)
{
	if (a) atomic_fetch_add(&a->refcount, 1);
	return a;
}

void lm_sparse_release(lm_sparse *a)
{
	if (!a || atomic_fetch_sub(&a->refcount, 1) != 1) return;
	free_arrays(a);
	lm_free(a, sizeof *a);
}

int64_t lm_sparse_rows(const lm_sparse *a) { return a->m; }
int64_t lm_sparse_cols(const lm_sparse *a) { return a->n; }
int64_t lm_sparse_nnz(const lm_sparse *a) { return a->nnz; }
lm_dtype lm_sparse_dtype(const lm_sparse *a) { return a->dtype; }
int64_t lm_sparse_ell_width(const lm_sparse *a) { return a->width; }
int64_t lm_sparse_ell_padding(const lm_sparse *a) { return a->m * a->width - a->nnz; }

lm_tensor *lm_sparse_to_dense(const lm_sparse *a)
{
	lm_tensor *d = lm_zeros(2, (int64_t[]){a->m, a->n}, a->dtype);
	if (!d) return NULL;
	for (int64_t i = 0; i < a->nnz; i++) {
		int64_t at = (int64_t)a->row[i] * a->n + a->col[i];
		if (a->dtype == LM_FLOAT64) ((double *)lm_tensor_data(d))[at] += ((double *)a->val)[i];
		else ((float *)lm_tensor_data(d))[at] += ((float *)a->val)[i];
	}
	return d;
}

/* The arrays of a format, by name: pointer, element count, dtype. */
static bool find_array(const lm_sparse *a, const char *format, const char *name, const void **p,
                       int64_t *len, lm_dtype *dt)
{
	struct {
		const char *format, *name;
		const void *p;
		int64_t len;
		bool is_val;
	} t[] = {
		{"coo", "row", a->row, a->nnz, false},          {"coo", "col", a->col, a->nnz, false},
		{"coo", "val", a->val, a->nnz, true},           {"csr", "row_ptr", a->row_ptr, a->m + 1, false},
		{"csr", "col", a->col, a->nnz, false},          {"csr", "val", a->val, a->nnz, true},
		{"ell", "col", a->ell_col, a->width * a->m, false},
		{"ell", "val", a->ell_val, a->width * a->m, true},
		{"ell", "row_nnz", a->row_nnz, a->m, false},    {"jds", "perm", a->perm, a->m, false},
		{"jds", "iter_ptr", a->iter_ptr, a->width + 1, false},
		{"jds", "col", a->jds_col, a->nnz, false},      {"jds", "val", a->jds_val, a->nnz, true},
		{"jds", "row_nnz", a->jds_nnz, a->m, false},
	};
	for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
		if (strcmp(t[k].format, format) == 0 && strcmp(t[k].name, name) == 0) {
			*p = t[k].p;
			*len = t[k].len;
			*dt = t[k].is_val ? a->dtype : LM_INT32;
			return true;
		}
	return false;
}

lm_tensor *lm_sparse_array(const lm_sparse *a, const char *format, const char *name)
{
	const void *p;
	int64_t len;
	lm_dtype dt;
	if (!format || !name || !find_array(a, format, name, &p, &len, &dt))
		return lmi_fail_null(LM_ERR_ARG, "%s: no array '%s' in format '%s' (coo: row, col, val; csr: "
		                     "row_ptr, col, val; ell: col, val, row_nnz; jds: perm, iter_ptr, col, "
		                     "val, row_nnz)", F, name ? name : "(null)", format ? format : "(null)");
	return lm_from_data(p, 1, &len, dt);
}

/* For spmv.c: the raw arrays. */
void lmi_sparse_raw(const lm_sparse *a, lmi_sparse_view *v)
{
	v->m = a->m;
	v->n = a->n;
	v->nnz = a->nnz;
	v->width = a->width;
	v->dtype = a->dtype;
	v->row = a->row;
	v->col = a->col;
	v->val = a->val;
	v->row_ptr = a->row_ptr;
	v->row_nnz = a->row_nnz;
	v->ell_col = a->ell_col;
	v->ell_val = a->ell_val;
	v->perm = a->perm;
	v->iter_ptr = a->iter_ptr;
	v->jds_nnz = a->jds_nnz;
	v->jds_col = a->jds_col;
	v->jds_val = a->jds_val;
}
