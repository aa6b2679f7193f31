/* What zcfsd sends a running server besides SIGKILL (stop.c): the
 * hand-over request of a planned restart (ZCFS_HANDOVER_SIGNAL) and, for its
 * successor, FUSE_NOTIFY_RESEND on the connection. */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/handover.h"
#include "common/log.h"
#include "kernel/zcfs_fuse_abi.h"
#include "server_int.h"

int zcfsd_server_signal_handover(struct zcfsd_volume *v)
{
	if (syscall(SYS_pidfd_send_signal, v->srv.pidfd, ZCFS_HANDOVER_SIGNAL, NULL, 0) < 0)
		return -errno;
	log_info("event=server-handover volume=%s pid=%d wall_us=%lld", v->id, (int)v->srv.pid,
		 (long long)wall_us());
	return 0;
}

int zcfsd_send_resend(int fuse_fd)
{
	struct fuse_out_header oh = { .len = sizeof(oh), .error = FUSE_NOTIFY_RESEND, .unique = 0 };

	return write(fuse_fd, &oh, sizeof(oh)) == (ssize_t)sizeof(oh) ? 0 : -errno;
}
