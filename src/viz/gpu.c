/*
 * gpu.c — OpenGL 3.3 core through libepoxy: the one shader program (shaders/batch.*), a unit
 * quad, a streamed instance buffer, the glyph atlas and scene images as textures; a frame is one
 * instanced draw per batch (clip rectangle, image).
 *
 * Design: everything a frame shows goes through one program so that the GPU work per frame is a
 * handful of calls, whatever the scene. The instance buffer is orphaned and refilled each frame
 * (glBufferData with NULL first), which lets the driver keep drawing the previous frame.
 * Shaders are read from files at run time (vz_shader_dir) so a student can read and change them;
 * a compile or link error returns the driver's log, never a black window.
 * Read next: shaders/batch.vert, draw.c (how frames are recorded), viewer.c.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <epoxy/gl.h>

#include "viz/vz_gpu.h"

#ifndef LUMEN_SOURCE_SHADER_DIR
#define LUMEN_SOURCE_SHADER_DIR "shaders"
#endif

struct vz_gpu {
	GLuint program, vao, quad, instances, atlas, blank;
	GLint u_viewport, u_atlas, u_image;
	size_t instance_bytes;
};

static vz_gpu *current;      /* the live context's GPU state (textures are freed through it) */
static vz_image *live_images; /* images holding a texture */

/* ---------------------------------------------------------------- finding and building shaders */

static bool has_shaders(const char *dir)
{
	char p[PATH_MAX + 128];
	snprintf(p, sizeof p, "%s/batch.vert", dir);
	return access(p, R_OK) == 0;
}

const char *vz_shader_dir(void)
{
	static char dir[PATH_MAX + 64];
	const char *env = getenv("LUMEN_SHADER_DIR");
	if (env && *env) return env;
	if (dir[0]) return dir;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) *slash = '\0';
		static const char *const rel[] = {"%s/shaders", "%s/../share/lumen/shaders"};
		for (int i = 0; i < 2; i++) {
			snprintf(dir, sizeof dir, rel[i], exe);
			if (has_shaders(dir)) return dir;
		}
	}
	snprintf(dir, sizeof dir, "%s", LUMEN_SOURCE_SHADER_DIR);
	return dir;
}

/* Reads dir/name into a malloc'ed string. */
static char *read_source(const char *name, char *path, size_t cap, const char *fname)
{
	snprintf(path, cap, "%s/%s", vz_shader_dir(), name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		lm_set_error(LM_ERR_IO, "%s: the shader %s cannot be read: %s (set LUMEN_SHADER_DIR to the "
		             "directory holding batch.vert and batch.frag)", fname, path, strerror(errno));
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = n >= 0 && n < (1 << 20) ? malloc((size_t)n + 1) : NULL;
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		fclose(f);
		lm_set_error(LM_ERR_IO, "%s: the shader %s cannot be read", fname, path);
		return NULL;
	}
	s[n] = '\0';
	fclose(f);
	return s;
}

static GLuint compile(GLenum type, const char *name, const char *fname)
{
	char path[PATH_MAX + 192];
	char *src = read_source(name, path, sizeof path, fname);
	if (!src) return 0;
	GLuint sh = glCreateShader(type);
	const char *s = src;
	glShaderSource(sh, 1, &s, NULL);
	glCompileShader(sh);
	free(src);
	GLint ok = 0;
	glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
	if (!ok) {
		char log[2048] = "";
		glGetShaderInfoLog(sh, sizeof log, NULL, log);
		glDeleteShader(sh);
		size_t n = strlen(log);
		while (n && (log[n - 1] == '\n' || log[n - 1] == ' ')) log[--n] = '\0';
		lm_set_error(LM_ERR_STATE, "%s: the shader %s does not compile:\n%s", fname, path, log);
		return 0;
	}
	return sh;
}

static GLuint build_program(const char *fname)
{
	GLuint vs = compile(GL_VERTEX_SHADER, "batch.vert", fname);
	if (!vs) return 0;
	GLuint fs = compile(GL_FRAGMENT_SHADER, "batch.frag", fname);
	if (!fs) {
		glDeleteShader(vs);
		return 0;
	}
	GLuint p = glCreateProgram();
	glAttachShader(p, vs);
	glAttachShader(p, fs);
	glLinkProgram(p);
	glDeleteShader(vs);
	glDeleteShader(fs);
	GLint ok = 0;
	glGetProgramiv(p, GL_LINK_STATUS, &ok);
	if (!ok) {
		char log[2048] = "";
		glGetProgramInfoLog(p, sizeof log, NULL, log);
		glDeleteProgram(p);
		lm_set_error(LM_ERR_STATE, "%s: the shaders in %s (batch.vert, batch.frag) do not link:\n%s",
		             fname, vz_shader_dir(), log);
		return 0;
	}
	return p;
}

/* ---------------------------------------------------------------- setup */

static GLuint texture(GLenum format, int w, int h, const void *pixels, GLint filter)
{
	GLuint t;
	glGenTextures(1, &t);
	glBindTexture(GL_TEXTURE_2D, t);
	glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
	glTexImage2D(GL_TEXTURE_2D, 0, format == GL_RED ? GL_R8 : GL_RGBA8, w, h, 0, format,
	             GL_UNSIGNED_BYTE, pixels);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
	return t;
}

static void instance_attribs(void)
{
	struct { GLuint loc; GLint n; size_t off; } a[] = {
		{1, 4, offsetof(vz_instance, a)},      {2, 4, offsetof(vz_instance, b)},
		{3, 4, offsetof(vz_instance, color)},  {4, 4, offsetof(vz_instance, color2)},
		{5, 1, offsetof(vz_instance, kind)},
	};
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
		glEnableVertexAttribArray(a[i].loc);
		glVertexAttribPointer(a[i].loc, a[i].n, GL_FLOAT, GL_FALSE, sizeof(vz_instance),
		                      (const void *)a[i].off);
		glVertexAttribDivisor(a[i].loc, 1);
	}
}

vz_gpu *vz_gpu_new(const char *fname)
{
	if (epoxy_gl_version() < 33) {
		lm_set_error(LM_ERR_UNSUPPORTED, "%s: OpenGL 3.3 is needed, the context has %d.%d", fname,
		             epoxy_gl_version() / 10, epoxy_gl_version() % 10);
		return NULL;
	}
	vz_gpu *g = vz_calloc(1, sizeof *g);
	if (!g) return NULL;
	g->program = build_program(fname);
	if (!g->program) {
		free(g);
		return NULL;
	}
	g->u_viewport = glGetUniformLocation(g->program, "viewport");
	g->u_atlas = glGetUniformLocation(g->program, "atlas");
	g->u_image = glGetUniformLocation(g->program, "image");
	glGenVertexArrays(1, &g->vao);
	glBindVertexArray(g->vao);
	static const float quad[] = {0, 0, 1, 0, 0, 1, 1, 1};
	glGenBuffers(1, &g->quad);
	glBindBuffer(GL_ARRAY_BUFFER, g->quad);
	glBufferData(GL_ARRAY_BUFFER, sizeof quad, quad, GL_STATIC_DRAW);
	glEnableVertexAttribArray(0);
	glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 2 * sizeof(float), NULL);
	glGenBuffers(1, &g->instances);
	glBindBuffer(GL_ARRAY_BUFFER, g->instances);
	instance_attribs();
	glBindVertexArray(0);
	static const uint8_t white[4] = {255, 255, 255, 255};
	g->blank = texture(GL_RGBA, 1, 1, white, GL_NEAREST);
	current = g;
	return g;
}

void vz_gpu_free(vz_gpu *g)
{
	if (!g) return;
	for (vz_image *im = live_images; im; im = im->next_live) {
		glDeleteTextures(1, &im->texture);
		im->texture = 0;
		im->dirty = true;
	}
	live_images = NULL;
	glDeleteTextures(1, &g->atlas);
	glDeleteTextures(1, &g->blank);
	glDeleteBuffers(1, &g->quad);
	glDeleteBuffers(1, &g->instances);
	glDeleteVertexArrays(1, &g->vao);
	glDeleteProgram(g->program);
	if (current == g) current = NULL;
	free(g);
}

lm_status vz_gpu_upload_text(vz_gpu *g, const vz_text *t)
{
	int w, h;
	const uint8_t *px = vz_text_atlas(t, &w, &h);
	if (g->atlas) glDeleteTextures(1, &g->atlas);
	g->atlas = texture(GL_RED, w, h, px, GL_LINEAR);
	return LM_OK;
}

void vz_gpu_forget_image(vz_image *im)
{
	if (!im->texture) return;
	for (vz_image **p = &live_images; *p; p = &(*p)->next_live)
		if (*p == im) {
			*p = im->next_live;
			break;
		}
	if (current) glDeleteTextures(1, &im->texture);
	im->texture = 0;
}

/* ---------------------------------------------------------------- drawing */

static void bind_image(vz_image *im)
{
	if (!im->texture) {
		im->texture = texture(GL_RGBA, im->w, im->h, im->rgba, GL_NEAREST);
		im->dirty = false;
		im->next_live = live_images;
		live_images = im;
	} else if (im->dirty) {
		glBindTexture(GL_TEXTURE_2D, im->texture);
		glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
		glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, im->w, im->h, GL_RGBA, GL_UNSIGNED_BYTE, im->rgba);
		im->dirty = false;
	}
	glBindTexture(GL_TEXTURE_2D, im->texture);
}

void vz_gpu_draw(vz_gpu *g, const vz_frame *f, vz_color bg)
{
	glViewport(0, 0, f->width, f->height);
	glDisable(GL_SCISSOR_TEST);
	glClearColor(bg.r / 255.0f, bg.g / 255.0f, bg.b / 255.0f, 1.0f);
	glClear(GL_COLOR_BUFFER_BIT);
	if (f->ninst == 0) return;
	glEnable(GL_BLEND);
	glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
	glUseProgram(g->program);
	glUniform2f(g->u_viewport, (float)f->width, (float)f->height);
	glUniform1i(g->u_atlas, 0);
	glUniform1i(g->u_image, 1);
	glActiveTexture(GL_TEXTURE0);
	glBindTexture(GL_TEXTURE_2D, g->atlas);
	glBindVertexArray(g->vao);
	glBindBuffer(GL_ARRAY_BUFFER, g->instances);
	size_t bytes = (size_t)f->ninst * sizeof(vz_instance);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_DRAW); /* orphan */
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, f->inst, GL_STREAM_DRAW);
	glEnable(GL_SCISSOR_TEST);
	for (int i = 0; i < f->nbatches; i++) {
		const vz_batch *b = &f->batches[i];
		if (b->count == 0) continue;
		int x0 = (int)b->clip.x, y0 = (int)b->clip.y;
		int x1 = (int)(b->clip.x + b->clip.w + 0.999f), y1 = (int)(b->clip.y + b->clip.h + 0.999f);
		glScissor(x0, f->height - y1, x1 - x0, y1 - y0); /* GL's origin is bottom-left */
		glActiveTexture(GL_TEXTURE1);
		if (b->image) bind_image(b->image);
		else glBindTexture(GL_TEXTURE_2D, g->blank);
		glActiveTexture(GL_TEXTURE0);
		/* the instance attributes start at this batch's first instance */
		glBindBuffer(GL_ARRAY_BUFFER, g->instances);
		for (GLuint loc = 1; loc <= 5; loc++) {
			static const size_t off[] = {0, offsetof(vz_instance, a), offsetof(vz_instance, b),
			                             offsetof(vz_instance, color), offsetof(vz_instance, color2),
			                             offsetof(vz_instance, kind)};
			glVertexAttribPointer(loc, loc == 5 ? 1 : 4, GL_FLOAT, GL_FALSE, sizeof(vz_instance),
			                      (const void *)(off[loc] + (size_t)b->first * sizeof(vz_instance)));
		}
		glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, b->count);
	}
	glDisable(GL_SCISSOR_TEST);
	glBindVertexArray(0);
}

void vz_gpu_read(vz_gpu *g, int x, int y, int w, int h, int height, uint8_t *rgba)
{
	(void)g;
	glPixelStorei(GL_PACK_ALIGNMENT, 1);
	/* GL rows go bottom-up: read, then flip into top-down order */
	glReadPixels(x, height - y - h, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
	size_t row = (size_t)w * 4;
	uint8_t *tmp = malloc(row);
	if (!tmp) return;
	for (int i = 0; i < h / 2; i++) {
		memcpy(tmp, rgba + (size_t)i * row, row);
		memcpy(rgba + (size_t)i * row, rgba + (size_t)(h - 1 - i) * row, row);
		memcpy(rgba + (size_t)(h - 1 - i) * row, tmp, row);
	}
	free(tmp);
}

void vz_gpu_finish(vz_gpu *g)
{
	(void)g;
	glFinish();
}
