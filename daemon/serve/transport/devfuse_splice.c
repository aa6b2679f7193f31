/* Spliced READ replies: see devfuse_splice.h. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "devfuse_splice.h"
#include "common/log.h"
#include "common/max_read.h"
#include "kernel/zcfs_fuse_abi.h"

int splice_pipe_open(struct splice_pipe *p)
{
	int fds[2], size, r;

	p->rd = p->wr = -1;
	p->slots = 0;
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	/* Past the per-user pipe page budget (pipe-user-pages-soft) the
	 * kernel refuses to grow a pipe: keep the default size then. */
	size = fcntl(fds[1], F_SETPIPE_SZ, ZCFS_SPLICE_PIPE_BYTES);
	if (size < 0)
		size = fcntl(fds[1], F_GETPIPE_SZ);
	if (size < 0) {
		r = -errno;
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	p->rd = fds[0];
	p->wr = fds[1];
	p->slots = (size_t)size / (size_t)getpagesize();
	return 0;
}

void splice_pipe_close(struct splice_pipe *p)
{
	safe_close(p->rd);
	safe_close(p->wr);
	p->rd = p->wr = -1;
	p->slots = 0;
}

/* Empties the pipe after a reply that was not sent; a pipe that cannot be
 * emptied is retired so no stale bytes ever prefix a later reply. */
static void pipe_drain(struct splice_pipe *p)
{
	char scratch[4096];
	ssize_t n;

	do
		n = read(p->rd, scratch, sizeof(scratch));
	while (n > 0 || (n < 0 && errno == EINTR));
	if (n < 0 && errno != EAGAIN) {
		log_warn("splice pipe: cannot drain it (%m); READ replies are copied from now on");
		splice_pipe_close(p);
	}
}

int splice_reply_read(struct splice_pipe *p, int fuse_fd, uint64_t unique, int fd, uint64_t off,
		      size_t size, size_t *sent)
{
	struct fuse_out_header oh = { .error = 0, .unique = unique };
	size_t page = (size_t)getpagesize(), len, done = 0;
	loff_t pos = (loff_t)off;
	struct stat st;
	ssize_t n;

	if (p->slots == 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || off >= (uint64_t)st.st_size)
		return 0;
	/* The header claims the length before the data is in the pipe: take
	 * it from the file size; a file that shrinks meanwhile shows up as a
	 * short splice below and falls back. */
	len = (size_t)MIN((uint64_t)size, (uint64_t)st.st_size - off);
	if (1 + (off % page + len + page - 1) / page > p->slots)
		return 0;
	oh.len = (uint32_t)(sizeof(oh) + len);
	if (write(p->wr, &oh, sizeof(oh)) != (ssize_t)sizeof(oh))
		goto undo;
	while (done < len) {
		n = splice(fd, &pos, p->wr, NULL, len - done, SPLICE_F_NONBLOCK);
		if (n <= 0)
			goto undo;
		done += (size_t)n;
	}
	n = splice(p->rd, NULL, fuse_fd, NULL, oh.len, 0);
	if (n < 0 && errno != ENOENT) {
		/* The request is still there if the kernel did not take the
		 * message; the regular reply then answers it (or meets
		 * ENOENT if it did). */
		log_debug("spliced READ reply to unique=%llu failed: %m", (unsigned long long)unique);
		goto undo;
	}
	if (n < 0)
		pipe_drain(p);	/* ENOENT: interrupted and gone, as for writev */
	*sent = len;
	return 1;
undo:
	pipe_drain(p);
	return 0;
}
