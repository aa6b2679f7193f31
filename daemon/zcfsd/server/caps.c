/* The identity a server starts with (child side of the spawn): the
 * tenant's uid and gid, no supplementary groups, an empty bounding set,
 * and no capabilities -- except a zero-copy server, which gets
 * CAP_SYS_ADMIN alone (ADD_QUEUE with ZERO_COPY checks it) and drops it
 * itself once its rings are registered, or at once when zero-copy turns
 * out unavailable (daemon/serve/sandbox/caps.c, docs/security.md). */
#include <sys/prctl.h>
#include <cap-ng.h>
#include "daemon/zcfsd/budget/budget.h"
#include "server_int.h"

bool zcfsd_server_gets_sys_admin(const struct zcfsd_volume *v, const struct policy_tenant *t)
{
	/* Zero-copy exists only on the ring, and not on a holder's (stock
	 * entries only). */
	return t->zero_copy && zcfsd_volume_uses_uring(v, t) && !v->ring_holder;
}

int zcfsd_server_identity(const struct policy_tenant *t, bool sys_admin)
{
	capng_clear(CAPNG_SELECT_ALL);
	/* Inheritable too: an ambient capability must be permitted and
	 * inheritable, and inheritable can only be set while the bounding
	 * set (cleared by the id change) still has it. */
	if (sys_admin && capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_INHERITABLE,
				      CAP_SYS_ADMIN) < 0)
		return -EINVAL;
	if (capng_change_id((int)t->uid, (int)t->gid,
			    CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING | CAPNG_CLEAR_AMBIENT) < 0)
		return -EPERM;
	/* After the uid change, which empties the ambient set: ambient is
	 * what a non-root process keeps across execve. */
	if (sys_admin && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN, 0, 0) < 0)
		return -errno;
	return 0;
}
