/*
 * data.c — the entry points of the scenes drawn from data rather than from kernel runs:
 * viz.show(tensor) (the tensor scene), viz.show(tensor with a grad_fn) (the graph scene),
 * viz.show(g) of an lm.graph Graph (the graph scene's compiled view),
 * viz.show('quant', w) (the quant scene), viz.show('attention' | 'rnn', {...}) (what Lua computed),
 * viz.show('queues' | 'mlu' | 'pingpong', info) (kernels.bang's runs), viz.show('systolic' | 'dma' |
 * 'energy', ...) (lumen.dlp's array and reports),
 * viz.show(module) (the model scene) and its live histograms, viz.plot and viz.follow (the curves
 * scene). Each builds a vz_build with what it got and installs the scene as viewer.c does for runs.
 * Read next: live.c (the data of the live scenes), scenes/curves.c, scenes/graph.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lumen/autograd.h"
#include "viz/vz_viewer.h"

#define V vz_V

static lm_status show_with(const char *scene, vz_build *b)
{
	const vz_scene_class *c = vz_scene_find(scene);
	if (!c) return lm_set_error(LM_ERR_INTERNAL, "%s: the scene '%s' is missing from this build", b->fname, scene);
	return vz_viewer_install(c, b);
}

lm_status lm_viz_show_tensor(const lm_tensor *t, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .tensor = t};
	return show_with("tensor", &b);
}

lm_status lm_viz_show_quant(const lm_tensor *w, const lm_tensor *x, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .tensor = w, .aux = x};
	return show_with("quant", &b);
}

lm_status lm_viz_show_attention(const lm_viz_attention *a, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .attention = a};
	return show_with("attention", &b);
}

lm_status lm_viz_show_rnn(const lm_viz_rnn *r, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .rnn = r};
	return show_with("rnn", &b);
}

lm_status lm_viz_show_detection(const lm_viz_detection *d, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .detection = d};
	return show_with("detection", &b);
}

lm_status lm_viz_show_features(const lm_viz_features *g, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .features = g};
	return show_with("features", &b);
}

lm_status lm_viz_show_ddp(const lm_viz_ddp *d, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .ddp = d};
	return show_with("ddp", &b);
}

lm_status lm_viz_show_pipeline(const lm_viz_pipeline *d, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .pipeline = d};
	return show_with("pipeline", &b);
}

lm_status lm_viz_show_gan2d(const lm_viz_gan2d *d, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .gan2d = d};
	return show_with("gan2d", &b);
}

lm_status lm_viz_show_diffusion(const lm_viz_diffusion *d, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .diffusion = d};
	return show_with("diffusion", &b);
}

lm_status lm_viz_show_samples(const lm_viz_samples *d, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .samples = d};
	return show_with("samples", &b);
}

lm_status lm_viz_show_bang(const char *scene, const lm_viz_bang *runs, int nruns, const lm_viz_opts *o,
                           const char *fname)
{
	bool two = strcmp(scene, "pingpong") == 0;
	if (!two && strcmp(scene, "queues") != 0 && strcmp(scene, "mlu") != 0)
		return lm_set_error(LM_ERR_ARG, "%s: kernels.bang's info is drawn by the scenes queues, mlu and pingpong, not '%s'",
		                    fname, scene);
	if (nruns != (two ? 2 : 1))
		return lm_set_error(LM_ERR_ARG, "%s: the %s scene takes %s, got %d", fname, scene,
		                    two ? "two runs (single- and double-buffered)" : "one info", nruns);
	vz_build b = {.opts = o, .fname = fname, .bang = runs};
	return show_with(scene, &b);
}

lm_status lm_viz_show_dlp(const char *scene, const lm_viz_dlp *runs, int nruns, const lm_viz_opts *o,
                          const char *fname)
{
	static const struct { const char *scene; int lo, hi; const char *what; } takes[] = {
		{"systolic", 1, 1, "one array and layer"},
		{"dma", 1, 3, "1 to 3 reports"},
		{"energy", 1, 6, "1 to 6 reports"},
	};
	for (size_t i = 0; i < sizeof takes / sizeof takes[0]; i++) {
		if (strcmp(scene, takes[i].scene) != 0) continue;
		if (!runs || nruns < takes[i].lo || nruns > takes[i].hi)
			return lm_set_error(LM_ERR_ARG, "%s: the %s scene takes %s, got %d", fname, scene, takes[i].what, nruns);
		vz_build b = {.opts = o, .fname = fname, .dlp = runs, .ndlp = nruns};
		return show_with(scene, &b);
	}
	return lm_set_error(LM_ERR_ARG, "%s: lumen.dlp's runs are drawn by the scenes systolic, dma and energy, not '%s'",
	                    fname, scene);
}

lm_status lm_viz_show_graph(struct lm_graph *g, const double *check, const lm_viz_opts *o, const char *fname)
{
	vz_build b = {.opts = o, .fname = fname, .graph = g, .check = check};
	lm_status st = show_with("graph", &b);
	lm_graph_free(b.graph); /* NULL when the scene kept it */
	return st;
}

lm_status lm_viz_show_passes(const lm_viz_passes *p, const lm_viz_opts *o, const char *fname)
{
	if (!p || p->nsteps < 1 || !p->steps || p->nnodes < 0 || p->nedges < 0 || (p->nnodes && !p->nodes) ||
	    (p->nedges && !p->edges))
		return lm_set_error(LM_ERR_ARG, "%s: the graph's passes have no steps", fname);
	vz_build b = {.opts = o, .fname = fname, .passes = p};
	return show_with("graph", &b);
}

lm_status lm_viz_show_model(const lm_viz_model *m, const lm_viz_opts *o, const char *fname)
{
	if (m->nlayers < 0 || (m->nlayers > 0 && !m->layers))
		return lm_set_error(LM_ERR_ARG, "%s: the model has no layer list", fname);
	vz_build b = {.opts = o, .fname = fname, .model = m};
	return show_with("model", &b);
}

lm_status lm_viz_model_record(int layer, int kind, const lm_tensor *t, const char *fname)
{
	if (kind < 0 || kind > 1) return lm_set_error(LM_ERR_ARG, "%s: kind must be 0 (activations) or 1 (gradients)", fname);
	if (!lm_dtype_is_float(lm_tensor_dtype(t)))
		return lm_set_error(LM_ERR_DTYPE, "%s: a histogram of a %s tensor: give floats", fname,
		                    lm_dtype_name(lm_tensor_dtype(t)));
	/* at most VZ_HIST_SAMPLE values, every k-th of them: a histogram's shape, at a bounded cost */
	int64_t n = lm_tensor_numel(t), k = (n + VZ_HIST_SAMPLE - 1) / VZ_HIST_SAMPLE, m = k > 0 ? n / k : 0, one = -1;
	lm_tensor *flat = lm_reshape(t, 1, &one), *d = NULL, *c = NULL;
	lm_tensor *few = flat && k > 1 ? lm_as_strided(flat, 1, &m, &k, lm_tensor_offset(flat)) : lm_tensor_retain(flat);
	if (few) d = lm_to_dtype(few, LM_FLOAT64);
	if (d) c = lm_contiguous(d);
	lm_tensor_release(flat);
	lm_tensor_release(few);
	lm_tensor_release(d);
	if (!c) return vz_error_prefix(0, fname);
	lm_status st = vz_live_hist_record(layer, kind, lm_tensor_data(c), lm_tensor_numel(c), fname);
	lm_tensor_release(c);
	if (st == LM_OK && V.open && V.cls && strcmp(V.cls->name, "model") == 0) vz_viewer_changed();
	return st;
}

/* Shows the curves when nothing else is shown (a lesson's kernel scene is not taken away). */
static lm_status show_curves(const char *fname)
{
	if (V.open && V.cls) {
		if (strcmp(V.cls->name, "curves") == 0) vz_viewer_changed();
		return LM_OK;
	}
	lm_viz_opts o;
	memset(&o, 0, sizeof o);
	vz_build b = {.opts = &o, .fname = fname};
	return show_with("curves", &b);
}

lm_status lm_viz_plot(const char *series, const double *x, const double *y, int64_t n, const char *xname,
                      const char *fname)
{
	if (vz_live_plot(series, x, y, n, xname, fname) != LM_OK) return lm_last_status();
	return show_curves(fname);
}

lm_status lm_viz_follow(const char *path, const char *fname)
{
	if (vz_live_follow(path, fname) != LM_OK) return LM_ERR_ARG;
	return show_curves(fname);
}

const char *lm_viz_follow_status(void)
{
	vz_live_poll(vz_now(), true);
	return vz_live_follow_status();
}

void lm_viz_curves_clear(void)
{
	vz_live_clear();
	if (V.open && V.cls && strcmp(V.cls->name, "curves") == 0) { /* back to one empty step: new points are followed */
		V.cls->update(V.scene);
		vz_viewer_refresh();
	}
}
