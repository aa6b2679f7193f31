/* Teardown of a published volume: every target unmounted (binds first,
 * mounts/'s zcfsd_volume_unmount_all), then its server stopped. */
#include <string.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "server_int.h"

int zcfsd_volume_teardown(struct zcfsd *d, struct zcfsd_volume *v, bool lazy)
{
	int r;

	/* Acknowledged writes the kernel still caches (writeback) reach the
	 * storage before a busy mount's connection is aborted. */
	if (!lazy && v->n_targets && v->srv.pid) {
		r = zcfsd_syncfs_bounded(d, v->targets[0], 10000);
		if (r < 0)
			log_warn("event=sync-failed volume=%s error=\"%s\"", v->id, strerror(-r));
	}
	r = zcfsd_volume_unmount_all(v, lazy);
	if (r < 0)
		return r;
	zcfsd_server_stop(d, v, ZCFSD_STOP_WAIT, NULL);
	zcfsd_ringfd_release(v);	/* the next publish is a new connection */
	v->pinned = 0;
	zcfsd_changed(d);	/* no target left */
	return 0;
}
