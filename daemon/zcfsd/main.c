/* zcfsd: the node daemon. Holds the policy, the budgets and a dup of
 * every volume's fuse fd; mounts, spawns and supervises zcfs-serve.
 * Exit 0 after SIGTERM/SIGINT (volumes keep running and are re-adopted
 * by the next zcfsd), 1 on a runtime failure, 2 on a bad command line or
 * policy. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include "common/log.h"
#include "common/uring_sizing.h"
#include "common/version.h"
#include "daemon/zcfsd/budget/budget.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/broker/broker.h"
#include "daemon/zcfsd/state/state.h"
#include "daemon/zcfsd/server/server.h"
#include "daemon/zcfsd/lifecycle/lifecycle.h"
#include "daemon/zcfsd/protocol/protocol.h"
#include "daemon/zcfsd/protocol/metrics.h"

static void usage(void)
{
	printf("Usage: zcfsd --policy PATH [options]\n"
	       "The zcfs node daemon.\n\n"
	       "  --policy PATH      policy file or directory of *.json (required)\n"
	       "  --state-dir DIR    state and server logs (default /var/lib/zcfs)\n"
	       "  --socket PATH      control socket (default $ZCFS_SOCKET or %s)\n"
	       "  --serve PATH       zcfs-serve binary (default: next to zcfsd)\n"
	       "  --server-scopes auto|systemd|off\n"
	       "                     each server in a systemd scope of its own, so it outlives\n"
	       "                     zcfsd's unit or pod: auto (default) under a systemd service\n"
	       "  --foreground       do not detach\n"
	       "  --debug            debug logging\n"
	       "  --log-format F     text (default; with <N> priorities under systemd) or json\n"
	       "  -h, --help         this text\n"
	       "  --version          version and the FUSE protocol its servers speak\n", ZCFS_DEFAULT_SOCKET);
}

static char *default_serve_bin(void)
{
	char self[PATH_MAX], *slash, *p = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (asprintf(&p, "%s/zcfs-serve", self) >= 0 && access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return strdup("/usr/bin/zcfs-serve");
}

static void on_signal(struct zcfsd *d, void *obj, uint32_t events);

static int setup_signals(struct zcfsd *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	d->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->signal_fd < 0)
		return -errno;
	return zcfsd_watch(d, &d->signal_watch, d->signal_fd, EPOLLIN, on_signal, NULL);
}

/* STATUS= for `systemctl status` (sd_notify; a no-op outside a
 * Type=notify unit), sent when it changes; READY (with READY=1) or NULL. */
static void notify_status(struct zcfsd *d, const char *ready)
{
	char now[sizeof(d->status)];
	unsigned n = 0, published = 0, up = 0;

	for (struct zcfsd_volume *v = d->volumes; v; v = v->next) {
		n++;
		published += v->n_targets > 0;
		up += v->srv.pid > 0;
	}
	snprintf(now, sizeof(now), "%u volumes, %u published, %u servers up; socket %s", n, published, up,
		 d->socket_path);
	if (!ready && !strcmp(now, d->status))
		return;
	memcpy(d->status, now, sizeof(d->status));
	(void)sd_notifyf(0, "%sSTATUS=%s", ready ? ready : "", now);
}

static void on_signal(struct zcfsd *d, void *obj, uint32_t events)
{
	struct signalfd_siginfo si;

	(void)obj;
	(void)events;
	while (read(d->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		struct zcfs_err e = { 0 };	/* one per signal: the first error wins */

		if (si.ssi_signo == SIGHUP) {
			(void)sd_notify(0, "RELOADING=1");
			if (zcfsd_policy_reload(d, &e) < 0)
				log_err("event=policy-reload-failed message=\"%s\"", e.msg);
			notify_status(d, "READY=1\n");
		} else if (si.ssi_signo == SIGUSR2) {
			if (zcfsd_upgrade_request(d, "SIGUSR2", &e) < 0)
				log_err("event=upgrade-refused message=\"%s\"", e.msg);
		} else {
			log_info("event=signal signal=%s", si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
			(void)sd_notify(0, "STOPPING=1\nSTATUS=stopping; the volume servers keep running");
			d->quit = true;
		}
	}
}

/* The upgrade's completion (lifecycle/upgrade.c): the loop ends, finish
 * execs. Its drain is the control socket's. */
static void upgrade_due(struct zcfsd *d)
{
	d->quit = true;
}

static void control_accepting(struct zcfsd *d, bool on)
{
	if (on)
		zcfsd_control_resume_accepting(d);
	else
		zcfsd_control_stop_accepting(d);
}

static const struct zcfsd_upgrade_ops upgrade_ops = {
	.accepting = control_accepting,
	.pending = zcfsd_control_pending,
	.due = upgrade_due,
};

/* Every fd event goes to its watch's owner, every deadline to its own
 * (model/loop.c), the upgrade's steps too (d->changed, lifecycle/upgrade.c). */
static int run(struct zcfsd *d)
{
	while (!d->quit) {
		int r = zcfsd_loop_once(d);

		if (r < 0)
			return r;
		if (!d->quit)
			notify_status(d, NULL);
	}
	return 0;
}

static int detach(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	(void)setsid();
	return 0;
}

/* The command line into D; -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct zcfsd *d, const char **socket_arg,
			 bool *foreground)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "socket", required_argument, NULL, 'S' },
		{ "serve", required_argument, NULL, 'x' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "server-scopes", required_argument, NULL, 'C' },
		{ "debug", no_argument, NULL, 'd' },
		{ "log-format", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': d->policy_path = optarg; break;
		case 's': d->state_dir = optarg; break;
		case 'S': *socket_arg = optarg; break;
		case 'x': d->serve_bin = optarg; break;
		case 'f': *foreground = true; break;
		case 'C':
			if (zcfsd_scope_init(d, optarg) < 0) {
				fprintf(stderr, "zcfsd: --server-scopes is auto, systemd or off\n");
				return 2;
			}
			break;
		case 'd': log_set_level(LOG_DEBUG); break;
		case 'L': {
			enum log_format lf;
			if (log_parse_format(optarg, &lf) < 0) {
				fprintf(stderr, "zcfsd: --log-format is text or json\n");
				return 2;
			}
			log_set_format(lf);
			break;
		}
		case 'h': usage(); return 0;
		case 'V': zcfs_print_version("zcfsd"); return 0;
		default: fprintf(stderr, "zcfsd: bad arguments (see --help)\n"); return 2;
		}
	}
	if (!d->policy_path || optind != argc) {
		fprintf(stderr, "zcfsd: %s (see --help)\n",
			d->policy_path ? "unexpected argument" : "--policy PATH is required");
		return 2;
	}
	return -1;
}

/* D's policy, or every problem with it logged: -EINVAL and the like. */
static int load_policy(struct zcfsd *d)
{
	struct policy_errors errs = { 0 };
	int r = policy_load(d->policy_path, &d->policy, &errs);

	if (r < 0) {
		for (size_t i = 0; i < errs.n; i++)
			log_err("event=policy-error %s", errs.msgs[i]);
		log_err("event=policy-invalid path=%s problems=%zu error=%s", d->policy_path, errs.n,
			strerror(-r));
		policy_errors_clear(&errs);
	}
	return r;
}

/* STATE_DIR and STATE_DIR/logs, made if missing. */
static int make_state_dir(const struct zcfsd *d)
{
	_cleanup_free_ char *logs = NULL;

	if (asprintf(&logs, "%s/logs", d->state_dir) < 0)
		return -ENOMEM;
	if ((mkdir(d->state_dir, 0700) < 0 && errno != EEXIST) || (mkdir(logs, 0700) < 0 && errno != EEXIST)) {
		int r = -errno;

		log_err("event=state-dir-failed path=%s error=%m", d->state_dir);
		return r;
	}
	return 0;
}

/* Everything before the event loop runs: state dir, probes, signals,
 * state (re-adoption, orphans), the control socket, detaching. *STATE_OK
 * once the state is loaded: from then on it is saved at exit. */
static int start(struct zcfsd *d, bool foreground, bool *state_ok)
{
	int r = make_state_dir(d);

	if (r < 0)
		return r;
	r = zcfsd_fusectl_ensure();
	if (r < 0)
		log_warn("event=fusectl-unavailable error=%s effect=\"no connection aborts; stops fall back to SIGKILL\"",
			 strerror(-r));
	d->ncpus = zcfsd_possible_cpus();
	d->serve_can_resume = zcfsd_serve_has_option(d->serve_bin, "--resume");
	d->serve_can_signal_ready = zcfsd_serve_has_option(d->serve_bin, "--ready-fd");
	d->serve_can_standby = zcfsd_serve_has_option(d->serve_bin, "--standby-fd");
	d->started_at = zcfsd_wall();
	r = zcfsd_loop_open(&d->loop);
	if (r == 0)
		r = setup_signals(d);
	if (r < 0) {
		log_err("event=setup-failed error=%m");
		return r;
	}
	r = zcfsd_state_load(d);
	if (r < 0) {
		log_err("event=state-load-failed error=%s", strerror(-r));
		return r;
	}
	*state_ok = true;
	zcfsd_size_readopt(d);
	zcfsd_readopt(d);
	zcfsd_clean_orphans(d);
	r = zcfsd_control_listen(d, zcfsd_dispatch);
	if (r < 0) {
		log_err("event=listen-failed socket=%s error=%s", d->socket_path, strerror(-r));
		return r;
	}
	if (!foreground && !getenv("ZCFSD_UPGRADED") && (r = detach()) < 0)
		return r;
	(void)unsetenv("ZCFSD_UPGRADED");
	return 0;
}

/* Metrics (after detaching; a failure leaves the volumes serving), the
 * ready line, and READY=1: re-adoption is done and the socket listens,
 * so units ordered after zcfsd (the volume plugin, kubelet, Podman) may
 * start. MAINPID: we may have detached. */
static void announce_ready(struct zcfsd *d)
{
	char ready[48];
	int r = zcfsd_metrics_start(d);

	if (r < 0)
		log_err("event=metrics-failed socket=%s error=%s", d->policy->metrics_listen, strerror(-r));
	log_info("event=ready pid=%d socket=%s state_dir=%s policy=%s tenants=%zu serve=%s cpus=%u default_pinned=%llu resume=%s standby=%s server_scopes=%s",
		 (int)getpid(), d->socket_path, d->state_dir, d->policy_path, d->policy->n_tenants,
		 d->serve_bin, d->ncpus, (unsigned long long)uring_default_pinned_bytes(d->ncpus),
		 d->serve_can_resume ? "yes" : "no", d->serve_can_standby ? "yes" : "no",
		 zcfsd_scope_wanted(d) ? "yes" : "no");
	snprintf(ready, sizeof(ready), "READY=1\nMAINPID=%d\n", (int)getpid());
	notify_status(d, ready);
}

/* The way out, STATUS so far: servers keep running (the next zcfsd
 * re-adopts them), an upgrade re-execs. The exit status. */
static int finish(struct zcfsd *d, int status, bool state_ok, char **argv)
{
	bool upgrading = status == 0 && zcfsd_upgrade_due(d);

	zcfsd_metrics_stop(d);
	zcfsd_scope_done(d);
	if (upgrading)
		zcfsd_control_flush(d);
	zcfsd_control_free(d);
	if (upgrading) {
		(void)sd_notify(0, "RELOADING=1\nSTATUS=upgrading: re-executing zcfsd");
	}
	if (d->listen_fd >= 0 && !upgrading) {
		(void)unlink(d->socket_path);
		safe_close(d->listen_fd);
	}
	if (state_ok && zcfsd_state_save(d) < 0)
		log_err("event=state-save-failed");
	while (d->volumes) {
		struct zcfsd_volume *v = d->volumes;
		d->volumes = v->next;
		/* Ids stay registered: the next zcfsd adopts the broker. */
		zcfsd_broker_free(v->broker);
		zcfsd_lifecycle_release(d, v);
		zcfsd_volume_free(v);
	}
	policy_free(d->policy);
	zcfsd_unwatch(d, &d->signal_watch);
	safe_close(d->signal_fd);
	if (upgrading && zcfsd_upgrade_exec(d, argv) < 0)
		status = 1;
	zcfsd_upgrade_free(d);
	zcfsd_loop_close(&d->loop);
	log_info("event=exit status=%d", status);
	return status;
}

int main(int argc, char **argv)
{
	struct zcfsd d = { .listen_fd = -1, .signal_fd = -1, .loop = { .epoll_fd = -1 },
			   .state_dir = "/var/lib/zcfs" };
	_cleanup_free_ char *serve = NULL;
	const char *socket_arg = NULL;
	bool foreground = false, state_ok = false;
	int r;

	r = parse_options(argc, argv, &d, &socket_arg, &foreground);
	if (r < 0 && ((!d.scopes && zcfsd_scope_init(&d, "auto") < 0) ||
		      zcfsd_upgrade_init(&d, &upgrade_ops) < 0))
		r = 1;
	if (r >= 0) {
		zcfsd_scope_done(&d);
		return r;
	}
	log_set_ident("zcfsd");
	d.socket_path = zcfs_socket_path(socket_arg);
	if (!d.serve_bin) {
		serve = default_serve_bin();
		d.serve_bin = serve;
	}
	if (load_policy(&d) < 0) {
		zcfsd_upgrade_free(&d);
		zcfsd_scope_done(&d);
		return 2;
	}
	if (start(&d, foreground, &state_ok) < 0)
		return finish(&d, 1, state_ok, argv);
	announce_ready(&d);
	r = run(&d);
	if (r < 0) {
		log_err("event=loop-failed error=%s", strerror(-r));
		return finish(&d, 1, state_ok, argv);
	}
	return finish(&d, 0, state_ok, argv);
}
