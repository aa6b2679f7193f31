/* The one way to stop a volume's server (zcfsd_server_stop): its steps,
 * each written once, in one order: ABORT (standby given up, holder and
 * broker stopped, the connection aborted if still ours, our dup closed,
 * no restart: the exit comes as an ordinary pidfd event), KILL (SIGKILL,
 * still watched), FORGET (unwatched, reaped now or by the loop once it
 * exits: no wait, no zombie); NOW and WAIT are their two sequences. */
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/zcfsd/broker/broker.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "server_int.h"

/* Forgets the process: unwatch, reap when it is our child (later, by the
 * loop, if it has not exited yet: no zombie), let the pidfd go. */
static void server_forget(struct zcfsd *d, struct zcfsd_volume *v, siginfo_t *si)
{
	if (v->srv.pidfd < 0) {
		if (si)
			memset(si, 0, sizeof(*si));
		return;
	}
	zcfsd_unwatch(d, &v->sup->pidfd_watch);
	v->sup->on_exit = NULL;
	zcfsd_reap_release(d, v->srv.pidfd, !v->sup->adopted, si);
	v->srv.pidfd = -1;
	v->srv.pid = 0;
	zcfsd_srvlog_close(d, v);
	zcfsd_changed(d);
}

static void stop_abort(struct zcfsd *d, struct zcfsd_volume *v)
{
	zcfsd_standby_give_up(d, v, "volume-stopping");
	zcfsd_holder_stop(d, v);
	/* While the connection is still ours to close them on. */
	zcfsd_broker_stop(d, v);
	/* After the unmounts (zcfsd_volume_unmount_all) the connection is
	 * aborted already; a mount of ours still there (a failed publish):
	 * abort so the server's reads end. Never by number alone: once our
	 * superblock is gone the number is the next mount's. */
	if (v->fuse_fd >= 0 && zcfsd_conn_ours(v->conn, v->id))
		(void)zcfsd_conn_abort(v->conn);
	v->fuse_fd = safe_close(v->fuse_fd);
	if (v->sup)
		zcfsd_deadline_cancel(d, &v->sup->restart);
}

static void stop_kill(struct zcfsd_volume *v, const char *why)
{
	log_warn("event=server-kill volume=%s pid=%d reason=%s", v->id, (int)v->srv.pid, why);
	(void)syscall(SYS_pidfd_send_signal, v->srv.pidfd, SIGKILL, NULL, 0);
}

/* Forgotten on purpose (not seen exiting): logged as stopped. */
static void stop_forget(struct zcfsd *d, struct zcfsd_volume *v)
{
	log_info("event=server-stop volume=%s pid=%d", v->id, (int)v->srv.pid);
	server_forget(d, v, NULL);
}

/* ABORT, at most 1.5 s for the exit, KILL, 3 s more, FORGET: the one
 * stop that waits (teardown). */
static void stop_wait(struct zcfsd *d, struct zcfsd_volume *v)
{
	struct pollfd p = { .fd = v->srv.pidfd, .events = POLLIN };

	if (poll(&p, 1, 1500) <= 0) {
		stop_kill(v, "no-exit-after-abort");
		(void)poll(&p, 1, 3000);
	}
	stop_forget(d, v);
}

void zcfsd_server_stop(struct zcfsd *d, struct zcfsd_volume *v, enum zcfsd_stop how, const char *why)
{
	if (how == ZCFSD_STOP_ABORT || how == ZCFSD_STOP_NOW || how == ZCFSD_STOP_WAIT)
		stop_abort(d, v);
	if (v->srv.pidfd < 0)
		return;
	switch (how) {
	case ZCFSD_STOP_ABORT:
		break;
	case ZCFSD_STOP_KILL:
		stop_kill(v, why);
		break;
	case ZCFSD_STOP_FORGET:
		stop_forget(d, v);
		break;
	case ZCFSD_STOP_NOW:
		/* A server that failed its start: nothing of it is worth a
		 * wait in the event loop, nor a "stopped" line after the kill's. */
		stop_kill(v, why);
		server_forget(d, v, NULL);
		break;
	case ZCFSD_STOP_WAIT:
		stop_wait(d, v);
		break;
	}
}

void zcfsd_server_reap(struct zcfsd *d, struct zcfsd_volume *v, siginfo_t *si)
{
	server_forget(d, v, si);
}
