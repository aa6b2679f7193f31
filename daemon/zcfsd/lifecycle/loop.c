/* The long operations on a volume in the event loop (a first publish
 * waiting for its server, publish_wait.c; the unpublish of a last
 * target, unpublish.c): the events they own, their deadlines and phases. */
#include "lifecycle.h"

bool zcfsd_lifecycle_event(struct zcfsd *d, uint64_t tag, int fd)
{
	if (tag == ZCFSD_EV_READY) {
		zcfsd_publish_ready_event(d, fd);
		return true;
	}
	if (tag != ZCFSD_EV_PIDFD)
		return false;
	/* A server whose first publish waits for it: its exit fails that
	 * publish instead of being restarted. */
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next) {
		if (v->pubwait && v->srv.pidfd == fd) {
			zcfsd_publish_server_exited(d, v);
			return true;
		}
	}
	return false;
}

void zcfsd_lifecycle_tick(struct zcfsd *d)
{
	zcfsd_unpublish_tick(d);
	zcfsd_publish_wait_tick(d);
}

void zcfsd_lifecycle_release(struct zcfsd_volume *v)
{
	if (v->pubwait) {
		safe_close(v->pubwait->ready_fd);
		free(v->pubwait);
		v->pubwait = NULL;
	}
	if (v->unpub) {
		safe_close(v->unpub->sync_pidfd);
		free(v->unpub->target);
		free(v->unpub);
		v->unpub = NULL;
	}
}

int zcfsd_lifecycle_timeout_ms(struct zcfsd *d)
{
	int ut = zcfsd_unpublish_timeout_ms(d);	/* unpublishes under way */
	int pt = zcfsd_publish_wait_timeout_ms(d);	/* publishes waiting for their server */

	return ut < 0 || (pt >= 0 && pt < ut) ? pt : ut;
}
