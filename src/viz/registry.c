/*
 * registry.c — the scenes: the built ones (a table of vz_scene_class), the names of those that
 * later versions add (so asking for one says "not built yet", not "unknown"), which scene draws
 * which kernel pattern, and the options every scene is checked against, table-driven.
 *
 * Adding a scene: write scenes/<name>.c defining vz_scene_<name>, declare it in vz.h, add it to
 * `built` below and take its name off `planned` (docs/viz.md walks through it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/vz.h"

static const vz_scene_class *const built[] = {
	&vz_scene_scan, &vz_scene_reduce, &vz_scene_histogram, &vz_scene_divergence, &vz_scene_conv,
	&vz_scene_matmul, &vz_scene_spmv,
	&vz_scene_timeline, &vz_scene_curves, &vz_scene_graph, &vz_scene_tensor, &vz_scene_model, &vz_scene_quant,
	&vz_scene_attention, &vz_scene_rnn, &vz_scene_detection, &vz_scene_features, &vz_scene_allreduce, &vz_scene_pipeline, &vz_scene_ddp, &vz_scene_gan2d, &vz_scene_diffusion, &vz_scene_samples,
	&vz_scene_queues, &vz_scene_mlu, &vz_scene_pingpong,
	&vz_scene_systolic, &vz_scene_dma, &vz_scene_energy,
	&vz_scene_threads, /* last: any traced launch; the patterns' own scenes come first */
	NULL,
};

/* Scenes of docs/API.md that a later version builds. */
static const char *const planned[] = {NULL};

const vz_option vz_common_options[] = {
	{"step", VZ_OPT_INT, 0, 1e9, NULL, "0", "the step shown first (0-based; past the end: the last)"},
	{"variant", VZ_OPT_STRING, 0, 0, NULL, "", "the variant shown first (its name, as Tab shows it)"},
	{"speed", VZ_OPT_NUMBER, 0.1, 60, NULL, "1.5", "steps per second while playing"},
	{"width", VZ_OPT_INT, 200, 8192, NULL, "1280", "window width when it opens (points)"},
	{"height", VZ_OPT_INT, 150, 8192, NULL, "720", "window height when it opens (points)"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class *vz_scene_at(int i)
{
	int n = (int)(sizeof built / sizeof built[0]) - 1;
	return i >= 0 && i < n ? built[i] : NULL;
}

const vz_scene_class *vz_scene_find(const char *name)
{
	for (int i = 0; built[i]; i++)
		if (strcmp(built[i]->name, name) == 0) return built[i];
	return NULL;
}

bool vz_scene_planned(const char *name)
{
	for (int i = 0; planned[i]; i++)
		if (strcmp(planned[i], name) == 0) return true;
	return false;
}

/* Whether word occurs in the space-separated list. */
static bool in_words(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, word, n) == 0) return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

const vz_scene_class *vz_scene_for_pattern(const char *pattern)
{
	for (int i = 0; built[i]; i++)
		if (in_words(built[i]->patterns, pattern)) return built[i];
	return NULL;
}

/* ---------------------------------------------------------------- options */

static const lm_viz_opt *find_opt(const lm_viz_opts *o, const char *name)
{
	for (int i = 0; o && i < o->n; i++)
		if (strcmp(o->kv[i].key, name) == 0) return &o->kv[i];
	return NULL;
}

bool vz_opt_given(const lm_viz_opts *o, const char *name) { return find_opt(o, name) != NULL; }

int64_t vz_opt_int(const lm_viz_opts *o, const char *name, int64_t def)
{
	const lm_viz_opt *v = find_opt(o, name);
	return v && v->is_number ? (int64_t)v->num : def;
}

double vz_opt_number(const lm_viz_opts *o, const char *name, double def)
{
	const lm_viz_opt *v = find_opt(o, name);
	return v && v->is_number ? v->num : def;
}

const char *vz_opt_string(const lm_viz_opts *o, const char *name, const char *def)
{
	const lm_viz_opt *v = find_opt(o, name);
	return v ? v->str : def;
}

static const vz_option *option_of(const vz_scene_class *c, const char *name)
{
	for (const vz_option *p = c->options; p && p->name; p++)
		if (strcmp(p->name, name) == 0) return p;
	for (const vz_option *p = vz_common_options; p->name; p++)
		if (strcmp(p->name, name) == 0) return p;
	return NULL;
}

static void option_list(const vz_scene_class *c, char *buf, size_t cap)
{
	buf[0] = '\0';
	for (const vz_option *p = c->options; p && p->name; p++) vz_append(buf, cap, "%s, ", p->name);
	for (const vz_option *p = vz_common_options; p->name; p++) vz_append(buf, cap, "%s, ", p->name);
	size_t n = strlen(buf);
	if (n >= 2) buf[n - 2] = '\0';
}

static lm_status check_one(const vz_scene_class *c, const vz_option *p, const lm_viz_opt *v,
                           const char *fname)
{
	switch (p->kind) {
	case VZ_OPT_INT:
		if (!v->is_number || v->num != floor(v->num))
			return lm_set_error(LM_ERR_ARG, "%s: option %s of scene '%s' must be an integer, got '%s'",
			                    fname, p->name, c->name, v->str);
		__attribute__((fallthrough)); /* then the range */
	case VZ_OPT_NUMBER:
		if (!v->is_number)
			return lm_set_error(LM_ERR_ARG, "%s: option %s of scene '%s' must be a number, got '%s'",
			                    fname, p->name, c->name, v->str);
		if (!(v->num >= p->min && v->num <= p->max))
			return lm_set_error(LM_ERR_ARG, "%s: option %s of scene '%s' must lie in %g..%g, got %s",
			                    fname, p->name, c->name, p->min, p->max, v->str);
		return LM_OK;
	case VZ_OPT_CHOICE:
		if (!in_words(p->choices, v->str)) {
			char list[256];
			snprintf(list, sizeof list, "%s", p->choices);
			for (char *q = list; *q; q++)
				if (*q == ' ') *q = '|';
			return lm_set_error(LM_ERR_ARG, "%s: option %s of scene '%s' must be one of %s, got '%s'",
			                    fname, p->name, c->name, list, v->str);
		}
		return LM_OK;
	default:
		return LM_OK;
	}
}

lm_status vz_opts_check(const vz_scene_class *c, const lm_viz_opts *o, const char *fname)
{
	for (int i = 0; o && i < o->n; i++) {
		const vz_option *p = option_of(c, o->kv[i].key);
		if (!p) {
			char list[512];
			option_list(c, list, sizeof list);
			return lm_set_error(LM_ERR_ARG, "%s: unknown option '%s' for scene '%s' (its options: %s)",
			                    fname, o->kv[i].key, c->name, list);
		}
		if (check_one(c, p, &o->kv[i], fname) != LM_OK) return LM_ERR_ARG;
	}
	return LM_OK;
}

lm_status lm_viz_opts_add(lm_viz_opts *o, const char *key, const char *value, const char *fname)
{
	if (o->n >= LM_VIZ_MAX_OPTS)
		return lm_set_error(LM_ERR_ARG, "%s: too many options (at most %d)", fname, LM_VIZ_MAX_OPTS);
	if (!*key || strlen(key) >= sizeof o->kv[0].key)
		return lm_set_error(LM_ERR_ARG, "%s: option name '%.40s' is empty or too long", fname, key);
	if (strlen(value) >= sizeof o->kv[0].str)
		return lm_set_error(LM_ERR_ARG, "%s: the value of option %s is too long (at most %zu bytes)",
		                    fname, key, sizeof o->kv[0].str - 1);
	for (int i = 0; i < o->n; i++)
		if (strcmp(o->kv[i].key, key) == 0)
			return lm_set_error(LM_ERR_ARG, "%s: option %s given twice", fname, key);
	lm_viz_opt *v = &o->kv[o->n++];
	snprintf(v->key, sizeof v->key, "%s", key);
	snprintf(v->str, sizeof v->str, "%s", value);
	char *end = NULL;
	v->num = strtod(value, &end);
	v->is_number = *value && end && *end == '\0' && isfinite(v->num);
	return LM_OK;
}

lm_status lm_viz_opts_add_number(lm_viz_opts *o, const char *key, double value, const char *fname)
{
	char text[40];
	snprintf(text, sizeof text, "%.17g", value);
	if (lm_viz_opts_add(o, key, text, fname) != LM_OK) return LM_ERR_ARG;
	lm_viz_opt *v = &o->kv[o->n - 1];
	v->num = value; /* the number itself, not its text read back */
	v->is_number = isfinite(value);
	return LM_OK;
}

lm_status lm_viz_opts_parse(lm_viz_opts *o, const char *text, const char *fname)
{
	char buf[2048];
	if (strlen(text) >= sizeof buf)
		return lm_set_error(LM_ERR_ARG, "%s: the options are too long", fname);
	snprintf(buf, sizeof buf, "%s", text);
	for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (!eq)
			return lm_set_error(LM_ERR_ARG, "%s: option '%s' must be written key=value", fname, item);
		*eq = '\0';
		if (lm_viz_opts_add(o, item, eq + 1, fname) != LM_OK) return LM_ERR_ARG;
	}
	return LM_OK;
}
