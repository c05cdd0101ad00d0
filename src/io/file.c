/*
 * file.c — the one way Lumen writes a whole file (tensors, PNGs, the lessons' progress): never a
 * damaged target, whatever stops the write.
 *
 * What it guarantees, and how:
 *   - only regular files are written: a directory, device, FIFO or socket at the target is an
 *     error naming what it is (a rename over a device node replaced the device); a symlink is
 *     followed to the file it names (the link stays a link; a dangling link is refused);
 *   - an existing file keeps its mode and owner (as far as this process may set them), and one that
 *     this process may not write (read-only, for a user that is not root) is refused as the shell
 *     would refuse `>` on it; a file with other hard links is rewritten in place after the new
 *     contents are complete, so every link sees them;
 *   - the contents go to an unnamed temporary in the target's directory (O_TMPFILE), so a kill at
 *     any moment of the write, SIGKILL included, leaves nothing behind; it gets a name (random,
 *     created exclusively) only to be renamed over the target, with SIGINT, SIGTERM and SIGHUP
 *     held for those two calls. Where the file system has no O_TMPFILE, a mkstemp name (random,
 *     O_EXCL) is used, and a SIGTERM or SIGHUP during the write removes it before the process ends;
 *   - fsync'ed before the rename; an interrupt (Ctrl-C) during the write ends it with an error that
 *     says the target is unchanged; one that comes during the rename is delivered after it, and the
 *     save returns normally (it happened).
 * Reading has its guard too: lm_file_open_read opens regular files only, and never blocks on a
 * FIFO (a pipe, /dev/zero or a device where a file is meant would hang the reader).
 * Read next: source.c (lmi_out, the writers' sink over this), include/lumen/io.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ioi.h"

struct lm_file_writer {
	const char *fname;
	char target[PATH_MAX];  /* the file written: the path, or what its symlink names */
	char dir[PATH_MAX];     /* its directory */
	char named[PATH_MAX];   /* the temporary's name while it has one ("" while unnamed) */
	int fd;
	FILE *f;
	bool exists;            /* the target existed: keep its mode and owner */
	bool in_place;          /* it has other hard links: rewrite it in place */
	struct stat st;
};

/* ---------------------------------------------------------------- temporaries to clean up */

/* Names of temporaries that exist now (the mkstemp fallback, and the rename window), removed by
 * the SIGTERM/SIGHUP handler before the process ends. Signal-safe: fixed slots, unlink only. */
#define NPENDING 8
static char pending[NPENDING][PATH_MAX];
static volatile sig_atomic_t pending_used[NPENDING];
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction old_term, old_hup;
static bool handlers_set;

static void cleanup_and_die(int sig)
{
	for (int i = 0; i < NPENDING; i++)
		if (pending_used[i]) unlink(pending[i]);
	sigaction(sig, sig == SIGTERM ? &old_term : &old_hup, NULL);
	raise(sig);
}

static int pending_add(const char *name)
{
	pthread_mutex_lock(&pending_lock);
	if (!handlers_set) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = cleanup_and_die;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, &old_term);
		sigaction(SIGHUP, &sa, &old_hup);
		handlers_set = true;
	}
	int slot = -1;
	for (int i = 0; i < NPENDING && slot < 0; i++)
		if (!pending_used[i]) {
			snprintf(pending[i], sizeof pending[i], "%s", name);
			pending_used[i] = 1;
			slot = i;
		}
	pthread_mutex_unlock(&pending_lock);
	return slot;
}

static void pending_remove(const char *name)
{
	pthread_mutex_lock(&pending_lock);
	for (int i = 0; i < NPENDING; i++)
		if (pending_used[i] && strcmp(pending[i], name) == 0) pending_used[i] = 0;
	pthread_mutex_unlock(&pending_lock);
}

/* ---------------------------------------------------------------- the target */

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISFIFO(m) ? "a FIFO (named pipe)" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

static lm_status check_target(const char *fname, const char *path, char *resolved, size_t cap,
                              struct stat *st, bool *exists)
{
	if (!path || !*path) return lmi_fail(LM_ERR_ARG, "%s: the path is empty", fname);
	if (strlen(path) >= PATH_MAX - 40)
		return lmi_fail(LM_ERR_ARG, "%s: the path is too long (%zu bytes)", fname, strlen(path));
	struct stat ls;
	*exists = false;
	snprintf(resolved, cap, "%s", path);
	if (lstat(path, &ls) != 0) {
		if (errno != ENOENT)
			return lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': %s", fname, path, strerror(errno));
		return LM_OK; /* a new file */
	}
	if (S_ISLNK(ls.st_mode)) { /* followed: the file it names is written, the link stays */
		char real[PATH_MAX];
		if (!realpath(path, real))
			return lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': it is a symlink to nothing that "
			                "exists (%s)", fname, path, strerror(errno));
		snprintf(resolved, cap, "%s", real);
		if (stat(real, &ls) != 0)
			return lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': %s", fname, path, strerror(errno));
	}
	if (!S_ISREG(ls.st_mode))
		return lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': it is %s, and only regular files are "
		                "written", fname, path, kind_of(ls.st_mode));
	if (access(resolved, W_OK) != 0)
		return lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': %s (it is read-only for this user)",
		                fname, path, strerror(errno));
	*st = ls;
	*exists = true;
	return LM_OK;
}

lm_status lm_file_check(const char *fname, const char *path)
{
	char resolved[PATH_MAX];
	struct stat st;
	bool exists;
	return check_target(fname, path, resolved, sizeof resolved, &st, &exists);
}

int lm_file_open_read(const char *path, const char **not_regular)
{
	*not_regular = NULL;
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* not even opened (opening a device can act) */
		*not_regular = kind_of(st.st_mode);
		errno = EINVAL;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY); /* replaced since: checked again */
	if (fd < 0) return -1;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		*not_regular = kind_of(st.st_mode);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash) snprintf(dir, cap, ".");
	else if (slash == path) snprintf(dir, cap, "/");
	else snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

/* A random name for the temporary in w's directory: ".NAME.lumen-XXXXXXXXXXXX". */
static void temp_name(const lm_file_writer *w, char *out, size_t cap)
{
	static _Atomic uint64_t counter;
	uint64_t r = 0;
	FILE *u = fopen("/dev/urandom", "rb");
	if (!u || fread(&r, sizeof r, 1, u) != 1) { /* no urandom: still not predictable from outside */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_sec;
	}
	if (u) fclose(u);
	r ^= counter++ * 0xbf58476d1ce4e5b9ull;
	const char *base = strrchr(w->target, '/');
	base = base ? base + 1 : w->target;
	int n = snprintf(out, cap, "%.3900s/.%.100s.lumen-%012llx", w->dir, base,
	                 (unsigned long long)(r & 0xffffffffffffull));
	(void)n; /* fits: the directory is under PATH_MAX - 40 (lm_file_begin) */
}

/* ---------------------------------------------------------------- writing */

lm_status lm_file_begin(const char *fname, const char *path, lm_file_writer **out)
{
	*out = NULL;
	lm_file_writer *w = lm_alloc(sizeof *w);
	if (!w) return lm_last_status();
	memset(w, 0, sizeof *w);
	w->fname = fname;
	w->fd = -1;
	lm_status s = check_target(fname, path, w->target, sizeof w->target, &w->st, &w->exists);
	if (s) {
		lm_free(w, sizeof *w);
		return s;
	}
	dir_of(w->target, w->dir, sizeof w->dir);
	w->in_place = w->exists && w->st.st_nlink > 1;
#ifdef O_TMPFILE
	w->fd = open(w->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666); /* the umask applies */
#endif
	if (w->fd < 0) { /* no O_TMPFILE here: a random name, created exclusively */
		for (int tries = 0; tries < 16 && w->fd < 0; tries++) {
			temp_name(w, w->named, sizeof w->named);
			w->fd = open(w->named, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0666);
			if (w->fd < 0 && errno != EEXIST) break;
		}
		if (w->fd >= 0) pending_add(w->named);
		else w->named[0] = '\0';
	}
	if (w->fd < 0) {
		int e = errno;
		lm_free(w, sizeof *w);
		return lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': %s", fname, path, strerror(e));
	}
	if (w->exists) { /* the old file's mode and owner (an owner this process may not give stays its own) */
		if (fchown(w->fd, w->st.st_uid, w->st.st_gid) != 0 && fchown(w->fd, (uid_t)-1, w->st.st_gid) != 0) {}
		fchmod(w->fd, w->st.st_mode & 07777);
	}
	w->f = fdopen(w->fd, "wb");
	if (!w->f) {
		int e = errno;
		lm_file_abort(w);
		return lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': %s", fname, path, strerror(e));
	}
	*out = w;
	return LM_OK;
}

FILE *lm_file_stream(lm_file_writer *w) { return w->f; }

lm_status lm_file_write(lm_file_writer *w, const void *buf, size_t n)
{
	if (n && fwrite(buf, 1, n, w->f) != n)
		return lmi_fail(LM_ERR_IO, "%s: writing '%.200s' failed: %s", w->fname, w->target, strerror(errno));
	return LM_OK;
}

void lm_file_abort(lm_file_writer *w)
{
	if (!w) return;
	if (w->f) fclose(w->f);
	else if (w->fd >= 0) close(w->fd);
	if (w->named[0]) {
		unlink(w->named);
		pending_remove(w->named);
	}
	lm_free(w, sizeof *w);
}

/* Copies the complete temporary (fd) over the existing file in place (it has other links). */
static lm_status copy_in_place(lm_file_writer *w)
{
	int out = open(w->target, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (out < 0) return lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': %s", w->fname, w->target, strerror(errno));
	char buf[1 << 16];
	lm_status s = LM_OK;
	if (lseek(w->fd, 0, SEEK_SET) != 0) s = lmi_fail(LM_ERR_IO, "%s: %s", w->fname, strerror(errno));
	for (ssize_t n; !s && (n = read(w->fd, buf, sizeof buf)) != 0;) {
		if (n < 0) {
			if (errno == EINTR) continue;
			s = lmi_fail(LM_ERR_IO, "%s: reading back the new contents failed: %s", w->fname, strerror(errno));
			break;
		}
		for (ssize_t k = 0; k < n && !s;) {
			ssize_t m = write(out, buf + k, (size_t)(n - k));
			if (m < 0 && errno == EINTR) continue;
			if (m < 0) s = lmi_fail(LM_ERR_IO, "%s: writing '%.200s' failed: %s", w->fname, w->target, strerror(errno));
			else k += m;
		}
	}
	if (!s && fsync(out) != 0) s = lmi_fail(LM_ERR_IO, "%s: writing '%.200s' failed: %s", w->fname, w->target, strerror(errno));
	close(out);
	return s;
}

lm_status lm_file_commit(lm_file_writer *w)
{
	int bad = fflush(w->f) != 0 || ferror(w->f) || fsync(w->fd) != 0;
	int e = errno;
	if (bad) {
		lm_status s = lmi_fail(LM_ERR_IO, "%s: writing '%.200s' failed: %s (the file is unchanged)",
		                       w->fname, w->target, strerror(e));
		lm_file_abort(w);
		return s;
	}
	if (lm_interrupted()) {
		lm_status s = lmi_fail(LM_ERR_INTERRUPTED, "%s: interrupted: '%.200s' was not written (the file "
		                       "is as it was)", w->fname, w->target);
		lm_file_abort(w);
		return s;
	}
	/* from here the new file replaces the old one: signals wait until it has */
	sigset_t hold, was;
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &hold, &was);
	lm_status s = LM_OK;
	if (w->in_place) {
		s = copy_in_place(w);
	} else {
		if (!w->named[0]) { /* the unnamed temporary gets a random name, then replaces the target */
			char proc[64];
			snprintf(proc, sizeof proc, "/proc/self/fd/%d", w->fd);
			int r = -1;
			for (int tries = 0; tries < 16 && r != 0; tries++) {
				temp_name(w, w->named, sizeof w->named);
				r = linkat(AT_FDCWD, proc, AT_FDCWD, w->named, AT_SYMLINK_FOLLOW);
				if (r != 0 && errno != EEXIST) break;
			}
			if (r != 0) {
				s = lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': %s", w->fname, w->target, strerror(errno));
				w->named[0] = '\0';
			} else {
				pending_add(w->named);
			}
		}
		if (!s && rename(w->named, w->target) != 0)
			s = lmi_fail(LM_ERR_IO, "%s: cannot write '%.200s': %s", w->fname, w->target, strerror(errno));
		if (!s) {
			pending_remove(w->named);
			w->named[0] = '\0'; /* renamed: nothing to remove */
			int d = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the rename itself, durable */
			if (d >= 0) {
				fsync(d);
				close(d);
			}
		}
	}
	lm_file_abort(w); /* closes the stream; removes a named temporary left by a failure */
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	return s;
}
