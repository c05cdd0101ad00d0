/*
 * capture.h — a capture's records (lumen/graph.h), shared by the recorder (capture.c, in the core:
 * the copies, fills and random draws call it) and the program that runs them (../ops/program.c,
 * where the op list's names and the devices are).
 */
#ifndef LUMEN_CAPTURE_H
#define LUMEN_CAPTURE_H

#include "backend/exec.h"
#include "core/lmi.h"
#include "lumen/graph.h"

typedef enum lmi_rec_kind { LMI_REC_OP, LMI_REC_COPY, LMI_REC_FILL, LMI_REC_RANDOM } lmi_rec_kind;

#define LMI_WHERE_MAX 96

typedef struct lmi_rec {
	lmi_rec_kind kind;
	lmi_op op;      /* LMI_REC_OP */
	lmi_params p;
	lm_dtype dtype; /* the loop's; the generator's for a random draw */
	char fname[40];
	char where[LMI_WHERE_MAX];
	int nsrc, ndst;
	int src[LMI_EXEC_SRC], dst[LMI_EXEC_DST]; /* value ids; -1: absent */
	double value;      /* a fill's */
	lmi_rng_call rng;  /* a random draw's kind and parameters (seed and offset drawn at each run) */
	lmi_fused *fused;  /* a fused kernel's program (a compiled call inside the capture), owned */
	bool added;        /* made by a pass (lm_capture_add_node), not recorded */
} lmi_rec;

typedef struct lmi_tvalue {
	int storage;
	lm_tensor *t;   /* +1: the value's geometry over the captured storage, no autograd */
	int next;       /* the next value on the same storage, -1 */
} lmi_tvalue;

typedef struct lmi_tstorage {
	lm_storage *s;  /* +1 */
	lm_store_kind kind;
	int input;      /* which input, or -1 */
	int64_t input_offset; /* that input's offset at the capture (elements) */
	int first;      /* the first value on it */
	int writes;
	bool made_here; /* allocated while the capture ran */
	bool escapes, output;
	char first_read[LMI_WHERE_MAX]; /* a const made here: where a node first read it */
} lmi_tstorage;

struct lm_capture {
	int refcount;
	lmi_rec *recs;
	int nrecs, caprecs;
	lmi_tvalue *vals;
	int nvals, capvals;
	lmi_tstorage *sts;
	int nsts, capsts;
	int ninputs, noutputs;
	int *inputs, *outputs; /* value ids */
	uint64_t serial0;
	lm_status broke;
	char why[640];
	lm_capture_where_fn where;
	void *ud;
};

/* A zeroed record at the end of c's (its src/dst -1), not yet counted: the caller fills it and
 * increments c->nrecs (a pass's new node: ../ops/program.c); NULL when memory ran out. */
lmi_rec *lmi_capture_append(lm_capture *c);
/* The value of tensor t in trace tr (added when new); -1 when memory ran out. */
int lmi_capture_value_of(lm_capture *tr, const lm_tensor *t);

#endif
