/*
 * vzs.h (internal) — what the scenes share beyond vz.h: reading the data flow of adds out of a
 * trace (which elements each add read and wrote, per step), an array's contents after a launch,
 * running a kernel on values recovered from a trace (the lecture's other algorithms on the same
 * input), and drawing pieces every scene uses (a cell with its value, a legend, a small chart).
 * Read next: addnet.c, common.c, scan.c.
 */
#ifndef LUMEN_VIZ_SCENES_VZS_H
#define LUMEN_VIZ_SCENES_VZS_H

#include "viz/vz.h"

/* ---------------------------------------------------------------- the data flow of adds */

/* One add event with what it read and where its sum went. */
typedef struct vzs_add {
	int64_t event;      /* the add event */
	double value;       /* the sum */
	int32_t thread;     /* in the block: warp * 32 + lane */
	int32_t dst;        /* element index written with the sum (-1: not stored) */
	int32_t src[2];     /* element indices read (-1: a register, e.g. a value loaded earlier) */
	uint8_t dst_array, src_array[2];
	uint16_t warp;
	uint8_t lane;
	uint32_t mask;      /* the warp instruction's active lanes */
} vzs_add;

/* One textbook step: a barrier phase of the block in which at least one thread added. */
typedef struct vzs_step {
	int trace_step;     /* the barrier phase (lm_trace_event.step) */
	int first, count;   /* its adds: adds[first .. first + count) */
	int warps_issued;   /* warps that issued the add instruction */
	int lanes;          /* active lanes over those warps */
	int stride;         /* |dst - farther source| of its adds (the lecture's stride), or 0 */
	uint64_t start_cycle, cycles;
} vzs_step;

typedef struct vzs_addnet {
	int launch;
	uint32_t block;
	int threads, warps;  /* of the block */
	int array;           /* the array the adds write (the rows of the picture) */
	int64_t lo, length;  /* the block's elements of it: lo .. lo + length - 1 */
	double *initial;     /* their contents before the first add step (NaN: unknown) */
	vzs_add *adds;
	int nadds;
	vzs_step *steps;
	int nsteps;
	bool truncated;      /* some of the block's events were not kept */
} vzs_addnet;

/* Reads the adds of one block of a launch. Errors (LM_ERR_ARG naming what): no such block, no
 * adds. */
lm_status vzs_addnet_build(const lm_trace *t, int launch, uint32_t block, vzs_addnet *out);
void vzs_addnet_free(vzs_addnet *n);
/* Values of the block's elements (lo ..) after step s (0: before the first add step); out has
 * length entries. */
void vzs_addnet_values(const vzs_addnet *n, int s, double *out);

/* The contents of array id after the stores of launches 0..launch (NaN where nothing was stored
 * yet; initial values come from the first load of each element). out: length entries. */
void vzs_array_after(const lm_trace *t, int array, int launch, double *out, int64_t length);

/* ---------------------------------------------------------------- runs the scenes make */

/* Runs a scan / reduce on values (float32 tensors), emulated with a trace, into run (which then
 * holds the trace). block 0: the kernel's default. */
lm_status vzs_run_scan(const double *x, int64_t n, const char *algo, int64_t block, bool exclusive,
                       lm_viz_run *run, const char *fname);
lm_status vzs_run_reduce(const double *x, int64_t n, const char *algo, int64_t block,
                         lm_viz_run *run, const char *fname);
/* Histogram of int32 bin indices. */
lm_status vzs_run_histogram(const int32_t *bins_of, int64_t n, int64_t bins, const char *algo,
                            int64_t block, int64_t coarsen, lm_viz_run *run, const char *fname);
lm_status vzs_run_divergence(const char *pattern, int64_t warps, int64_t block, lm_viz_run *run,
                             const char *fname);
/* 2-D convolution of img (h x w) with mask (mh x mw), emulated with a trace; tile: the output tile. */
lm_status vzs_run_conv2d(const double *img, int64_t h, int64_t w, const double *mask, int64_t mh,
                         int64_t mw, const char *algo, int64_t tile, lm_viz_run *run, const char *fname);
/* P = M N, M (m x k), N (k x n); trace_cap: events kept (0: the default). */
lm_status vzs_run_matmul(const double *a, const double *b, int64_t m, int64_t k, int64_t n,
                         const char *algo, int64_t tile, int64_t trace_cap, lm_viz_run *run,
                         const char *fname);
/* A sparse matrix from nnz triples (0-based) of an m x n matrix (float32). */
lm_sparse *vzs_sparse(const int32_t *rows, const int32_t *cols, const double *vals, int64_t nnz,
                      int64_t m, int64_t n, const char *fname);
/* y = A x in format (x: A's columns). */
lm_status vzs_run_spmv(const lm_sparse *a, const double *x, const char *format, int64_t block,
                       lm_viz_run *run, const char *fname);
/* The streams demo (modelled timeline) with `segments` segments of a vector of `bytes`; copy_engines
 * 0: the default. */
lm_status vzs_run_streams(int64_t segments, int64_t bytes, int64_t copy_engines, lm_viz_run *run,
                          const char *fname);
/* Counters only (trace_cap 1): for charts of counters against sizes. */
lm_status vzs_count_scan(int64_t n, const char *algo, double *adds, double *steps,
                         const char *fname);

/* The runs viz.show was given, copied into given (at most VZS_GIVEN); returns the first with a
 * trace, or NULL. */
#define VZS_GIVEN 4
const lm_viz_run *vzs_keep_runs(const vz_build *b, lm_viz_run *given, int *ngiven);
/* A panel column for run r (its title, its source) with the counters names it has. */
void vzs_panel_add(vz_panel *p, const char *title, const lm_viz_run *r, const char *const *names);
/* Columns for the given runs without a trace (measured ones): "<algo> (your run)". */
void vzs_panel_measured(vz_panel *p, const lm_viz_run *given, int n, const char *const *names);

/* Demonstration inputs: "arange" (1, 2, ...), "ones", "pmpp" (3 1 7 0 4 1 6 3 repeated),
 * "random" (integers 0..9 from a fixed seed). */
lm_status vzs_demo_values(const char *kind, int64_t n, double *out, const char *fname);

/* ---------------------------------------------------------------- drawing */

/* Dense rows: when cells are too narrow on screen to show their values (vzs_dense), a rows x cols
 * block of them is one image (a texel per cell) instead of a shape each — llvmpipe spends ~0.4 µs
 * per shape, and a 1,024-element scan has 30,000 cells. The scene keeps a vzs_grid per block. */
typedef struct vzs_grid {
	vz_image *img;
} vzs_grid;
bool vzs_dense(const vz_frame *f, float cell_w);
/* Draws the block at r (world) with colors[row * cols + col] and registers one grid cell (kind,
 * rows, cols; index = first) for picking; returns it for the scene to fill (group, step, ...). */
vz_cell *vzs_grid_draw(vz_frame *f, vzs_grid *g, vz_rect r, int rows, int cols, const vz_color *colors,
                       const char *kind, int32_t first);
void vzs_grid_free(vzs_grid *g);

/* A rows x cols matrix of cells (a tile, an image, a sparse matrix) with a state and a colour per
 * cell: drawn as cells (values inside when show_values) when each is at least 6 pixels wide and
 * there are at most 4096, else as one image (vzs_grid). Cells are registered with kind, group,
 * state names[state[i]], index i = row * cols + col (plus first), tag; as an image, one grid cell
 * whose element describe fills in (vzs_matrix_fill). */
typedef struct vzs_matrix {
	int rows, cols;
	const vz_color *color;      /* rows * cols */
	const double *value;        /* or NULL */
	const uint8_t *state;       /* rows * cols indices into names (NULL: names[0]) */
	const char *const *names;
	const char *kind, *group;
	int32_t first, tag;
	bool show_values;
	const bool *hatched;        /* cells drawn hatched (padding, ghost cells), or NULL */
} vzs_matrix;
/* Draws m at r (world); returns the grid cell when drawn as an image, else NULL. */
vz_cell *vzs_matrix_draw(vz_frame *f, vzs_grid *g, vz_rect r, const vzs_matrix *m);
/* Whether m is drawn as an image at this zoom. */
bool vzs_matrix_dense(const vz_frame *f, vz_rect r, int rows, int cols);
/* For a picked element of a matrix drawn as an image: the state, colour and value of cell i. */
void vzs_matrix_fill(vz_cell *c, const vzs_matrix *m, int64_t i);

/* A cell: its fill, a thin border, and its value when it fits (text colour for the fill). */
void vzs_value_cell(vz_frame *f, vz_rect r, vz_color fill, double value, bool show_value);
/* A legend entry: a swatch and a label; returns the x after it. */
float vzs_legend(vz_frame *f, float x, float y, vz_color c, bool hatched, const char *label);
/* Formats a value of a cell briefly ("136", "2.5", "1e+06"). */
char *vzs_short(char *buf, size_t cap, double v);
/* A line of small text at (x, y), also appended to keep (cap bytes, a line each): the numbers beside
 * a picture, kept for the hover of the cell the scene registers over them. */
void vzs_text_line(vz_frame *f, char *keep, size_t cap, float x, float y, vz_color c, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* A small line chart of series over x values (log2 axes when logx, logy): title, axes with the
 * ticks that fit, a polyline with dots per series, their labels, a dashed marker at mark_x (> 0). */
typedef struct vzs_series {
	const char *label;
	vz_color color;
	const double *y;
} vzs_series;
void vzs_chart(vz_frame *f, vz_rect r, const char *title, const double *x, int n, bool logx,
               bool logy, const vzs_series *s, int nseries, double mark_x);

/* ---------------------------------------------------------------- the compiled graph (graph_passes.c) */

/* The graph scene's view of an lm.graph Graph and its rewrites (lm_viz_passes, copied); graph.c
 * calls these in place of its own when it was given one. */
typedef struct vzs_passes vzs_passes;
vzs_passes *vzs_passes_new(const lm_viz_passes *d, const char *fname); /* NULL + error */
void vzs_passes_free(vzs_passes *p);
int vzs_passes_steps(const vzs_passes *p);
void vzs_passes_layout(vzs_passes *p, const vz_layout_ctx *c, float *ww, float *wh);
void vzs_passes_draw(vzs_passes *p, vz_frame *f);
void vzs_passes_title(vzs_passes *p, char *buf, size_t cap);
void vzs_passes_step_label(vzs_passes *p, int step, char *buf, size_t cap);
void vzs_passes_counters(vzs_passes *p, vz_panel *pn);
void vzs_passes_describe(vzs_passes *p, vz_cell *c, char *buf, size_t cap);

/* ---------------------------------------------------------------- the tree picture (tree.c) */

/* One block's elements as a row of cells per step with an arrow per add (scan, reduce). */
typedef struct vzs_tree {
	char name[32];        /* the algorithm ("kogge-stone") */
	const char *(*title)(const char *algo); /* its heading, in the labels' language when asked */
	char array[24];       /* the array the adds write, as the kernel names it */
	lm_viz_run run;
	vzs_addnet net;
	double *rows;         /* (nsteps + 1) x length: the values after each step */
	int *writer;          /* (nsteps + 1) x length: the add writing the cell in that step, or -1 */
	vzs_grid *grids;      /* a row as an image when its cells are too narrow (nsteps + 1) */
	vz_color *scratch;    /* length colours */
	vz_rect box;          /* layout (world) */
	float label_w, cell_w, cell_h, pitch, top;
} vzs_tree;

/* The label of row r >= 1 (row 0 is the input). */
typedef void (*vzs_row_label)(const vzs_tree *t, int r, char *buf, size_t cap, const void *ud);

/* From block `block` of launch 0 of the run's trace (the run is copied); title(algo) heads it. */
lm_status vzs_tree_build(vzs_tree *t, const lm_viz_run *run, uint32_t block,
                         const char *(*title)(const char *algo), const char *fname);
void vzs_tree_free(vzs_tree *t);
/* In box: a header line, then the rows in rows_h (0: the rest of the box). */
void vzs_tree_layout(vzs_tree *t, vz_rect box, float rows_h, const vz_layout_ctx *c);
/* Draws at time t (steps); registers every element as a cell (kind "element", group = name). */
void vzs_tree_draw(vz_frame *f, vzs_tree *t, double time, vzs_row_label label, const void *ud);
/* The hover text of one of its cells (filling a grid element's fields), as drawn at time t. */
void vzs_tree_describe(const vzs_tree *t, vz_cell *c, double time, char *buf, size_t cap);
/* The x of element i (its left edge). */
float vzs_tree_x(const vzs_tree *t, int64_t i);

#endif
