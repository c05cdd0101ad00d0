/*
 * live.c — the data of the live scenes, kept apart from any scene so it survives switching scenes
 * and closing the window: the series of the curves scene (from viz.plot and from a followed CSV
 * log) and the per-layer histograms of the model scene (viz.watch).
 *
 * A followed file is read incrementally from the pump, at most five times a second: new complete
 * lines are parsed (a partial last line waits for its newline), a file that shrank was truncated
 * or rewritten (its series start again), one that is missing is waited for, and malformed lines
 * are counted with the first one kept for the scene to show. NaN and Inf values are gaps. x is
 * the step column, else the epoch column, else the first column (one column: the row number),
 * and every series keeps the name of its x, which the curves scene labels its axis with.
 * Any number of columns, series and any line length are taken (the buffers grow; a line past
 * 64 MiB is a malformed line, said so); the curves scene says which series it does not draw.
 * Only a regular file is followed: a FIFO, /dev/zero or a device is refused up front (its read
 * would block or never end), and one that replaces the file later is waited out, said so.
 * Read next: scenes/curves.c, scenes/model.c.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lumen/io.h"
#include "viz/vz.h"

#define FOLLOW_INTERVAL 0.2
#define MAX_LINE (64u << 20) /* a "line" past this is not a log line: counted malformed */

static vz_series *series;  /* grows: any number of series */
static int nseries, cap_series;
static int *hslot;         /* open-addressing index of series by name: -1 empty */
static int hcap;
static uint64_t version;

typedef struct follow {
	bool on;
	char path[512];
	long offset;                 /* bytes consumed */
	char *partial;               /* a line without its newline yet (grows) */
	size_t plen, pcap;
	bool too_long;               /* the line being read passed MAX_LINE: skipped to its newline */
	int ncols, xcol, splitcol, tcol;
	char (*cols)[32];            /* the header's names (ncols of them) */
	char **fields;               /* scratch: a row split at commas */
	double *v;                   /* scratch: its values */
	int cap_fields;
	char xname[24];              /* the x column's header, or "row" when x counts the rows */
	bool header;
	int64_t rows, bad, restarts;
	char first_bad[200];
	char status[300];
	int wait_errno;              /* the file is not there (yet): why, else 0 */
	const char *not_regular;     /* what is at the path when it is not a regular file, else NULL */
	double next_poll;
} follow;

static follow F;

/* ---------------------------------------------------------------- series */

int vz_live_series_count(void) { return nseries; }
const vz_series *vz_live_series(int i) { return i >= 0 && i < nseries ? &series[i] : NULL; }
uint64_t vz_live_version(void) { return version; }

static const char *const splits[] = {"train", "test", "val", "valid", "validation", "eval", NULL};

static bool is_split(const char *s, size_t n)
{
	for (int i = 0; splits[i]; i++)
		if (strlen(splits[i]) == n && strncmp(splits[i], s, n) == 0) return true;
	return false;
}

/* "train/loss" and "loss/train": chart loss, label train; "loss": chart and label loss. */
static void split_name(const char *name, char *chart, size_t cc, char *label, size_t lc)
{
	const char *slash = strchr(name, '/');
	if (!slash) {
		snprintf(chart, cc, "%s", name);
		snprintf(label, lc, "%s", name);
	} else if (is_split(name, (size_t)(slash - name))) {
		snprintf(chart, cc, "%s", slash + 1);
		snprintf(label, lc, "%.*s", (int)(slash - name), name);
	} else {
		snprintf(chart, cc, "%.*s", (int)(slash - name), name);
		snprintf(label, lc, "%s", slash + 1);
	}
	vz_utf8_trim(chart); /* a Chinese name cut by the buffer: whole characters */
	vz_utf8_trim(label);
}

static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
	return h;
}

/* Rebuilds the name index for cap slots (a power of two over twice the series). */
static bool index_series(int cap)
{
	int *h = vz_malloc((size_t)cap * sizeof *h);
	if (!h) return false;
	for (int i = 0; i < cap; i++) h[i] = -1;
	for (int i = 0; i < nseries; i++) {
		uint32_t k = name_hash(series[i].name) & (uint32_t)(cap - 1);
		while (h[k] >= 0) k = (k + 1) & (uint32_t)(cap - 1);
		h[k] = i;
	}
	vz_free(hslot);
	hslot = h;
	hcap = cap;
	return true;
}

static vz_series *find_series(const char *name, bool from_file, const char *fname)
{
	uint32_t k = 0;
	if (hcap) {
		k = name_hash(name) & (uint32_t)(hcap - 1);
		for (; hslot[k] >= 0; k = (k + 1) & (uint32_t)(hcap - 1))
			if (strcmp(series[hslot[k]].name, name) == 0) return &series[hslot[k]];
	}
	if (nseries == cap_series) {
		int c = cap_series ? 2 * cap_series : 32;
		vz_series *ns = c < 1 << 24 ? vz_realloc(series, (size_t)c * sizeof *ns) : NULL;
		if (!ns) {
			lm_set_error(LM_ERR_NOMEM, "%s: out of memory for series '%s' (%d series)", fname, name, nseries);
			return NULL;
		}
		series = ns;
		cap_series = c;
	}
	if (2 * (nseries + 1) > hcap) {
		if (!index_series(hcap ? 2 * hcap : 64)) {
			lm_set_error(LM_ERR_NOMEM, "%s: out of memory for series '%s' (%d series)", fname, name, nseries);
			return NULL;
		}
		k = name_hash(name) & (uint32_t)(hcap - 1);
		while (hslot[k] >= 0) k = (k + 1) & (uint32_t)(hcap - 1);
	}
	vz_series *s = &series[nseries];
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", name);
	split_name(name, s->chart, sizeof s->chart, s->label, sizeof s->label);
	s->from_file = from_file;
	hslot[k] = nseries++;
	return s;
}

static lm_status append(vz_series *s, double x, double y, double t, const char *fname)
{
	if (s->n == s->cap) {
		int64_t c = s->cap ? 2 * s->cap : 256;
		double *nx = vz_realloc(s->x, (size_t)c * sizeof *nx);
		if (nx) s->x = nx;
		double *ny = nx ? vz_realloc(s->y, (size_t)c * sizeof *ny) : NULL;
		if (ny) s->y = ny;
		double *nt = ny ? vz_realloc(s->t, (size_t)c * sizeof *nt) : NULL;
		if (!nt) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory for series '%s'", fname, s->name);
		s->t = nt;
		s->cap = c;
	}
	if (x != floor(x) || (s->n > 0 && x < s->x[s->n - 1])) s->not_steps = true;
	s->x[s->n] = x;
	s->y[s->n] = y;
	s->t[s->n++] = t;
	if (!isfinite(y)) s->nonfinite++;
	version++;
	return LM_OK;
}

lm_status vz_live_plot(const char *name, const double *x, const double *y, int64_t n, const char *xname,
                       const char *fname)
{
	if (!*name || strlen(name) >= sizeof series[0].name)
		return lm_set_error(LM_ERR_ARG, "%s: the series name must be 1..%zu characters, got '%.60s'", fname,
		                    sizeof series[0].name - 1, name);
	if (xname && (!*xname || strlen(xname) >= sizeof series[0].xname))
		return lm_set_error(LM_ERR_ARG, "%s: the name of x must be 1..%zu characters, got '%.60s'", fname,
		                    sizeof series[0].xname - 1, xname);
	for (int64_t i = 0; i < n; i++) {
		if (isfinite(x[i])) continue;
		if (n == 1)
			return lm_set_error(LM_ERR_ARG, "%s: the step of series '%s' must be a finite number, got %g", fname,
			                    name, x[i]);
		return lm_set_error(LM_ERR_ARG, "%s: x %lld of series '%s' must be a finite number, got %g", fname,
		                    (long long)i + 1, name, x[i]);
	}
	vz_series *s = find_series(name, false, fname);
	if (!s) return LM_ERR_ARG;
	if (xname) snprintf(s->xname, sizeof s->xname, "%s", xname);
	double now = vz_now();
	for (int64_t i = 0; i < n; i++)
		if (append(s, x[i], y[i], now, fname) != LM_OK) return LM_ERR_NOMEM;
	return LM_OK;
}

const char *vz_series_xname(const vz_series *s) { return s->xname[0] ? s->xname : s->not_steps ? "x" : "step"; }

bool vz_series_counts_progress(const vz_series *s)
{
	const char *x = vz_series_xname(s);
	return strcmp(x, "step") == 0 || strcmp(x, "epoch") == 0;
}

static void drop_file_series(void)
{
	int k = 0;
	for (int i = 0; i < nseries; i++) {
		if (series[i].from_file) {
			vz_free(series[i].x);
			vz_free(series[i].y);
			vz_free(series[i].t);
		} else {
			series[k++] = series[i];
		}
	}
	nseries = k;
	if (hcap) index_series(hcap); /* the same size: it can only have fewer */
	version++;
}

/* Forgets what was read of the followed file (its path and poll state stay when keep). */
static void follow_reset(bool keep)
{
	vz_free(F.partial);
	vz_free(F.cols);
	vz_free(F.fields);
	vz_free(F.v);
	follow k = F;
	memset(&F, 0, sizeof F);
	if (!keep) return;
	F.on = k.on;
	memcpy(F.path, k.path, sizeof F.path);
	F.restarts = k.restarts;
	F.next_poll = k.next_poll;
}

void vz_live_clear(void)
{
	for (int i = 0; i < nseries; i++) {
		vz_free(series[i].x);
		vz_free(series[i].y);
		vz_free(series[i].t);
	}
	vz_free(series);
	vz_free(hslot);
	series = NULL;
	hslot = NULL;
	nseries = cap_series = hcap = 0;
	follow_reset(false);
	version++;
}

/* ---------------------------------------------------------------- following a CSV log */

const char *vz_live_follow_status(void) { return F.on ? F.status : NULL; }

static const char *kind_zh(const char *k)
{
	return strcmp(k, "a directory") == 0            ? "目录"
	       : strcmp(k, "a character device") == 0  ? "字符设备"
	       : strcmp(k, "a block device") == 0       ? "块设备"
	       : strcmp(k, "a FIFO (named pipe)") == 0  ? "FIFO（命名管道）"
	       : strcmp(k, "a socket") == 0             ? "套接字"
	                                                : "不是普通文件";
}

const char *vz_live_follow_label(char *buf, size_t cap)
{
	if (!F.on) return NULL;
	if (!vz_zh()) return F.status;
	if (F.not_regular) {
		snprintf(buf, cap, "等待 %.200s（它是%s，只跟踪普通文件）", F.path, kind_zh(F.not_regular));
		return buf;
	}
	if (F.wait_errno) {
		snprintf(buf, cap, "等待 %.200s（%.60s）", F.path, strerror(F.wait_errno));
		return buf;
	}
	snprintf(buf, cap, "正在跟踪 %.200s：%lld 行", F.path, (long long)F.rows);
	if (F.restarts) vz_append(buf, cap, "，重新开始 %lld 次（文件被截断）", (long long)F.restarts);
	if (F.bad) vz_append(buf, cap, "，跳过 %lld 行格式错误的内容（第一处：%s）", (long long)F.bad, F.first_bad);
	return buf;
}

static void set_status(void)
{
	char *p = F.status;
	size_t cap = sizeof F.status;
	snprintf(p, cap, "following %.200s: %lld rows", F.path, (long long)F.rows);
	if (F.restarts) vz_append(p, cap, ", restarted %lld time%s (the file was truncated)", (long long)F.restarts,
	                         F.restarts == 1 ? "" : "s");
	if (F.bad) vz_append(p, cap, ", %lld malformed line%s skipped (first: %s)", (long long)F.bad, F.bad == 1 ? "" : "s",
	                    F.first_bad);
}

static void bad_line(int64_t line, const char *why)
{
	if (!F.bad++) snprintf(F.first_bad, sizeof F.first_bad, "line %lld: %s", (long long)line, why);
}

/* Splits a CSV line at commas (no quoting: the logs Lumen writes have none) into F.fields, grown
 * to fit; returns the number of fields, or -1 when out of memory. */
static int split_fields(char *line)
{
	int n = 1;
	for (const char *c = line; (c = strchr(c, ',')) != NULL; c++) n++;
	if (n > F.cap_fields) {
		char **f = vz_realloc(F.fields, (size_t)n * sizeof *f);
		if (f) F.fields = f;
		double *v = f ? vz_realloc(F.v, (size_t)n * sizeof *v) : NULL;
		if (!v) return -1;
		F.v = v;
		F.cap_fields = n;
	}
	int k = 0;
	for (char *p = line;;) {
		F.fields[k++] = p;
		char *c = strchr(p, ',');
		if (!c) break;
		*c = '\0';
		p = c + 1;
	}
	return k;
}

static void read_header(char *line, int64_t lineno)
{
	int n = split_fields(line);
	char (*cols)[32] = n > 0 ? vz_calloc((size_t)n, sizeof *cols) : NULL;
	if (!cols) {
		bad_line(lineno, "out of memory for the header");
		return;
	}
	vz_free(F.cols);
	F.cols = cols;
	F.ncols = n;
	F.xcol = F.splitcol = F.tcol = -1;
	int epoch = -1;
	char **f = F.fields;
	for (int i = 0; i < F.ncols; i++) {
		snprintf(F.cols[i], sizeof F.cols[i], "%s", f[i]);
		vz_utf8_trim(F.cols[i]);
		if (strcmp(f[i], "step") == 0) F.xcol = i;
		else if (strcmp(f[i], "epoch") == 0) epoch = i;
		else if (strcmp(f[i], "split") == 0) F.splitcol = i;
		else if (strcmp(f[i], "seconds") == 0 || strcmp(f[i], "time") == 0) F.tcol = i;
	}
	if (F.xcol < 0) F.xcol = epoch;
	/* no step or epoch column: the first column is x, as in a plotting program (lr,loss is a
	 * loss against the learning rate), unless it is the only one (then x counts the rows) */
	int first = F.splitcol == 0 ? 1 : 0;
	if (F.xcol < 0 && F.ncols - (F.splitcol >= 0) >= 2) F.xcol = first;
	snprintf(F.xname, sizeof F.xname, "%s", F.xcol >= 0 ? F.cols[F.xcol] : "row");
	F.header = true;
}

static bool skip_col(int i) { return i == F.xcol || i == F.splitcol || i == F.tcol || strcmp(F.cols[i], "epoch") == 0; }

static void read_row(char *line, int64_t lineno)
{
	int n = split_fields(line);
	if (n < 0) {
		bad_line(lineno, "out of memory for its fields");
		return;
	}
	char **f = F.fields;
	double *v = F.v;
	if (n != F.ncols) {
		char why[96];
		snprintf(why, sizeof why, "%d field%s, the header has %d", n, n == 1 ? "" : "s", F.ncols);
		bad_line(lineno, why);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (i == F.splitcol) continue;
		char *end = NULL;
		v[i] = *f[i] ? strtod(f[i], &end) : NAN; /* an empty field is a gap */
		if (*f[i] && (!end || *end != '\0')) {
			char why[96];
			snprintf(why, sizeof why, "'%.20s%s' is not a number (column %s)", f[i], strlen(f[i]) > 20 ? "..." : "",
			         F.cols[i]);
			bad_line(lineno, why);
			return;
		}
	}
	double x = F.xcol >= 0 ? v[F.xcol] : (double)F.rows + 1;
	double t = F.tcol >= 0 ? v[F.tcol] : NAN;
	if (!isfinite(x)) {
		char why[96];
		snprintf(why, sizeof why, "the %s is not a finite number", F.xname);
		bad_line(lineno, why);
		return;
	}
	F.rows++;
	for (int i = 0; i < n; i++) {
		if (skip_col(i)) continue;
		char name[64];
		if (F.splitcol >= 0 && *f[F.splitcol]) snprintf(name, sizeof name, "%.15s/%.31s", f[F.splitcol], F.cols[i]);
		else snprintf(name, sizeof name, "%.31s", F.cols[i]);
		vz_utf8_trim(name);
		vz_series *s = find_series(name, true, "viz.follow");
		if (!s) continue;
		snprintf(s->xname, sizeof s->xname, "%s", F.xname);
		append(s, x, v[i], t, "viz.follow");
	}
}

/* Adds n bytes to the line being read; false when it cannot grow (out of memory, or past MAX_LINE). */
static bool add_partial(const char *b, size_t n)
{
	if (F.too_long) return true;
	if (F.plen + n + 1 > MAX_LINE) {
		F.too_long = true;
		return false;
	}
	if (F.plen + n + 1 > F.pcap) {
		size_t c = F.pcap ? F.pcap : 1024;
		while (c < F.plen + n + 1) c *= 2;
		char *p = vz_realloc(F.partial, c);
		if (!p) {
			F.too_long = true;
			return false;
		}
		F.partial = p;
		F.pcap = c;
	}
	memcpy(F.partial + F.plen, b, n);
	F.plen += n;
	F.partial[F.plen] = '\0';
	return true;
}

static void consume(const char *buf, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t k = nl ? (size_t)(nl - buf) : n;
		add_partial(buf, k);
		if (!nl) return;
		buf += k + 1;
		n -= k + 1;
		int64_t lineno = F.rows + F.bad + 1 + (F.header ? 1 : 0);
		if (F.too_long) {
			bad_line(lineno, "longer than 64 MiB (not a CSV log line)");
		} else if (F.plen) {
			if (F.partial[F.plen - 1] == '\r') F.partial[--F.plen] = '\0';
			if (F.plen && memchr(F.partial, '\0', F.plen)) bad_line(lineno, "it holds a NUL byte");
			else if (F.plen && !F.header) read_header(F.partial, lineno);
			else if (F.plen) read_row(F.partial, lineno);
		}
		F.plen = 0;
		F.too_long = false;
		if (F.partial) F.partial[0] = '\0';
	}
}

/* Reads what was added to the followed file since the last poll (only what was there at the
 * poll's start: a file that grows as fast as it is read still returns). */
static void read_new(long size)
{
	const char *kind;
	int fd = lm_file_open_read(F.path, &kind);
	if (fd < 0) {
		F.not_regular = kind;
		F.wait_errno = kind ? 0 : errno;
		return;
	}
	F.not_regular = NULL;
	F.wait_errno = 0;
	if (lseek(fd, F.offset, SEEK_SET) == F.offset) {
		char buf[65536];
		while (F.offset < size) {
			long want = size - F.offset < (long)sizeof buf ? size - F.offset : (long)sizeof buf;
			ssize_t got = read(fd, buf, (size_t)want);
			if (got <= 0) break;
			consume(buf, (size_t)got);
			F.offset += got;
		}
	}
	close(fd);
}

bool vz_live_poll(double now, bool force)
{
	if (!F.on || (!force && now < F.next_poll)) return false;
	F.next_poll = now + FOLLOW_INTERVAL;
	uint64_t before = version;
	char prev[sizeof F.status];
	snprintf(prev, sizeof prev, "%s", F.status);
	struct stat st;
	if (stat(F.path, &st) != 0) {
		F.wait_errno = errno;
		F.not_regular = NULL;
		snprintf(F.status, sizeof F.status, "waiting for %.200s (%.60s)", F.path, strerror(errno));
		return strcmp(prev, F.status) != 0;
	}
	if (S_ISREG(st.st_mode) && (long)st.st_size < F.offset) { /* truncated or rewritten: start again */
		drop_file_series();
		int64_t restarts = F.restarts + 1;
		follow_reset(true);
		F.restarts = restarts;
	}
	if (S_ISREG(st.st_mode)) read_new((long)st.st_size);
	else F.not_regular = "not a regular file", F.wait_errno = 0;
	if (F.not_regular) {
		const char *kind;
		int fd = lm_file_open_read(F.path, &kind); /* for the name of what it is */
		if (fd >= 0) close(fd);
		if (kind) F.not_regular = kind;
		snprintf(F.status, sizeof F.status, "waiting for %.200s (it is %s, and only regular files are followed)",
		         F.path, F.not_regular);
	} else if (F.wait_errno) {
		snprintf(F.status, sizeof F.status, "waiting for %.200s (%.60s)", F.path, strerror(F.wait_errno));
	} else {
		set_status();
	}
	return version != before || strcmp(prev, F.status) != 0;
}

lm_status vz_live_follow(const char *path, const char *fname)
{
	if (!*path || strlen(path) >= sizeof F.path)
		return lm_set_error(LM_ERR_ARG, "%s: the path must be 1..%zu characters", fname, sizeof F.path - 1);
	const char *kind;
	int fd = lm_file_open_read(path, &kind); /* refused up front: reading it would block or never end */
	if (fd >= 0) close(fd);
	if (kind)
		return lm_set_error(LM_ERR_ARG, "%s: cannot follow '%.200s': it is %s, and only regular files are followed "
		                    "(a log that is being written)", fname, path, kind);
	drop_file_series();
	follow_reset(false);
	F.on = true;
	snprintf(F.path, sizeof F.path, "%s", path);
	vz_live_poll(0, true);
	return LM_OK;
}

/* ---------------------------------------------------------------- model histograms */

#define MAX_LAYERS 128
static vz_hist hists[MAX_LAYERS][2];
static int nlayers;
static uint64_t model_sig;

void vz_live_model_reset(int n, uint64_t sig)
{
	if (sig == model_sig && (n > MAX_LAYERS ? MAX_LAYERS : n) == nlayers) return; /* shown again */
	model_sig = sig;
	nlayers = n > MAX_LAYERS ? MAX_LAYERS : n;
	memset(hists, 0, sizeof hists);
	version++;
}

int vz_live_model_layers(void) { return nlayers; }

const vz_hist *vz_live_hist(int layer, int kind)
{
	if (layer < 0 || layer >= nlayers || kind < 0 || kind > 1) return NULL;
	return &hists[layer][kind];
}

lm_status vz_live_hist_record(int layer, int kind, const double *v, int64_t n, const char *fname)
{
	if (layer < 0 || layer >= nlayers)
		return lm_set_error(LM_ERR_INDEX, "%s: layer %d is not in the model shown (%d layers)", fname, layer + 1, nlayers);
	vz_hist *h = &hists[layer][kind];
	memset(h->count, 0, sizeof h->count);
	double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0;
	int64_t finite = 0;
	for (int64_t i = 0; i < n; i++) {
		if (!isfinite(v[i])) continue;
		finite++;
		if (v[i] < lo) lo = v[i];
		if (v[i] > hi) hi = v[i];
		sum += v[i];
	}
	h->n = n;
	h->nonfinite = n - finite;
	h->mean = finite ? sum / (double)finite : NAN;
	if (!finite) lo = hi = 0;
	if (hi <= lo) hi = lo + 1e-12;
	h->lo = lo;
	h->hi = hi;
	for (int64_t i = 0; i < n; i++) {
		if (!isfinite(v[i])) continue;
		int b = (int)((v[i] - lo) / (hi - lo) * VZ_HIST_BINS);
		h->count[b < 0 ? 0 : b >= VZ_HIST_BINS ? VZ_HIST_BINS - 1 : b]++;
		sq += (v[i] - h->mean) * (v[i] - h->mean);
	}
	h->std = finite ? sqrt(sq / (double)finite) : NAN;
	h->updates++;
	version++;
	return LM_OK;
}
