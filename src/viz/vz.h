/*
 * vz.h (internal) — what the files of the visualizer share: colours, the frame a scene draws into
 * (shapes, text, images, pickable cells), the counters panel, runs (what a scene is built from),
 * options, and the scene interface with its registry.
 *
 * Design: a frame is recorded on the CPU (an array of shape instances plus the cells under them)
 * and handed to the GPU in one instanced draw per clip region (gpu.c); nothing here calls GL, so
 * scenes can be built, laid out and "drawn" without a window (the tests do). A scene is a C module
 * (scenes/<name>.c) behind vz_scene_class: build from runs (kernel results) or from options, lay
 * out for a size, draw at a time t (in steps, fractional while animating), describe a cell for
 * the hover, fill the counters panel. Everything pickable is a vz_cell registered while drawing,
 * so what the hover shows, viz.pick and viz.layout() always match what was drawn.
 * Prefixes: lm_viz_ for the public API (viz.h), vz_ for the internals here.
 * Read next: docs/viz.md (how to add a scene), viewer.c, scenes/scan.c.
 */
#ifndef LUMEN_VIZ_VZ_H
#define LUMEN_VIZ_VZ_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lumen/kernels.h"
#include "viz/viz.h"

/* ---------------------------------------------------------------- colours (palette.c) */

typedef struct vz_color {
	uint8_t r, g, b, a;
} vz_color;

#define VZ_RGB(r_, g_, b_) ((vz_color){(r_), (g_), (b_), 255})
_Static_assert(sizeof(vz_color) == 4, "vz_color is four bytes, as an RGBA texel");

/* Okabe & Ito's colour-blind-safe categorical palette, in their order. */
enum {
	VZ_OI_BLACK, VZ_OI_ORANGE, VZ_OI_SKY, VZ_OI_GREEN, VZ_OI_YELLOW, VZ_OI_BLUE,
	VZ_OI_VERMILLION, VZ_OI_PURPLE, VZ_OI_COUNT
};
extern const vz_color vz_okabe_ito[VZ_OI_COUNT];
/* Category i of a set (cycles through the seven non-black colours). */
vz_color vz_category(int i);
/* Viridis at t in [0, 1] (clamped), interpolated from a 16-entry table. */
vz_color vz_viridis(double t);
vz_color vz_mix(vz_color a, vz_color b, double t);
vz_color vz_fade(vz_color c, double alpha);
/* Black or white, whichever reads better on bg. */
vz_color vz_text_on(vz_color bg);

/* The colours every scene uses for the same meaning (light theme). Tests read them through
 * viz.colors(); lm_viz_color_names lists them. */
typedef struct vz_theme {
	vz_color bg, panel, panel_line, text, text_dim, grid;
	vz_color active;     /* a cell written / a lane that works in the current step */
	vz_color idle;       /* a cell or lane that does nothing in this step */
	vz_color idle_text;
	vz_color pending;    /* not reached yet */
	vz_color arrow, arrow_now; /* data flow of earlier steps / of the current step */
	vz_color hatch;      /* the stripes over idle lanes */
	vz_color highlight;  /* the hovered cell's outline, the current step's band */
	vz_color path_a, path_b, common; /* divergence: the two paths and the converged code */
} vz_theme;
extern const vz_theme vz_th;

/* ---------------------------------------------------------------- geometry */

typedef struct vz_rect {
	float x, y, w, h;
} vz_rect;

static inline vz_rect vz_r(float x, float y, float w, float h) { return (vz_rect){x, y, w, h}; }
static inline bool vz_contains(vz_rect r, float x, float y)
{
	return x >= r.x && y >= r.y && x < r.x + r.w && y < r.y + r.h;
}

/* ---------------------------------------------------------------- text (text.c) */

typedef enum vz_font { VZ_FONT_SMALL, VZ_FONT_BODY, VZ_FONT_TITLE, VZ_FONT_TINY, VZ_FONT_COUNT } vz_font;
enum { VZ_ALIGN_LEFT = 0, VZ_ALIGN_CENTER = 1, VZ_ALIGN_RIGHT = 2 };

typedef struct vz_text vz_text; /* the glyph atlas: DejaVu Sans Mono at four sizes, CJK on demand */

/* A glyph in the atlas: its box relative to the pen (pixels) and its texture coordinates. */
typedef struct vz_glyph {
	float x, y, w, h;
	float u0, v0, u1, v1;
} vz_glyph;

/* Loads the font (DejaVu Sans Mono: the Debian path, else fontconfig's fc-match) and renders
 * the atlas for the UI scale; NULL + error naming fname when the font or SDL2_ttf fail. The
 * texture is made by vz_gpu_upload_text. */
vz_text *vz_text_new(float scale, const char *fname);
void vz_text_free(vz_text *t);
float vz_text_line_px(const vz_text *t, vz_font font);    /* line height, drawable pixels */
float vz_text_advance_px(const vz_text *t, vz_font font); /* advance of one column */
/* The glyph of cp ('?' when no font has it; false when it has nothing to draw). A character
 * first drawn here is rendered into the atlas (which may grow: vz_text_generation). */
bool vz_text_glyph(vz_text *t, vz_font font, uint32_t cp, vz_glyph *g);
/* The atlas pixels (one byte per pixel, coverage) for the GPU, and the rows changed since the
 * last call (false: none). */
const uint8_t *vz_text_atlas(const vz_text *t, int *w, int *h);
bool vz_text_take_dirty(vz_text *t, int *y0, int *y1);
/* Bumped when glyphs recorded before have other texture coordinates now (the atlas grew or
 * started over): a frame recorded across a change is recorded again. */
unsigned vz_text_generation(const vz_text *t);
const char *vz_text_font_path(const vz_text *t);
/* The CJK font's path ($LUMEN_CJK_FONT, fonts-wqy-microhei's, fontconfig's for zh-cn), looked for
 * once; NULL when there is none, with why saying what was tried. */
const char *vz_cjk_font(const char **why);
/* UTF-8: the next code point (advancing *p; bad bytes give U+FFFD) and the count. */
uint32_t vz_utf8_next(const unsigned char **p);
size_t vz_utf8_len(const char *s);
/* Drops a character cut at the end of s (a name that did not fit its buffer). */
void vz_utf8_trim(char *s);
/* An East Asian wide character (Chinese, full-width punctuation): two columns of the grid. */
bool vz_cp_wide(uint32_t cp);
/* Columns of the monospace grid s takes (a wide character counts two): what widths are made of. */
size_t vz_utf8_cols(const char *s);

/* ---------------------------------------------------------------- language (util.c) */

/* Whether labels are in Chinese: the core's language (lm_get_lang: the lessons' :lang,
 * lm.sys.lang, LUMEN_LANG, LANG) is Chinese and a CJK font is there to draw it (without one the
 * labels stay English; the viewer says so once). */
bool vz_zh(void);
/* Reads the language again (the viewer does at each of its entries: a switch shows at the next
 * frame); true when it changed. */
bool vz_lang_sync(void);
/* The text in the labels' language. */
static inline const char *vz_tr(const char *en, const char *zh) { return vz_zh() ? zh : en; }
/* Formatted labels: the English or the Chinese format, both literals the compiler checks against
 * the same arguments (a translation keeps their order; reorder the sentence, not the numbers). */
#define VZ_SNPRINTF_TR(buf, cap, en, zh, ...)                                                      \
	(vz_zh() ? snprintf(buf, cap, zh, __VA_ARGS__) : snprintf(buf, cap, en, __VA_ARGS__))
#define VZ_APPEND_TR(buf, cap, en, zh, ...)                                                        \
	(vz_zh() ? vz_append(buf, cap, zh, __VA_ARGS__) : vz_append(buf, cap, en, __VA_ARGS__))
#define VZ_TEXTF_TR(f, x, y, font, align, c, en, zh, ...)                                          \
	(vz_zh() ? vz_textf(f, x, y, font, align, c, zh, __VA_ARGS__)                               \
	         : vz_textf(f, x, y, font, align, c, en, __VA_ARGS__))
#define VZ_NOTE_TR(p, en, zh, ...)                                                                 \
	(vz_zh() ? vz_panel_note(p, zh, __VA_ARGS__) : vz_panel_note(p, en, __VA_ARGS__))

/* ---------------------------------------------------------------- images */

/* An RGBA image a scene fills (heat maps, large grids: one textured quad instead of one quad per
 * cell). The GPU copy is made on first draw and again after vz_image_touch. */
typedef struct vz_image {
	int w, h;
	uint8_t *rgba;    /* w * h * 4, row 0 at the top */
	unsigned texture; /* GL name, 0 until uploaded (gpu.c) */
	bool dirty;
	struct vz_image *next_live; /* gpu.c: images with a texture, freed with the GL context */
} vz_image;

vz_image *vz_image_new(int w, int h); /* NULL + error on failure; transparent black */
void vz_image_free(vz_image *im);
void vz_image_set(vz_image *im, int x, int y, vz_color c);
static inline void vz_image_touch(vz_image *im) { im->dirty = true; }

/* ---------------------------------------------------------------- frames (draw.c) */

/* What the GPU draws: one instance per shape (see shaders/batch.vert). */
enum { VZ_KIND_FILL = 0, VZ_KIND_HATCH, VZ_KIND_GLYPH, VZ_KIND_LINE, VZ_KIND_HEAD, VZ_KIND_OUTLINE,
       VZ_KIND_DISC, VZ_KIND_IMAGE };

typedef struct vz_instance {
	float a[4], b[4];
	float color[4], color2[4];
	float kind;
} vz_instance;

/* A run of instances drawn with one clip rectangle and one image texture. */
typedef struct vz_batch {
	int first, count;
	vz_rect clip;     /* drawable pixels */
	vz_image *image;  /* for VZ_KIND_IMAGE instances, else NULL */
} vz_batch;

/* Something the pointer can point at. Fields a scene does not set stay -1 (ints) or NULL.
 * r is in drawable pixels after the view transform, as drawn. Grids (rows x cols > 0) are one cell
 * standing for a table drawn as an image: picking one fills row and col from the position. */
typedef struct vz_cell {
	vz_rect r;          /* the visible part (clipped to the region it was drawn in) */
	vz_rect full;       /* the whole cell, drawable pixels (may extend off screen) */
	const char *kind;   /* "element", "lane", "bin", "block", "instruction", ... (static) */
	const char *group;  /* which part of the picture: "kogge-stone", "naive", ... (static) */
	const char *state;  /* "active", "idle", "pending", "done", ... (static) */
	vz_color color;     /* the fill drawn */
	int32_t row, col, index, step, thread, block, warp, lane, launch, array, rows, cols;
	int64_t event;      /* trace event index */
	int32_t tag;        /* for the scene's own use (which list the cell belongs to) */
	double value;
	bool has_value;
} vz_cell;

typedef struct vz_view {
	double zoom, pan_x, pan_y; /* screen = area.xy + (world - pan) * zoom */
} vz_view;

/* A text as drawn, for viz.layout('text') (the label tests read it): the box of its columns from
 * the first to the last that is not blank, a line tall, in drawable pixels; the clip region it was
 * drawn in; its layer (vz_layer: overlays such as the hover box are later layers); its start. */
typedef struct vz_text_box {
	vz_rect r, clip;
	int layer;
	vz_font font;
	char s[72];
} vz_text_box;

typedef struct vz_frame {
	vz_instance *inst;
	int ninst, cap_inst;
	vz_batch *batches;
	int nbatches, cap_batches;
	vz_cell *cells;
	int ncells, cap_cells;
	vz_cell scratch;       /* what vz_cell_add hands out for cells that are not kept */
	vz_text_box *texts;    /* the text drawn, where */
	int ntexts, cap_texts;
	int layer;             /* vz_layer calls so far */
	bool failed;           /* out of memory while recording: the frame is incomplete */
	/* state */
	int width, height;     /* drawable pixels */
	float scale;           /* UI scale: 1 on a normal display, 2 on HiDPI */
	vz_rect area;          /* the scene's part of the window (drawable pixels) */
	vz_view view;          /* the scene's pan and zoom */
	bool world;            /* shapes are in world coordinates (transformed, clipped to area) */
	bool new_layer;        /* the next shape starts a batch (vz_layer) */
	vz_rect clip;          /* current clip (drawable pixels) */
	vz_text *text;
	double t;              /* the time drawn, in steps */
} vz_frame;

void vz_frame_init(vz_frame *f);
void vz_frame_free(vz_frame *f);
/* Starts a frame of width x height drawable pixels (keeps the buffers). */
void vz_frame_begin(vz_frame *f, int width, int height, float scale, vz_text *text);

/* Coordinates: in screen mode shapes are in drawable pixels; in world mode in the scene's own
 * units (pixels at zoom 1), transformed by the view and clipped to the area. */
void vz_world(vz_frame *f);
void vz_screen(vz_frame *f);
void vz_clip(vz_frame *f, vz_rect r); /* screen pixels; the next shapes are clipped to r */
/* Screen coordinates clipped to the scene's area: legends and overlays that do not pan. */
void vz_overlay(vz_frame *f);
/* What follows is drawn over everything before it, text included. (Within one layer the GPU
 * draws images, then fills, then lines, then text, whatever the order of the calls.) */
void vz_layer(vz_frame *f);
/* world -> screen */
float vz_sx(const vz_frame *f, float x);
float vz_sy(const vz_frame *f, float y);
/* Screen pixels per world unit (the zoom) in world mode, 1 in screen mode. */
float vz_zoom(const vz_frame *f);
/* Whether a world rectangle is visible (so scenes skip what is off screen). */
bool vz_visible(const vz_frame *f, vz_rect r);

void vz_fill(vz_frame *f, vz_rect r, vz_color c);
/* A fill with a border of `border` pixels in `line`, in one shape (half the cost of a fill and an
 * outline). */
void vz_cell_fill(vz_frame *f, vz_rect r, vz_color fill, float border, vz_color line);
void vz_hatch(vz_frame *f, vz_rect r, vz_color bg, vz_color stripes);
void vz_outline(vz_frame *f, vz_rect r, float width, vz_color c);
void vz_line(vz_frame *f, float x0, float y0, float x1, float y1, float width, vz_color c);
/* A dashed line of dash-length pieces. */
void vz_dashed(vz_frame *f, float x0, float y0, float x1, float y1, float width, float dash,
               vz_color c);
/* A line ending in a head of the given length at (x1, y1). */
void vz_arrow(vz_frame *f, float x0, float y0, float x1, float y1, float width, float head,
              vz_color c);
void vz_disc(vz_frame *f, float cx, float cy, float radius, vz_color c);
void vz_draw_image(vz_frame *f, vz_rect r, vz_image *im);
/* Text at (x, y) = its top (left, centre or right by align); returns its width. UTF-8. Text keeps
 * its size on screen (drawable pixels: the UI scale is in the font) whatever the zoom; in world
 * mode, widths and heights are returned in world units (screen size / zoom), so a scene asks
 * vz_text_fits whether a value fits its cell as drawn now. */
float vz_text_draw(vz_frame *f, float x, float y, vz_font font, int align, vz_color c,
                   const char *s);
float vz_textf(vz_frame *f, float x, float y, vz_font font, int align, vz_color c,
               const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Width and line height of text in the current coordinates. */
float vz_text_width(const vz_frame *f, vz_font font, const char *s);
float vz_text_height(const vz_frame *f, vz_font font);
/* Width of one character of the monospace font (current coordinates). */
float vz_char_width(const vz_frame *f, vz_font font);
/* Whether s fits in w (current coordinates). */
bool vz_text_fits(const vz_frame *f, vz_font font, const char *s, float w);
/* Shortens t (UTF-8, in place, cap bytes) to fit w as drawn now, ending it with an ellipsis when
 * cut (empty when not even that fits). */
void vz_text_fit(const vz_frame *f, vz_font font, char *t, size_t cap, float w);
/* Line breaking for a monospace grid: the bytes of the first line of s that fits `cols` columns,
 * broken at a space, between Chinese characters (not before closing punctuation such as ，。),
 * at a newline, else inside a word; *skip: the bytes to drop after it (the spaces or newline). */
size_t vz_wrap_line(const char *s, int cols, size_t *skip);

/* Registers a pickable cell over r (current coordinates) and returns it for the scene to fill
 * (never NULL: a cell that is not visible, or one memory ran out for, is a scratch record that is
 * not kept). Later cells are on top. */
vz_cell *vz_cell_add(vz_frame *f, vz_rect r, const char *kind);
/* The topmost cell at a drawable pixel, or NULL; grids get row and col from the position, and
 * index = the grid's index + row * cols + col (when the grid has an index). */
const vz_cell *vz_frame_pick(const vz_frame *f, float x, float y, vz_cell *out);

/* ---------------------------------------------------------------- the counters panel (panel.c) */

#define VZ_PANEL_COLS 6
#define VZ_PANEL_ROWS 24
#define VZ_PANEL_NOTES 4

/* A table: one column per run (its title and its source, e.g. "emulated (modelled cycles)"), one
 * row per counter. Every number shown sits under the source that produced it. */
typedef struct vz_panel {
	int ncols, nrows, nnotes;
	char title[VZ_PANEL_COLS][64];
	char source[VZ_PANEL_COLS][160];
	char row[VZ_PANEL_ROWS][40];
	double value[VZ_PANEL_ROWS][VZ_PANEL_COLS];
	bool has[VZ_PANEL_ROWS][VZ_PANEL_COLS];
	char note[VZ_PANEL_NOTES][320];
} vz_panel;

void vz_panel_clear(vz_panel *p);
/* A column for a run; returns its index, or -1 when the panel is full. */
int vz_panel_column(vz_panel *p, const char *title, const char *source);
/* Sets counter name of column col (rows appear in first-set order). */
void vz_panel_set(vz_panel *p, int col, const char *name, double v);
/* The named counters of a run, in the order given (missing ones are left blank). */
void vz_panel_run(vz_panel *p, int col, const lm_viz_run *run, const char *const *names);
void vz_panel_note(vz_panel *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Height the panel needs, and drawing it into r (screen coordinates). */
float vz_panel_height(const vz_panel *p, const vz_frame *f);
void vz_panel_draw(const vz_panel *p, vz_frame *f, vz_rect r);

/* ---------------------------------------------------------------- runs (run.c) */

/* "emulated (modelled cycles)", "CPU <model>, measured", "CUDA <device>, measured". */
const char *vz_run_source_label(const lm_viz_run *r, char *buf, size_t cap);
/* The named counter, or def. */
double vz_run_counter(const lm_viz_run *r, const char *name, double def);
bool vz_run_has(const lm_viz_run *r, const char *name);
/* Fills a run from a kernel info (retaining its trace). */
void vz_run_from_info(lm_viz_run *r, const lm_kernel_info *info);
/* Fills a run from a trace alone: pattern and algo from the trace's name, source "emu", counters
 * counted from the trace's step table and events (adds, steps, barriers, modelled_cycles, events,
 * loads, stores and atomics by space). */
void vz_run_from_trace(lm_viz_run *r, lm_trace *t);
/* Releases the trace a run holds (runs filled by the two functions above hold one reference). */
void vz_run_clear(lm_viz_run *r);
void vz_run_copy(lm_viz_run *dst, const lm_viz_run *src); /* retains the trace */

/* The values a launch read from global array `name`: for each index, the first load of it in
 * launch 0 (what the kernel was given). *n: one past the highest index loaded. Returns an array
 * of the visualizer's heap (vz_free it) or NULL + error (no such array, nothing loaded). */
double *vz_trace_input(const lm_trace *t, const char *name, int64_t *n);
/* The same for the array of that name in space (LM_SPACE_CONSTANT: a mask in constant memory). */
double *vz_trace_values(const lm_trace *t, const char *name, int space, int64_t *n);
/* The id of the array called name (in space, or any space when space < 0) of launch (any when
 * launch < 0), or -1. */
int vz_trace_array(const lm_trace *t, const char *name, int space, int launch);
/* Checks that the trace has events; NULL + LM_ERR_ARG error "the trace is empty" otherwise. */
lm_status vz_trace_check(const lm_trace *t, const char *what);

/* ---------------------------------------------------------------- options (registry.c) */

typedef enum vz_opt_kind { VZ_OPT_INT, VZ_OPT_NUMBER, VZ_OPT_STRING, VZ_OPT_CHOICE } vz_opt_kind;

/* One option of a scene: its name, kind, range or choices ("a|b|c"), default text, and what it
 * does (listed by viz.scenes() and in errors). */
typedef struct vz_option {
	const char *name;
	vz_opt_kind kind;
	double min, max;
	const char *choices;
	const char *def;
	const char *help;
} vz_option;

/* Options every scene takes (step, variant, speed): checked by the viewer. */
extern const vz_option vz_common_options[];

/* Reading checked options (lm_viz_opts, viz.h): the value given or the default. */
int64_t vz_opt_int(const lm_viz_opts *o, const char *name, int64_t def);
double vz_opt_number(const lm_viz_opts *o, const char *name, double def);
const char *vz_opt_string(const lm_viz_opts *o, const char *name, const char *def);
bool vz_opt_given(const lm_viz_opts *o, const char *name);

/* ---------------------------------------------------------------- scenes */

/* What a scene is built from: the runs viz.show was given (none for viz.scene, which builds
 * from options alone), and the checked options. The scene copies what it keeps. */
typedef struct vz_build {
	const lm_viz_run *runs;
	int nruns;
	const lm_viz_opts *opts;
	const char *fname; /* "viz.show", "viz.scene": name it in errors */
	/* what viz.show(tensor) and viz.show(module) give (NULL otherwise) */
	const lm_tensor *tensor;
	struct lm_graph *graph;     /* taken by the graph scene (set to NULL in the build when kept) */
	const double *check;
	const lm_viz_model *model;
	const lm_tensor *aux;       /* viz.show('quant', w, {activations = x}): x */
	const lm_viz_attention *attention; /* viz.show('attention', ...) */
	const lm_viz_rnn *rnn;             /* viz.show('rnn', ...) */
	const lm_viz_detection *detection; /* viz.show('detection', ...) */
	const lm_viz_features *features;   /* viz.show(model, {input = x}) */
	const lm_viz_ddp *ddp;             /* viz.show('ddp', ...) */
	const lm_viz_pipeline *pipeline;   /* viz.show('pipeline', pipe) */
	const lm_viz_gan2d *gan2d;         /* viz.show('gan2d', gan) */
	const lm_viz_diffusion *diffusion; /* viz.show('diffusion', model) */
	const lm_viz_samples *samples;     /* viz.show('samples', {...}) */
	const lm_viz_bang *bang;           /* viz.show('queues' | 'mlu', info): one; 'pingpong': two */
	const lm_viz_dlp *dlp;             /* viz.show('systolic' | 'dma' | 'energy', ...): ndlp runs */
	int ndlp;
	const lm_viz_passes *passes;      /* viz.show(g), an lm.graph Graph: the graph scene's compiled view */
} vz_build;

/* What a scene's layout gets: the size of its area and the UI scale, with the frame for text
 * metrics (draw nothing there). */
typedef struct vz_layout_ctx {
	float w, h;
	float scale;
	const vz_frame *metrics;
} vz_layout_ctx;

typedef struct vz_scene_class {
	const char *name;     /* "scan": viz.scene('scan'), viz.show(x, {scene='scan'}) */
	const char *summary;  /* one line for viz.scenes() */
	const char *patterns; /* info.pattern values it draws, space separated ("scan") */
	const vz_option *options; /* ended by {NULL} */
	/* Builds the scene (NULL + lm_set_error naming b->fname on failure). */
	void *(*create)(const vz_build *b);
	void (*destroy)(void *s);
	/* Discrete steps (at least 1); step i is drawn at t = i. */
	int (*steps)(void *s);
	/* Variants (Tab cycles): their count, and the name of variant v. */
	int (*variants)(void *s);
	const char *(*variant_name)(void *s, int v);
	/* Switches to variant v (0..variants-1); the viewer then lays out again. */
	void (*set_variant)(void *s, int v);
	/* The variant a new scene starts in (the one its run or options asked for); NULL: 0. */
	int (*initial_variant)(void *s);
	/* Lays out for an area of c->w x c->h pixels; returns the world size it needs (the viewer
	 * fits it into the area and lets the user zoom and pan). */
	void (*layout)(void *s, const vz_layout_ctx *c, float *world_w, float *world_h);
	/* Draws the scene at time f->t (steps; fractional while animating), in world mode. */
	void (*draw)(void *s, vz_frame *f);
	/* The title line and what step i shows (one line each). */
	void (*title)(void *s, char *buf, size_t cap);
	void (*step_label)(void *s, int step, char *buf, size_t cap);
	/* Fills the counters panel (columns: runs with their sources). */
	void (*counters)(void *s, vz_panel *p);
	/* A key the viewer does not handle ("l", "[", "]", ...): true when the scene used it (NULL:
	 * none). The viewer then refreshes the title, panel and steps. */
	bool (*key)(void *s, const char *key);
	/* Live scenes (curves, model): called by the pump when new data arrived; true when the
	 * picture changed (the viewer then refreshes steps, title and panel). NULL: not live. */
	bool (*update)(void *s);
	/* The hover text for a picked cell (up to a few lines, '\n'-separated). For one element of a
	 * grid (rows, cols > 0; row, col and index filled in) it also fills the fields the grid left
	 * open (state, value, thread, ...), so viz.pick reports them. NULL: the viewer lists the cell's
	 * fields. */
	void (*describe)(void *s, vz_cell *c, char *buf, size_t cap);
} vz_scene_class;

/* The registry: the built scenes, and the names of those planned but not built yet. */
const vz_scene_class *vz_scene_find(const char *name);
const vz_scene_class *vz_scene_at(int i); /* NULL past the end */
bool vz_scene_planned(const char *name);
/* The scene that draws pattern (info.pattern), or NULL. */
const vz_scene_class *vz_scene_for_pattern(const char *pattern);
/* Checks opts against the scene's options and the common ones: unknown names, kinds, ranges,
 * choices. LM_ERR_ARG naming fname and the option. */
lm_status vz_opts_check(const vz_scene_class *c, const lm_viz_opts *o, const char *fname);

extern const vz_scene_class vz_scene_scan, vz_scene_reduce, vz_scene_histogram,
	vz_scene_divergence, vz_scene_conv, vz_scene_matmul, vz_scene_spmv,
	vz_scene_timeline, vz_scene_curves, vz_scene_graph, vz_scene_tensor, vz_scene_model, vz_scene_quant,
	vz_scene_attention, vz_scene_rnn, vz_scene_detection, vz_scene_features, vz_scene_allreduce,
	vz_scene_pipeline, vz_scene_ddp, vz_scene_gan2d, vz_scene_diffusion, vz_scene_samples,
	vz_scene_queues, vz_scene_mlu, vz_scene_pingpong, vz_scene_systolic, vz_scene_dma, vz_scene_energy;

/* ---------------------------------------------------------------- kernels.bang's runs (scenes/queues.c) */

/* What the mlu, queues and pingpong scenes draw: an lm_viz_bang (viz.h) copied and checked, its
 * units in the order they started. Times are kernels.bang's modelled cycles. */
#define VZ_BANG_MAX_CLUSTERS 64
#define VZ_BANG_MAX_KERNELS 64
#define VZ_BANG_MAX_UNITS 4096
#define VZ_BANG_MAX_SPANS 200000
typedef struct vz_bang_kernel {
	char name[48], type[8]; /* "BLOCK", "UNION2" */
	int x;                  /* 0 (BLOCK) or the clusters of a unit */
	int queue;
	double issued, start, stop;
	int units;
} vz_bang_kernel;
typedef struct vz_bang_unit {
	int kernel, index;
	double start, stop;
	int core0, ncores;       /* its cores: core[core0 ..], task, nram, wram likewise */
	int cluster0, nclusters; /* its clusters: cluster[cluster0 ..], sram likewise */
} vz_bang_unit;
typedef struct vz_bang_span {
	int unit, core, task;
	bool compute;            /* else a DMA copy */
	double t0, t1;
	char what[32];
} vz_bang_span;
typedef struct vz_bang {
	int cards, chips, clusters_per_chip, clusters, cores;
	double cap_nram, cap_wram, cap_sram;
	int nkernels, nunits, nspans;
	vz_bang_kernel *kernels;
	vz_bang_unit *units;
	int *core, *task, *cluster;
	double *nram, *wram, *sram;
	vz_bang_span *spans;     /* in the order given */
	double t_lo, t_hi;       /* the first issue or start, the last stop */
	bool demo;
} vz_bang;
/* Copies and checks run (the scene names itself in errors: LM_ERR_ARG naming fname); run NULL: the
 * demonstration demo, run here by kernels.bang's rules and default model — 0: the AICS slide's
 * Kernel1 UNION2, Kernel2 UNION1, Kernel3 UNION4 in one queue on 4 clusters; 1 and 2: a relu +
 * sigmoid kernel on one cluster, single- and double-buffered, with its spans. */
lm_status vz_bang_load(vz_bang *b, const lm_viz_bang *run, int demo, const char *scene, const char *fname);
void vz_bang_free(vz_bang *b);
/* Where every number comes from, in the labels' language. */
const char *vz_bang_source(const vz_bang *b);
/* A kernel's colour (by its index), and a list of ids as ranges ("0-3, 6") into buf. */
vz_color vz_bang_color(int kernel);
/* The device in a line ("MLU (emulated): 1 x 1 x 4 clusters x 4 cores ...; NRAM 512 KiB ..."), in the
 * labels' language. */
char *vz_bang_device(const vz_bang *b, char *buf, size_t cap);
char *vz_bang_ranges(char *buf, size_t cap, const int *ids, int n);
/* A time axis over [lo, hi] along x0..x0 + w at y: ticks at a round step (1, 2 or 5 x 10^k) with
 * their cycles in the tiny font, labels that would overlap left out, and grid lines down to bottom. */
void vz_bang_axis(vz_frame *f, double lo, double hi, float x0, float w, float y, float top, float bottom);
/* The moment step k of a timeline shows, its steps revealing events by start (times: the ntimes
 * starts, sorted): the latest start step k reveals; the last step (steps - 1), end. */
double vz_timeline_moment(const double *times, int ntimes, int steps, int k, double end);
/* A bar with a 1-pixel border in line, or without one where it is under 4 pixels either way on screen
 * (a border would cover it). */
void vz_bang_bar(vz_frame *f, vz_rect r, vz_color fill, vz_color line);

/* ---------------------------------------------------------------- lumen.dlp's runs (scenes/systolic.c) */

/* Where the counts of the systolic, dma and energy scenes come from (a report's r.source), in the
 * labels' language; a demonstration says so. */
const char *vz_dlp_source(bool demo);
/* "OS", "WS", "IS"; and what stays in the PEs ("output stationary: ..."), in the labels' language. */
const char *vz_dlp_dataflow(int dataflow);
const char *vz_dlp_stationary(int dataflow);
/* dlp.array{}'s defaults (SCALE-Sim's example: 32 x 32 OS, 64 KiB scratchpads, 10 words a cycle,
 * USER mode) with rows, cols and dataflow: the demonstrations' arrays. */
lm_dlp_config vz_dlp_config(int64_t rows, int64_t cols, int dataflow, int64_t bandwidth);
/* What tells runs apart in a comparison (dma, energy). */
typedef struct vz_dlp_facets {
	int64_t bandwidth, rows, cols;
	int dataflow;
	bool user;
	const char *layer; /* the layer's name */
	const char *given; /* the caller's name for the run ({slow = r1, ...}: "slow"), or "" */
} vz_dlp_facets;
enum { VZ_DLP_BANDWIDTH, VZ_DLP_DATAFLOW };
/* Run i's label among n, in the labels' language: what differs between the runs ("bandwidth 2", "WS,
 * 16x16"; first: the facet the scene is about, named even for a single run) after the name given
 * ("slow (bandwidth 2)"); when nothing differs, the name given, else "run i". */
char *vz_dlp_label(char *buf, size_t cap, const vz_dlp_facets *runs, int n, int i, int first);

/* any traced launch, thread by thread (scenes/threads.c); its patterns "launch *": drawn for
 * kernels.launch results, and for any traced result asked for by name */
extern const vz_scene_class vz_scene_threads;

/* ---------------------------------------------------------------- live data (live.c) */

/* One curve: points (x: the step, y: the value, t: seconds, wall clock or the log's own) of a
 * series "label" in chart "chart" ("train/loss": chart loss, label train). */
typedef struct vz_series {
	char name[48], chart[32], label[32];
	char xname[24];     /* what x is, as the data named it ("lr", a CSV header); "": not named */
	double *x, *y, *t;
	int64_t n, cap;
	int64_t nonfinite;  /* NaN and Inf values: gaps */
	bool from_file;
	bool not_steps;     /* an x came that no step counter gives: not whole, or smaller than the last */
} vz_series;

int vz_live_series_count(void);
const vz_series *vz_live_series(int i);
/* Bumped by every change of the live data (series and histograms). */
uint64_t vz_live_version(void);
/* Adds the n points (x[i], y[i]) to a series; xname (NULL: keep what the series has) names x. */
lm_status vz_live_plot(const char *name, const double *x, const double *y, int64_t n, const char *xname,
                       const char *fname);
/* What x is: the name the data gave, else "step" while every x could be a step count, else "x". */
const char *vz_series_xname(const vz_series *s);
/* Whether x counts the run's progress (steps or epochs), so that x per second is a throughput. */
bool vz_series_counts_progress(const vz_series *s);
lm_status vz_live_follow(const char *path, const char *fname);
void vz_live_clear(void);
/* Reads the followed file when due (every 0.2 s, or now when force); true when something changed. */
bool vz_live_poll(double now, bool force);
/* "following run.csv: 120 rows, ..." or "waiting for run.csv (...)"; NULL when nothing is followed. */
const char *vz_live_follow_status(void);
/* The same in the labels' language (buf: where the Chinese is written). */
const char *vz_live_follow_label(char *buf, size_t cap);

#define VZ_HIST_BINS 40
#define VZ_HIST_SAMPLE 8192 /* values a histogram is made of (every k-th of a larger tensor) */
typedef struct vz_hist {
	double lo, hi, mean, std;
	int64_t count[VZ_HIST_BINS];
	int64_t n, nonfinite;
	uint64_t updates;   /* 0: nothing recorded yet */
} vz_hist;
/* The histograms belong to a model of nlayers layers whose description hashes to sig: a model
 * shown again (the same sig) keeps them, another one starts empty. */
void vz_live_model_reset(int nlayers, uint64_t sig);
int vz_live_model_layers(void);
const vz_hist *vz_live_hist(int layer, int kind); /* kind 0: activations, 1: gradients */
lm_status vz_live_hist_record(int layer, int kind, const double *v, int64_t n, const char *fname);

/* ---------------------------------------------------------------- small helpers (util.c) */

/* snprintf that returns the text and never overflows. */
char *vz_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A number as a counter shows it: integers plainly (1,248 stays 1248), others with 4 digits. */
char *vz_number(char *buf, size_t cap, double v);
/* Appends to a text buffer (for describe). */
void vz_append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Puts "fname: " in front of the current error (status st, or the current one when 0); returns
 * the status. (Never pass lm_last_error() to lm_set_error: it is the buffer being written.) */
lm_status vz_error_prefix(lm_status st, const char *fname);
/* The visualizer's heap: malloc, calloc, realloc and free over the core's counting allocator
 * (lm_alloc: counted in lm.memory(), bounded by the memory limit), failures reported through
 * lm_set_error. Every allocation of src/viz goes through these (a raw malloc there is a leak of
 * the accounting). */
void *vz_malloc(size_t n);
void *vz_calloc(size_t n, size_t size);
void *vz_realloc(void *p, size_t n);
void vz_free(void *p);
/* Makes room for need entries of size bytes in the array *p of *cap entries (doubling from first);
 * false, with the error set, when memory runs out (*p stays as it was). */
bool vz_grow(void **p, int *cap, int need, size_t size, int first);
/* Monotonic seconds. */
double vz_now(void);

#endif
