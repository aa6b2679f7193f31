/* Kubernetes FlexVolume driver mode of zcfs-csi: kubelet execs
 * `DRIVER init`, `DRIVER mount DIR JSON`, `DRIVER unmount DIR` and parses
 * stdout+stderr as one JSON object, so nothing but that object is printed.
 * Attach-less: init says so; every other call-out is "Not supported"
 * (kubelet then falls back to its own behaviour).
 *
 * Options (all strings): flexVolume.options `volumeID` names a persistent
 * zcfs volume (kept on unmount); without it the volume belongs to the pod
 * (id flex-POD_UID-VOLUME_NAME) and is deleted on unmount. `tenant`,
 * `size`, `transport` as in CSI's volume_context; kubernetes.io/readwrite
 * "ro" publishes read-only; kubernetes.io/fsType must be empty or zcfs. */
#include <stdio.h>
#include <string.h>
#include "csi.h"
#include "plugin/common/plugin_json.h"
#include "plugin/common/zclient.h"

static json_object *status(const char *st, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string(st));
	if (msg)
		json_object_object_add(o, "message", json_object_new_string(msg));
	return o;
}

static json_object *failure(const struct zcfs_err *e)
{
	char msg[600];

	snprintf(msg, sizeof(msg), "%s: %s", zcfs_code_name(e->code), e->msg);
	return status("Failure", msg);
}

int flex_parse_mount(const char *dir, const char *opts_json, json_object **doc,
		     struct csi_publish_req *p, char *idbuf, size_t idlen, struct zcfs_err *e)
{
	static const char *const own[] = { "volumeID", NULL };
	const char *fs, *rw, *uid, *name, *vid;
	json_object *o;

	memset(p, 0, sizeof(*p));
	*doc = NULL;
	p->capability = json_object_new_object();
	if (!p->capability)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	if (csi_check_target("mount dir", dir, e) < 0)
		return -EINVAL;
	if (!opts_json)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "mount: the options JSON argument is missing");
	if (strlen(opts_json) > CSI_REQUEST_MAX)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EFBIG, "mount options larger than %d bytes",
				 CSI_REQUEST_MAX);
	if (pj_parse_object(opts_json, strlen(opts_json), true, doc, e) < 0)
		return -EINVAL;
	o = *doc;
	if (pj_string(o, "kubernetes.io/fsType", false, &fs, e) < 0 ||
	    pj_string(o, "kubernetes.io/readwrite", false, &rw, e) < 0 ||
	    pj_string(o, "kubernetes.io/pod.uid", false, &uid, e) < 0 ||
	    pj_string(o, "kubernetes.io/pvOrVolumeName", false, &name, e) < 0 ||
	    pj_string(o, "volumeID", false, &vid, e) < 0 ||
	    csi_parse_volume_attrs(o, "options", own, p, e) < 0)
		return -EINVAL;
	if (fs && strcmp(fs, "zcfs") && strcmp(fs, "fuse.zcfs"))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "fsType '%.64s' is not supported (leave it empty or use zcfs)", fs);
	if (rw && strcmp(rw, "rw") && strcmp(rw, "ro"))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "kubernetes.io/readwrite must be rw or ro, not '%.16s'", rw);
	p->readonly = rw && !strcmp(rw, "ro");
	p->target_path = dir;
	p->remove_target = false;	/* kubelet owns the mount dir */
	p->access_mode = CSI_MODE_SINGLE_NODE_MULTI_WRITER;
	if (vid) {
		p->volume_id = vid;
	} else {
		if (!uid || !name)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "options need volumeID (a persistent volume) or kubernetes.io/pod.uid and kubernetes.io/pvOrVolumeName (a per-pod volume)");
		if ((size_t)snprintf(idbuf, idlen, "flex-%s-%s", uid, name) >= idlen)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "pod uid and volume name too long");
		p->volume_id = idbuf;
		p->ephemeral = true;
	}
	if (csi_check_volume_id(vid ? "volumeID" : "volume id from pod uid and volume name",
				p->volume_id, e) < 0)
		return -EINVAL;
	json_object_object_add(p->capability, "flex", json_object_new_boolean(true));
	json_object_object_add(p->capability, "access_mode",
			       json_object_new_string(csi_access_mode_name(p->access_mode)));
	json_object_object_add(p->capability, "readonly", json_object_new_boolean(p->readonly));
	json_object_object_add(p->capability, "ephemeral", json_object_new_boolean(p->ephemeral));
	return 0;
}

static int flex_mount(struct csi_ctx *c, const char *dir, const char *opts, struct zcfs_err *e)
{
	_cleanup_json_ json_object *doc = NULL;
	struct csi_publish_req p;
	char id[256];
	int r;

	r = flex_parse_mount(dir, opts, &doc, &p, id, sizeof(id), e);
	if (r == 0)
		r = csi_publish(c, &p, e);
	csi_publish_req_done(&p);
	return r;
}

/* The volume mounted at DIR, found in zcfsd's list. */
static int volume_at(struct csi_ctx *c, const char *dir, char **id, struct zcfs_err *e)
{
	_cleanup_json_ json_object *res = NULL;
	json_object *vols;
	int r;

	*id = NULL;
	r = zcfs_call(c->socket, "volume.list", NULL, &res, e);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(res, "volumes", &vols) || !json_object_is_type(vols, json_type_array))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -EPROTO, "zcfsd sent no volume list");
	for (size_t i = 0; i < json_object_array_length(vols); i++) {
		json_object *v = json_object_array_get_idx(vols, i);
		if (zclient_volume_has_target(v, dir)) {
			*id = strdup(zclient_volume_str(v, "id"));
			return *id ? 0 : zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		}
	}
	return 0;
}

static int flex_unmount(struct csi_ctx *c, const char *dir, struct zcfs_err *e)
{
	_cleanup_free_ char *id = NULL;
	int r;

	if (csi_check_target("mount dir", dir, e) < 0)
		return -EINVAL;
	r = volume_at(c, dir, &id, e);
	if (r < 0)
		return r;
	if (!id)
		return 0;	/* nothing of ours there: unmounted already */
	return csi_unpublish(c, id, dir, false, e);
}

int flex_main(struct csi_ctx *c, int argc, char **argv, json_object **out)
{
	struct zcfs_err e = { 0 };
	json_object *caps;
	int r;

	if (!strcmp(argv[0], "init") && argc == 1) {
		*out = status("Success", NULL);
		caps = json_object_new_object();
		json_object_object_add(caps, "attach", json_object_new_boolean(false));
		/* A recursive chown/chmod or relabel of a FUSE volume by
		 * kubelet would be slow or fail: ownership is the server's. */
		json_object_object_add(caps, "fsGroup", json_object_new_boolean(false));
		json_object_object_add(caps, "selinuxRelabel", json_object_new_boolean(false));
		json_object_object_add(*out, "capabilities", caps);
		return 0;
	}
	if (!strcmp(argv[0], "mount") && argc == 3)
		r = flex_mount(c, argv[1], argv[2], &e);
	else if (!strcmp(argv[0], "unmount") && argc == 2)
		r = flex_unmount(c, argv[1], &e);
	else if (!strcmp(argv[0], "mount") || !strcmp(argv[0], "unmount") || !strcmp(argv[0], "init"))
		r = zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL, "usage: init | mount DIR JSON | unmount DIR");
	else {
		*out = status("Not supported", "zcfs is an attach-less FlexVolume driver: init, mount DIR JSON, unmount DIR");
		return 1;
	}
	*out = r < 0 ? failure(&e) : status("Success", NULL);
	return r < 0 ? 1 : 0;
}
