/* zcfs-volume-plugin: the Docker/Podman volume plugin of zcfs.
 *   zcfs-volume-plugin [--listen PATH] [--socket ZCFSD_SOCK] [--state-dir DIR]
 *                      [--mount-root DIR] [--docker-data-root DIR]
 *                      [--zcfsd-timeout DURATION] [--metrics L] [--debug]
 * Serves until SIGTERM/SIGINT; the listen socket is removed on exit. */
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include "common/listen_unix.h"
#include "common/log.h"
#include "common/metrics_http.h"
#include "common/parse.h"
#include "plugin/common/statefile.h"
#include "common/version.h"
#include "vp.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: zcfs-volume-plugin [options]\n"
		"Docker/Podman volume plugin (HTTP on a unix socket) in front of zcfsd.\n"
		"  --listen PATH      plugin socket (default %s)\n"
		"  --socket PATH      zcfsd control socket (default $ZCFS_SOCKET or %s)\n"
		"  --state-dir DIR    volume registry (default %s)\n"
		"  --mount-root DIR   mountpoints are DIR/TENANT/NAME; DIR must lie under the\n"
		"                     tenants' allowed_target_prefixes (default %s)\n"
		"  --docker-data-root DIR\n"
		"                     run as a Docker managed plugin whose propagatedMount is\n"
		"                     --mount-root: zcfsd mounts where the host's dockerd looks,\n"
		"                     DIR/plugins/ID/propagated-mount/TENANT/NAME, so the\n"
		"                     tenants' allowed_target_prefixes must hold DIR/plugins\n"
		"                     (DIR: dockerd's --data-root; default $ZCFS_DOCKER_DATA_ROOT)\n"
		"  --zcfsd-timeout DURATION\n"
		"                     all zcfsd calls of one request together, then UNAVAILABLE:\n"
		"                     N (seconds), Ns or Nms, %d ms to %d s (default %d ms); keep\n"
		"                     it below Podman's volume_plugin_timeout (default 5 s)\n"
		"  --metrics L        Prometheus metrics, /healthz and /readyz on L: an absolute\n"
		"                     unix socket path (0660) or IP:PORT (e.g. 127.0.0.1:9569)\n"
		"  --debug            log every request\n"
		"  --log-format F     text (default; with <N> priorities under systemd) or json\n"
		"  --version          print the version\n"
		"Volume options (-o): tenant=NAME, size=SIZE, transport=auto|devfuse|uring\n",
		VP_DEFAULT_LISTEN, ZCFS_DEFAULT_SOCKET, VP_DEFAULT_STATE_DIR, VP_DEFAULT_MOUNT_ROOT,
		VP_ZCFSD_BUDGET_MIN_MS, VP_ZCFSD_BUDGET_MAX_MS / 1000, VP_ZCFSD_BUDGET_MS);
}

/* DURATION of --zcfsd-timeout: "N" or "Ns" seconds, "Nms" milliseconds. */
static int parse_timeout_ms(const char *s, unsigned *ret)
{
	size_t n = strlen(s);
	char num[24];
	uint64_t v, mul = 1000;
	int r;

	if (n > 2 && !strcmp(s + n - 2, "ms")) {
		mul = 1;
		n -= 2;
	} else if (n > 1 && s[n - 1] == 's') {
		n--;
	}
	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	r = parse_u64(num, 0, VP_ZCFSD_BUDGET_MAX_MS, &v);
	if (r < 0)
		return r;
	v *= mul;
	if (v < VP_ZCFSD_BUDGET_MIN_MS || v > VP_ZCFSD_BUDGET_MAX_MS)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

/* The command line. */
struct cli {
	const char *listen_path, *sock, *state, *root, *metrics, *docker_root;
	unsigned budget_ms;
};

/* Fills C from ARGV: -1 to go on, else the exit status (help, version,
 * a bad argument). */
static int parse_cli(int argc, char **argv, struct cli *c)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "mount-root", required_argument, NULL, 'm' },
		{ "docker-data-root", required_argument, NULL, 'r' },
		{ "zcfsd-timeout", required_argument, NULL, 't' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "debug", no_argument, NULL, 'D' },
		{ "log-format", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	enum log_format lf;
	int o;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'l': c->listen_path = optarg; break;
		case 's': c->sock = optarg; break;
		case 'd': c->state = optarg; break;
		case 'm': c->root = optarg; break;
		case 'r': c->docker_root = optarg; break;
		case 't':
			if (parse_timeout_ms(optarg, &c->budget_ms) < 0) {
				fprintf(stderr, "zcfs-volume-plugin: --zcfsd-timeout '%s': want N, Ns or Nms "
					"between %d ms and %d s\n", optarg, VP_ZCFSD_BUDGET_MIN_MS,
					VP_ZCFSD_BUDGET_MAX_MS / 1000);
				return 2;
			}
			break;
		case 'M':
			if (metrics_listen_check(optarg) < 0) {
				fprintf(stderr, "zcfs-volume-plugin: --metrics is an absolute socket path or IP:PORT\n");
				return 2;
			}
			c->metrics = optarg;
			break;
		case 'D': log_set_level(LOG_DEBUG); break;
		case 'L':
			if (log_parse_format(optarg, &lf) < 0) {
				fprintf(stderr, "zcfs-volume-plugin: --log-format is text or json\n");
				return 2;
			}
			log_set_format(lf);
			break;
		case 'h': usage(stdout); return 0;
		case 'V': zcfs_print_version("zcfs-volume-plugin"); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "zcfs-volume-plugin: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct cli c = { .listen_path = VP_DEFAULT_LISTEN, .state = VP_DEFAULT_STATE_DIR,
			 .root = VP_DEFAULT_MOUNT_ROOT, .budget_ms = VP_ZCFSD_BUDGET_MS,
			 .docker_root = getenv("ZCFS_DOCKER_DATA_ROOT") };
	struct MHD_Daemon *d = NULL;
	struct metrics_http *mh = NULL;	/* --metrics, or NULL */
	struct zcfs_err e = { 0 };
	struct vp v;
	sigset_t mask;
	int fd, sig, r;

	log_set_ident("zcfs-volume-plugin");
	r = parse_cli(argc, argv, &c);
	if (r >= 0)
		return r;
	r = vp_init(&v, zcfs_socket_path(c.sock), c.state, c.root, &e);
	if (r == 0 && c.docker_root && *c.docker_root)
		r = vp_docker_host_root("/proc/self/mountinfo", c.root, c.docker_root, &v.host_mount_root, &e);
	if (r < 0) {
		log_err("event=start-failed %s", e.msg);
		vp_done(&v);
		return 1;
	}
	v.zcfsd_budget_ms = c.budget_ms;
	/* Signals are taken synchronously; the HTTP thread inherits the mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	/* A stale socket file (nobody accepting) is replaced; a live one
	 * means another plugin: -EADDRINUSE. */
	fd = c.listen_path[0] == '/' ? listen_unix(c.listen_path, 64, 0660, LISTEN_UNIX_KEEP_LIVE) : -ENAMETOOLONG;
	if (fd < 0) {
		log_err("event=start-failed listen=%s error=\"%s\"", c.listen_path,
			fd == -EADDRINUSE ? "another plugin is serving this socket" : strerror(-fd));
		vp_done(&v);
		return 1;
	}
	r = metrics_http_start(c.metrics, vp_metrics(), &mh);
	if (r < 0)
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, r, "cannot listen for metrics on %s: %s", c.metrics, strerror(-r));
	else
		r = vp_http_start(&v, fd, &d, &e);
	if (r < 0) {
		log_err("event=start-failed %s", e.msg);
		metrics_http_stop(mh);
		(void)unlink(c.listen_path);
		safe_close(fd);
		vp_done(&v);
		return 1;
	}
	metrics_http_ready(mh, true);
	log_info("event=start version=%s listen=%s zcfsd=%s state=%s mount_root=%s host_mount_root=%s "
		 "zcfsd_timeout_ms=%u volumes=%d", ZCFS_VERSION, c.listen_path, v.socket, c.state, c.root,
		 v.host_mount_root ? v.host_mount_root : c.root, c.budget_ms,
		 json_object_object_length(vp_registry_volumes(&v)));
	/* Under systemd (Type=notify): Docker and Podman, ordered after us,
	 * start once the socket answers. No-op without $NOTIFY_SOCKET. */
	(void)sd_notifyf(0, "READY=1\nSTATUS=serving %d volumes on %s (zcfsd %s)",
			 json_object_object_length(vp_registry_volumes(&v)), c.listen_path, v.socket);
	for (;;) {
		if (sigwait(&mask, &sig) != 0)
			continue;
		if (sig == SIGTERM || sig == SIGINT)
			break;
	}
	log_info("event=stop signal=%d", sig);
	(void)sd_notify(0, "STOPPING=1");
	metrics_http_ready(mh, false);
	vp_http_stop(d);
	metrics_http_stop(mh);
	(void)unlink(c.listen_path);
	safe_close(fd);
	vp_done(&v);
	return 0;
}
