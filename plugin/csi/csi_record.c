/* Publish records: STATE_DIR/volumes/ID.json remembers, per target, the
 * capability it was published with (publish idempotency: same = OK,
 * different = ALREADY_EXISTS) and whether the volume is ephemeral (then
 * the last unpublish deletes it). zcfsd keeps the mounts; these records
 * only keep what the orchestrator asked for, which zcfsd does not know.
 * Every operation on a volume holds STATE_DIR/volumes/ID.lock; a second
 * one on the same id meanwhile is ABORTED (the CSI rule), whichever front
 * (gRPC thread, JSON or FlexVolume process) it came through. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "csi.h"
#include "plugin/common/plugin_json.h"
#include "plugin/common/statefile.h"

#define RECORD_MAX (1024 * 1024)

static int volumes_dir(struct csi_ctx *c, char **ret)
{
	return asprintf(ret, "%s/volumes", c->state_dir) < 0 ? -ENOMEM : 0;
}

static int record_name(const char *id, char **ret);

int csi_record_lock(struct csi_ctx *c, const char *id, struct zcfs_err *e)
{
	_cleanup_free_ char *vd = NULL, *name = NULL;
	int r, fd;

	r = volumes_dir(c, &vd);
	if (r < 0 || asprintf(&name, "%s.lock", id) < 0)
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

void csi_record_unlock(struct csi_ctx *c, const char *id, int fd)
{
	_cleanup_free_ char *vd = NULL, *name = NULL, *lname = NULL;
	struct stat st;

	/* no record left: the lock file goes too (still held, so no one
	 * else works on this id; sf_trylock copes with the unlink) */
	if (volumes_dir(c, &vd) == 0 && record_name(id, &name) == 0 &&
	    asprintf(&lname, "%s/%s.lock", vd, id) >= 0) {
		_cleanup_free_ char *rpath = NULL;
		if (asprintf(&rpath, "%s/%s", vd, name) >= 0 && stat(rpath, &st) < 0 && errno == ENOENT)
			(void)unlink(lname);
	}
	safe_close(fd);
}

static int record_name(const char *id, char **ret)
{
	return asprintf(ret, "%s.json", id) < 0 ? -ENOMEM : 0;
}

int csi_record_load(struct csi_ctx *c, const char *id, json_object **ret, bool *existed,
		    struct zcfs_err *e)
{
	_cleanup_free_ char *vd = NULL, *name = NULL;
	json_object *rec = NULL, *t;
	int r;

	*existed = false;
	if (volumes_dir(c, &vd) < 0 || record_name(id, &name) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	r = sf_read_json(vd, name, RECORD_MAX, &rec);
	if (r == 0 && (!json_object_object_get_ex(rec, "targets", &t) ||
		       !json_object_is_type(t, json_type_object))) {
		json_object_put(rec);
		r = -EBADMSG;
	}
	if (r == -ENOENT) {
		rec = json_object_new_object();
		if (!rec)
			return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		json_object_object_add(rec, "ephemeral", json_object_new_boolean(false));
		json_object_object_add(rec, "targets", json_object_new_object());
	} else if (r < 0) {
		return zcfs_fail(e, ZCFS_INTERNAL, r, "publish record %s/%s: %s (remove it to reset)", vd,
				 name, r == -EBADMSG ? "corrupt" : strerror(-r));
	} else {
		*existed = true;
	}
	*ret = rec;
	return 0;
}

int csi_record_save(struct csi_ctx *c, const char *id, json_object *rec, struct zcfs_err *e)
{
	_cleanup_free_ char *vd = NULL, *name = NULL;
	int r;

	if (volumes_dir(c, &vd) < 0 || record_name(id, &name) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	r = sf_write_json(vd, name, rec);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "saving publish record %s/%s: %s", vd, name,
				 strerror(-r));
	return 0;
}

int csi_record_remove(struct csi_ctx *c, const char *id, struct zcfs_err *e)
{
	_cleanup_free_ char *vd = NULL, *name = NULL;
	int r;

	if (volumes_dir(c, &vd) < 0 || record_name(id, &name) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	r = sf_remove(vd, name);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "removing publish record %s/%s: %s", vd, name,
				 strerror(-r));
	return 0;
}

json_object *csi_record_targets(json_object *rec)
{
	json_object *t = NULL;

	json_object_object_get_ex(rec, "targets", &t);
	return t;
}

bool csi_record_ephemeral(json_object *rec)
{
	json_object *v;

	return json_object_object_get_ex(rec, "ephemeral", &v) && json_object_get_boolean(v);
}
