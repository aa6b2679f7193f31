/* volume.restart: a planned restart of a volume's server (the standby
 * started first, then the hand-over; server/supervise.c and standby.c
 * carry it out in the event loop). */
#include "daemon/zcfsd/server/server.h"
#include "lifecycle.h"

int zcfsd_volume_restart(struct zcfsd *d, struct zcfsd_volume *v, struct zcfs_err *e)
{
	return zcfsd_server_handover(d, v, e);
}
