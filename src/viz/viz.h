/*
 * viz.h — the visualizer's interface to the program and the Lua binding (src/lua/viz.c): one
 * window (a real one when there is a display, an offscreen one otherwise) showing one scene at a
 * time, drawn from kernel results (runs) or built from options, with controls, PNG snapshots,
 * picking and the layout of what is drawn.
 *
 * Design: plain C on SDL2 + OpenGL 3.3 core (libepoxy) + SDL2_ttf + libpng; knows the trace
 * format (lumen/kernels.h), not Lua. Functions return lm_status and leave the message in
 * lm_last_error() (the core's thread-local error), naming the Lua function given as fname.
 * lm_viz_pump must be called often (the REPL's tick, the Lua hook while a script runs): it handles
 * input, advances the animation and redraws only when something changed.
 * Read next: vz.h (scenes and the renderer), viewer.c, docs/viz.md.
 */
#ifndef LUMEN_VIZ_H
#define LUMEN_VIZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lumen/core.h"
#include "lumen/dlp.h"
#include "lumen/kernels.h"

/* ---------------------------------------------------------------- what scenes are drawn from */

#define LM_VIZ_MAX_COUNTERS 48

typedef struct lm_viz_counter {
	char name[32];
	double value;
} lm_viz_counter;

/* One operation of a streams timeline (info.timeline, lm_kernel_span): a copy or a kernel of one
 * segment, on an engine's track, in one schedule; times in ms from the schedule's start. */
typedef struct lm_viz_span {
	char schedule[12];    /* "serial", "overlapped" */
	char op[8];           /* "h2d", "kernel", "d2h" */
	char track[8];        /* "h2d", "d2h", "copy", "compute" */
	int segment, stream;  /* 0-based */
	double start_ms, end_ms, bytes;
} lm_viz_span;

/* One kernel run: what info.* says (docs/API.md "kernels") and its trace, if any. */
typedef struct lm_viz_run {
	char pattern[24];     /* "scan", "reduce", ... */
	char algo[32];        /* "kogge-stone", ... */
	char source[8];       /* "emu", "cpu", "cuda" */
	char device[96];      /* the CPU or GPU (emu: "SIMT emulator on <cpu>") */
	char provenance[96];
	int ncounters;
	lm_viz_counter counters[LM_VIZ_MAX_COUNTERS];
	lm_trace *trace;      /* NULL for runs without a trace; see vz_run_clear for ownership */
	lm_viz_span *spans;   /* streams: the timeline (NULL: none); owned when owns_spans */
	int nspans;
	bool owns_spans;
} lm_viz_run;

/* A run from a trace alone (viz.show(trace)): pattern and algo from the trace's name, counters
 * counted from the trace. r->trace is borrowed (the caller keeps the trace alive for the call). */
void lm_viz_run_from_trace(lm_viz_run *r, lm_trace *t);
/* A run from a kernel's info, the C object itself (viz.show(info) takes this path: no table read
 * back, no number through text): the run holds its own reference to the trace and its own copy of
 * the timeline; lm_viz_run_clear releases them. */
void lm_viz_run_from_info(lm_viz_run *r, const lm_kernel_info *info);
void lm_viz_run_clear(lm_viz_run *r);

/* Options of a scene as key = value pairs (from a Lua table or from --opts k=v,...). */
#define LM_VIZ_MAX_OPTS 16
typedef struct lm_viz_opt {
	char key[32];
	char str[128];   /* the value as text (numbers too) */
	double num;
	bool is_number;
} lm_viz_opt;

typedef struct lm_viz_opts {
	int n;
	lm_viz_opt kv[LM_VIZ_MAX_OPTS];
} lm_viz_opts;

/* Adds key = value (a number when the text is one); LM_ERR_ARG when full or the key is too long. */
lm_status lm_viz_opts_add(lm_viz_opts *o, const char *key, const char *value, const char *fname);
/* Adds key = a number, kept as the number it is (the text is for messages only). */
lm_status lm_viz_opts_add_number(lm_viz_opts *o, const char *key, double value, const char *fname);
/* Parses "k=v,k=v" (--opts). */
lm_status lm_viz_opts_parse(lm_viz_opts *o, const char *text, const char *fname);

/* ---------------------------------------------------------------- the window */

typedef struct lm_viz_open_opts {
	int width, height;    /* window size in screen points; 0: 1280 x 720 */
	bool offscreen;       /* never show a window (--headless) */
} lm_viz_open_opts;

/* Whether this build has a window at all (always true where this header is compiled in). */
#define LM_VIZ_BUILT 1

/* Process-wide settings, before the first open: --headless makes every window offscreen. */
void lm_viz_set_headless(bool on);
/* Called with true when a window that must be pumped opens (a visible one), false when it closes:
 * the program arms its Lua hook so that events are handled while scripts run. */
void lm_viz_set_live_callback(void (*fn)(bool live));

/* Opens the window, or resizes it when open with another size. Offscreen (no display, --headless):
 * the same rendering, nothing on screen. Errors: no video driver, no OpenGL 3.3 context, shaders
 * that do not build, the font missing. */
lm_status lm_viz_open(const lm_viz_open_opts *o, const char *fname);
void lm_viz_close(void);
bool lm_viz_is_open(void);
/* True when the window is offscreen; *why says why ("no display", "--headless", ...). */
bool lm_viz_is_offscreen(const char **why);
/* Text to tell the user once after an offscreen open ("rendering offscreen: ..."), else NULL. */
const char *lm_viz_take_notice(void);

/* Shows runs (one or more results of one pattern) in scene (NULL: the scene that draws their
 * pattern), opening the window if needed. */
lm_status lm_viz_show(const lm_viz_run *runs, int nruns, const char *scene, const lm_viz_opts *o,
                      const char *fname);
/* Shows a scene built from options alone (it runs its own demonstration input). */
lm_status lm_viz_scene(const char *scene, const lm_viz_opts *o, const char *fname);

/* ---------------------------------------------------------------- tensors, graphs, models */

/* viz.show(tensor): the tensor scene (storage, shape, strides, offset); t is retained. */
lm_status lm_viz_show_tensor(const lm_tensor *t, const lm_viz_opts *o, const char *fname);
/* viz.show('quant', w [, {activations = x}]): the quant scene over the weight matrix w (rows =
 * output channels) and the activations x (tokens x input channels; NULL: a demonstration's);
 * both are read when the scene is made. */
lm_status lm_viz_show_quant(const lm_tensor *w, const lm_tensor *x, const lm_viz_opts *o, const char *fname);
/* viz.show(tensor with a grad_fn): the graph scene over g (lm_graph_capture), which it takes
 * (freed with the scene, or here on failure); check: per listed node, the gradcheck error of
 * lm_graph_gradcheck (copied), or NULL. */
struct lm_graph;
lm_status lm_viz_show_graph(struct lm_graph *g, const double *check, const lm_viz_opts *o,
                            const char *fname);

/* viz.show(module): one entry per leaf module, in order. weight: a Conv2d's filters (out, in, kh,
 * kw), copied by the scene; NULL for other layers. */
typedef struct lm_viz_layer {
	char name[64];    /* its path in the model: "1", "features.3" */
	char kind[32];    /* "Linear", "Conv2d", "ReLU", ... */
	char desc[96];    /* what tostring shows: "784 -> 256" */
	int64_t params;
	const lm_tensor *weight;
} lm_viz_layer;

typedef struct lm_viz_model {
	char name[64];    /* the model's class */
	char id[32];      /* which model (its address): shown again, it keeps its histograms */
	int nlayers;
	const lm_viz_layer *layers;
	int64_t params;
} lm_viz_model;

lm_status lm_viz_show_model(const lm_viz_model *m, const lm_viz_opts *o, const char *fname);

/* viz.show('attention', {weights = W, tokens = {...}}): W (layers x heads x T x T, query rows,
 * key columns) as float64, row-major; tokens: T UTF-8 strings; causal: keys after the query are
 * masked (their weights must be 0); source: where the weights came from ("computed by Lumen
 * (CPU), ..."). Everything is copied when the scene is made. */
typedef struct lm_viz_attention {
	const double *w;
	int layers, heads, T;
	const char *const *tokens;
	bool causal;
	const char *source;
} lm_viz_attention;
lm_status lm_viz_show_attention(const lm_viz_attention *a, const lm_viz_opts *o, const char *fname);

/* viz.show('rnn', {rnn = n1, lstm = n2, rnn_clipped = n3, lstm_clipped = n4}): the norm of the
 * gradient reaching h_t, t = 1..T, for each network (NULL: not given), unclipped and with the
 * gradient reaching each h_t clipped to norm clip (0: no clipping shown); copied. */
enum { LM_VIZ_RNN, LM_VIZ_LSTM, LM_VIZ_RNN_CLIPPED, LM_VIZ_LSTM_CLIPPED, LM_VIZ_RNN_SERIES };
typedef struct lm_viz_rnn {
	const double *norm[LM_VIZ_RNN_SERIES];
	int T;
	double clip;
	const char *source;
} lm_viz_rnn;
lm_status lm_viz_show_rnn(const lm_viz_rnn *r, const lm_viz_opts *o, const char *fname);
/* viz.show(model, {input = x}): the model's leaf layers' outputs for one input (batch dim
 * dropped), each (C, H, W) float64 contiguous (a vector as (n, 1, 1)); a Conv2d also its input
 * (Ci, Hi, Wi), weight (C, Ci / groups, kh, kw), bias (C) or NULL, stride, padding, dilation,
 * groups, for the arithmetic of a cell; copied. */
typedef struct lm_viz_fmap {
	char name[64], kind[32], desc[96];
	const lm_tensor *out, *in, *weight, *bias;
	int stride[2], padding[2], dilation[2], groups;
} lm_viz_fmap;
typedef struct lm_viz_features {
	char name[64];
	const lm_tensor *input; /* (C, H, W) float64 */
	const lm_viz_fmap *layers;
	int n;
	const char *const *classes;
	int nclasses;
	const char *source;
} lm_viz_features;
lm_status lm_viz_show_features(const lm_viz_features *g, const lm_viz_opts *o, const char *fname);

/* viz.show('ddp', ddp): one DDP backward's timeline (seconds from the forward): each bucket's
 * all-reduce launch and end, the end of backward's own work; copied. */
typedef struct lm_viz_ddp {
	const double *launch, *done;
	int n;
	double backward_end;
	const char *source;
} lm_viz_ddp;
lm_status lm_viz_show_ddp(const lm_viz_ddp *d, const lm_viz_opts *o, const char *fname);

/* viz.show('pipeline', pipe): one dist.Pipeline step as it ran: K stages, each with 2M ops (its
 * forwards and backwards) in the order it ran them, row k * 2M + i: kind ('F' or 'B'), micro-batch
 * (0-based), start and end in seconds on one clock for every stage (dist.wtime); copied. */
typedef struct lm_viz_pipeline {
	int K, M;
	const char *kinds;
	const int *micro;
	const double *t0, *t1;
	const char *schedule; /* "gpipe" or "1f1b", as the run's */
	const char *source;
} lm_viz_pipeline;
lm_status lm_viz_show_pipeline(const lm_viz_pipeline *d, const lm_viz_opts *o, const char *fname);

/* viz.show('gan2d', gan): a 2-D GAN's state (copied): real and generated points (n x 2, row-major),
 * the discriminator's probability on a bins x bins grid over [lo, hi]^2 (row i: y, column j: x),
 * G applied to a k x k grid of z (k * k x 2, row-major), the losses of every step so far. */
typedef struct lm_viz_gan2d {
	const double *real, *fake, *surface, *warp, *dloss, *gloss;
	int nreal, nfake, bins, k, nloss, steps;
	double js, lo, hi;
	const char *loss_kind, *source;
} lm_viz_gan2d;
lm_status lm_viz_show_gan2d(const lm_viz_gan2d *d, const lm_viz_opts *o, const char *fname);

/* viz.show('diffusion', model): a diffusion model's chains on n 2-D points (copied): S snapshots of
 * the forward chain at steps fwd_t (0 = the data) and S of the reverse chain at steps rev_t (from
 * T down to 0 = the samples), each n x 2 row-major, S snapshots after one another; abar_1..abar_T. */
typedef struct lm_viz_diffusion {
	int n, S, T;
	const int *fwd_t, *rev_t;
	const double *fwd, *rev, *alpha_bars;
	const char *schedule, *source;
} lm_viz_diffusion;
lm_status lm_viz_show_diffusion(const lm_viz_diffusion *d, const lm_viz_opts *o, const char *fname);

/* viz.show('samples', {...}): n generated images (n, c, h, w) in [0, 1] (copied), optionally the
 * class each was asked for and the class a classifier read in it (0-based, or NULL), class names. */
typedef struct lm_viz_samples {
	const double *images;
	int n, c, h, w;
	const int *labels, *predicted;
	const char *const *classes;
	int nclasses, step;
	const char *source;
} lm_viz_samples;
lm_status lm_viz_show_samples(const lm_viz_samples *d, const lm_viz_opts *o, const char *fname);

/* viz.show('queues' | 'mlu' | 'pingpong', ...): what a kernels.bang device's info says
 * (lua/lumen/bang.lua, Device:info()), in modelled cycles, as row-major float64 tables; copied.
 * kernels (nkernels x 5): type (0 BLOCK, x UNIONx), queue (1-based), issued, start, stop; names:
 * theirs. units (nunits x 6), the timeline's entries as placed: kernel (0-based into kernels),
 * index in its kernel, start, stop, its cores (1 for BLOCK, 4x for UNIONx), its clusters (1, x);
 * cores (the units' cores after one another, x 4): global core id, taskId, peak NRAM and WRAM bytes;
 * clusters (the units' clusters, x 2): global cluster id, peak SRAM bytes; spans (nspans x 7, with
 * dev:record()): unit (0-based), kind (0 DMA, 1 compute), core, task, t0, t1, what (0-based into
 * whats: "GDRAM2NRAM", "__bang_add", ...). */
typedef struct lm_viz_bang {
	int cards, chips, clusters_per_chip; /* 4 cores a cluster */
	double nram, wram, sram;             /* capacities, bytes (NRAM, WRAM per core; SRAM per cluster) */
	int nkernels, nunits, ncores, nclusters, nspans, nwhats;
	const double *kernels, *units, *cores, *clusters, *spans;
	const char *const *names;
	const char *const *whats;
} lm_viz_bang;
/* scene "queues" or "mlu": one run; "pingpong": two, the single-buffered and the double-buffered. */
lm_status lm_viz_show_bang(const char *scene, const lm_viz_bang *runs, int nruns, const lm_viz_opts *o,
                           const char *fname);

/* viz.show('systolic' | 'dma' | 'energy', ...): lumen.dlp's runs (lua/lumen/dlp.lua, src/dlp/dlp.c),
 * copied. systolic: the array (config) and the layer, run here by lm_dlp_run and lm_dlp_pe_state;
 * dma: a report and its events (a:run(layer, {events = N}): r.events as lm_dlp_event, in the C
 * encoding: a stall's length in end and its operand in words, a fold's 0-based index in words);
 * energy: a report and r:energy() by level (mac, register, pe_hop, sram, dram: pJ and counts) with
 * the energy table's source. config holds what a report says of its array (rows, cols, dataflow,
 * bandwidth, user_bandwidth) where the array itself is not given. */
enum { LM_VIZ_DLP_LEVELS = LM_DLP_LEVELS };
typedef struct lm_viz_dlp {
	lm_dlp_config config;
	lm_dlp_layer layer;
	const char *name;          /* the layer's name */
	const char *label;         /* the run's name in a comparison ("bandwidth 2", "WS"), or NULL */
	lm_dlp_report report;
	const lm_dlp_event *events;
	int64_t nevents, dropped;  /* events kept, and those the run's cap left out */
	double pj[LM_VIZ_DLP_LEVELS], counts[LM_VIZ_DLP_LEVELS];
	const char *energy_source; /* where the pJ per access come from (dlp.energy_table.source) */
} lm_viz_dlp;
/* scene "systolic": one run; "dma": 1 to 3 reports stacked on one time axis; "energy": 1 to 6. */
lm_status lm_viz_show_dlp(const char *scene, const lm_viz_dlp *runs, int nruns, const lm_viz_opts *o,
                          const char *fname);

/* viz.show(g) of an lm.graph Graph (lua/lumen/graph.lua, after g:optimize()): the graph scene's
 * compiled view, one step per rewrite of g.log (step 0: the graph as captured), each step described
 * by lua/lumen/viz_passes.lua as nodes on a grid every step shares (a node stays where the captured
 * graph had it), edges between them, and the step's cost (g:snapshot(k):cost(): counted from the
 * program, not measured); copied. */
enum { LM_VIZ_GN_KERNEL, LM_VIZ_GN_FUSED, LM_VIZ_GN_OP, LM_VIZ_GN_VALUE };         /* node kinds */
enum { LM_VIZ_GS_LIVE, LM_VIZ_GS_REWRITTEN, LM_VIZ_GS_REMOVED, LM_VIZ_GS_FOLDED };  /* node states */
enum { LM_VIZ_GE_DATA, LM_VIZ_GE_OLD, LM_VIZ_GE_LINK };                            /* edge kinds */
typedef struct lm_viz_gnode {
	int step, kind, state; /* kernel: one node's kernel; fused: a kernel of several ops (drawn around
	                        * them); op: a member of the fused kernel `parent`; value: read from
	                        * outside the program (an input, a constant, state). rewritten: taking part
	                        * in this step's rewrite and still run; removed: gone by it (drawn faded);
	                        * folded: computed once at the capture, a constant from this step on */
	int64_t id;            /* the node's id in g.nodes (a fused kernel: its last member's); a value's id */
	int col, row;          /* the grid cell */
	int parent;            /* an op: the index of its fused kernel in nodes; else -1 */
	const char *label, *detail; /* "matmul #4", "2x16 float32" */
} lm_viz_gnode;
typedef struct lm_viz_gedge {
	int step, from, to; /* indices into nodes, both of that step */
	int kind;           /* data: a value the consumer reads; old: what a removed node read; link: a
	                     * merge (the node kept) or a replacement (what readers read now) */
} lm_viz_gedge;
typedef struct lm_viz_gstep {
	const char *pass, *action, *text;           /* the rewrite (log[k]); step 0: NULL */
	double kernels, bytes_read, bytes_written;  /* g:snapshot(k):cost() */
} lm_viz_gstep;
typedef struct lm_viz_passes {
	int nsteps, nnodes, nedges;
	const lm_viz_gstep *steps;
	const lm_viz_gnode *nodes;
	const lm_viz_gedge *edges;
	const char *name;   /* what was captured ("fn at file:line"), or NULL */
	const char *source; /* where the numbers come from ("counted from the program (lm.graph)") */
} lm_viz_passes;
lm_status lm_viz_show_passes(const lm_viz_passes *p, const lm_viz_opts *o, const char *fname);

/* viz.show('detection', {...}): n grey images (n x h x w, values 0..1), ground-truth boxes and a
 * detector's boxes (corners in pixels, x to the right, y down; image 0-based, class 1-based;
 * kept: survived non-maximum suppression), class names, the IoU a kept box needs to be a true
 * positive; copied. */
typedef struct lm_viz_box {
	double x1, y1, x2, y2, score;
	int image, cls;
	bool kept;
} lm_viz_box;
typedef struct lm_viz_detection {
	const double *images;
	int n, h, w;
	const lm_viz_box *truth, *pred;
	int ntruth, npred;
	const char *const *classes;
	int nclasses;
	double iou_threshold;
	const char *source;
} lm_viz_detection;
lm_status lm_viz_show_detection(const lm_viz_detection *d, const lm_viz_opts *o, const char *fname);
/* Live histograms while a model trains (viz.watch): the values of t as the activations (kind 0) or
 * the parameters' gradients (kind 1) of layer i of the model shown (or last shown). */
lm_status lm_viz_model_record(int layer, int kind, const lm_tensor *t, const char *fname);

/* ---------------------------------------------------------------- live curves */

/* Adds the n points (x[i], y[i]) to a series ("train/loss": chart "loss", series "train"); NaN
 * and Inf values are gaps, counted; x must be finite. xname names x ("lr"); NULL leaves it to the
 * data: "step" while every x could be a step count, else "x". Shows the curves scene when no
 * other scene is shown. */
lm_status lm_viz_plot(const char *series, const double *x, const double *y, int64_t n, const char *xname,
                      const char *fname);
/* Follows a CSV log as it grows (the header names the columns; step/epoch/split/seconds are
 * axes and labels, the other numeric columns series; without a step or epoch column the first
 * column is x, named by its header): read from the pump at most 5 times a
 * second; a file that is missing, truncated or has malformed lines is waited for, restarted, or
 * its bad lines counted and the first shown. */
lm_status lm_viz_follow(const char *path, const char *fname);
/* What the followed file's reading says ("following run.csv: 120 rows, ...", "waiting for ..."),
 * or NULL when no file is followed. */
const char *lm_viz_follow_status(void);
/* Forgets every series and the followed file. */
void lm_viz_curves_clear(void);
/* Whether a live scene would draw new data soon (a visible window that redraws at most every
 * 100 ms, or at most 1% of the time): for hooks that would otherwise compute for nothing. */
bool lm_viz_due(void);

/* Steps forward by n (negative: back), to a step, or plays / pauses. */
lm_status lm_viz_step(int n, const char *fname);
lm_status lm_viz_seek(int step, const char *fname);
lm_status lm_viz_play(bool on, const char *fname);
/* Next variant (as Tab), or a variant by name. */
lm_status lm_viz_variant(const char *name, const char *fname);

typedef struct lm_viz_state {
	const char *scene;    /* NULL when no scene is shown */
	int step, steps;      /* step shown (0-based), and how many */
	const char *variant;
	int variant_index, variants;
	bool playing;
	double speed;         /* steps per second while playing */
	int width, height;    /* drawable pixels */
	float scale;          /* UI scale (HiDPI) */
	char title[256];
	char step_label[256];
	float area[4], panel[4]; /* the scene's part and the counters panel (x, y, w, h), drawable px */
} lm_viz_state;
void lm_viz_get_state(lm_viz_state *out);

/* Renders now (if anything changed) and writes the frame as a PNG. */
lm_status lm_viz_snapshot(const char *path, const char *fname);
/* The RGBA of a drawable pixel of the current frame (renders first if needed). */
lm_status lm_viz_pixel(int x, int y, uint8_t rgba[4], const char *fname);
/* Renders a full frame now and waits for the GPU; returns its milliseconds (benchmarks). */
double lm_viz_redraw(void);

/* What is drawn at a drawable pixel: false when nothing pickable is there. text: the hover text. */
typedef struct lm_viz_pick {
	const char *kind, *group, *state;
	int32_t row, col, index, step, thread, block, warp, lane, launch;
	int64_t event;
	double value;
	bool has_value;
	float x, y, w, h;
	uint8_t rgb[3];
	char text[512];
} lm_viz_pick;
bool lm_viz_pick_at(double x, double y, lm_viz_pick *out);
/* The cells of the last frame (what viz.layout() returns): count, and cell i. */
int lm_viz_cell_count(void);
bool lm_viz_cell_get(int i, lm_viz_pick *out);
/* The text of the last frame (what viz.layout('text') returns): count, and text i — the box of
 * its drawn columns (first to last non-blank, a line tall), the clip region it was drawn in (the
 * scene's area, the title bar, the panel, ...), its layer (overlays are later), font and start. */
typedef struct lm_viz_text {
	float box[4], clip[4]; /* x, y, w, h, drawable px */
	int layer;
	const char *font;      /* "small", "body", "title", "tiny" */
	char text[72];
} lm_viz_text;
int lm_viz_text_count(void);
bool lm_viz_text_get(int i, lm_viz_text *out);
/* Simulates a key or pointer event (tests, lessons): "space", "right", "left", "home", "end",
 * "+", "-", "tab", "s", "?", "escape"; the pointer at (x, y). */
lm_status lm_viz_key(const char *key, const char *fname);
void lm_viz_pointer(double x, double y);
/* Zooms the scene by factor about the drawable pixel (x, y), as the wheel does; pans by (dx, dy)
 * pixels, as dragging does; factor 0 fits the scene again (the `0` key). */
lm_status lm_viz_zoom(double factor, double x, double y, const char *fname);
lm_status lm_viz_pan(double dx, double dy, const char *fname);

/* The names of the theme's colours and their values (viz.colors()). */
int lm_viz_color_count(void);
const char *lm_viz_color_get(int i, uint8_t rgb[3]);
/* The registry for viz.scenes(): built scene i (NULL past the end), its summary, its options. */
const char *lm_viz_scene_name(int i, const char **summary);
int lm_viz_scene_option(int scene, int i, const char **name, const char **help, const char **def);

/* The event pump: input, animation, redraw when needed. Cheap when nothing is open. */
void lm_viz_pump(void);
/* The same while the program computes (the Lua hook): an animation redraws at most 10 times a
 * second there (60 while the REPL waits), so it does not take the cores from the computation. */
void lm_viz_pump_busy(void);
/* Blocks, pumping, until the visible window is closed (a script's end with a window still open);
 * returns at once when none is visible. Returns early when *stop becomes true. */
void lm_viz_wait_closed(volatile int *stop);
/* Frees everything (at exit). */
void lm_viz_shutdown(void);

#endif
