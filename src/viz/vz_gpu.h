/*
 * vz_gpu.h (internal) — the GPU side of the visualizer: the shader program found in shaders/,
 * the buffers and textures, drawing a recorded frame, reading pixels back. Needs the window's GL
 * context to be current (viewer.c makes it so). Read next: gpu.c.
 */
#ifndef LUMEN_VIZ_GPU_H
#define LUMEN_VIZ_GPU_H

#include "viz/vz.h"

typedef struct vz_gpu vz_gpu;

/* The directory the shaders are read from: $LUMEN_SHADER_DIR, <exe>/shaders (a build tree),
 * <exe>/../share/lumen/shaders (installed), else the source tree's shaders/. */
const char *vz_shader_dir(void);

/* Builds the program and buffers. A shader that does not compile or link is an error carrying
 * the driver's log, naming fname and the file. */
vz_gpu *vz_gpu_new(const char *fname);
void vz_gpu_free(vz_gpu *g);
/* Uploads the glyph atlas: all of it the first time or when it grew, else the rows changed since
 * (glyphs rendered on demand); called before each frame is drawn. */
lm_status vz_gpu_upload_text(vz_gpu *g, vz_text *t);
/* Clears to bg and draws the frame's batches (uploading images that changed). */
void vz_gpu_draw(vz_gpu *g, const vz_frame *f, vz_color bg);
/* Reads w x h pixels at (x, y) (top-left origin, rows top to bottom) as RGBA. */
void vz_gpu_read(vz_gpu *g, int x, int y, int w, int h, int height, uint8_t *rgba);
/* Waits until the GPU has finished (benchmarks). */
void vz_gpu_finish(vz_gpu *g);
/* An image is being freed: drop its texture if one was made. */
void vz_gpu_forget_image(vz_image *im);

#endif
