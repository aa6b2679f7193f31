/* Tables for `zcfsctl status`: tenants with their budgets, then volumes
 * with targets, data path (devfuse or uring, +passthrough), pinned bytes,
 * pid, uptime and restarts. */
#include <string.h>
#include "ctl_status.h"

static long long geti(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) ? (long long)json_object_get_int64(v) : 0;
}

static const char *gets_(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "-";
}

const char *ctl_human_bytes(long long b, char *buf, size_t len)
{
	static const char units[] = "BKMGT";
	double x = (double)b;
	int u = 0;

	while (x >= 1024 && u < 4) {
		x /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lld", b);
	else
		snprintf(buf, len, "%.1f%c", x, units[u]);
	return buf;
}

static void targets_text(json_object *v, char *buf, size_t len)
{
	json_object *t;
	size_t off = 0;

	buf[0] = '\0';
	if (!json_object_object_get_ex(v, "targets", &t) || json_object_array_length(t) == 0) {
		snprintf(buf, len, "-");
		return;
	}
	for (size_t i = 0; i < json_object_array_length(t) && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "",
					json_object_get_string(json_object_array_get_idx(t, i)));
}

void ctl_print_volume(FILE *out, json_object *v)
{
	char targets[1024], pinned[32], size[32];
	const char *eff = gets_(v, "data_path_effective");

	targets_text(v, targets, sizeof(targets));
	if (geti(v, "size") > 0)
		ctl_human_bytes(geti(v, "size"), size, sizeof(size));
	else
		snprintf(size, sizeof(size), "-");
	fprintf(out, "%-20s %-12s %-10s %-19s %8s %8s %7lld %8lld %8lld  %s\n", gets_(v, "id"),
		gets_(v, "tenant"), gets_(v, "state"), strcmp(eff, "-") ? eff : gets_(v, "data_path"),
		size, ctl_human_bytes(geti(v, "pinned"), pinned, sizeof(pinned)), geti(v, "pid"),
		geti(v, "uptime_s"), geti(v, "restarts"), targets);
}

void ctl_print_status(FILE *out, json_object *r)
{
	json_object *d, *ts, *vs;
	char b1[32], b2[32], b3[32];

	if (json_object_object_get_ex(r, "daemon", &d))
		fprintf(out, "zcfsd pid %lld, up %llds, policy %s, pinned bytes from %s\n\n",
			geti(d, "pid"), geti(d, "uptime_s"), gets_(d, "policy"),
			gets_(d, "pinned_source"));
	fprintf(out, "%-16s %8s %10s %10s %10s %9s\n", "TENANT", "UID", "BUDGET", "USED", "FREE",
		"VOLUMES");
	if (json_object_object_get_ex(r, "tenants", &ts))
		for (size_t i = 0; i < json_object_array_length(ts); i++) {
			json_object *t = json_object_array_get_idx(ts, i);
			fprintf(out, "%-16s %8lld %10s %10s %10s %4lld/%-4lld\n", gets_(t, "name"),
				geti(t, "uid"),
				ctl_human_bytes(geti(t, "memlock_budget"), b1, sizeof(b1)),
				ctl_human_bytes(geti(t, "memlock_used"), b2, sizeof(b2)),
				ctl_human_bytes(geti(t, "memlock_free"), b3, sizeof(b3)),
				geti(t, "volumes"), geti(t, "max_volumes"));
		}
	fprintf(out, "\n%-20s %-12s %-10s %-19s %8s %8s %7s %8s %8s  %s\n", "VOLUME", "TENANT", "STATE",
		"PATH", "SIZE", "PINNED", "PID", "UPTIME", "RESTARTS", "TARGETS");
	if (json_object_object_get_ex(r, "volumes", &vs))
		for (size_t i = 0; i < json_object_array_length(vs); i++)
			ctl_print_volume(out, json_object_array_get_idx(vs, i));
}
