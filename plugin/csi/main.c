/* zcfs-csi: `zcfs-csi [options] METHOD` reads one CSI request (csi.proto
 * snake_case JSON) on stdin and writes one JSON answer on stdout: exit 0
 * with the response, or exit 1 with {"error": {"code", "message"}}.
 * Called with a lower-case first argument (init, mount, unmount, ...) it
 * is a Kubernetes FlexVolume driver instead (flex.c). */
#include <ctype.h>
#include <getopt.h>
#include <string.h>
#include <sys/utsname.h>
#include "csi.h"
#include "log.h"
#include "plugin_json.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: zcfs-csi [--socket PATH] [--state-dir DIR] [--node-id ID] METHOD < request.json\n"
		"       zcfs-csi init | mount DIR OPTIONS-JSON | unmount DIR      (FlexVolume driver)\n"
		"CSI methods: GetPluginInfo GetPluginCapabilities Probe NodeGetInfo NodeGetCapabilities\n"
		"  NodePublishVolume NodeUnpublishVolume NodeGetVolumeStats\n"
		"  (NodeStageVolume NodeUnstageVolume NodeExpandVolume: UNIMPLEMENTED)\n"
		"  --socket PATH     zcfsd control socket (default $ZCFS_SOCKET or %s)\n"
		"  --state-dir DIR   publish records (default $ZCFS_CSI_STATE_DIR or %s)\n"
		"  --node-id ID      NodeGetInfo node_id (default $ZCFS_NODE_ID, $KUBE_NODE_NAME,\n"
		"                    $NODE_NAME or the host name)\n"
		"  --version         print the driver name and version\n"
		"Exit: 0 success, 1 error answer, 2 usage.\n",
		ZCFS_DEFAULT_SOCKET, CSI_DEFAULT_STATE_DIR);
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static void print(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
}

static int answer_error(const struct perr *e)
{
	json_object *o = json_object_new_object(), *err = json_object_new_object();

	json_object_object_add(err, "code", json_object_new_string(zcfs_code_name(e->code)));
	json_object_object_add(err, "message", json_object_new_string(e->msg));
	json_object_object_add(o, "error", err);
	print(o);
	json_object_put(o);
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "node-id", required_argument, NULL, 'n' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	_cleanup_free_ char *body = NULL;
	_cleanup_json_ json_object *resp = NULL;
	static struct utsname un;
	struct csi_ctx c = { 0 };
	struct perr e = { 0 };
	const char *sock = NULL;
	size_t len = 0;
	int o, r;

	log_set_ident("zcfs-csi");
	c.state_dir = env_or("ZCFS_CSI_STATE_DIR", CSI_DEFAULT_STATE_DIR);
	c.node_id = env_or("ZCFS_NODE_ID", env_or("KUBE_NODE_NAME", env_or("NODE_NAME", NULL)));
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (o) {
		case 's': sock = optarg; break;
		case 'd': c.state_dir = optarg; break;
		case 'n': c.node_id = optarg; break;
		case 'V':
			zcfs_print_version(CSI_DRIVER_NAME);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	c.socket = zcfs_socket_path(sock);
	if (!c.node_id && uname(&un) == 0)
		c.node_id = un.nodename;
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (islower((unsigned char)argv[optind][0])) {
		/* FlexVolume: kubelet reads stdout+stderr as one JSON object. */
		r = flex_main(&c, argc - optind, argv + optind, &resp);
		print(resp);
		return r;
	}
	if (optind + 1 != argc) {
		perr_set(&e, -EINVAL, ZCFS_INVALID_ARGUMENT, "one METHOD argument expected; the request goes on stdin");
		return answer_error(&e) + 1;
	}
	r = pj_read_fd(STDIN_FILENO, CSI_REQUEST_MAX, &body, &len);
	if (r == -EFBIG)
		perr_set(&e, r, ZCFS_INVALID_ARGUMENT, "request larger than %d bytes", CSI_REQUEST_MAX);
	else if (r < 0)
		perr_set(&e, r, ZCFS_INVALID_ARGUMENT, "reading the request from stdin: %s", strerror(-r));
	else
		r = csi_handle(&c, argv[optind], body, len, &resp, &e);
	if (r < 0) {
		log_err("event=csi-error method=%.64s code=%s message=\"%s\"", argv[optind],
			zcfs_code_name(e.code), e.msg);
		return answer_error(&e);
	}
	print(resp);
	return 0;
}
