/* How a publish ends: done (state saved, logged), or a first target
 * given up (server killed, mount, target, connection and charge undone,
 * what this publish made removed): publish.c's, and publish_wait.c's once
 * its wait for the server is over. */
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/server/server.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

void zcfsd_publish_undo_first(struct zcfsd *d, struct zcfsd_volume *v, bool created_storage,
			      bool created_target)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);

	/* Killed, not asked: it failed its start, and a wait for its exit
	 * would be a wait on a server in the event loop. */
	zcfsd_server_stop(d, v, ZCFSD_STOP_NOW, "publish-failed");
	if (v->n_targets) {
		(void)zcfsd_target_unmount(v, v->targets[0], true);
		if (created_target)
			zcfsd_target_remove_created(v->targets[0]);
		zcfsd_volume_remove_target(v, 0);
		zcfsd_changed(d);
	}
	v->fuse_fd = safe_close(v->fuse_fd);
	zcfsd_ringfd_release(v);	/* the next publish is a new connection */
	v->pinned = 0;
	if (created_storage && t)
		zcfsd_storage_remove_dir(t, v->id);
}

void zcfsd_publish_done(struct zcfsd *d, struct zcfsd_volume *v, const char *target, bool ro)
{
	int r;

	v->detached_reason = NULL;
	r = zcfsd_state_save(d);
	if (r < 0)
		log_err("event=state-save-failed error=%s", strerror(-r));
	log_info("event=publish volume=%s target=%s targets=%zu conn=%u pinned=%llu read_only=%d", v->id,
		 target, v->n_targets, v->conn, (unsigned long long)v->pinned, ro);
}
