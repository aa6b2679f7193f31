/* The gRPC methods of zcfs-csi: path -> message types -> the shared CSI
 * method (csi_handle_json), and CSI code names -> gRPC status codes. The
 * registration service's two methods live here too: their answers come
 * from the serve options, not from zcfsd. */
#include <grpc/status.h>
#include <string.h>
#include "csi.pb-c.h"
#include "csi_grpc.h"
#include "csi_method_list.h"
#include "common/log.h"
#include "pb_json.h"
#include "plugin/common/plugin_json.h"
#include "pluginregistration.pb-c.h"

#define CSI_GRPC_ENTRY(svc, meth, msg, fn, inl) \
	{ "/csi.v1." #svc "/" #meth, #meth, &csi__v1__##msg##_request__descriptor, \
	  &csi__v1__##msg##_response__descriptor, false, inl },

static const struct csi_grpc_method methods[] = {
	CSI_METHODS(CSI_GRPC_ENTRY)
	{ "/pluginregistration.Registration/GetInfo", "GetInfo",
	  &pluginregistration__info_request__descriptor, &pluginregistration__plugin_info__descriptor,
	  true, true },
	{ "/pluginregistration.Registration/NotifyRegistrationStatus", "NotifyRegistrationStatus",
	  &pluginregistration__registration_status__descriptor,
	  &pluginregistration__registration_status_response__descriptor, true, true },
};

const struct csi_grpc_method *csi_grpc_method_find(const char *path, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (strlen(methods[i].path) == len && !memcmp(methods[i].path, path, len))
			return &methods[i];
	return NULL;
}

int csi_grpc_status(enum zcfs_code code)
{
	switch (code) {
	case ZCFS_OK: return GRPC_STATUS_OK;
	case ZCFS_INVALID_ARGUMENT: return GRPC_STATUS_INVALID_ARGUMENT;
	case ZCFS_NOT_FOUND: return GRPC_STATUS_NOT_FOUND;
	case ZCFS_ALREADY_EXISTS: return GRPC_STATUS_ALREADY_EXISTS;
	case ZCFS_RESOURCE_EXHAUSTED: return GRPC_STATUS_RESOURCE_EXHAUSTED;
	case ZCFS_FAILED_PRECONDITION: return GRPC_STATUS_FAILED_PRECONDITION;
	case ZCFS_PERMISSION_DENIED: return GRPC_STATUS_PERMISSION_DENIED;
	case ZCFS_UNAVAILABLE: return GRPC_STATUS_UNAVAILABLE;
	case ZCFS_UNIMPLEMENTED: return GRPC_STATUS_UNIMPLEMENTED;
	case ZCFS_ABORTED: return GRPC_STATUS_ABORTED;
	case ZCFS_OUT_OF_RANGE: return GRPC_STATUS_OUT_OF_RANGE;
	case ZCFS_INTERNAL:
	default: return GRPC_STATUS_INTERNAL;
	}
}

int csi_grpc_decode(const struct csi_grpc_method *m, const uint8_t *buf, size_t len,
		    json_object **req, struct zcfs_err *e)
{
	return pb_decode_json(m->req, buf, len, req, e);
}

/* kubelet's GetInfo: who we are and where kubelet finds the CSI socket. */
static int registration_info(const struct csi_serve_opts *o, json_object **resp, struct zcfs_err *e)
{
	json_object *r = json_object_new_object(), *v = json_object_new_array();

	if (!r || !v) {
		json_object_put(r);
		json_object_put(v);
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	json_object_object_add(r, "type", json_object_new_string(CSI_REGISTRATION_TYPE));
	json_object_object_add(r, "name", json_object_new_string(CSI_DRIVER_NAME));
	json_object_object_add(r, "endpoint", json_object_new_string(o->kubelet_endpoint));
	json_object_array_add(v, json_object_new_string("1.0.0"));
	json_object_object_add(r, "supported_versions", v);
	*resp = r;
	return 0;
}

static int registration_status(json_object *req, json_object **resp, struct zcfs_err *e)
{
	json_object *ok = NULL, *err = NULL;

	json_object_object_get_ex(req, "plugin_registered", &ok);
	json_object_object_get_ex(req, "error", &err);
	if (ok && json_object_get_boolean(ok))
		log_info("event=registered driver=%s", CSI_DRIVER_NAME);
	else
		/* kubelet refused us; it retries when the socket is recreated */
		log_err("event=registration-failed driver=%s error=\"%.256s\"", CSI_DRIVER_NAME,
			err ? json_object_get_string(err) : "");
	*resp = json_object_new_object();
	return *resp ? 0 : zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
}

void csi_grpc_call(struct csi_ctx *c, const struct csi_serve_opts *o, const struct csi_grpc_method *m,
		   const uint8_t *buf, size_t len, struct csi_grpc_result *res)
{
	_cleanup_json_ json_object *req = NULL, *resp = NULL;
	struct zcfs_err e = { 0 };
	int r;

	memset(res, 0, sizeof(*res));
	r = csi_grpc_decode(m, buf, len, &req, &e);
	if (r == 0) {
		if (!strcmp(m->name, "GetInfo"))
			r = registration_info(o, &resp, &e);
		else if (!strcmp(m->name, "NotifyRegistrationStatus"))
			r = registration_status(req, &resp, &e);
		else
			r = csi_handle_json(c, m->name, req, &resp, &e);
	}
	if (r == 0)
		r = pb_encode_json(m->resp, resp, &res->resp, &res->resp_len, &e);
	if (r < 0) {
		if (e.code == ZCFS_OK)
			zcfs_fail(&e, ZCFS_INTERNAL, r, "%s", strerror(-r));
		res->status = csi_grpc_status(e.code);
		snprintf(res->msg, sizeof(res->msg), "%s", e.msg);
		free(res->resp);
		res->resp = NULL;
		res->resp_len = 0;
	}
}
