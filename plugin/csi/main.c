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
#include "csi_grpc.h"
#include "common/log.h"
#include "common/metrics_http.h"
#include "common/parse.h"
#include "plugin/common/plugin_json.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: zcfs-csi [--socket PATH] [--state-dir DIR] [--node-id ID] METHOD < request.json\n"
		"       zcfs-csi [options] serve [--endpoint unix:///PATH] [--registration-socket PATH]\n"
		"                [--kubelet-registration-path PATH] [--grace-seconds N] [--metrics L]\n"
		"       zcfs-csi init | mount DIR OPTIONS-JSON | unmount DIR      (FlexVolume driver)\n"
		"CSI methods: GetPluginInfo GetPluginCapabilities Probe; CreateVolume DeleteVolume\n"
		"  ValidateVolumeCapabilities ListVolumes GetCapacity ControllerGetCapabilities\n"
		"  ControllerExpandVolume; NodeGetInfo NodeGetCapabilities NodePublishVolume\n"
		"  NodeUnpublishVolume NodeGetVolumeStats NodeExpandVolume\n"
		"  (NodeStageVolume NodeUnstageVolume: UNIMPLEMENTED)\n"
		"  --socket PATH     zcfsd control socket (default $ZCFS_SOCKET or %s)\n"
		"  --state-dir DIR   the volumes' locks (default $ZCFS_CSI_STATE_DIR or %s)\n"
		"  --node-id ID      NodeGetInfo node_id (default $ZCFS_NODE_ID, $KUBE_NODE_NAME,\n"
		"                    $NODE_NAME or the host name)\n"
		"  --log-format F    text (default; <N> priorities under systemd) or json\n"
		"  --version         print the driver name and version\n"
		"Global options may come before or after METHOD or serve.\n"
		"serve: the CSI Identity, Controller and Node services over gRPC until SIGTERM\n"
		"  --endpoint E      unix:///PATH to listen on (default $CSI_ENDPOINT or %s)\n"
		"  --registration-socket PATH  also serve kubelet plugin registration there\n"
		"                    (e.g. /var/lib/kubelet/plugins_registry/%s-reg.sock)\n"
		"  --kubelet-registration-path PATH  the endpoint's path as kubelet sees it\n"
		"                    (GetInfo; default: the endpoint's own path)\n"
		"  --grace-seconds N in-flight calls get N s after SIGTERM (default %d)\n"
		"  --socket-group GID  the endpoint mode 0660 with group GID (sidecars of another\n"
		"                    uid: external-provisioner, external-resizer, livenessprobe)\n"
		"  --metrics L       Prometheus metrics, /healthz and /readyz on L: an absolute unix\n"
		"                    socket path (0660) or IP:PORT (e.g. 127.0.0.1:9568)\n"
		"Exit: 0 success, 1 error answer, 2 usage.\n",
		ZCFS_DEFAULT_SOCKET, CSI_DEFAULT_STATE_DIR, CSI_DEFAULT_ENDPOINT, CSI_DRIVER_NAME,
		CSI_GRPC_GRACE_S);
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

static int answer_error(const struct zcfs_err *e)
{
	json_object *o = json_object_new_object(), *err = json_object_new_object();

	json_object_object_add(err, "code", json_object_new_string(zcfs_code_name(e->code)));
	json_object_object_add(err, "message", json_object_new_string(e->msg));
	json_object_object_add(o, "error", err);
	print(o);
	json_object_put(o);
	return 1;
}

#define GLOBAL_OPTS \
	{ "socket", required_argument, NULL, 's' }, \
	{ "state-dir", required_argument, NULL, 'd' }, \
	{ "node-id", required_argument, NULL, 'n' }, \
	{ "log-format", required_argument, NULL, 'L' }

/* A global option (given before or after the verb, like zcfsctl's):
 * 0 if OPT is one and was taken, 1 if it is not one, 2 on a bad value. */
static int global_opt(struct csi_ctx *c, const char **sock, int opt, const char *arg)
{
	enum log_format lf;

	switch (opt) {
	case 's': *sock = arg; return 0;
	case 'd': c->state_dir = arg; return 0;
	case 'n': c->node_id = arg; return 0;
	case 'L':
		if (log_parse_format(arg, &lf) < 0) {
			fprintf(stderr, "zcfs-csi: --log-format is text or json\n");
			return 2;
		}
		log_set_format(lf);
		return 0;
	default: return 1;
	}
}

/* Global options after a CSI METHOD (`zcfs-csi Probe --socket S`): taken
 * out of ARGV, *ARGC the METHOD's end; -1 to go on, else the exit status.
 * FlexVolume verbs (lower case) keep their arguments as they are. */
static int method_opts(struct csi_ctx *c, const char **sock, int *argc, char **argv)
{
	static const struct option opts[] = { GLOBAL_OPTS, {} };
	int first = optind, o, r;

	if (islower((unsigned char)argv[first][0]) || first + 1 >= *argc)
		return -1;
	optind = 1;
	/* argv[first] becomes this scan's argv[0] */
	while ((o = getopt_long(*argc - first, argv + first, "+", opts, NULL)) != -1) {
		r = global_opt(c, sock, o, optarg);
		if (r)
			return 2;
	}
	/* what getopt left: positional arguments after the options */
	for (int i = first + optind, j = first + 1; i < *argc; i++, j++)
		argv[j] = argv[i];
	*argc = *argc - optind + 1;
	optind = first;
	return -1;
}

/* zcfs-csi serve [serve options]: ARGV[0] is "serve". */
static int serve_main(struct csi_ctx *c, const char **sock, int argc, char **argv)
{
	static const struct option opts[] = {
		GLOBAL_OPTS,
		{ "endpoint", required_argument, NULL, 'e' },
		{ "registration-socket", required_argument, NULL, 'r' },
		{ "kubelet-registration-path", required_argument, NULL, 'k' },
		{ "grace-seconds", required_argument, NULL, 'g' },
		{ "socket-group", required_argument, NULL, 'G' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct csi_serve_opts o = {
		.endpoint = env_or("CSI_ENDPOINT", CSI_DEFAULT_ENDPOINT),
		.grace_s = CSI_GRPC_GRACE_S,
		.socket_gid = -1,
	};
	uint64_t g;
	int opt, r;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'e': o.endpoint = optarg; break;
		case 'r': o.registration = optarg; break;
		case 'k': o.kubelet_endpoint = optarg; break;
		case 'g':
			if (parse_u64(optarg, 0, 3600, &g) < 0) {
				fprintf(stderr, "zcfs-csi serve: --grace-seconds must be 0..3600\n");
				return 2;
			}
			o.grace_s = (unsigned)g;
			break;
		case 'G':
			if (parse_u64(optarg, 0, INT32_MAX, &g) < 0) {
				fprintf(stderr, "zcfs-csi serve: --socket-group must be a numeric gid\n");
				return 2;
			}
			o.socket_gid = (int)g;
			break;
		case 'M':
			if (metrics_listen_check(optarg) < 0) {
				fprintf(stderr, "zcfs-csi serve: --metrics is an absolute socket path or IP:PORT\n");
				return 2;
			}
			o.metrics = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default:
			r = global_opt(c, sock, opt, optarg);
			if (r == 0)
				break;
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "zcfs-csi serve: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	c->socket = zcfs_socket_path(*sock);
	if (o.registration && (o.registration[0] != '/' || strlen(o.registration) >= 108)) {
		fprintf(stderr, "zcfs-csi serve: --registration-socket must be an absolute path under 108 bytes\n");
		return 2;
	}
	if (!o.kubelet_endpoint) {
		o.kubelet_endpoint = o.endpoint;
		if (!strncmp(o.kubelet_endpoint, "unix://", 7))
			o.kubelet_endpoint += 7;
		else if (!strncmp(o.kubelet_endpoint, "unix:", 5))
			o.kubelet_endpoint += 5;
	}
	return csi_serve(c, &o);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		GLOBAL_OPTS,
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	_cleanup_free_ char *body = NULL;
	_cleanup_json_ json_object *resp = NULL;
	static struct utsname un;
	struct csi_ctx c = { 0 };
	struct zcfs_err e = { 0 };
	const char *sock = NULL;
	size_t len = 0;
	int o, r;

	log_set_ident("zcfs-csi");
	c.state_dir = env_or("ZCFS_CSI_STATE_DIR", CSI_DEFAULT_STATE_DIR);
	c.node_id = env_or("ZCFS_NODE_ID", env_or("KUBE_NODE_NAME", env_or("NODE_NAME", NULL)));
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (o) {
		case 's': case 'd': case 'n': case 'L':
			if (global_opt(&c, &sock, o, optarg))
				return 2;
			break;
		case 'V':
			zcfs_print_version(CSI_DRIVER_NAME);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "serve")) {
		if (!c.node_id && uname(&un) == 0)
			c.node_id = un.nodename;
		return serve_main(&c, &sock, argc - optind, argv + optind);
	}
	r = method_opts(&c, &sock, &argc, argv);
	if (r >= 0)
		return r;
	c.socket = zcfs_socket_path(sock);
	if (!c.node_id && uname(&un) == 0)
		c.node_id = un.nodename;
	if (islower((unsigned char)argv[optind][0])) {
		/* FlexVolume: kubelet reads stdout+stderr as one JSON object. */
		r = flex_main(&c, argc - optind, argv + optind, &resp);
		print(resp);
		return r;
	}
	if (optind + 1 != argc) {
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL, "one METHOD argument expected; the request goes on stdin");
		return answer_error(&e) + 1;
	}
	r = pj_read_fd(STDIN_FILENO, CSI_REQUEST_MAX, &body, &len);
	if (r == -EFBIG)
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, r, "request larger than %d bytes", CSI_REQUEST_MAX);
	else if (r < 0)
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, r, "reading the request from stdin: %s", strerror(-r));
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
