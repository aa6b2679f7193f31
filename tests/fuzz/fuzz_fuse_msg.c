/* libFuzzer target: arbitrary bytes as a /dev/fuse message, through the
 * same decode and dispatch the transports use, against a real scratch
 * SOURCE. Whatever the bytes, the server must answer with an error or a
 * reply, never read out of bounds, and never touch anything outside the
 * scratch directory. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "handle.h"
#include "inode.h"
#include "log.h"
#include "session.h"

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

static void setup_once(void)
{
	static char dir[] = "/tmp/zcfs-fuzz.XXXXXX";
	int fd;

	if (se.inodes)
		return;
	if (!mkdtemp(dir))
		abort();
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		abort();
	log_set_level(LOG_CRIT);
	/* DESTROY ends the session by signalling main: keep that harmless. */
	signal(SIGUSR1, SIG_IGN);
	se.main_thread = pthread_self();
	opts.cache = ZCFS_CACHE_NONE;
	opts.source = dir;
	se.opts = &opts;
	se.transport = &fuzz_transport;
	se.fuse_fd = -1;
	se.max_write = 1 << 16;
	se.max_pages = 16;
	atomic_store(&se.initialized, true);
	if (inode_table_new(fd, &se.inodes) < 0 || handle_table_new(&se.handles) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[1 << 17];
	struct fuse_in_header *in = (struct fuse_in_header *)buf;
	struct zcfs_req req = { .se = &se, .reply = fuzz_reply, .outbuf = outbuf,
				.outbuf_size = sizeof(outbuf) };

	setup_once();
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
