/* Teardown of a published volume: every target unmounted (binds first),
 * whatever else of its connection is mounted, then its server stopped. */
#include <string.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "server.h"

int zcfsd_volume_teardown(struct zcfsd *d, struct zcfsd_volume *v, bool lazy)
{
	int r;

	/* Acknowledged writes the kernel still caches (writeback) reach the
	 * storage before a busy mount's connection is aborted. */
	if (!lazy && v->n_targets && v->srv.pid) {
		r = zcfsd_syncfs_bounded(v->targets[0], 10000);
		if (r < 0)
			log_warn("event=sync-failed volume=%s error=\"%s\"", v->id, strerror(-r));
	}
	r = zcfsd_volume_unmount_all(v, lazy);
	if (r < 0)
		return r;
	zcfsd_stop_server(d, v);
	zcfsd_ringfd_release(v);	/* the next publish is a new connection */
	v->pinned = 0;
	return 0;
}

int zcfsd_volume_unmount_all(struct zcfsd_volume *v, bool lazy)
{
	/* Held to the end: the superblock, and with it the connection
	 * number, stays ours, so the abort below cannot hit the next mount
	 * to get that number (an unmount by number would not either). */
	_cleanup_close_ int pin = v->conn ? zcfsd_conn_pin(v->conn, v->id) : -1;
	int r;

	/* Binds first: the fuse mount at targets[0] goes last. A target
	 * whose mount cannot be removed stays recorded (so does the server
	 * and its budget), and a later unpublish tries again. */
	while (v->n_targets) {
		r = zcfsd_target_unmount(v, v->targets[v->n_targets - 1], lazy);
		if (r < 0 && !lazy)
			return r;
		zcfsd_volume_remove_target(v, v->n_targets - 1);
	}
	/* Whatever else of the connection is mounted (a target moved, a
	 * bind made behind our back) goes too. */
	if (v->conn) {
		r = zcfsd_unmount_conn(v->conn, lazy, v->id);
		if (r < 0 && !lazy) {
			log_err("event=unmount-failed volume=%s conn=%u error=\"%s\" effect=\"stays published\"",
				v->id, v->conn, strerror(-r));
			return r;
		}
	}
	/* The pin keeps the superblock alive past the last unmount: end the
	 * connection (a detached busy mount then answers ENOTCONN, a lazy
	 * cleanup leaves no live mount to a forgotten connection, the
	 * server's reads end). */
	if (pin >= 0)
		(void)zcfsd_conn_abort(v->conn);
	return 0;
}
