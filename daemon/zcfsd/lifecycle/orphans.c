/* Crash consistency of publish: zcfsd mounts a target, starts its server
 * and only then records both in state.json. Killed in between, it leaves
 * a fuse.zcfs mount (and maybe a server holding it) that no state knows:
 * the volume reads `created`, the server's pinned memory is outside every
 * budget, and a publish would stack a second mount on the target. So at
 * start-up, after re-adoption, every fuse.zcfs mount that zcfsd made (the
 * source "zcfs:ID" it gives its mounts, under a target prefix its policy
 * allows) and that no published volume owns (its connection) is undone:
 * the servers serving that volume's storage that no volume owns are
 * killed, every mount of the connection is lazily unmounted and the
 * connection aborted. The volume then really is what state says. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "common/mountinfo.h"
#include "common/parse.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "lifecycle.h"

static bool under_allowed_prefix(const struct zcfsd *d, const char *path)
{
	for (size_t t = 0; t < d->policy->n_tenants; t++) {
		const struct policy_tenant *ten = &d->policy->tenants[t];

		for (size_t i = 0; i < ten->n_prefixes; i++) {
			size_t n = strlen(ten->prefixes[i]);

			while (n > 1 && ten->prefixes[i][n - 1] == '/')
				n--;
			if (!strncmp(path, ten->prefixes[i], n) && (path[n] == '/' || path[n] == '\0'))
				return true;
		}
	}
	return false;
}

static bool conn_owned(const struct zcfsd *d, unsigned conn)
{
	for (const struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (v->n_targets && v->conn == conn)
			return true;
	return false;
}

static bool pid_owned(const struct zcfsd *d, pid_t pid)
{
	for (const struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (v->srv.pid == pid || (v->ring_holder && v->holder.pid == pid))
			return true;
	return false;
}

/* argv of PID: true if it is zcfs-serve on an inherited connection whose
 * SOURCE (last argument) is one of the storage dirs of volume ID. */
static bool serves_volume(const struct zcfsd *d, pid_t pid, const char *id)
{
	char path[64], buf[8192], *last = NULL;
	_cleanup_close_ int fd = -1;
	bool fd_arg = false;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[n] = '\0';
	if (!strstr(buf, "zcfs-serve"))
		return false;
	for (char *a = buf; a < buf + n; a += strlen(a) + 1) {
		if (!strcmp(a, "--fd=3"))
			fd_arg = true;
		last = a;
	}
	if (!fd_arg || !last)
		return false;
	for (size_t t = 0; t < d->policy->n_tenants; t++) {
		const char *root = d->policy->tenants[t].storage_root;
		size_t rl = strlen(root);

		if (!strncmp(last, root, rl) && last[rl] == '/' && !strcmp(last + rl + 1, id))
			return true;
	}
	return false;
}

static unsigned kill_servers(const struct zcfsd *d, const char *id)
{
	_cleanup_closedir_ DIR *proc = opendir("/proc");
	struct dirent *de;
	unsigned killed = 0;

	if (!proc)
		return 0;
	while ((de = readdir(proc))) {
		uint64_t n;
		pid_t pid;
		int pfd;

		if (parse_u64(de->d_name, 1, INT32_MAX, &n) < 0)
			continue;
		pid = (pid_t)n;
		if (pid_owned(d, pid) || !serves_volume(d, pid, id))
			continue;
		pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		/* Checked again through the pidfd: the pid cannot be reused now. */
		if (pfd >= 0 && serves_volume(d, pid, id) &&
		    syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) == 0) {
			log_warn("event=orphan-server-killed volume=%s pid=%d", id, (int)pid);
			killed++;
		}
		if (pfd >= 0)
			close(pfd);
	}
	return killed;
}

struct orphan_walk {
	struct zcfsd *d;
	unsigned conns[64];
	size_t n;
};

/* A mount zcfsd made (fuse.zcfs of source zcfs:ID under an allowed
 * prefix) whose connection no volume owns: its servers killed, its
 * connection noted for the unmount. */
static int orphan_line(const struct mountinfo_line *l, void *arg)
{
	struct orphan_walk *w = arg;

	if (strcmp(l->fstype, "fuse.zcfs") || strncmp(l->source, "zcfs:", 5) || l->major != 0 ||
	    !under_allowed_prefix(w->d, l->mnt) || conn_owned(w->d, l->minor))
		return 0;
	log_warn("event=orphan-mount volume=%s target=%s conn=%u reason=\"not in state (zcfsd "
		 "stopped during a publish?)\" action=cleanup", l->source + 5, l->mnt, l->minor);
	(void)kill_servers(w->d, l->source + 5);
	w->conns[w->n++] = l->minor;
	return w->n == ARRAY_SIZE(w->conns);
}

void zcfsd_clean_orphans(struct zcfsd *d)
{
	struct orphan_walk w = { .d = d };
	const unsigned *conns = w.conns;

	/* Collect first: unmounting changes the file being read. */
	if (mountinfo_each(orphan_line, &w) < 0)
		return;
	for (size_t i = 0; i < w.n; i++) {
		int pin;
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen |= conns[j] == conns[i];
		if (seen)
			continue;
		pin = zcfsd_conn_pin(conns[i], NULL);	/* the number stays the orphan's */
		if (zcfsd_unmount_conn(conns[i], true, NULL) < 0)
			log_err("event=orphan-unmount-failed conn=%u", conns[i]);
		if (pin >= 0)
			(void)zcfsd_conn_abort(conns[i]);
		pin = safe_close(pin);
	}
}
