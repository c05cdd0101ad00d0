/*
 * input.c — the controls: keys (space, arrows, Home/End, +/-, Tab, s, ?, Esc, 0), the pointer
 * (hover), the wheel (zoom about the pointer) and dragging (pan), window events (resize, expose,
 * close).
 *
 * Keys are handled by name (vz_input_key) so that tests and lessons can press them through
 * viz.key(name) exactly as a user would. Pointer coordinates arrive in screen points and are kept
 * in drawable pixels (HiDPI). Read next: viewer.c.
 */
#include <math.h>
#include <string.h>

#include <SDL.h>

#include "viz/vz_viewer.h"

#define V vz_V

static void set_speed(double s)
{
	if (s < 0.1) s = 0.1;
	if (s > 60) s = 60;
	V.speed = s;
	V.next_step_at = vz_now() + 1.0 / V.speed;
	vz_viewer_changed();
}

/* Zooms by factor about the drawable pixel (x, y). */
void vz_input_zoom(float x, float y, double factor)
{
	double z = V.view.zoom * factor;
	if (z < 0.05) z = 0.05;
	if (z > 64) z = 64;
	/* the world point under (x, y) stays there */
	double wx = V.view.pan_x + (x - V.area.x) / V.view.zoom;
	double wy = V.view.pan_y + (y - V.area.y) / V.view.zoom;
	V.view.zoom = z;
	V.view.pan_x = wx - (x - V.area.x) / z;
	V.view.pan_y = wy - (y - V.area.y) / z;
	V.view_set = true;
	vz_viewer_changed();
}

void vz_input_pan(float dx, float dy)
{
	V.view.pan_x -= dx / V.view.zoom;
	V.view.pan_y -= dy / V.view.zoom;
	V.view_set = true;
	vz_viewer_changed();
}

bool vz_input_key(const char *k)
{
	if (!V.open) return true;
	bool scene = V.scene != NULL;
	if (strcmp(k, "space") == 0) {
		if (scene) lm_viz_play(!V.playing, "space");
	} else if (strcmp(k, "right") == 0) {
		if (scene) lm_viz_step(1, "right");
	} else if (strcmp(k, "left") == 0) {
		if (scene) lm_viz_step(-1, "left");
	} else if (strcmp(k, "home") == 0) {
		if (scene) lm_viz_seek(0, "home");
	} else if (strcmp(k, "end") == 0) {
		if (scene) lm_viz_seek(V.steps - 1, "end");
	} else if (strcmp(k, "+") == 0) {
		set_speed(V.speed * 1.5);
	} else if (strcmp(k, "-") == 0) {
		set_speed(V.speed / 1.5);
	} else if (strcmp(k, "tab") == 0) {
		if (scene) lm_viz_variant(NULL, "tab");
	} else if (strcmp(k, "shift+tab") == 0) {
		if (scene && V.variants > 1) {
			int v = (V.variant + V.variants - 1) % V.variants;
			lm_viz_variant(V.cls->variant_name(V.scene, v), "shift+tab");
		}
	} else if (strcmp(k, "s") == 0) {
		vz_viewer_snapshot_auto();
	} else if (strcmp(k, "?") == 0) {
		V.help = !V.help;
		vz_viewer_changed();
	} else if (strcmp(k, "0") == 0) {
		V.view_set = false;
		vz_viewer_fit();
		vz_viewer_changed();
	} else if (strcmp(k, "escape") == 0) {
		if (V.help) {
			V.help = false;
			vz_viewer_changed();
		} else {
			vz_viewer_close();
		}
	} else if (scene && V.cls->key && V.cls->key(V.scene, k)) {
		vz_viewer_refresh();
	} else {
		return false;
	}
	return true;
}

void vz_input_pointer(float x, float y)
{
	V.mouse_x = x;
	V.mouse_y = y;
	V.mouse_in = true;
	vz_viewer_changed();
}

static void on_key(const SDL_KeyboardEvent *k)
{
	SDL_Keycode c = k->keysym.sym;
	bool shift = (k->keysym.mod & KMOD_SHIFT) != 0;
	switch (c) {
	case SDLK_SPACE: vz_input_key("space"); break;
	case SDLK_RIGHT: vz_input_key("right"); break;
	case SDLK_LEFT: vz_input_key("left"); break;
	case SDLK_HOME: vz_input_key("home"); break;
	case SDLK_END: vz_input_key("end"); break;
	case SDLK_PLUS: case SDLK_KP_PLUS: case SDLK_EQUALS: vz_input_key("+"); break;
	case SDLK_MINUS: case SDLK_KP_MINUS: vz_input_key("-"); break;
	case SDLK_TAB: vz_input_key(shift ? "shift+tab" : "tab"); break;
	case SDLK_s: vz_input_key("s"); break;
	case SDLK_SLASH: if (shift) vz_input_key("?"); break;
	case SDLK_QUESTION: vz_input_key("?"); break;
	case SDLK_h: case SDLK_F1: vz_input_key("?"); break;
	case SDLK_0: case SDLK_KP_0: vz_input_key("0"); break;
	case SDLK_ESCAPE: vz_input_key("escape"); break;
	case SDLK_l: vz_input_key("l"); break;
	case SDLK_g: vz_input_key("g"); break;
	case SDLK_LEFTBRACKET: vz_input_key("["); break;
	case SDLK_RIGHTBRACKET: vz_input_key("]"); break;
	default: break;
	}
}

static void on_window(const SDL_WindowEvent *w)
{
	switch (w->event) {
	case SDL_WINDOWEVENT_CLOSE: vz_viewer_close(); break;
	case SDL_WINDOWEVENT_SIZE_CHANGED:
	case SDL_WINDOWEVENT_RESIZED:
		vz_window_sizes(&V.win);
		vz_viewer_relayout();
		break;
	case SDL_WINDOWEVENT_LEAVE:
		V.mouse_in = false;
		vz_viewer_changed();
		break;
	case SDL_WINDOWEVENT_EXPOSED: V.drawn = false; break;
	default: break;
	}
}

void vz_input_event(const void *ev)
{
	const SDL_Event *e = ev;
	float s = V.win.w > 0 ? (float)V.win.dw / (float)V.win.w : 1;
	switch (e->type) {
	case SDL_QUIT: vz_viewer_close(); break;
	case SDL_WINDOWEVENT: on_window(&e->window); break;
	case SDL_KEYDOWN: on_key(&e->key); break;
	case SDL_MOUSEMOTION: {
		float x = (float)e->motion.x * s, y = (float)e->motion.y * s;
		if (V.dragging) {
			vz_input_pan(x - V.drag_x, y - V.drag_y);
			V.drag_x = x;
			V.drag_y = y;
		}
		vz_input_pointer(x, y);
		break;
	}
	case SDL_MOUSEBUTTONDOWN:
		if (e->button.button == SDL_BUTTON_LEFT) {
			V.dragging = true;
			V.drag_x = (float)e->button.x * s;
			V.drag_y = (float)e->button.y * s;
		}
		break;
	case SDL_MOUSEBUTTONUP:
		if (e->button.button == SDL_BUTTON_LEFT) {
			V.dragging = false;
			vz_viewer_changed();
		}
		break;
	case SDL_MOUSEWHEEL: {
		float wy = e->wheel.preciseY != 0 ? e->wheel.preciseY : (float)e->wheel.y;
		if (wy != 0 && vz_contains(V.area, V.mouse_x, V.mouse_y))
			vz_input_zoom(V.mouse_x, V.mouse_y, pow(1.2, wy));
		break;
	}
	default: break;
	}
}
