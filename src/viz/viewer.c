/*
 * viewer.c — the visualizer's state and its public API (viz.h): opening and closing the one
 * window, showing a scene built from runs or options, steps, play and pause, the event pump,
 * snapshots, pixels, picking and the layout of the last frame.
 *
 * Design: the viewer owns the window, the GPU state and at most one scene. Anything that changes
 * what is seen calls vz_viewer_changed(); the pump records and draws a frame only then, so an
 * idle window costs one SDL_PollEvent per tick. Offscreen windows draw only when asked for
 * pixels (snapshot, pixel), and never animate, so the same state always gives the same bytes.
 * A visible window animates a step change over a quarter of a second.
 * Read next: input.c (keys), chrome.c (title, panel, hint line), draw.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "viz/vz_png.h"
#include "viz/vz_viewer.h"

#define DEFAULT_W 1280
#define DEFAULT_H 720
#define ANIM_SECONDS 0.25

vz_viewer vz_V;
#define V vz_V

static bool headless;
static void (*live_cb)(bool);
static char notice[300];
static bool notice_pending;
static uint8_t *pixels;       /* the last frame read back (valid while V.drawn && pixels_ok) */
static bool pixels_ok;
static int pixels_w, pixels_h;

void lm_viz_set_headless(bool on) { headless = on; }
void lm_viz_set_live_callback(void (*fn)(bool live)) { live_cb = fn; }

bool lm_viz_is_open(void) { return V.open; }

bool lm_viz_is_offscreen(const char **why)
{
	if (why) *why = vz_window_why();
	return V.open && V.win.offscreen;
}

const char *lm_viz_take_notice(void)
{
	if (!notice_pending) return NULL;
	notice_pending = false;
	return notice;
}

/* ---------------------------------------------------------------- changes */

void vz_viewer_changed(void)
{
	V.recorded = false;
	V.drawn = false;
	pixels_ok = false;
}

void vz_viewer_fit(void)
{
	if (V.view_set) return;
	float zx = V.world_w > 0 ? V.area.w / V.world_w : 1, zy = V.world_h > 0 ? V.area.h / V.world_h : 1;
	float z = fminf(zx, zy);
	if (z > 1) z = 1;
	if (!(z > 0.001f)) z = 0.001f;
	V.view.zoom = z;
	/* centre what is smaller than the area */
	V.view.pan_x = -(V.area.w / z - V.world_w) / 2;
	V.view.pan_y = -(V.area.h / z - V.world_h) / 2;
	if (V.view.pan_x > 0) V.view.pan_x = 0;
	if (V.view.pan_y > 0) V.view.pan_y = 0;
}

void vz_viewer_relayout(void)
{
	V.layout_done = false;
	vz_viewer_changed();
}

/* Lays the scene out for the area of the chrome (when the area or the variant changed). */
static void layout_scene(const vz_chrome *c)
{
	bool same = V.layout_done && c->area.w == V.area.w && c->area.h == V.area.h;
	V.area = c->area;
	if (same || !V.scene) return;
	vz_layout_ctx lc = {c->area.w, c->area.h, V.win.scale, &V.frame};
	V.world_w = c->area.w;
	V.world_h = c->area.h;
	V.cls->layout(V.scene, &lc, &V.world_w, &V.world_h);
	V.layout_done = true;
	vz_viewer_fit();
}

static void lang_sync(void);

/* The live scenes' data: a followed file read (when due, or now for an offscreen window, which
 * draws only when asked), the scene told, and the viewer's steps, title and panel refreshed; and
 * the labels' language. */
static void live_sync(void)
{
	if (!V.open) return;
	lang_sync();
	bool changed = vz_live_poll(vz_now(), V.win.offscreen);
	if (V.scene && V.cls->update && (V.cls->update(V.scene) || changed)) vz_viewer_refresh();
}

/* The labels follow the language (lm.sys.lang, a lesson's :lang) at the next frame: title, panel
 * and layout again (scenes derive their texts there and while drawing). Chinese without a CJK
 * font stays English, and says why once. */
static void lang_sync(void)
{
	static bool told;
	const char *why;
	if (!told && !vz_cjk_font(&why) && lm_get_lang() == LM_LANG_ZH) {
		told = true;
		snprintf(notice, sizeof notice, "viz: %s: the scenes' labels stay in English", why);
		notice_pending = true;
	}
	vz_lang_sync();
	int zh = vz_zh();
	if (zh == V.lang_zh) return;
	V.lang_zh = zh;
	if (!V.scene) {
		vz_viewer_changed();
		return;
	}
	vz_viewer_refresh();
	char wt[300];
	snprintf(wt, sizeof wt, "Lumen - %s", V.title);
	vz_window_title(&V.win, wt);
}

void vz_viewer_refresh(void)
{
	if (!V.scene) return;
	bool at_end = V.step >= V.steps - 1;
	V.steps = V.cls->steps(V.scene);
	if (at_end || V.step > V.steps - 1) V.step = V.steps - 1; /* a live scene follows its newest data */
	V.t = V.step;
	vz_panel_clear(&V.panel);
	V.cls->counters(V.scene, &V.panel);
	V.cls->title(V.scene, V.title, sizeof V.title);
	vz_viewer_relayout();
}

static void record_once(void)
{
	vz_frame *f = &V.frame;
	vz_frame_begin(f, V.win.dw, V.win.dh, V.win.scale, V.text);
	vz_chrome c;
	vz_chrome_layout(f, &c);
	V.chrome = c;
	layout_scene(&c);
	f->area = c.area;
	f->view = V.view;
	f->t = V.t;
	if (V.scene) {
		vz_world(f);
		V.cls->draw(V.scene, f);
	}
	vz_screen(f);
	vz_chrome_draw(f, &c);
	V.recorded = true;
}

/* A frame whose glyphs moved while it was recorded (the atlas grew for new characters) is
 * recorded again: the glyphs recorded before the move point at the old texture coordinates. */
static void record(void)
{
	unsigned gen = vz_text_generation(V.text);
	record_once();
	if (vz_text_generation(V.text) != gen) record_once();
}

static void render(void)
{
	if (!V.recorded) record();
	SDL_GL_MakeCurrent(V.win.win, V.win.gl);
	vz_gpu_upload_text(V.gpu, V.text); /* the glyphs this frame rendered first */
	vz_gpu_draw(V.gpu, &V.frame, vz_th.bg);
	V.drawn = true;
}

/* Draws (if needed) and reads the whole frame back into `pixels`. */
static lm_status read_frame(const char *fname)
{
	live_sync();
	if (pixels_ok && V.drawn && V.recorded) return LM_OK;
	render();
	size_t bytes = (size_t)V.win.dw * (size_t)V.win.dh * 4;
	if (!pixels || pixels_w != V.win.dw || pixels_h != V.win.dh) {
		vz_free(pixels);
		pixels = vz_malloc(bytes);
		if (!pixels) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory for the frame", fname);
		pixels_w = V.win.dw;
		pixels_h = V.win.dh;
	}
	vz_gpu_read(V.gpu, 0, 0, V.win.dw, V.win.dh, V.win.dh, pixels);
	vz_window_swap(&V.win);
	pixels_ok = true;
	return LM_OK;
}

/* ---------------------------------------------------------------- opening and closing */

static void destroy_scene(void)
{
	if (V.scene) V.cls->destroy(V.scene);
	V.scene = NULL;
	V.cls = NULL;
	V.steps = V.step = 0;
	V.t = 0;
	V.playing = false;
	vz_panel_clear(&V.panel);
	V.title[0] = '\0';
}

static void release_window(void)
{
	if (V.win.win) SDL_GL_MakeCurrent(V.win.win, V.win.gl);
	vz_gpu_free(V.gpu);
	V.gpu = NULL;
	vz_text_free(V.text);
	V.text = NULL;
	vz_window_close(&V.win);
	pixels_ok = false;
}

/* One small shape of every kind drawn (and cleared by the next frame): llvmpipe compiles a program
 * at its first draw, 5-15 ms each, which would otherwise fall into the first frames with data, while
 * a script trains (the training waits for the frame: the hook draws on its thread). */
static void warm_up(void)
{
	vz_frame f;
	memset(&f, 0, sizeof f);
	vz_frame_begin(&f, V.win.dw, V.win.dh, V.win.scale, V.text);
	vz_image *im = vz_image_new(2, 2);
	vz_color c = vz_th.text;
	vz_fill(&f, vz_r(0, 0, 8, 8), c);
	vz_cell_fill(&f, vz_r(8, 0, 8, 8), c, 1, vz_th.bg);
	vz_hatch(&f, vz_r(16, 0, 8, 8), c, vz_th.bg);
	vz_outline(&f, vz_r(24, 0, 8, 8), 1, c);
	vz_disc(&f, 36, 4, 4, c);
	vz_line(&f, 0, 10, 30, 12, 1, c);
	vz_arrow(&f, 0, 14, 30, 16, 1, 5, c);
	vz_text_draw(&f, 0, 20, VZ_FONT_SMALL, VZ_ALIGN_LEFT, c, "0");
	if (im) vz_draw_image(&f, vz_r(40, 0, 8, 8), im);
	vz_gpu_draw(V.gpu, &f, vz_th.bg);
	vz_gpu_finish(V.gpu);
	vz_image_free(im);
	vz_frame_free(&f);
}

static lm_status make_window(int w, int h, bool offscreen, const char *fname)
{
	if (vz_window_open(&V.win, w, h, offscreen, "Lumen", fname) != LM_OK) return LM_ERR_UNSUPPORTED;
	V.gpu = vz_gpu_new(fname);
	if (!V.gpu) goto fail;
	V.text = vz_text_new(V.win.scale, fname);
	if (!V.text) goto fail;
	V.text_scale = V.win.scale;
	vz_gpu_upload_text(V.gpu, V.text);
	warm_up();
	return LM_OK;
fail:;
	lm_status st = lm_last_status();
	char msg[1024];
	snprintf(msg, sizeof msg, "%s", lm_last_error());
	release_window();
	return lm_set_error(st ? st : LM_ERR_INTERNAL, "%s", msg);
}

lm_status lm_viz_open(const lm_viz_open_opts *o, const char *fname)
{
	int w = o && o->width > 0 ? o->width : DEFAULT_W, h = o && o->height > 0 ? o->height : DEFAULT_H;
	if (w < 200 || h < 150 || w > 8192 || h > 8192)
		return lm_set_error(LM_ERR_ARG, "%s: the window size must lie in 200..8192 x 150..8192, got "
		                    "%d x %d", fname, w, h);
	bool offscreen = headless || (o && o->offscreen);
	if (V.open) {
		bool resize = o && o->width > 0 && o->height > 0 && (w != V.win.w || h != V.win.h);
		if (!resize) return LM_OK;
		if (!V.win.offscreen) {
			SDL_SetWindowSize(V.win.win, w, h);
			vz_window_sizes(&V.win);
			vz_viewer_relayout();
			return LM_OK;
		}
		/* the offscreen driver's surface has the size it was made with: make a new one */
		release_window();
		if (make_window(w, h, true, fname) != LM_OK) {
			V.open = false;
			destroy_scene();
			return LM_ERR_UNSUPPORTED;
		}
		vz_viewer_relayout();
		return LM_OK;
	}
	if (make_window(w, h, offscreen, fname) != LM_OK) return LM_ERR_UNSUPPORTED;
	V.open = true;
	V.speed = V.speed > 0 ? V.speed : 1.5;
	V.help = false;
	V.mouse_in = false;
	vz_viewer_relayout();
	const char *why = vz_window_why();
	if (V.win.offscreen && why[0] && strcmp(why, "--headless") != 0 &&
	    strcmp(why, "SDL_VIDEODRIVER=offscreen") != 0) {
		snprintf(notice, sizeof notice, "viz: %s: rendering offscreen; viz.snapshot(path) writes "
		         "what the window would show", why);
		notice_pending = true;
	}
	if (!V.win.offscreen) {
		/* the display server's first events (shown, exposed, focus) taken now: SDL spends
		 * milliseconds on them (the keyboard's state, the input method), which would otherwise
		 * fall into the first tick of a training loop */
		vz_window_sync(&V.win);
		SDL_Event e;
		while (V.open && SDL_PollEvent(&e)) vz_input_event(&e);
		if (!V.open) return lm_set_error(LM_ERR_STATE, "%s: the window was closed as it opened", fname);
		if (live_cb) live_cb(true);
	}
	return LM_OK;
}

void vz_viewer_close(void)
{
	if (!V.open) return;
	bool visible = !V.win.offscreen;
	destroy_scene();
	release_window();
	V.open = false;
	if (visible && live_cb) live_cb(false);
}

void lm_viz_close(void) { vz_viewer_close(); }

/* SDL's video stays initialised: quitting it unloads Mesa's driver (and SDL's D-Bus connection),
 * whose one-time allocations then look leaked to LeakSanitizer; the process ends right after. */
void lm_viz_shutdown(void)
{
	vz_viewer_close();
	vz_frame_free(&V.frame);
	vz_free(pixels);
	pixels = NULL;
}

/* ---------------------------------------------------------------- scenes */

/* The scene a later version adds for a kernel pattern. */
static const char *planned_for(const char *pattern)
{
	static const char *const map[][2] = {{"conv2d", "conv"}, {"matmul", "matmul"},
	                                     {"spmv", "spmv"}, {"streams", "timeline"}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(map[i][0], pattern) == 0) return map[i][1];
	return NULL;
}

static void built_list(char *buf, size_t cap)
{
	buf[0] = '\0';
	for (int i = 0; vz_scene_at(i); i++) vz_append(buf, cap, "%s%s", i ? ", " : "", vz_scene_at(i)->name);
}

static lm_status scene_by_name(const char *name, const vz_scene_class **out, const char *fname)
{
	char list[256];
	built_list(list, sizeof list);
	*out = vz_scene_find(name);
	if (*out) return LM_OK;
	if (vz_scene_planned(name))
		return lm_set_error(LM_ERR_UNSUPPORTED, "%s: scene '%s' is not built yet (this version has "
		                    "%s)", fname, name, list);
	return lm_set_error(LM_ERR_ARG, "%s: unknown scene '%s' (scenes: %s)", fname, name, list);
}

static int find_variant(void *s, const vz_scene_class *c, const char *name)
{
	int n = c->variants(s);
	for (int i = 0; i < n; i++)
		if (strcmp(c->variant_name(s, i), name) == 0) return i;
	return -1;
}

lm_status vz_viewer_install(const vz_scene_class *c, const vz_build *b)
{
	const lm_viz_opts *o = b->opts;
	vz_lang_sync(); /* the scene's first title and panel in the language set now */
	if (vz_opts_check(c, o, b->fname) != LM_OK) return LM_ERR_ARG;
	lm_viz_open_opts oo = {(int)vz_opt_int(o, "width", 0), (int)vz_opt_int(o, "height", 0), false};
	if (vz_opt_given(o, "width") != vz_opt_given(o, "height"))
		return lm_set_error(LM_ERR_ARG, "%s: give both width and height (or neither)", b->fname);
	if (lm_viz_open(&oo, b->fname) != LM_OK) return lm_last_status();
	void *s = c->create(b);
	if (!s) return lm_last_status() ? lm_last_status() : LM_ERR_INTERNAL;
	int variant = c->initial_variant ? c->initial_variant(s) : 0;
	const char *vname = vz_opt_string(o, "variant", NULL);
	if (vname && *vname && (variant = find_variant(s, c, vname)) < 0) {
		char list[512] = "";
		for (int i = 0; i < c->variants(s); i++)
			vz_append(list, sizeof list, "%s'%s'", i ? ", " : "", c->variant_name(s, i));
		c->destroy(s);
		return lm_set_error(LM_ERR_ARG, "%s: scene '%s' has no variant '%s' (its variants: %s)",
		                    b->fname, c->name, vname, list);
	}
	destroy_scene();
	V.cls = c;
	V.scene = s;
	V.variants = c->variants(s);
	V.variant = variant;
	c->set_variant(s, variant);
	V.steps = c->steps(s);
	int64_t step = vz_opt_int(o, "step", 0);
	V.step = step >= V.steps || (c->update && !vz_opt_given(o, "step")) ? V.steps - 1 : (int)step;
	V.t = V.step;
	V.playing = false;
	if (vz_opt_given(o, "speed")) V.speed = vz_opt_number(o, "speed", 1.5);
	vz_panel_clear(&V.panel);
	c->counters(s, &V.panel);
	c->title(s, V.title, sizeof V.title);
	V.lang_zh = vz_zh();
	char wt[300];
	snprintf(wt, sizeof wt, "Lumen - %s", V.title);
	vz_window_title(&V.win, wt);
	V.view_set = false;
	vz_viewer_relayout();
	return LM_OK;
}

lm_status lm_viz_show(const lm_viz_run *runs, int nruns, const char *scene, const lm_viz_opts *o,
                      const char *fname)
{
	if (nruns < 1) return lm_set_error(LM_ERR_ARG, "%s: nothing to show", fname);
	for (int i = 1; i < nruns; i++)
		if (strcmp(runs[i].pattern, runs[0].pattern) != 0)
			return lm_set_error(LM_ERR_ARG, "%s: the results are of different patterns (%s and %s): "
			                    "show one pattern at a time", fname, runs[0].pattern, runs[i].pattern);
	const vz_scene_class *c = NULL;
	char list[256];
	built_list(list, sizeof list);
	if (scene) {
		if (scene_by_name(scene, &c, fname) != LM_OK) return lm_last_status();
		if (!*c->patterns)
			return lm_set_error(LM_ERR_ARG, "%s: scene '%s' is not drawn from kernel results (this is a %s result)",
			                    fname, c->name, runs[0].pattern);
		if (!strstr(c->patterns, runs[0].pattern) && !strstr(c->patterns, "*"))
			return lm_set_error(LM_ERR_ARG, "%s: scene '%s' draws %s results; this is a %s result "
			                    "(%s %s)", fname, c->name, c->patterns, runs[0].pattern,
			                    runs[0].pattern, runs[0].algo);
	} else {
		c = vz_scene_for_pattern(runs[0].pattern);
		if (!c) {
			const char *p = planned_for(runs[0].pattern);
			if (p)
				return lm_set_error(LM_ERR_UNSUPPORTED, "%s: %s results are drawn by the scene '%s', "
				                    "which is not built yet (this version has %s)", fname,
				                    runs[0].pattern, p, list);
			return lm_set_error(LM_ERR_ARG, "%s: no scene draws '%s' results (scenes: %s)", fname,
			                    runs[0].pattern, list);
		}
	}
	vz_build b = {.runs = runs, .nruns = nruns, .opts = o, .fname = fname};
	return vz_viewer_install(c, &b);
}

lm_status lm_viz_scene(const char *scene, const lm_viz_opts *o, const char *fname)
{
	const vz_scene_class *c;
	if (scene_by_name(scene, &c, fname) != LM_OK) return lm_last_status();
	vz_build b = {.opts = o, .fname = fname};
	return vz_viewer_install(c, &b);
}

/* ---------------------------------------------------------------- steps and time */

static lm_status need_scene(const char *fname)
{
	if (V.scene) return LM_OK;
	return lm_set_error(LM_ERR_STATE, "%s: no scene is shown%s (viz.show(info) or viz.scene(name) "
	                    "shows one)", fname, V.open ? "" : " (the window is closed)");
}

void vz_viewer_goto(int step, bool animate)
{
	if (!V.scene) return;
	if (step < 0) step = 0;
	if (step > V.steps - 1) step = V.steps - 1;
	if (step == V.step && V.t == step) return;
	bool anim = animate && !V.win.offscreen && abs(step - V.step) == 1;
	V.t_from = anim ? V.t : step;
	V.anim_start = vz_now();
	V.step = step;
	if (!anim) V.t = step;
	vz_viewer_changed();
}

lm_status lm_viz_step(int n, const char *fname)
{
	if (need_scene(fname) != LM_OK) return LM_ERR_STATE;
	V.playing = false;
	vz_viewer_goto(V.step + n, true);
	return LM_OK;
}

lm_status lm_viz_seek(int step, const char *fname)
{
	if (need_scene(fname) != LM_OK) return LM_ERR_STATE;
	if (step < 0 || step >= V.steps)
		return lm_set_error(LM_ERR_INDEX, "%s: step %d is out of range (the scene has steps 0..%d)",
		                    fname, step, V.steps - 1);
	V.playing = false;
	vz_viewer_goto(step, false);
	return LM_OK;
}

lm_status lm_viz_play(bool on, const char *fname)
{
	if (need_scene(fname) != LM_OK) return LM_ERR_STATE;
	if (on && V.step >= V.steps - 1) vz_viewer_goto(0, false); /* play again from the start */
	V.playing = on && V.steps > 1;
	V.next_step_at = vz_now() + 1.0 / V.speed;
	vz_viewer_changed();
	return LM_OK;
}

lm_status lm_viz_variant(const char *name, const char *fname)
{
	if (need_scene(fname) != LM_OK) return LM_ERR_STATE;
	int v = (V.variant + 1) % (V.variants > 0 ? V.variants : 1);
	if (name && (v = find_variant(V.scene, V.cls, name)) < 0)
		return lm_set_error(LM_ERR_ARG, "%s: scene '%s' has no variant '%s'", fname, V.cls->name, name);
	V.variant = v;
	V.cls->set_variant(V.scene, v);
	V.steps = V.cls->steps(V.scene);
	if (V.step >= V.steps) V.step = V.steps - 1;
	V.t = V.step;
	vz_panel_clear(&V.panel);
	V.cls->counters(V.scene, &V.panel);
	V.cls->title(V.scene, V.title, sizeof V.title);
	V.view_set = false;
	vz_viewer_relayout();
	return LM_OK;
}

void lm_viz_get_state(lm_viz_state *s)
{
	memset(s, 0, sizeof *s);
	s->scene = V.cls ? V.cls->name : NULL;
	s->step = V.step;
	s->steps = V.steps;
	s->variant_index = V.variant;
	s->variants = V.variants;
	s->variant = V.scene && V.variants > 0 ? V.cls->variant_name(V.scene, V.variant) : NULL;
	s->playing = V.playing;
	s->speed = V.speed;
	s->width = V.open ? V.win.dw : 0;
	s->height = V.open ? V.win.dh : 0;
	s->scale = V.open ? V.win.scale : 0;
	live_sync();
	s->steps = V.steps;
	s->step = V.step;
	snprintf(s->title, sizeof s->title, "%s", V.title);
	if (V.scene) V.cls->step_label(V.scene, V.step, s->step_label, sizeof s->step_label);
	if (V.open && !V.recorded) record();
	const vz_rect *r[2] = {&V.chrome.area, &V.chrome.panel};
	float *dst[2] = {s->area, s->panel};
	for (int i = 0; i < 2; i++) {
		dst[i][0] = r[i]->x;
		dst[i][1] = r[i]->y;
		dst[i][2] = r[i]->w;
		dst[i][3] = r[i]->h;
	}
}

/* ---------------------------------------------------------------- the pump */

static double ease(double u) { return u >= 1 ? 1 : u * u * (3 - 2 * u); }

static void advance(double now)
{
	if (V.playing) {
		if (now >= V.next_step_at) {
			vz_viewer_goto(V.step + 1, true);
			V.next_step_at = now + 1.0 / V.speed;
			if (V.step >= V.steps - 1) {
				V.playing = false;
				vz_viewer_changed();
			}
		}
	}
	if (V.t != V.step) {
		double u = (now - V.anim_start) / ANIM_SECONDS;
		V.t = u >= 1 ? V.step : V.t_from + (V.step - V.t_from) * ease(u);
		vz_viewer_changed();
	}
	if (V.toast[0] && now >= V.toast_until) {
		V.toast[0] = '\0';
		vz_viewer_changed();
	}
}

static double last_drawn_at;

static void pump(double min_interval)
{
	if (!V.open || V.win.offscreen) return;
	SDL_Event e;
	while (V.open && SDL_PollEvent(&e)) vz_input_event(&e);
	if (!V.open) return;
	double now = vz_now();
	advance(now);
	live_sync();
	/* busy: at most 10 frames a second, and a frame's own time (render, swap and the display
	 * server's share, vz_window_sync) at most 1/300 of the time: the GL driver's threads spend
	 * about as much again, on the cores the computation uses (bench/viz, the MLP epoch with
	 * --viz: 1.07x at 1/100, 1.04x at 1/300 before the server's share was waited for) */
	double interval = min_interval > 0 ? fmax(min_interval, V.last_frame_ms * 0.3) : 0;
	if (!V.drawn && now - last_drawn_at >= interval) {
		render();
		vz_window_swap(&V.win);
		vz_window_sync(&V.win);
		V.last_frame_ms = (vz_now() - now) * 1e3;
		last_drawn_at = now;
	}
}

void lm_viz_pump(void) { pump(0); }
void lm_viz_pump_busy(void) { pump(0.1); }

void lm_viz_wait_closed(volatile int *stop)
{
	while (V.open && !V.win.offscreen && !(stop && *stop)) {
		bool busy = V.playing || V.t != V.step || V.toast[0];
		SDL_Event e;
		if (busy) {
			lm_viz_pump();
			SDL_Delay(8);
		} else if (SDL_WaitEventTimeout(&e, 100)) {
			vz_input_event(&e);
			lm_viz_pump();
		}
	}
}

double lm_viz_redraw(void)
{
	if (!V.open) return 0;
	double t0 = vz_now();
	live_sync(); /* the data plotted since the last frame, as a pump's frame would have it */
	vz_viewer_changed();
	render();
	vz_gpu_finish(V.gpu);
	double ms = (vz_now() - t0) * 1e3;
	vz_window_swap(&V.win);
	vz_window_sync(&V.win); /* the display server has it too: nothing of it is left for later */
	/* the busy pump's budget counts this frame too: the next one waits its interval */
	V.last_frame_ms = (vz_now() - t0) * 1e3;
	last_drawn_at = t0;
	return ms;
}

/* ---------------------------------------------------------------- pixels */

lm_status lm_viz_snapshot(const char *path, const char *fname)
{
	if (!V.open)
		return lm_set_error(LM_ERR_STATE, "%s: the window is closed (viz.open(), viz.show(info) or "
		                    "viz.scene(name) opens it)", fname);
	double t = V.t;
	V.t = V.step; /* the step itself, not a moment of its animation */
	if (t != V.step) vz_viewer_changed();
	if (read_frame(fname) != LM_OK) return LM_ERR_NOMEM;
	return vz_png_write(path, pixels, V.win.dw, V.win.dh, fname);
}

lm_status lm_viz_pixel(int x, int y, uint8_t rgba[4], const char *fname)
{
	if (!V.open) return lm_set_error(LM_ERR_STATE, "%s: the window is closed", fname);
	if (x < 0 || y < 0 || x >= V.win.dw || y >= V.win.dh)
		return lm_set_error(LM_ERR_INDEX, "%s: pixel (%d, %d) is outside the %d x %d frame", fname, x,
		                    y, V.win.dw, V.win.dh);
	if (read_frame(fname) != LM_OK) return LM_ERR_NOMEM;
	memcpy(rgba, pixels + ((size_t)y * (size_t)V.win.dw + (size_t)x) * 4, 4);
	return LM_OK;
}

void vz_viewer_toast(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(V.toast, sizeof V.toast, fmt, ap);
	va_end(ap);
	V.toast_until = vz_now() + 2.5;
	vz_viewer_changed();
}

lm_status vz_viewer_snapshot_auto(void)
{
	char path[128];
	snprintf(path, sizeof path, "lumen-%s-%d.png", V.cls ? V.cls->name : "window", V.step);
	/* the toast must not be in the picture: write first, then say so */
	lm_status st = lm_viz_snapshot(path, "s (snapshot)");
	if (st == LM_OK) vz_zh() ? vz_viewer_toast("已写入 %s", path) : vz_viewer_toast("wrote %s", path);
	else vz_viewer_toast("%s", lm_last_error());
	return st;
}

/* ---------------------------------------------------------------- picking and layout */

static void ensure_recorded(void)
{
	live_sync();
	if (V.open && !V.recorded) record();
}

bool lm_viz_due(void)
{
	static double last_due;
	if (!V.open) return false;
	double now = vz_now();
	if (now - last_due < fmax(0.1, V.last_frame_ms * 0.1)) return false;
	last_due = now;
	return true;
}

static void to_pick(vz_cell *c, lm_viz_pick *out, bool describe)
{
	memset(out, 0, sizeof *out);
	if (describe) vz_chrome_describe(c, out->text, sizeof out->text); /* may fill a grid's fields */
	out->kind = c->kind;
	out->group = c->group;
	out->state = c->state;
	out->row = c->row;
	out->col = c->col;
	out->index = c->index;
	out->step = c->step;
	out->thread = c->thread;
	out->block = c->block;
	out->warp = c->warp;
	out->lane = c->lane;
	out->launch = c->launch;
	out->event = c->event;
	out->value = c->value;
	out->has_value = c->has_value;
	out->x = c->r.x;
	out->y = c->r.y;
	out->w = c->r.w;
	out->h = c->r.h;
	out->rgb[0] = c->color.r;
	out->rgb[1] = c->color.g;
	out->rgb[2] = c->color.b;
}

bool lm_viz_pick_at(double x, double y, lm_viz_pick *out)
{
	ensure_recorded();
	vz_cell c;
	if (!V.open || !vz_frame_pick(&V.frame, (float)x, (float)y, &c)) return false;
	to_pick(&c, out, true);
	return true;
}

int lm_viz_cell_count(void)
{
	ensure_recorded();
	return V.open ? V.frame.ncells : 0;
}

/* The items of a frame after its count (which synced the live data and the language): recorded
 * again only when something changed in between, without reading the world again per item. */
static void ensure_recorded_item(void)
{
	if (V.open && !V.recorded) record();
}

bool lm_viz_cell_get(int i, lm_viz_pick *out)
{
	ensure_recorded_item();
	if (!V.open || i < 0 || i >= V.frame.ncells) return false;
	vz_cell c = V.frame.cells[i];
	to_pick(&c, out, false);
	return true;
}

int lm_viz_text_count(void)
{
	ensure_recorded();
	return V.open ? V.frame.ntexts : 0;
}

bool lm_viz_text_get(int i, lm_viz_text *out)
{
	ensure_recorded_item();
	if (!V.open || i < 0 || i >= V.frame.ntexts) return false;
	const vz_text_box *b = &V.frame.texts[i];
	const vz_rect *r[2] = {&b->r, &b->clip};
	float *dst[2] = {out->box, out->clip};
	for (int k = 0; k < 2; k++) {
		dst[k][0] = r[k]->x;
		dst[k][1] = r[k]->y;
		dst[k][2] = r[k]->w;
		dst[k][3] = r[k]->h;
	}
	out->layer = b->layer;
	static const char *const fonts[VZ_FONT_COUNT] = {"small", "body", "title", "tiny"};
	out->font = fonts[b->font];
	snprintf(out->text, sizeof out->text, "%s", b->s);
	return true;
}

lm_status lm_viz_key(const char *key, const char *fname)
{
	if (!V.open) return lm_set_error(LM_ERR_STATE, "%s: the window is closed", fname);
	if (!vz_input_key(key))
		return lm_set_error(LM_ERR_ARG, "%s: unknown key '%s' (space, right, left, home, end, +, -, "
		                    "tab, s, ?, escape, 0)", fname, key);
	return LM_OK;
}

void lm_viz_pointer(double x, double y) { vz_input_pointer((float)x, (float)y); }

lm_status lm_viz_zoom(double factor, double x, double y, const char *fname)
{
	if (need_scene(fname) != LM_OK) return LM_ERR_STATE;
	if (factor == 0) {
		V.view_set = false;
		vz_viewer_fit();
		vz_viewer_changed();
		return LM_OK;
	}
	if (!(factor > 0) || factor > 1e3)
		return lm_set_error(LM_ERR_ARG, "%s: the factor must be positive (0 fits the scene), got %g", fname, factor);
	vz_input_zoom((float)x, (float)y, factor);
	return LM_OK;
}

lm_status lm_viz_pan(double dx, double dy, const char *fname)
{
	if (need_scene(fname) != LM_OK) return LM_ERR_STATE;
	if (!isfinite(dx) || !isfinite(dy)) return lm_set_error(LM_ERR_ARG, "%s: the offsets must be finite numbers", fname);
	vz_input_pan((float)dx, (float)dy);
	return LM_OK;
}

/* ---------------------------------------------------------------- registry for Lua */

static const struct { const char *name; const vz_color *c; } named_colors[] = {
	{"background", &vz_th.bg}, {"panel", &vz_th.panel}, {"text", &vz_th.text},
	{"active", &vz_th.active}, {"idle", &vz_th.idle}, {"pending", &vz_th.pending},
	{"arrow", &vz_th.arrow}, {"arrow_now", &vz_th.arrow_now}, {"hatch", &vz_th.hatch},
	{"highlight", &vz_th.highlight}, {"path_a", &vz_th.path_a}, {"path_b", &vz_th.path_b},
	{"common", &vz_th.common},
};

int lm_viz_color_count(void) { return (int)(sizeof named_colors / sizeof named_colors[0]); }

const char *lm_viz_color_get(int i, uint8_t rgb[3])
{
	if (i < 0 || i >= lm_viz_color_count()) return NULL;
	rgb[0] = named_colors[i].c->r;
	rgb[1] = named_colors[i].c->g;
	rgb[2] = named_colors[i].c->b;
	return named_colors[i].name;
}

const char *lm_viz_scene_name(int i, const char **summary)
{
	const vz_scene_class *c = vz_scene_at(i);
	if (!c) return NULL;
	if (summary) *summary = c->summary;
	return c->name;
}

int lm_viz_scene_option(int scene, int i, const char **name, const char **help, const char **def)
{
	const vz_scene_class *c = vz_scene_at(scene);
	if (!c) return 0;
	int n = 0;
	for (const vz_option *p = c->options; p && p->name; p++, n++)
		if (n == i) {
			*name = p->name;
			*help = p->help;
			*def = p->def;
			return 1;
		}
	for (const vz_option *p = vz_common_options; p->name; p++, n++)
		if (n == i) {
			*name = p->name;
			*help = p->help;
			*def = p->def;
			return 1;
		}
	return 0;
}
