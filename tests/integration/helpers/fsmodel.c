/*
 * fsmodel: randomized file-content checker.
 *
 *   fsmodel [--seed N] [--ops N] [--files N] [--max-size BYTES]
 *           [--dump FILE] [--verify-only] [--quiet] DIR
 *
 * Runs random operations on a handful of files in DIR (names f0..fN-1) and
 * keeps an in-memory model of every file's bytes and size: pwrite/pwritev at
 * random (unaligned, beyond-EOF) offsets, O_APPEND writes, pread and compare,
 * ftruncate grow/shrink, fallocate (0, KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE),
 * reopen with O_TRUNC, fsync/fdatasync, close/reopen, rename between names,
 * unlink (also while open) and recreate, fstat/stat size checks.  Every read
 * is compared with the model, and every file fully at the end.
 *
 * --dump FILE       after the run, write the model (names, sizes, bytes)
 * --verify-only     do not run operations: read the model from --dump FILE
 *                   and compare DIR against it (e.g. after a remount, or
 *                   against the backing directory)
 *
 * On a mismatch prints op number, file, offset and a short hex diff.
 * Closing line "N passed, N failed"; exit 0 when nothing failed, 1 otherwise,
 * 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <dirent.h>
#include <unistd.h>

#define MAX_FILES 64
#define MAX_FDS 128
#define MAX_REPORTED_FAILURES 10

struct inode {
	unsigned char *data;
	size_t size, cap;
	int nnames; /* how many names refer to it */
	int nfds;   /* how many open fds refer to it */
	int id;
};

struct ofd {
	int fd;          /* -1: slot unused */
	struct inode *ino;
	int append;      /* opened with O_APPEND */
	int wr;          /* writable */
	int rd;          /* readable */
};

static struct inode *names[MAX_FILES];
static struct ofd fds[MAX_FDS];
static int nfiles = 6;
static int dirfd_g = -1;
static size_t max_size = 1 << 20;
static uint64_t rng_state;
static unsigned long op_no;
static const char *op_name = "init";
static unsigned long passed, failed;
static int quiet;
static int next_ino_id;
static int no_fallocate; /* set after EOPNOTSUPP was reported once */
static int max_fds = 12;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "fsmodel: out of memory\n");
		exit(2);
	}
	return q;
}

static void fname(int i, char *buf, size_t len)
{
	snprintf(buf, len, "f%d", i);
}

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	va_list ap;
	failed++;
	if (failed > MAX_REPORTED_FAILURES)
		return;
	printf("FAIL op %lu (%s): ", op_no, op_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void ok(void)
{
	passed++;
}

/* ---- model ---- */

static struct inode *ino_new(void)
{
	struct inode *ino = calloc(1, sizeof(*ino));
	if (!ino) {
		fprintf(stderr, "fsmodel: out of memory\n");
		exit(2);
	}
	ino->id = next_ino_id++;
	return ino;
}

static void ino_put(struct inode *ino)
{
	if (ino && ino->nnames == 0 && ino->nfds == 0) {
		free(ino->data);
		free(ino);
	}
}

static void ino_resize(struct inode *ino, size_t size)
{
	if (size > ino->cap) {
		size_t cap = ino->cap ? ino->cap : 4096;
		while (cap < size)
			cap *= 2;
		ino->data = xrealloc(ino->data, cap);
		ino->cap = cap;
	}
	if (size > ino->size)
		memset(ino->data + ino->size, 0, size - ino->size);
	ino->size = size;
}

static void ino_write(struct inode *ino, size_t off, const unsigned char *buf, size_t len)
{
	if (off + len > ino->size)
		ino_resize(ino, off + len);
	memcpy(ino->data + off, buf, len);
}

/* pointer to model bytes at off (valid even for an empty file) */
static const unsigned char *ino_at(const struct inode *ino, size_t off)
{
	static const unsigned char empty[1];
	return off < ino->size ? ino->data + off : empty;
}

static const char *ino_name(const struct inode *ino, char *buf, size_t len)
{
	for (int i = 0; i < nfiles; i++)
		if (names[i] == ino) {
			fname(i, buf, len);
			return buf;
		}
	snprintf(buf, len, "<unlinked inode #%d>", ino->id);
	return buf;
}

/* ---- diff output ---- */

static void hexline(const char *tag, size_t base, const unsigned char *p, size_t n,
		    const unsigned char *other, size_t on)
{
	printf("  %s %08zx:", tag, base);
	for (size_t i = 0; i < 16; i++) {
		if (i < n) {
			int diff = i >= on || p[i] != other[i];
			printf("%c%02x", diff ? '*' : ' ', p[i]);
		} else {
			printf("   ");
		}
	}
	printf("\n");
}

/* Compare got[0..gotlen) with exp[0..explen) for data at file offset off. */
static int compare(const char *what, const char *file, size_t off,
		   const unsigned char *exp, size_t explen,
		   const unsigned char *got, size_t gotlen)
{
	size_t n = explen < gotlen ? explen : gotlen;
	size_t i;

	if (explen == gotlen && memcmp(exp, got, n) == 0) {
		ok();
		return 0;
	}
	for (i = 0; i < n; i++)
		if (exp[i] != got[i])
			break;
	report("%s mismatch: file %s, read at offset %zu len %zu: expected %zu bytes, got %zu;"
	       " first difference at file offset %zu",
	       what, file, off, explen, explen, gotlen, off + i);
	if (failed <= MAX_REPORTED_FAILURES) {
		size_t start = i & ~(size_t)15;
		for (size_t l = 0; l < 3; l++) {
			size_t s = start + l * 16;
			if (s >= explen && s >= gotlen)
				break;
			size_t en = s < explen ? explen - s : 0;
			size_t gn = s < gotlen ? gotlen - s : 0;
			if (en > 16)
				en = 16;
			if (gn > 16)
				gn = 16;
			hexline("expected", off + s, exp + s, en, got + s, gn);
			hexline("got     ", off + s, got + s, gn, exp + s, en);
		}
		/* count differing bytes for context */
		size_t ndiff = 0;
		for (size_t k = i; k < n; k++)
			ndiff += exp[k] != got[k];
		printf("  %zu of %zu compared bytes differ\n", ndiff, n);
		fflush(stdout);
	}
	return -1;
}

/* ---- helpers ---- */

static ssize_t pread_full(int fd, unsigned char *buf, size_t len, off_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = pread(fd, buf + done, len - done, off + (off_t)done);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* All of buf written, at OFF (pwrite) or, with OFF < 0, at the file
 * offset (write, O_APPEND's path); a zero-byte write is EIO. */
static ssize_t write_at_full(int fd, const unsigned char *buf, size_t len, off_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = off < 0 ? write(fd, buf + done, len - done)
				    : pwrite(fd, buf + done, len - done, off + (off_t)done);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static ssize_t write_full(int fd, const unsigned char *buf, size_t len)
{
	return write_at_full(fd, buf, len, -1);
}

static ssize_t pwrite_full(int fd, const unsigned char *buf, size_t len, off_t off)
{
	return write_at_full(fd, buf, len, off);
}

/* Read the whole file behind fd and resync the model after a mismatch so
 * one bug does not cascade into thousands of reports. */
static void resync(struct inode *ino, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return;
	ino_resize(ino, (size_t)st.st_size);
	if (pread_full(fd, ino->data, ino->size, 0) < 0)
		return;
}

static void fill_random(unsigned char *buf, size_t len)
{
	/* mostly random bytes, sometimes runs of a pattern byte or zeros */
	int mode = (int)rnd_below(8);
	if (mode == 0) {
		memset(buf, 0, len);
		return;
	}
	if (mode == 1) {
		memset(buf, (int)(rnd() & 0xff), len);
		return;
	}
	size_t i = 0;
	while (i + 8 <= len) {
		uint64_t v = rnd();
		memcpy(buf + i, &v, 8);
		i += 8;
	}
	while (i < len)
		buf[i++] = (unsigned char)rnd();
	/* never let a write be all-zero by chance in random mode: mark op */
	if (len)
		buf[0] = (unsigned char)(op_no | 1);
}

static size_t rnd_len(void)
{
	uint64_t r = rnd_below(100);
	if (r < 45)
		return 1 + rnd_below(512);
	if (r < 75) {
		/* around page sizes */
		size_t pages = 1 + rnd_below(4);
		long delta = (long)rnd_below(17) - 8;
		long l = (long)(pages * 4096) + delta;
		return l > 0 ? (size_t)l : 1;
	}
	if (r < 95)
		return 1 + rnd_below(65536);
	return 1 + rnd_below(262144);
}

static size_t rnd_off(size_t cur)
{
	uint64_t r = rnd_below(100);
	size_t off;
	if (r < 40)
		off = rnd_below(cur + 1);
	else if (r < 55)
		off = cur; /* exactly at EOF */
	else if (r < 70)
		off = cur + rnd_below(70000); /* beyond EOF: hole */
	else if (r < 85) {
		/* page aligned or just off it */
		size_t pg = rnd_below(max_size / 4096 + 1) * 4096;
		off = pg + (rnd_below(3) == 0 ? rnd_below(5) : 0);
		if (rnd_below(4) == 0 && off > 0)
			off -= 1;
	} else
		off = rnd_below(max_size);
	return off;
}

/* ---- fd table ---- */

static int find_fd(int want_wr, int want_rd, int allow_append)
{
	int cand[MAX_FDS], n = 0;
	for (int i = 0; i < MAX_FDS; i++) {
		if (fds[i].fd < 0)
			continue;
		if (want_wr && !fds[i].wr)
			continue;
		if (want_rd && !fds[i].rd)
			continue;
		if (!allow_append && fds[i].append)
			continue;
		cand[n++] = i;
	}
	return n ? cand[rnd_below((uint64_t)n)] : -1;
}

static int nopen(void)
{
	int n = 0;
	for (int i = 0; i < MAX_FDS; i++)
		n += fds[i].fd >= 0;
	return n;
}

static void close_slot(int s)
{
	if (close(fds[s].fd) < 0)
		report("close(%d): %s", fds[s].fd, strerror(errno));
	fds[s].fd = -1;
	fds[s].ino->nfds--;
	ino_put(fds[s].ino);
	fds[s].ino = NULL;
}

static int free_slot(void)
{
	for (int i = 0; i < MAX_FDS; i++)
		if (fds[i].fd < 0)
			return i;
	return -1;
}

/* open name i with flags; updates model for O_CREAT/O_TRUNC */
static int do_open(int i, int flags)
{
	char nm[32];
	int s, fd;

	if (nopen() >= max_fds) {
		s = find_fd(0, 0, 1);
		if (s >= 0)
			close_slot(s);
	}
	s = free_slot();
	if (s < 0)
		return -1;
	fname(i, nm, sizeof(nm));
	fd = openat(dirfd_g, nm, flags | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT && !names[i] && !(flags & O_CREAT))
			return -1; /* expected */
		report("open(%s, 0x%x): %s (model: %s)", nm, flags, strerror(e),
		       names[i] ? "exists" : "absent");
		return -1;
	}
	if (!names[i]) {
		if (!(flags & O_CREAT)) {
			report("open(%s) succeeded but model says absent", nm);
			close(fd);
			return -1;
		}
		names[i] = ino_new();
		names[i]->nnames = 1;
	}
	if (flags & O_TRUNC)
		ino_resize(names[i], 0);
	fds[s].fd = fd;
	fds[s].ino = names[i];
	fds[s].append = !!(flags & O_APPEND);
	fds[s].wr = (flags & O_ACCMODE) != O_RDONLY;
	fds[s].rd = (flags & O_ACCMODE) != O_WRONLY;
	names[i]->nfds++;
	return s;
}

static void check_size_fd(int s)
{
	struct stat st;
	char nm[48];
	if (fstat(fds[s].fd, &st) < 0) {
		report("fstat: %s", strerror(errno));
		return;
	}
	if ((size_t)st.st_size != fds[s].ino->size) {
		report("fstat size of %s: expected %zu, got %lld",
		       ino_name(fds[s].ino, nm, sizeof(nm)), fds[s].ino->size,
		       (long long)st.st_size);
		fds[s].ino->size = (size_t)st.st_size; /* resync */
		resync(fds[s].ino, fds[s].fd);
	} else
		ok();
}

static void check_name(int i)
{
	struct stat st;
	char nm[32];
	fname(i, nm, sizeof(nm));
	int r = fstatat(dirfd_g, nm, &st, AT_SYMLINK_NOFOLLOW);
	if (r < 0) {
		if (errno == ENOENT && !names[i]) {
			ok();
			return;
		}
		report("stat(%s): %s (model: %s)", nm, strerror(errno),
		       names[i] ? "exists" : "absent");
		return;
	}
	if (!names[i]) {
		report("stat(%s) succeeded but model says absent", nm);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		report("stat(%s): not a regular file (mode 0%o)", nm, st.st_mode);
		return;
	}
	if ((size_t)st.st_size != names[i]->size) {
		report("stat size of %s: expected %zu, got %lld", nm, names[i]->size,
		       (long long)st.st_size);
		return;
	}
	ok();
}

/* ---- operations ---- */

static unsigned char *iobuf, *cmpbuf;
static size_t iobuf_cap;

static void ensure_buf(size_t n)
{
	if (n > iobuf_cap) {
		iobuf = xrealloc(iobuf, n);
		cmpbuf = xrealloc(cmpbuf, n);
		iobuf_cap = n;
	}
}

static void op_pwrite(void)
{
	int s = find_fd(1, 0, 0);
	char nm[48];
	if (s < 0)
		return;
	struct inode *ino = fds[s].ino;
	size_t len = rnd_len();
	size_t off = rnd_off(ino->size);
	if (off + len > max_size)
		off = max_size > len ? rnd_below(max_size - len) : 0;
	ensure_buf(len);
	fill_random(iobuf, len);
	ssize_t r;
	if (rnd_below(4) == 0 && len >= 3) {
		/* pwritev with three pieces */
		size_t a = 1 + rnd_below(len - 2), b = 1 + rnd_below(len - a - 1);
		struct iovec iov[3] = {
			{ iobuf, a }, { iobuf + a, b }, { iobuf + a + b, len - a - b } };
		op_name = "pwritev";
		r = pwritev(fds[s].fd, iov, 3, (off_t)off);
	} else {
		op_name = "pwrite";
		r = pwrite_full(fds[s].fd, iobuf, len, (off_t)off);
	}
	if (r < 0) {
		report("%s %s off %zu len %zu: %s", op_name, ino_name(ino, nm, sizeof(nm)),
		       off, len, strerror(errno));
		return;
	}
	if ((size_t)r != len) {
		/* short vectored write: model what was written */
		report("%s %s off %zu len %zu: short write %zd", op_name,
		       ino_name(ino, nm, sizeof(nm)), off, len, r);
		ino_write(ino, off, iobuf, (size_t)r);
		return;
	}
	ino_write(ino, off, iobuf, len);
	ok();
}

static void op_append(void)
{
	int s = -1;
	char nm[48];
	/* use an existing O_APPEND fd or open one */
	for (int k = 0; k < MAX_FDS; k++)
		if (fds[k].fd >= 0 && fds[k].append && rnd_below(2)) {
			s = k;
			break;
		}
	if (s < 0) {
		int i = (int)rnd_below((uint64_t)nfiles);
		s = do_open(i, (rnd_below(2) ? O_RDWR : O_WRONLY) | O_APPEND | O_CREAT);
		if (s < 0)
			return;
	}
	struct inode *ino = fds[s].ino;
	size_t len = rnd_len();
	if (ino->size + len > max_size) {
		op_name = "append-truncate";
		if (ftruncate(fds[s].fd, 0) < 0) {
			report("ftruncate before append: %s", strerror(errno));
			return;
		}
		ino_resize(ino, 0);
	}
	ensure_buf(len);
	fill_random(iobuf, len);
	op_name = "append";
	/* a random lseek must not matter for O_APPEND */
	lseek(fds[s].fd, (off_t)rnd_below(ino->size + 1), SEEK_SET);
	if (write_full(fds[s].fd, iobuf, len) < 0) {
		report("append %s len %zu: %s", ino_name(ino, nm, sizeof(nm)), len, strerror(errno));
		return;
	}
	ino_write(ino, ino->size, iobuf, len);
	off_t pos = lseek(fds[s].fd, 0, SEEK_CUR);
	if (pos != (off_t)ino->size)
		report("append %s: file position %lld after append, expected %zu",
		       ino_name(ino, nm, sizeof(nm)), (long long)pos, ino->size);
	else
		ok();
}

static void op_pread(void)
{
	int s = find_fd(0, 1, 1);
	char nm[48];
	if (s < 0)
		return;
	struct inode *ino = fds[s].ino;
	size_t len = rnd_len();
	size_t off = rnd_below(100) < 85 ? rnd_below(ino->size + 1) : rnd_off(ino->size);
	if (rnd_below(5) == 0) {
		off = 0;
		len = ino->size + 10; /* whole file */
	}
	ensure_buf(len);
	op_name = "pread";
	ssize_t r = pread_full(fds[s].fd, iobuf, len, (off_t)off);
	if (r < 0) {
		report("pread %s off %zu len %zu: %s", ino_name(ino, nm, sizeof(nm)), off, len,
		       strerror(errno));
		return;
	}
	size_t explen = off >= ino->size ? 0 : ino->size - off;
	if (explen > len)
		explen = len;
	if (compare("pread", ino_name(ino, nm, sizeof(nm)), off, ino_at(ino, off),
		    explen, iobuf, (size_t)r))
		resync(ino, fds[s].fd);
}

static void op_read_seq(void)
{
	/* lseek + read() in chunks of odd size */
	int s = find_fd(0, 1, 1);
	char nm[48];
	if (s < 0)
		return;
	struct inode *ino = fds[s].ino;
	size_t off = rnd_below(ino->size + 1);
	size_t chunk = 1 + rnd_below(10000);
	size_t want = ino->size - off;
	ensure_buf(want + chunk);
	op_name = "read";
	if (lseek(fds[s].fd, (off_t)off, SEEK_SET) < 0) {
		report("lseek: %s", strerror(errno));
		return;
	}
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fds[s].fd, iobuf + got, chunk);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			report("read %s: %s", ino_name(ino, nm, sizeof(nm)), strerror(errno));
			return;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (got > want) {
			break;
		}
		ensure_buf(got + chunk);
	}
	if (compare("read", ino_name(ino, nm, sizeof(nm)), off, ino_at(ino, off),
		    want, iobuf, got))
		resync(ino, fds[s].fd);
}

static void op_truncate(void)
{
	int s = find_fd(1, 0, 1);
	char nm[48];
	if (s < 0)
		return;
	struct inode *ino = fds[s].ino;
	size_t sz;
	uint64_t r = rnd_below(4);
	if (r == 0)
		sz = rnd_below(ino->size + 1); /* shrink */
	else if (r == 1)
		sz = ino->size + rnd_below(100000); /* grow */
	else if (r == 2)
		sz = rnd_below(max_size / 4096 + 1) * 4096;
	else
		sz = rnd_below(max_size);
	if (sz > max_size)
		sz = max_size;
	op_name = "ftruncate";
	if (ftruncate(fds[s].fd, (off_t)sz) < 0) {
		report("ftruncate %s to %zu: %s", ino_name(ino, nm, sizeof(nm)), sz, strerror(errno));
		return;
	}
	ino_resize(ino, sz);
	ok();
}

static void op_truncate_path(void)
{
	int i = (int)rnd_below((uint64_t)nfiles);
	char nm[32], path[64];
	if (!names[i])
		return;
	size_t sz = rnd_below(names[i]->size + 5000);
	if (sz > max_size)
		sz = max_size;
	fname(i, nm, sizeof(nm));
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd_g, nm);
	op_name = "truncate(path)";
	if (truncate(path, (off_t)sz) < 0) {
		report("truncate %s to %zu: %s", nm, sz, strerror(errno));
		return;
	}
	ino_resize(names[i], sz);
	ok();
}

static void op_fallocate(void)
{
	int s = find_fd(1, 0, 1);
	char nm[48];
	if (s < 0 || no_fallocate)
		return;
	struct inode *ino = fds[s].ino;
	size_t off = rnd_off(ino->size);
	size_t len = 1 + rnd_len();
	if (off + len > max_size) {
		if (len > max_size)
			len = max_size / 2;
		off = rnd_below(max_size - len);
	}
	int mode;
	uint64_t r = rnd_below(3);
	if (r == 0) {
		mode = 0;
		op_name = "fallocate(0)";
	} else if (r == 1) {
		mode = FALLOC_FL_KEEP_SIZE;
		op_name = "fallocate(KEEP_SIZE)";
	} else {
		mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
		op_name = "fallocate(PUNCH_HOLE|KEEP_SIZE)";
	}
	if (fallocate(fds[s].fd, mode, (off_t)off, (off_t)len) < 0) {
		int e = errno;
		report("%s %s off %zu len %zu: %s", op_name, ino_name(ino, nm, sizeof(nm)), off,
		       len, strerror(e));
		if (e == EOPNOTSUPP || e == ENOSYS) {
			printf("  (fallocate not supported: disabling fallocate ops for the rest of the run)\n");
			no_fallocate = 1;
		}
		return;
	}
	if (mode == 0) {
		if (off + len > ino->size)
			ino_resize(ino, off + len);
	} else if (mode & FALLOC_FL_PUNCH_HOLE) {
		if (off < ino->size) {
			size_t end = off + len > ino->size ? ino->size : off + len;
			memset(ino->data + off, 0, end - off);
		}
	}
	ok();
}

static void op_open_trunc(void)
{
	int i = (int)rnd_below((uint64_t)nfiles);
	op_name = "open(O_TRUNC)";
	do_open(i, O_RDWR | O_CREAT | O_TRUNC);
	/* do_open checks/updates the model; the size is verified later */
}

static void op_open(void)
{
	int i = (int)rnd_below((uint64_t)nfiles);
	uint64_t r = rnd_below(4);
	op_name = "open";
	if (r == 0)
		do_open(i, O_RDONLY);
	else if (r == 1)
		do_open(i, O_WRONLY | O_CREAT);
	else
		do_open(i, O_RDWR | O_CREAT);
}

static void op_close(void)
{
	int s = find_fd(0, 0, 1);
	op_name = "close";
	if (s >= 0)
		close_slot(s);
}

static void op_sync(void)
{
	int s = find_fd(0, 0, 1);
	char nm[48];
	if (s < 0)
		return;
	int r;
	if (rnd_below(2)) {
		op_name = "fsync";
		r = fsync(fds[s].fd);
	} else {
		op_name = "fdatasync";
		r = fdatasync(fds[s].fd);
	}
	if (r < 0)
		report("%s %s: %s", op_name, ino_name(fds[s].ino, nm, sizeof(nm)), strerror(errno));
	else
		ok();
}

static void op_rename(void)
{
	int a = (int)rnd_below((uint64_t)nfiles), b = (int)rnd_below((uint64_t)nfiles);
	char na[32], nb[32];
	fname(a, na, sizeof(na));
	fname(b, nb, sizeof(nb));
	op_name = "rename";
	int r = renameat(dirfd_g, na, dirfd_g, nb);
	if (r < 0) {
		if (errno == ENOENT && !names[a]) {
			ok();
			return;
		}
		report("rename %s -> %s: %s", na, nb, strerror(errno));
		return;
	}
	if (!names[a]) {
		report("rename %s -> %s succeeded but source absent in model", na, nb);
		return;
	}
	if (a == b) {
		ok();
		return;
	}
	if (names[b]) {
		struct inode *old = names[b];
		old->nnames--;
		names[b] = NULL;
		ino_put(old);
	}
	names[b] = names[a];
	names[a] = NULL;
	ok();
}

static void op_unlink(void)
{
	int i = (int)rnd_below((uint64_t)nfiles);
	char nm[32];
	fname(i, nm, sizeof(nm));
	op_name = "unlink";
	if (unlinkat(dirfd_g, nm, 0) < 0) {
		if (errno == ENOENT && !names[i]) {
			ok();
			return;
		}
		report("unlink %s: %s", nm, strerror(errno));
		return;
	}
	if (!names[i]) {
		report("unlink %s succeeded but model says absent", nm);
		return;
	}
	struct inode *ino = names[i];
	names[i] = NULL;
	ino->nnames--;
	ino_put(ino); /* stays alive while fds refer to it */
	ok();
	if (rnd_below(2)) {
		/* recreate right away */
		op_name = "recreate";
		int fd = openat(dirfd_g, nm, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
		if (fd < 0) {
			report("recreate %s: %s", nm, strerror(errno));
			return;
		}
		close(fd);
		names[i] = ino_new();
		names[i]->nnames = 1;
		ok();
	}
}

static void op_stat(void)
{
	op_name = "stat";
	if (rnd_below(2)) {
		int s = find_fd(0, 0, 1);
		if (s >= 0)
			check_size_fd(s);
	} else
		check_name((int)rnd_below((uint64_t)nfiles));
}

/* Read a whole file through a fresh descriptor and compare. */
static void verify_name(int i, const char *what)
{
	char nm[32];
	fname(i, nm, sizeof(nm));
	op_name = what;
	int fd = openat(dirfd_g, nm, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && !names[i]) {
			ok();
			return;
		}
		report("%s: open %s: %s", what, nm, strerror(errno));
		return;
	}
	if (!names[i]) {
		report("%s: %s exists but model says absent", what, nm);
		close(fd);
		return;
	}
	struct inode *ino = names[i];
	ensure_buf(ino->size + 4096);
	ssize_t r = pread_full(fd, iobuf, ino->size + 4096, 0);
	if (r < 0)
		report("%s: read %s: %s", what, nm, strerror(errno));
	else if (compare(what, nm, 0, ino_at(ino, 0), ino->size, iobuf, (size_t)r))
		resync(ino, fd);
	close(fd);
}

static void check_dir_listing(void)
{
	/* exactly the model's names exist (plus nothing we did not create) */
	int dfd = dup(dirfd_g);
	op_name = "readdir";
	if (dfd < 0) {
		report("dup: %s", strerror(errno));
		return;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		report("fdopendir: %s", strerror(errno));
		close(dfd);
		return;
	}
	rewinddir(d);
	int seen[MAX_FILES] = { 0 };
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int i;
		char extra;
		if (sscanf(de->d_name, "f%d%c", &i, &extra) == 1 && i >= 0 && i < nfiles) {
			char nm[32];
			fname(i, nm, sizeof(nm));
			if (!strcmp(nm, de->d_name)) {
				seen[i]++;
				continue;
			}
		}
		report("readdir: unexpected entry '%s'", de->d_name);
	}
	closedir(d);
	for (int i = 0; i < nfiles; i++) {
		char nm[32];
		fname(i, nm, sizeof(nm));
		if (seen[i] > 1)
			report("readdir: %s listed %d times", nm, seen[i]);
		else if (seen[i] != !!names[i])
			report("readdir: %s %s but model says %s", nm, seen[i] ? "listed" : "missing",
			       names[i] ? "exists" : "absent");
		else
			ok();
	}
}

/* ---- dump ---- */

static int write_dump(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "fsmodel: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "fsmodel-dump 1 %d\n", nfiles);
	for (int i = 0; i < nfiles; i++) {
		if (!names[i])
			continue;
		fprintf(f, "f%d %zu\n", i, names[i]->size);
		if (names[i]->size && fwrite(names[i]->data, 1, names[i]->size, f) != names[i]->size) {
			fclose(f);
			return -1;
		}
		fputc('\n', f);
	}
	fprintf(f, "end\n");
	return fclose(f) ? -1 : 0;
}

static int read_dump(const char *path)
{
	FILE *f = fopen(path, "r");
	int n, i;
	size_t sz;
	char line[128];
	if (!f) {
		fprintf(stderr, "fsmodel: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!fgets(line, sizeof(line), f) || sscanf(line, "fsmodel-dump 1 %d", &n) != 1 ||
	    n < 1 || n > MAX_FILES)
		goto bad;
	nfiles = n;
	for (;;) {
		if (!fgets(line, sizeof(line), f))
			goto bad;
		if (!strcmp(line, "end\n"))
			break;
		if (sscanf(line, "f%d %zu", &i, &sz) != 2 || i < 0 || i >= nfiles || names[i])
			goto bad;
		names[i] = ino_new();
		names[i]->nnames = 1;
		ino_resize(names[i], sz);
		if (sz && fread(names[i]->data, 1, sz, f) != sz)
			goto bad;
		if (fgetc(f) != '\n')
			goto bad;
	}
	fclose(f);
	return 0;
bad:
	fprintf(stderr, "fsmodel: %s: malformed dump\n", path);
	fclose(f);
	return -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fsmodel [--seed N] [--ops N] [--files N] [--max-size BYTES] [--max-fds N]\n"
		"               [--dump FILE] [--verify-only] [--quiet] DIR\n");
	exit(2);
}

static unsigned long long num(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || !*s)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long seed = 20240611, nops = 20000;
	const char *dump = NULL, *dir = NULL;
	int verify_only = 0;

	for (int a = 1; a < argc; a++) {
		const char *o = argv[a];
		const char *v = NULL;
#define OPTARG_(name)                                                                     \
	(!strncmp(o, name "=", strlen(name) + 1) ? (v = o + strlen(name) + 1)                 \
	 : !strcmp(o, name) ? (a + 1 < argc ? (v = argv[++a]) : (usage(), (const char *)0))    \
			    : NULL)
		if (OPTARG_("--seed"))
			seed = num(v);
		else if (OPTARG_("--ops"))
			nops = num(v);
		else if (OPTARG_("--files")) {
			nfiles = (int)num(v);
			if (nfiles < 1 || nfiles > MAX_FILES)
				usage();
		} else if (OPTARG_("--max-size")) {
			max_size = (size_t)num(v);
			if (max_size < 4096)
				usage();
		} else if (OPTARG_("--max-fds")) {
			max_fds = (int)num(v);
			if (max_fds < 1 || max_fds > MAX_FDS)
				usage();
		} else if (OPTARG_("--dump"))
			dump = v;
		else if (!strcmp(o, "--verify-only"))
			verify_only = 1;
		else if (!strcmp(o, "--quiet"))
			quiet = 1;
		else if (o[0] == '-')
			usage();
		else if (!dir)
			dir = o;
		else
			usage();
#undef OPTARG_
	}
	if (!dir || (verify_only && !dump))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < MAX_FDS; i++)
		fds[i].fd = -1;
	dirfd_g = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_g < 0) {
		fprintf(stderr, "fsmodel: %s: %s\n", dir, strerror(errno));
		return 2;
	}

	if (verify_only) {
		if (read_dump(dump) < 0)
			return 2;
		printf("fsmodel: verify-only %s against %s (%d files)\n", dir, dump, nfiles);
		for (int i = 0; i < nfiles; i++)
			verify_name(i, "verify");
		check_dir_listing();
		printf("%lu passed, %lu failed\n", passed, failed);
		return failed ? 1 : 0;
	}

	printf("fsmodel: seed=%llu ops=%llu files=%d max-size=%zu dir=%s\n", seed, nops, nfiles,
	       max_size, dir);
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 0x1234567;
	if (!rng_state)
		rng_state = 1;

	/* start from an empty directory of our own names */
	for (int i = 0; i < nfiles; i++) {
		char nm[32];
		fname(i, nm, sizeof(nm));
		if (unlinkat(dirfd_g, nm, 0) < 0 && errno != ENOENT) {
			fprintf(stderr, "fsmodel: cannot remove old %s: %s\n", nm, strerror(errno));
			return 2;
		}
	}

	for (op_no = 1; op_no <= nops && failed <= MAX_REPORTED_FAILURES; op_no++) {
		uint64_t r = rnd_below(1000);
		if (nopen() == 0 || r < 60)
			op_open();
		else if (r < 300)
			op_pwrite();
		else if (r < 340)
			op_append();
		else if (r < 560)
			op_pread();
		else if (r < 600)
			op_read_seq();
		else if (r < 660)
			op_truncate();
		else if (r < 675)
			op_truncate_path();
		else if (r < 735)
			op_fallocate();
		else if (r < 755)
			op_open_trunc();
		else if (r < 800)
			op_close();
		else if (r < 830)
			op_sync();
		else if (r < 860)
			op_rename();
		else if (r < 885)
			op_unlink();
		else if (r < 965)
			op_stat();
		else
			verify_name((int)rnd_below((uint64_t)nfiles), "reopen-verify");
		if (!quiet && op_no % 5000 == 0)
			printf("fsmodel: %lu ops done, %lu checks passed, %lu failed\n", op_no, passed,
			       failed);
	}
	op_no--;
	if (failed > MAX_REPORTED_FAILURES)
		printf("fsmodel: too many failures, stopped after op %lu\n", op_no);

	/* final comparison: through open descriptors and fresh opens */
	op_name = "final";
	for (int s = 0; s < MAX_FDS; s++)
		if (fds[s].fd >= 0) {
			check_size_fd(s);
			if (fds[s].rd) {
				char nm[48];
				struct inode *ino = fds[s].ino;
				ensure_buf(ino->size + 1);
				ssize_t r = pread_full(fds[s].fd, iobuf, ino->size + 1, 0);
				if (r < 0)
					report("final read %s: %s", ino_name(ino, nm, sizeof(nm)),
					       strerror(errno));
				else
					compare("final-fd", ino_name(ino, nm, sizeof(nm)), 0, ino_at(ino, 0),
						ino->size, iobuf, (size_t)r);
			}
		}
	for (int s = 0; s < MAX_FDS; s++)
		if (fds[s].fd >= 0)
			close_slot(s);
	for (int i = 0; i < nfiles; i++) {
		check_name(i);
		verify_name(i, "final");
	}
	check_dir_listing();
	if (dump && write_dump(dump) < 0) {
		fprintf(stderr, "fsmodel: cannot write dump %s\n", dump);
		failed++;
	}
	printf("fsmodel: seed=%llu ops=%lu\n", seed, op_no);
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed ? 1 : 0;
}
