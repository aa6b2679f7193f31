/* One operation at a time per volume: every operation on volume ID holds
 * STATE_DIR/volumes/ID.lock; a second one on the same id meanwhile is
 * ABORTED (the CSI rule), whichever front (gRPC thread, JSON or
 * FlexVolume process) it came through. What a publish asked for is kept
 * in zcfsd, with the volume and the target (its notes), not here. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "csi.h"
#include "plugin/common/statefile.h"

int csi_lock(struct csi_ctx *c, const char *id, struct zcfs_err *e)
{
	_cleanup_free_ char *vd = NULL, *name = NULL;
	int r, fd;

	if (asprintf(&vd, "%s/volumes", c->state_dir) < 0 || asprintf(&name, "%s.lock", id) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	r = mkdir_p(vd, 0700);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "state dir %s: %s", vd, strerror(-r));
	fd = sf_trylock(vd, name);
	if (fd == -EWOULDBLOCK)
		return zcfs_fail(e, ZCFS_ABORTED, -EBUSY,
				 "an operation on volume '%s' is in progress; retry", id);
	if (fd < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, fd, "lock %s/%s: %s", vd, name, strerror(-fd));
	return fd;
}

void csi_unlock(struct csi_ctx *c, const char *id, int fd)
{
	_cleanup_free_ char *path = NULL;

	/* removed while still held, so no lock file is left per volume ever
	 * seen; sf_trylock locks only a file that still has the name */
	if (asprintf(&path, "%s/volumes/%s.lock", c->state_dir, id) >= 0)
		(void)unlink(path);
	safe_close(fd);
}
