/*
 * vz_viewer.h (internal) — the viewer: the one window, the scene shown in it, the step and time,
 * the view (pan, zoom), the hover, and the frame last recorded. Shared by viewer.c (state and the
 * public API), input.c (keys and pointer) and chrome.c (title, panel, hint line, help, tooltip).
 */
#ifndef LUMEN_VIZ_VIEWER_H
#define LUMEN_VIZ_VIEWER_H

#include "viz/vz.h"
#include "viz/vz_gpu.h"
#include "viz/vz_window.h"

/* chrome.c: the parts around the scene, in screen coordinates */
typedef struct vz_chrome {
	vz_rect title, area, panel, hint;
} vz_chrome;

typedef struct vz_viewer {
	bool open;
	vz_window win;
	vz_gpu *gpu;
	vz_text *text;
	float text_scale;      /* the UI scale the atlas was rendered for */
	/* the scene */
	const vz_scene_class *cls;
	void *scene;
	int step, steps;
	double t, t_from, anim_start; /* time shown; an animation from t_from started at anim_start */
	bool playing;
	double speed, next_step_at;
	int variant, variants;
	vz_panel panel;
	char title[256];
	/* the view of the scene's world */
	float world_w, world_h;
	vz_view view;
	bool view_set;         /* the user zoomed or panned (kept across steps) */
	vz_rect area;          /* where the scene is drawn (drawable pixels) */
	vz_chrome chrome;      /* the last frame's parts */
	/* input */
	float mouse_x, mouse_y; /* drawable pixels */
	bool mouse_in, dragging;
	float drag_x, drag_y;
	bool help;
	char toast[256];
	double toast_until;
	/* rendering */
	vz_frame frame;
	bool recorded;          /* frame matches the state */
	bool drawn;             /* the GPU has the frame (back buffer) */
	bool layout_done;
	int lang_zh;            /* the labels' language the title, panel and layout were made in */
	double last_frame_ms;
} vz_viewer;

extern vz_viewer vz_V;

/* viewer.c */
void vz_viewer_changed(void);           /* something visible changed: record and draw again */
/* Shows scene c built from b (options checked, the window opened, the old scene replaced). */
lm_status vz_viewer_install(const vz_scene_class *c, const vz_build *b);
/* The scene's data changed (a live update, a scene key): steps, title, panel and layout again. */
void vz_viewer_refresh(void);
void vz_viewer_relayout(void);          /* the area or the variant changed */
void vz_viewer_goto(int step, bool animate);
void vz_viewer_toast(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
lm_status vz_viewer_snapshot_auto(void); /* the `s` key: lumen-<scene>-<step>.png */
void vz_viewer_close(void);
/* Fits the world into the area (the view when the user has not zoomed). */
void vz_viewer_fit(void);

void vz_chrome_layout(const vz_frame *f, vz_chrome *c);
void vz_chrome_draw(vz_frame *f, const vz_chrome *c);
/* The text the hover shows for a cell (the scene's describe, or the cell's fields). */
void vz_chrome_describe(vz_cell *c, char *buf, size_t cap);

/* input.c */
void vz_input_event(const void *sdl_event);
/* A key by name (lm_viz_key): returns false when the name is unknown. */
bool vz_input_key(const char *name);
void vz_input_pointer(float x, float y);
void vz_input_zoom(float x, float y, double factor);
void vz_input_pan(float dx, float dy);

#endif
