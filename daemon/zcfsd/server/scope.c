/* Every volume server in a transient systemd scope of its own
 * (zcfs-serve-PID.scope in system-zcfs.slice), so that stopping,
 * restarting or a crash of zcfsd.service leaves the servers and their
 * mounts alone while the unit keeps the default KillMode=control-group
 * (KillMode=process would do the same with a systemd warning for every
 * server at every restart; the fd store would keep the connections but
 * not the servers). The same keeps the servers of a zcfsd pod alive when
 * the pod goes (--server-scopes=systemd: the host's systemd, reached
 * through a hostPath /run/systemd, moves them out of the pod's cgroup,
 * which the container runtime kills whole). The request goes to
 * systemd's private bus socket (root only; no dbus-daemon needed) with a
 * bounded wait. With --server-scopes=auto (the default) only a zcfsd that
 * is a systemd service ($INVOCATION_ID set) asks; off: nothing is asked. */
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include "common/log.h"
#include "server_int.h"

#define SCOPE_SLICE "system-zcfs.slice"
#define SCOPE_BUS "unix:path=/run/systemd/private"
#define SCOPE_TIMEOUT_USEC (2 * 1000 * 1000)

/* d->scopes: the mode, the bus while it works, whether its failure was said. */
struct zcfsd_scopes {
	enum zcfsd_scope_mode mode;
	sd_bus *bus;
	bool warned;
};

int zcfsd_scope_init(struct zcfsd *d, const char *name)
{
	enum zcfsd_scope_mode mode;

	if (!strcmp(name, "auto"))
		mode = ZCFSD_SCOPES_AUTO;
	else if (!strcmp(name, "systemd"))
		mode = ZCFSD_SCOPES_SYSTEMD;
	else if (!strcmp(name, "off"))
		mode = ZCFSD_SCOPES_OFF;
	else
		return -EINVAL;
	if (!d->scopes && !(d->scopes = calloc(1, sizeof(*d->scopes))))
		return -ENOMEM;
	d->scopes->mode = mode;
	return 0;
}

bool zcfsd_scope_wanted(struct zcfsd *d)
{
	const char *id = getenv("INVOCATION_ID");

	if (!d->scopes)
		return false;
	if (d->scopes->mode != ZCFSD_SCOPES_AUTO)
		return d->scopes->mode == ZCFSD_SCOPES_SYSTEMD;
	return id && *id && access("/run/systemd/private", F_OK) == 0;
}

static int scope_bus(struct zcfsd_scopes *s, sd_bus **ret)
{
	sd_bus *b = NULL;
	int r;

	if (s->bus && sd_bus_is_open(s->bus) > 0) {
		*ret = s->bus;
		return 0;
	}
	s->bus = sd_bus_flush_close_unref(s->bus);
	r = sd_bus_new(&b);
	if (r < 0)
		return r;
	r = sd_bus_set_address(b, SCOPE_BUS);
	if (r >= 0)
		r = sd_bus_start(b);
	if (r < 0) {
		sd_bus_unref(b);
		return r;
	}
	*ret = s->bus = b;
	return 0;
}

int zcfsd_scope_move(struct zcfsd *d, pid_t pid, const char *volume)
{
	struct zcfsd_scopes *s = d->scopes;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	char name[64], desc[200];
	sd_bus *b;
	int r;

	if (!zcfsd_scope_wanted(d))
		return 0;
	snprintf(name, sizeof(name), "zcfs-serve-%d.scope", (int)pid);
	snprintf(desc, sizeof(desc), "zcfs server of volume %s", volume);
	r = scope_bus(s, &b);
	if (r < 0)
		goto out;
	r = sd_bus_message_new_method_call(b, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
					   "org.freedesktop.systemd1.Manager", "StartTransientUnit");
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", name, "fail");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sv)");
	if (r >= 0)
		r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "Description", "s", desc, "Slice", "s",
					  SCOPE_SLICE, "CollectMode", "s", "inactive-or-failed", "PIDs", "au", 1,
					  (uint32_t)pid);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r >= 0)
		r = sd_bus_call(b, m, SCOPE_TIMEOUT_USEC, &err, &reply);
out:
	if (r < 0) {
		/* The server stays in zcfsd's cgroup. Asked for explicitly
		 * (a pod), that is every time an error: the volume now dies
		 * with the pod. Else once per zcfsd. */
		if (s->mode == ZCFSD_SCOPES_SYSTEMD)
			log_err("event=scope-failed volume=%s pid=%d error=\"%s\" effect=\"this server stays in zcfsd's "
				"cgroup: it stops when zcfsd's pod or unit does\"", volume, (int)pid,
				sd_bus_error_is_set(&err) ? err.message : strerror(-r));
		else if (!s->warned)
			log_warn("event=scope-failed volume=%s pid=%d error=\"%s\" effect=\"servers stay in zcfsd.service: "
				 "a restart of the unit stops them\"", volume, (int)pid,
				 sd_bus_error_is_set(&err) ? err.message : strerror(-r));
		s->warned = true;
		s->bus = sd_bus_flush_close_unref(s->bus);
	} else {
		log_debug("event=scope volume=%s pid=%d unit=%s", volume, (int)pid, name);
	}
	sd_bus_error_free(&err);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	return r < 0 ? r : 0;
}

void zcfsd_scope_done(struct zcfsd *d)
{
	if (!d->scopes)
		return;
	sd_bus_flush_close_unref(d->scopes->bus);
	free(d->scopes);
	d->scopes = NULL;
}
