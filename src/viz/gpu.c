/*
 * gpu.c — OpenGL 3.3 core through libepoxy: four small shader programs (shaders/: batch.vert with
 * fill.frag, glyph.frag, line.frag, image.frag), a unit quad, a streamed instance buffer, the glyph
 * atlas and scene images as textures; a frame is a few instanced draws per batch (clip, image).
 *
 * Design: within a batch (one clip region: the scene, the chrome, an overlay) the shapes are drawn
 * program by program — images, then fills, then lines, then text — so text always sits on what it
 * labels, and a frame is a handful of calls whatever the scene. Small programs instead of one with
 * a branch per kind: under llvmpipe a frame costs mostly its fragments, and the one-program version
 * drew the 16-element scan in 6.2 ms against 2.0 for a flat colour. The instance buffer is orphaned
 * and refilled each frame (glBufferData with NULL first), so the driver can keep the last frame.
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

#include "lumen/io.h"
#include "viz/vz_gpu.h"

#ifndef LUMEN_SOURCE_SHADER_DIR
#define LUMEN_SOURCE_SHADER_DIR "shaders"
#endif

/* The programs, in the order a batch draws them. */
enum { P_IMAGE, P_FILL, P_LINE, P_GLYPH, P_COUNT };
static const char *const frag_names[P_COUNT] = {"image.frag", "fill.frag", "line.frag", "glyph.frag"};

/* A corner of a shape: the shape's numbers (repeated in its four corners) and which corner. Not
 * instanced: llvmpipe runs its whole vertex pipeline once per instance, which made a 40,000-shape
 * frame cost 40 ms; four vertices per shape in one indexed draw cost a few. */
typedef struct vertex {
	float corner[2];
	float a[4], b[4];
	uint8_t color[4], color2[4];
	float kind;
} vertex;

struct vz_gpu {
	GLuint program[P_COUNT], vao, vertices, indices, atlas, blank;
	GLint u_viewport[P_COUNT], u_texture[P_COUNT];
	vertex *verts;      /* the frame's shapes grouped by batch, then program: 4 corners each */
	int verts_cap;      /* shapes */
	int indices_cap;    /* shapes the index buffer covers */
	int atlas_h;        /* the atlas texture's height */
};

static int program_of(float kind)
{
	switch ((int)kind) {
	case VZ_KIND_GLYPH: return P_GLYPH;
	case VZ_KIND_IMAGE: return P_IMAGE;
	case VZ_KIND_LINE: case VZ_KIND_HEAD: case VZ_KIND_DISC: return P_LINE;
	default: return P_FILL;
	}
}

static vz_gpu *current;      /* the live context's GPU state (textures are freed through it) */
static vz_image *live_images; /* images holding a texture */

/* ---------------------------------------------------------------- finding and building shaders */

/* Where the shaders are: LUMEN_SHADER_DIR, next to the program (a build), in its share folder (an
 * install), else the source tree. A directory with the vertex program has the fragment programs
 * next to it. */
const char *vz_shader_dir(void)
{
	static char dir[PATH_MAX + 64];
	static const char *const rel[] = {"%s/shaders", "%s/../share/lumen/shaders"};
	const char *env = getenv("LUMEN_SHADER_DIR");
	if (env && *env) return env;
	if (dir[0]) return dir;
	if (lm_program_data_dir(rel, 2, "batch.vert", dir, sizeof dir)) return dir;
	snprintf(dir, sizeof dir, "%s", LUMEN_SOURCE_SHADER_DIR);
	return dir;
}

/* Reads dir/name into a malloc'ed string. */
static char *read_source(const char *name, char *path, size_t cap, const char *fname)
{
	snprintf(path, cap, "%s/%s", vz_shader_dir(), name);
	const char *kind;
	int fd = lm_file_open_read(path, &kind); /* a FIFO there would block the window's start */
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0) close(fd);
		lm_set_error(LM_ERR_IO, "%s: the shader %s cannot be read: %s (set LUMEN_SHADER_DIR to the "
		             "directory holding batch.vert and batch.frag)", fname, path,
		             kind ? "it is not a regular file" : strerror(errno));
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = n >= 0 && n < (1 << 20) ? vz_malloc((size_t)n + 1) : NULL;
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
		vz_free(s);
		fclose(f);
		lm_set_error(LM_ERR_IO, "%s: the shader %s cannot be read", fname, path);
		return NULL;
	}
	s[n] = '\0';
	fclose(f);
	return s;
}

/* Whether a shader's compile (or a program's link) failed; if so, its log (trailing blanks cut)
 * into log, and the object deleted. */
static bool failed(GLuint obj, bool program, char *log, size_t cap)
{
	GLint ok = 0;
	if (program)
		glGetProgramiv(obj, GL_LINK_STATUS, &ok);
	else
		glGetShaderiv(obj, GL_COMPILE_STATUS, &ok);
	if (ok) return false;
	log[0] = '\0';
	if (program) {
		glGetProgramInfoLog(obj, (GLsizei)cap, NULL, log);
		glDeleteProgram(obj);
	} else {
		glGetShaderInfoLog(obj, (GLsizei)cap, NULL, log);
		glDeleteShader(obj);
	}
	size_t n = strlen(log);
	while (n && (log[n - 1] == '\n' || log[n - 1] == ' ')) log[--n] = '\0';
	return true;
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
	vz_free(src);
	char log[2048];
	if (failed(sh, false, log, sizeof log)) {
		lm_set_error(LM_ERR_STATE, "%s: the shader %s does not compile:\n%s", fname, path, log);
		return 0;
	}
	return sh;
}

static GLuint build_program(GLuint vs, const char *frag, const char *fname)
{
	GLuint fs = compile(GL_FRAGMENT_SHADER, frag, fname);
	if (!fs) return 0;
	GLuint p = glCreateProgram();
	glAttachShader(p, vs);
	glAttachShader(p, fs);
	glLinkProgram(p);
	glDeleteShader(fs);
	char log[2048];
	if (failed(p, true, log, sizeof log)) {
		lm_set_error(LM_ERR_STATE, "%s: the shaders in %s (batch.vert, %s) do not link:\n%s", fname,
		             vz_shader_dir(), frag, log);
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

static void vertex_attribs(void)
{
	struct { GLuint loc; GLint n; GLenum type; GLboolean norm; size_t off; } a[] = {
		{0, 2, GL_FLOAT, GL_FALSE, offsetof(vertex, corner)},
		{1, 4, GL_FLOAT, GL_FALSE, offsetof(vertex, a)},
		{2, 4, GL_FLOAT, GL_FALSE, offsetof(vertex, b)},
		{3, 4, GL_UNSIGNED_BYTE, GL_TRUE, offsetof(vertex, color)},
		{4, 4, GL_UNSIGNED_BYTE, GL_TRUE, offsetof(vertex, color2)},
		{5, 1, GL_FLOAT, GL_FALSE, offsetof(vertex, kind)},
	};
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
		glEnableVertexAttribArray(a[i].loc);
		glVertexAttribPointer(a[i].loc, a[i].n, a[i].type, a[i].norm, sizeof(vertex), (const void *)a[i].off);
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
	GLuint vs = compile(GL_VERTEX_SHADER, "batch.vert", fname);
	if (!vs) {
		vz_free(g);
		return NULL;
	}
	for (int p = 0; p < P_COUNT; p++) {
		g->program[p] = build_program(vs, frag_names[p], fname);
		if (!g->program[p]) {
			for (int q = 0; q < p; q++) glDeleteProgram(g->program[q]);
			glDeleteShader(vs);
			vz_free(g);
			return NULL;
		}
		g->u_viewport[p] = glGetUniformLocation(g->program[p], "viewport");
		g->u_texture[p] = glGetUniformLocation(g->program[p], p == P_GLYPH ? "atlas" : "image");
	}
	glDeleteShader(vs);
	glGenVertexArrays(1, &g->vao);
	glBindVertexArray(g->vao);
	glGenBuffers(1, &g->vertices);
	glGenBuffers(1, &g->indices);
	glBindBuffer(GL_ARRAY_BUFFER, g->vertices);
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, g->indices); /* part of the VAO's state */
	vertex_attribs();
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
	glDeleteBuffers(1, &g->vertices);
	glDeleteBuffers(1, &g->indices);
	glDeleteVertexArrays(1, &g->vao);
	for (int p = 0; p < P_COUNT; p++) glDeleteProgram(g->program[p]);
	vz_free(g->verts);
	if (current == g) current = NULL;
	vz_free(g);
}

/* Glyphs rendered on demand (Chinese labels) change a few rows of the atlas: only those go up.
 * A new or taller atlas is a new texture. */
lm_status vz_gpu_upload_text(vz_gpu *g, vz_text *t)
{
	int w, h, y0, y1;
	const uint8_t *px = vz_text_atlas(t, &w, &h);
	bool dirty = vz_text_take_dirty(t, &y0, &y1);
	if (!g->atlas || h != g->atlas_h) {
		if (g->atlas) glDeleteTextures(1, &g->atlas);
		g->atlas = texture(GL_RED, w, h, px, GL_LINEAR);
		g->atlas_h = h;
	} else if (dirty) {
		glBindTexture(GL_TEXTURE_2D, g->atlas);
		glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
		glTexSubImage2D(GL_TEXTURE_2D, 0, 0, y0, w, y1 - y0, GL_RED, GL_UNSIGNED_BYTE, px + (size_t)y0 * (size_t)w);
	}
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

static uint8_t byte(float v) { return (uint8_t)(v <= 0 ? 0 : v >= 1 ? 255 : v * 255.0f + 0.5f); }

static void put_shape(vertex *v, const vz_instance *in)
{
	static const float corners[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
	for (int k = 0; k < 4; k++) {
		v[k].corner[0] = corners[k][0];
		v[k].corner[1] = corners[k][1];
		memcpy(v[k].a, in->a, sizeof v[k].a);
		memcpy(v[k].b, in->b, sizeof v[k].b);
		for (int c = 0; c < 4; c++) {
			v[k].color[c] = byte(in->color[c]);
			v[k].color2[c] = byte(in->color2[c]);
		}
		v[k].kind = in->kind;
	}
}

/* The shapes as vertices, each batch's grouped by program (order kept within a program);
 * first[b][p], count[b][p] (in shapes) say where. False when memory runs out. */
static bool group(vz_gpu *g, const vz_frame *f, int (*first)[P_COUNT], int (*count)[P_COUNT])
{
	if (f->ninst > g->verts_cap) {
		vertex *v = vz_realloc(g->verts, (size_t)f->ninst * 4 * sizeof *v);
		if (!v) return false;
		g->verts = v;
		g->verts_cap = f->ninst;
	}
	int at = 0;
	for (int b = 0; b < f->nbatches; b++) {
		const vz_batch *bt = &f->batches[b];
		for (int p = 0; p < P_COUNT; p++) count[b][p] = 0;
		for (int i = bt->first; i < bt->first + bt->count; i++) count[b][program_of(f->inst[i].kind)]++;
		int next[P_COUNT];
		for (int p = 0; p < P_COUNT; p++) {
			first[b][p] = next[p] = at;
			at += count[b][p];
		}
		for (int i = bt->first; i < bt->first + bt->count; i++)
			put_shape(&g->verts[4 * next[program_of(f->inst[i].kind)]++], &f->inst[i]);
	}
	return true;
}

/* Two triangles per shape: corners 0 1 2 and 2 1 3. */
static bool ensure_indices(vz_gpu *g, int shapes)
{
	if (shapes <= g->indices_cap) return true;
	int cap = g->indices_cap ? g->indices_cap : 4096;
	while (cap < shapes) cap *= 2;
	uint32_t *ix = vz_malloc((size_t)cap * 6 * sizeof *ix);
	if (!ix) return false;
	for (uint32_t s = 0; s < (uint32_t)cap; s++) {
		uint32_t v = 4 * s, *p = ix + 6 * (size_t)s;
		p[0] = v, p[1] = v + 1, p[2] = v + 2, p[3] = v + 2, p[4] = v + 1, p[5] = v + 3;
	}
	glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)((size_t)cap * 6 * sizeof *ix), ix, GL_STATIC_DRAW);
	vz_free(ix);
	g->indices_cap = cap;
	return true;
}

static void draw_range(vz_gpu *g, int p, int first, int count, float w, float h)
{
	if (count == 0) return;
	glUseProgram(g->program[p]);
	glUniform2f(g->u_viewport[p], w, h);
	glUniform1i(g->u_texture[p], p == P_GLYPH ? 0 : 1);
	glDrawElements(GL_TRIANGLES, 6 * count, GL_UNSIGNED_INT, (const void *)((size_t)first * 6 * sizeof(uint32_t)));
}

void vz_gpu_draw(vz_gpu *g, const vz_frame *f, vz_color bg)
{
	glViewport(0, 0, f->width, f->height);
	glDisable(GL_SCISSOR_TEST);
	glClearColor(bg.r / 255.0f, bg.g / 255.0f, bg.b / 255.0f, 1.0f);
	glClear(GL_COLOR_BUFFER_BIT);
	if (f->ninst == 0) return;
	int (*first)[P_COUNT] = vz_malloc((size_t)f->nbatches * sizeof *first);
	int (*count)[P_COUNT] = vz_malloc((size_t)f->nbatches * sizeof *count);
	glBindVertexArray(g->vao);
	if (!first || !count || !group(g, f, first, count) || !ensure_indices(g, f->ninst)) {
		vz_free(first);
		vz_free(count);
		glBindVertexArray(0);
		return; /* out of memory: this frame stays blank */
	}
	glEnable(GL_BLEND);
	glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
	glActiveTexture(GL_TEXTURE0);
	glBindTexture(GL_TEXTURE_2D, g->atlas);
	glBindBuffer(GL_ARRAY_BUFFER, g->vertices);
	size_t bytes = (size_t)f->ninst * 4 * sizeof(vertex);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_DRAW); /* orphan */
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, g->verts, GL_STREAM_DRAW);
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
		for (int p = 0; p < P_COUNT; p++) draw_range(g, p, first[i][p], count[i][p], (float)f->width, (float)f->height);
	}
	glDisable(GL_SCISSOR_TEST);
	glBindVertexArray(0);
	vz_free(first);
	vz_free(count);
}

void vz_gpu_read(vz_gpu *g, int x, int y, int w, int h, int height, uint8_t *rgba)
{
	(void)g;
	glPixelStorei(GL_PACK_ALIGNMENT, 1);
	/* GL rows go bottom-up: read, then flip into top-down order */
	glReadPixels(x, height - y - h, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
	size_t row = (size_t)w * 4;
	uint8_t *tmp = vz_malloc(row);
	if (!tmp) return;
	for (int i = 0; i < h / 2; i++) {
		memcpy(tmp, rgba + (size_t)i * row, row);
		memcpy(rgba + (size_t)i * row, rgba + (size_t)(h - 1 - i) * row, row);
		memcpy(rgba + (size_t)(h - 1 - i) * row, tmp, row);
	}
	vz_free(tmp);
}

void vz_gpu_finish(vz_gpu *g)
{
	(void)g;
	glFinish();
}
