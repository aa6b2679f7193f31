/* libFuzzer target: arbitrary bytes as a /dev/fuse message, through the
 * same decode and dispatch the transports use, against a real scratch
 * SOURCE. Whatever the bytes, the server must answer with an error or a
 * reply, never read out of bounds, and never touch anything outside the
 * scratch directory. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "daemon/serve/backend/handle.h"
#include "daemon/serve/backend/inode.h"
#include "common/log.h"
#include "daemon/serve/fuse/fuse_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct zcfs_transport_ops fuzz_transport = { .name = "fuzz" };
static struct zcfs_options opts;
static struct zcfs_session se;
static char outbuf[1 << 16];

static int fuzz_reply(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt)
{
	size_t total = 0;

	(void)req;
	if (error > 0 || error <= -512)
		abort();	/* only valid -errno values may reach the wire */
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	/* Touch every byte so ASan sees any out-of-bounds reply. */
	for (int i = 0; i < iovcnt; i++) {
		volatile const char *p = iov[i].iov_base;
		for (size_t j = 0; j < iov[i].iov_len; j++)
			(void)p[j];
	}
	return total > (1u << 21) ? -EINVAL : 0;
}

/* SOURCE: a 64 MiB tmpfs in a private mount namespace where we may mount
 * (root, as the runs of make fuzz are), so that a FALLOCATE or WRITE of
 * any size ends in ENOSPC instead of filling the disk under /tmp (one
 * 300 s run did), and what the inputs created goes with the process. */
static char dir[] = "/tmp/zcfs-fuzz.XXXXXX";
static bool private_tmpfs;

static void cleanup(void)
{
	if (private_tmpfs)
		(void)umount2(dir, MNT_DETACH);
	(void)rmdir(dir);	/* when on the disk: kept if anything was created */
}

/* The server's state lives across inputs, as a mounted server's does
 * across requests: an input is one message, and a READ needs the handle
 * an earlier CREATE made. The kernel would FORGET and RELEASE; the fuzzer
 * does not, and the fds held for what it created ran out (EMFILE: then
 * libFuzzer could not even write its corpus) within two minutes. So
 * every RESET_EVERY inputs the session starts again on an empty SOURCE,
 * as after a remount: a few fds per input at most, well under a soft
 * RLIMIT_NOFILE of 1024. */
#define RESET_EVERY 256

static void session_start(void)
{
	int fd;

	if (private_tmpfs &&
	    mount("zcfs-fuzz", dir, "tmpfs", 0, "size=64m,mode=755") < 0)
		abort();
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		abort();
	/* What INIT negotiates starts over too. */
	se.proto_minor = 0;
	se.conn_flags = 0;
	if (inode_table_new(fd, &se.inodes) < 0 || handle_table_new(&se.handles) < 0)
		abort();
}

static void session_end(void)
{
	handle_table_free(se.handles);
	inode_table_free(se.inodes);
	se.handles = NULL;
	se.inodes = NULL;
	/* Not lazily: with both tables gone nothing may hold SOURCE open,
	 * so EBUSY here is an fd the server leaked. */
	if (private_tmpfs && umount2(dir, 0) < 0) {
		perror("fuzz_fuse_msg: unmounting SOURCE after freeing the session");
		abort();
	}
}

/* At the first input, not in LLVMFuzzerInitialize. */
static void setup_once(void)
{
	if (se.inodes)
		return;
	if (!mkdtemp(dir))
		abort();
	if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		private_tmpfs = true;
	else
		fprintf(stderr, "fuzz_fuse_msg: no private tmpfs (%m): SOURCE %s is on the disk\n", dir);
	atexit(cleanup);
	log_set_level(LOG_CRIT);
	se.wake_fd = -1;	/* DESTROY's session_exit: no main to wake */
	opts.cache = ZCFS_CACHE_NONE;
	opts.source = dir;
	se.opts = &opts;
	se.transport = &fuzz_transport;
	se.fuse_fd = -1;
	se.max_write = 1 << 16;
	se.max_pages = 16;
	atomic_store(&se.initialized, true);
	session_start();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[1 << 17];
	struct fuse_in_header *in = (struct fuse_in_header *)buf;
	struct zcfs_req req = { .se = &se, .reply = fuzz_reply, .outbuf = outbuf,
				.outbuf_size = sizeof(outbuf) };

	static unsigned runs;

	setup_once();
	if (++runs % RESET_EVERY == 0) {
		session_end();
		session_start();
	}
	if (size > sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	/* Mostly keep len consistent so the fuzzer gets past the first check. */
	if (size >= sizeof(*in) && !(size & 1))
		in->len = (uint32_t)size;
	if (req_decode_devfuse(&req, buf, size) < 0)
		return 0;
	session_dispatch(&req);
	atomic_store(&se.exiting, false);
	if (!req.replied)
		abort();
	return 0;
}
