/* Strict policy loader: unknown fields, wrong types and bad values are all
 * reported (not just the first), each as "FILE: FIELD: message", so an
 * operator fixes a policy in one pass. */
#include <fcntl.h>
#include <arpa/inet.h>
#include <grp.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "parse.h"
#include "names.h"
#include "openat2.h"
#include "policy.h"

struct loader {
	struct policy *p;
	struct policy_errors *errs;
	const char *file;
	char *admin_file, *defaults_file, *metrics_file;
	bool oom;
};

static void err(struct loader *ld, const char *field, const char *fmt, ...) _printf_(3, 4);
static void err(struct loader *ld, const char *field, const char *fmt, ...)
{
	char msg[512], *line, **n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (asprintf(&line, "%s: %s: %s", ld->file, field, msg) < 0) {
		ld->oom = true;
		return;
	}
	n = realloc(ld->errs->msgs, (ld->errs->n + 1) * sizeof(*n));
	if (!n) {
		free(line);
		ld->oom = true;
		return;
	}
	n[ld->errs->n++] = line;
	ld->errs->msgs = n;
}

void policy_errors_clear(struct policy_errors *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->msgs[i]);
	free(e->msgs);
	e->msgs = NULL;
	e->n = 0;
}

const char *policy_transport_name(enum policy_transport t)
{
	switch (t) {
	case POLICY_TRANSPORT_DEVFUSE: return "devfuse";
	case POLICY_TRANSPORT_URING: return "uring";
	default: return "auto";
	}
}

const char *policy_size_enforcement_name(enum policy_size_enforcement s)
{
	switch (s) {
	case POLICY_SIZE_KERNEL: return "kernel";
	case POLICY_SIZE_SERVER: return "server";
	default: return "auto";
	}
}

/* Reports every key of OBJ not in ALLOWED. */
static void check_keys(struct loader *ld, json_object *obj, const char *where,
		       const char *const *allowed)
{
	json_object_object_foreach(obj, key, val) {
		(void)val;
		if (!strv_contains(allowed, key)) {
			char f[256];
			snprintf(f, sizeof(f), "%s%s%s", where, *where ? "." : "", key);
			err(ld, f, "unknown field");
		}
	}
}

static bool get_u64(struct loader *ld, json_object *v, const char *field, uint64_t min,
		    uint64_t max, bool size, uint64_t *ret)
{
	uint64_t x;

	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);
		if (i < 0 || (uint64_t)i < min || (uint64_t)i > max) {
			err(ld, field, "%lld is outside %llu..%llu", (long long)i,
			    (unsigned long long)min, (unsigned long long)max);
			return false;
		}
		*ret = (uint64_t)i;
		return true;
	}
	if (size && json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		int r = parse_size(s, min, max, &x);
		if (r < 0) {
			err(ld, field, r == -ERANGE ? "'%s' is outside the allowed range" :
				       "'%s' is not a size (bytes, or a number with K, M or G)", s);
			return false;
		}
		*ret = x;
		return true;
	}
	err(ld, field, size ? "expected a number of bytes or a size string like \"64M\"" :
			      "expected an integer");
	return false;
}

static bool get_bool(struct loader *ld, json_object *v, const char *field, bool *ret)
{
	if (!json_object_is_type(v, json_type_boolean)) {
		err(ld, field, "expected true or false");
		return false;
	}
	*ret = json_object_get_boolean(v);
	return true;
}

static char *get_str(struct loader *ld, json_object *v, const char *field)
{
	char *s;

	if (!json_object_is_type(v, json_type_string)) {
		err(ld, field, "expected a string");
		return NULL;
	}
	s = strdup(json_object_get_string(v));
	if (!s)
		ld->oom = true;
	return s;
}

static char *get_abs_path(struct loader *ld, json_object *v, const char *field)
{
	char *s = get_str(ld, v, field);

	if (s && !path_is_normalized_absolute(s)) {
		err(ld, field, "'%s' is not a normalized absolute path", s);
		free(s);
		return NULL;
	}
	return s;
}

static void parse_transport(struct loader *ld, json_object *v, const char *field,
			    enum policy_transport *ret)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string)) {
		err(ld, field, "expected \"auto\", \"devfuse\" or \"uring\"");
		return;
	}
	s = json_object_get_string(v);
	if (!strcmp(s, "auto"))
		*ret = POLICY_TRANSPORT_AUTO;
	else if (!strcmp(s, "devfuse"))
		*ret = POLICY_TRANSPORT_DEVFUSE;
	else if (!strcmp(s, "uring"))
		*ret = POLICY_TRANSPORT_URING;
	else
		err(ld, field, "'%s' is not auto, devfuse or uring", s);
}

static void parse_size_enforcement(struct loader *ld, json_object *v, const char *field,
				   enum policy_size_enforcement *ret)
{
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

	if (s && !strcmp(s, "auto"))
		*ret = POLICY_SIZE_AUTO;
	else if (s && !strcmp(s, "kernel"))
		*ret = POLICY_SIZE_KERNEL;
	else if (s && !strcmp(s, "server"))
		*ret = POLICY_SIZE_SERVER;
	else
		err(ld, field, "expected \"auto\", \"kernel\" or \"server\"");
}

static void parse_defaults(struct loader *ld, json_object *d)
{
	static const char *const keys[] = { "queue_depth", "max_write", "transport", "dirty_limit",
					    "stall_timeout_ms", NULL };
	json_object *v;
	uint64_t x;

	if (!json_object_is_type(d, json_type_object)) {
		err(ld, "defaults", "expected an object");
		return;
	}
	check_keys(ld, d, "defaults", keys);
	if (json_object_object_get_ex(d, "queue_depth", &v) &&
	    get_u64(ld, v, "defaults.queue_depth", 1, 1024, false, &x))
		ld->p->queue_depth = (uint32_t)x;
	if (json_object_object_get_ex(d, "max_write", &v) &&
	    get_u64(ld, v, "defaults.max_write", 4096, 16u << 20, true, &x)) {
		if (x % 4096)
			err(ld, "defaults.max_write", "%llu is not a multiple of 4096",
			    (unsigned long long)x);
		else
			ld->p->max_write = (uint32_t)x;
	}
	if (json_object_object_get_ex(d, "transport", &v))
		parse_transport(ld, v, "defaults.transport", &ld->p->transport);
	if (json_object_object_get_ex(d, "dirty_limit", &v) &&
	    get_u64(ld, v, "defaults.dirty_limit", 0, 1ULL << 50, true, &x))
		ld->p->dirty_limit = x;
	if (json_object_object_get_ex(d, "stall_timeout_ms", &v) &&
	    get_u64(ld, v, "defaults.stall_timeout_ms", 0, 3600u * 1000, false, &x))
		ld->p->stall_timeout_ms = (uint32_t)x;
}

int policy_parse_tcp_listen(const char *s, char *host, size_t hostlen, unsigned *port)
{
	const char *colon;
	unsigned char buf[sizeof(struct in6_addr)];
	uint64_t p;
	size_t n;
	bool v6 = s[0] == '[';

	colon = v6 ? strstr(s, "]:") : strrchr(s, ':');
	if (!colon)
		return -EINVAL;
	n = (size_t)(colon - s) - (v6 ? 1 : 0);
	if (n == 0 || n >= hostlen)
		return -EINVAL;
	memcpy(host, s + (v6 ? 1 : 0), n);
	host[n] = '\0';
	if (parse_u64(colon + (v6 ? 2 : 1), 1, 65535, &p) < 0 ||
	    inet_pton(v6 ? AF_INET6 : AF_INET, host, buf) != 1)
		return -EINVAL;
	*port = (unsigned)p;
	return v6 ? AF_INET6 : AF_INET;
}

static void parse_ids(struct loader *ld, json_object *a, const char *where, uint32_t **ret, size_t *n);

static void parse_metrics(struct loader *ld, json_object *m)
{
	static const char *const keys[] = { "listen", "full_view_uids", "full_view_gids", NULL };
	json_object *v;

	if (!json_object_is_type(m, json_type_object)) {
		err(ld, "metrics", "expected an object");
		return;
	}
	check_keys(ld, m, "metrics", keys);
	if (json_object_object_get_ex(m, "listen", &v)) {
		const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
		char host[64];
		unsigned port;
		/* a unix socket path, or IP:PORT / [IPv6]:PORT for Prometheus */
		if (s[0] != '/' && policy_parse_tcp_listen(s, host, sizeof(host), &port) >= 0)
			ld->p->metrics_listen = strdup(s);
		else if (s[0] != '/' && *s)
			err(ld, "metrics.listen", "'%s' is neither an absolute socket path nor IP:PORT / [IPv6]:PORT", s);
		else
			ld->p->metrics_listen = get_abs_path(ld, v, "metrics.listen");
	}
	if (json_object_object_get_ex(m, "full_view_uids", &v))
		parse_ids(ld, v, "metrics.full_view_uids", (uint32_t **)&ld->p->metrics_uids,
			  &ld->p->n_metrics_uids);
	if (json_object_object_get_ex(m, "full_view_gids", &v))
		parse_ids(ld, v, "metrics.full_view_gids", (uint32_t **)&ld->p->metrics_gids,
			  &ld->p->n_metrics_gids);
}

static void parse_data_paths(struct loader *ld, json_object *d, const char *where,
			     struct policy_tenant *t)
{
	static const char *const keys[] = { "io_uring", "zero_copy", "passthrough", "ring_holder", NULL };
	json_object *v;
	char f[160];

	if (!json_object_is_type(d, json_type_object)) {
		err(ld, where, "expected an object");
		return;
	}
	check_keys(ld, d, where, keys);
	snprintf(f, sizeof(f), "%.120s.io_uring", where);
	if (json_object_object_get_ex(d, "io_uring", &v))
		get_bool(ld, v, f, &t->io_uring);
	snprintf(f, sizeof(f), "%.120s.zero_copy", where);
	if (json_object_object_get_ex(d, "zero_copy", &v))
		get_bool(ld, v, f, &t->zero_copy);
	snprintf(f, sizeof(f), "%.120s.passthrough", where);
	if (json_object_object_get_ex(d, "passthrough", &v))
		get_bool(ld, v, f, &t->passthrough);
	snprintf(f, sizeof(f), "%.120s.ring_holder", where);
	if (json_object_object_get_ex(d, "ring_holder", &v))
		get_bool(ld, v, f, &t->ring_holder);
	if (t->zero_copy && !t->io_uring)
		err(ld, where, "zero_copy needs io_uring");
	if (t->ring_holder && !t->io_uring)
		err(ld, where, "ring_holder needs io_uring");
}

/* volume_root: {"uid": N, "gid": N, "mode": "0770", "setgid": true}.
 * mode is an octal string (a JSON number 770 would be read as decimal);
 * the set-gid bit comes from setgid alone, so the two cannot disagree. */
static void parse_volume_root(struct loader *ld, json_object *o, const char *where,
			      struct policy_volume_root *r)
{
	static const char *const keys[] = { "uid", "gid", "mode", "setgid", NULL };
	const char *s;
	json_object *v;
	bool setgid = false;
	uint64_t x;
	char f[160];

	if (!json_object_is_type(o, json_type_object)) {
		err(ld, where, "expected an object");
		return;
	}
	check_keys(ld, o, where, keys);
	snprintf(f, sizeof(f), "%.120s.uid", where);
	if (json_object_object_get_ex(o, "uid", &v) && get_u64(ld, v, f, 0, 0xfffffffeu, false, &x)) {
		r->has_uid = true;
		r->uid = (uid_t)x;
	}
	snprintf(f, sizeof(f), "%.120s.gid", where);
	if (json_object_object_get_ex(o, "gid", &v) && get_u64(ld, v, f, 0, 0xfffffffeu, false, &x)) {
		r->has_gid = true;
		r->gid = (gid_t)x;
	}
	snprintf(f, sizeof(f), "%.120s.setgid", where);
	if (json_object_object_get_ex(o, "setgid", &v))
		get_bool(ld, v, f, &setgid);
	snprintf(f, sizeof(f), "%.120s.mode", where);
	if (json_object_object_get_ex(o, "mode", &v)) {
		s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
		x = 0;
		for (const char *c = s; *c >= '0' && *c <= '7'; c++)
			x = x * 8 + (uint64_t)(*c - '0');
		if (!*s || strlen(s) > 5 || strspn(s, "01234567") != strlen(s) || x > 01777)
			err(ld, f, "expected permission bits as an octal string from \"0000\" to \"1777\" "
			    "(set-gid: \"setgid\": true)");
		else {
			r->has_mode = true;
			r->mode = (mode_t)x;
		}
	}
	if (setgid) {
		if (!r->has_mode)
			r->mode = 0700;	/* a new volume root's own mode */
		r->has_mode = true;
		r->mode |= S_ISGID;
	}
}

static void parse_prefixes(struct loader *ld, json_object *a, const char *where,
			   struct policy_tenant *t)
{
	size_t i, n;

	if (!json_object_is_type(a, json_type_array)) {
		err(ld, where, "expected an array of absolute paths");
		return;
	}
	n = json_object_array_length(a);
	t->prefixes = calloc(n ? n : 1, sizeof(char *));
	if (!t->prefixes) {
		ld->oom = true;
		return;
	}
	for (i = 0; i < n; i++) {
		char f[160];
		char *s;
		snprintf(f, sizeof(f), "%.120s[%zu]", where, i);
		s = get_abs_path(ld, json_object_array_get_idx(a, i), f);
		if (!s)
			continue;
		if (!strcmp(s, "/")) {
			err(ld, f, "\"/\" would allow mounts anywhere; name a directory");
			free(s);
			continue;
		}
		t->prefixes[t->n_prefixes++] = s;
	}
	if (n == 0)
		err(ld, where, "empty: the tenant could publish nowhere");
}

_Static_assert(sizeof(uid_t) == sizeof(uint32_t) && sizeof(gid_t) == sizeof(uint32_t), "ids are 32-bit");

/* An array of numeric ids (uids or gids) into *RET and *N. */
static void parse_ids(struct loader *ld, json_object *a, const char *where, uint32_t **ret, size_t *n)
{
	size_t len;

	if (!json_object_is_type(a, json_type_array)) {
		err(ld, where, "expected an array of numeric ids");
		return;
	}
	len = json_object_array_length(a);
	*ret = calloc(len ? len : 1, sizeof(**ret));
	if (!*ret) {
		ld->oom = true;
		return;
	}
	for (size_t i = 0; i < len; i++) {
		char f[160];
		uint64_t x;
		snprintf(f, sizeof(f), "%.120s[%zu]", where, i);
		if (get_u64(ld, json_object_array_get_idx(a, i), f, 0, 0xfffffffeu, false, &x))
			(*ret)[(*n)++] = (uint32_t)x;
	}
}

static void tenant_clear(struct policy_tenant *t)
{
	free(t->admin_uids);
	free(t->admin_gids);
	free(t->name);
	free(t->storage_root);
	for (size_t i = 0; i < t->n_prefixes; i++)
		free(t->prefixes[i]);
	free(t->prefixes);
	free(t->file);
}

static void parse_tenant(struct loader *ld, json_object *o, size_t idx)
{
	static const char *const keys[] = { "name", "uid", "gid", "memlock_budget", "max_volumes",
					    "default_quota", "size_enforcement", "storage_root",
					    "allowed_target_prefixes", "data_paths", "admin_uids",
					    "admin_gids", "volume_root", NULL };
	static const char *const required[] = { "name", "uid", "gid", "storage_root",
						"allowed_target_prefixes", NULL };
	struct policy_tenant t = { .max_volumes = 64 }, *nt;
	char where[64], f[160];
	json_object *v;
	uint64_t x;
	size_t before = ld->errs->n;

	snprintf(where, sizeof(where), "tenants[%zu]", idx);
	if (!json_object_is_type(o, json_type_object)) {
		err(ld, where, "expected an object");
		return;
	}
	check_keys(ld, o, where, keys);
	for (const char *const *k = required; *k; k++)
		if (!json_object_object_get_ex(o, *k, NULL)) {
			snprintf(f, sizeof(f), "%s.%s", where, *k);
			err(ld, f, "required field missing");
		}
#define F(name) (snprintf(f, sizeof(f), "%s.%s", where, name), f)
	if (json_object_object_get_ex(o, "name", &v)) {
		t.name = get_str(ld, v, F("name"));
		if (t.name && !name_is_valid_id(t.name))
			err(ld, F("name"), "'%s' does not match [A-Za-z0-9][A-Za-z0-9._-]{0,127}", t.name);
	}
	/* uid/gid 0 would hand the tenant root's files and budgets. */
	if (json_object_object_get_ex(o, "uid", &v) && get_u64(ld, v, F("uid"), 1, 0xfffffffeu, false, &x))
		t.uid = (uid_t)x;
	if (json_object_object_get_ex(o, "gid", &v) && get_u64(ld, v, F("gid"), 1, 0xfffffffeu, false, &x))
		t.gid = (gid_t)x;
	if (json_object_object_get_ex(o, "memlock_budget", &v))
		get_u64(ld, v, F("memlock_budget"), 0, 1ULL << 40, true, &t.memlock_budget);
	if (json_object_object_get_ex(o, "max_volumes", &v) &&
	    get_u64(ld, v, F("max_volumes"), 0, 100000, false, &x))
		t.max_volumes = (uint32_t)x;
	if (json_object_object_get_ex(o, "default_quota", &v))
		get_u64(ld, v, F("default_quota"), 0, 1ULL << 50, true, &t.default_quota);
	if (json_object_object_get_ex(o, "size_enforcement", &v))
		parse_size_enforcement(ld, v, F("size_enforcement"), &t.size_enforcement);
	if (json_object_object_get_ex(o, "storage_root", &v)) {
		t.storage_root = get_abs_path(ld, v, F("storage_root"));
		if (t.storage_root && !strcmp(t.storage_root, "/")) {
			err(ld, F("storage_root"), "must not be \"/\"");
		}
	}
	if (json_object_object_get_ex(o, "allowed_target_prefixes", &v))
		parse_prefixes(ld, v, F("allowed_target_prefixes"), &t);
	if (json_object_object_get_ex(o, "data_paths", &v))
		parse_data_paths(ld, v, F("data_paths"), &t);
	if (json_object_object_get_ex(o, "admin_uids", &v))
		parse_ids(ld, v, F("admin_uids"), (uint32_t **)&t.admin_uids, &t.n_admin_uids);
	if (json_object_object_get_ex(o, "admin_gids", &v))
		parse_ids(ld, v, F("admin_gids"), (uint32_t **)&t.admin_gids, &t.n_admin_gids);
	if (json_object_object_get_ex(o, "volume_root", &v))
		parse_volume_root(ld, v, F("volume_root"), &t.volume_root);
#undef F
	t.file = strdup(ld->file);
	if (ld->errs->n != before || ld->oom || !t.file) {
		tenant_clear(&t);
		return;
	}
	nt = realloc(ld->p->tenants, (ld->p->n_tenants + 1) * sizeof(*nt));
	if (!nt) {
		tenant_clear(&t);
		ld->oom = true;
		return;
	}
	ld->p->tenants = nt;
	nt[ld->p->n_tenants++] = t;
}

/* A global section may be set by one file only: merging two would make
 * the winner depend on file names. */
static bool claim(struct loader *ld, char **owner, const char *field)
{
	if (*owner) {
		err(ld, field, "already set in %s", *owner);
		return false;
	}
	*owner = strdup(ld->file);
	if (!*owner)
		ld->oom = true;
	return *owner != NULL;
}

static void parse_document(struct loader *ld, const char *text)
{
	static const char *const keys[] = { "admin_group", "defaults", "metrics", "tenants", NULL };
	enum json_tokener_error jerr;
	json_object *root, *v;

	root = json_tokener_parse_verbose(text, &jerr);
	if (!root) {
		err(ld, "(document)", "not valid JSON: %s", json_tokener_error_desc(jerr));
		return;
	}
	if (!json_object_is_type(root, json_type_object)) {
		err(ld, "(document)", "expected a JSON object at the top");
		json_object_put(root);
		return;
	}
	check_keys(ld, root, "", keys);
	if (json_object_object_get_ex(root, "admin_group", &v) &&
	    claim(ld, &ld->admin_file, "admin_group"))
		ld->p->admin_group = get_str(ld, v, "admin_group");
	if (json_object_object_get_ex(root, "defaults", &v) && claim(ld, &ld->defaults_file, "defaults"))
		parse_defaults(ld, v);
	if (json_object_object_get_ex(root, "metrics", &v) && claim(ld, &ld->metrics_file, "metrics"))
		parse_metrics(ld, v);
	if (json_object_object_get_ex(root, "tenants", &v)) {
		if (!json_object_is_type(v, json_type_array)) {
			err(ld, "tenants", "expected an array");
		} else {
			for (size_t i = 0; i < json_object_array_length(v); i++)
				parse_tenant(ld, json_object_array_get_idx(v, i), i);
		}
	}
	json_object_put(root);
}

static void cross_check(struct loader *ld)
{
	struct policy *p = ld->p;

	for (size_t i = 0; i < p->n_tenants; i++)
		for (size_t j = 0; j < i; j++) {
			struct policy_tenant *a = &p->tenants[i], *b = &p->tenants[j];
			ld->file = a->file;
			if (!strcmp(a->name, b->name))
				err(ld, "tenants.name", "tenant '%s' also defined in %s", a->name, b->file);
			/* The kernel charges pinned memory per uid: a shared uid
			 * would merge the two budgets. */
			if (a->uid == b->uid)
				err(ld, "tenants.uid", "tenants '%s' and '%s' (%s) share uid %u",
				    a->name, b->name, b->file, (unsigned)a->uid);
			if (!strcmp(a->storage_root, b->storage_root))
				err(ld, "tenants.storage_root", "tenants '%s' and '%s' share %s",
				    a->name, b->name, a->storage_root);
		}
	if (p->admin_group) {
		struct group *g;
		uint64_t x;
		ld->file = ld->admin_file;
		if (parse_u64(p->admin_group, 0, 0xfffffffeu, &x) == 0) {
			p->admin_gid = (gid_t)x;
			p->has_admin_gid = true;
		} else if ((g = getgrnam(p->admin_group))) {
			p->admin_gid = g->gr_gid;
			p->has_admin_gid = true;
		} else {
			err(ld, "admin_group", "no group named '%s' on this node", p->admin_group);
		}
	}
}

/* zcfsd reads its policy in its event loop (SIGHUP, policy.reload): a
 * file is opened without blocking (O_NONBLOCK: a FIFO's open does not
 * wait for a writer), and only a regular file of at most
 * POLICY_FILE_MAX is read; a FIFO, device, socket or directory never is. */
#define POLICY_FILE_MAX (4u << 20)

static int read_fd(int fd, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -ENOTSUP;
	if (st.st_size > (off_t)POLICY_FILE_MAX)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	/* A file that grew since fstat is read up to its size then. */
	while (len < (size_t)st.st_size) {
		n = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	return 0;
}

static const char *read_error(int r)
{
	switch (r) {
	case -ENOTSUP: return "not a regular file (a FIFO, device or socket is never read)";
	case -EISDIR: return "a directory, not a file";
	case -EFBIG: return "larger than 4 MiB";
	case -ELOOP: return "a symlink (give the path it leads to)";
	case -EXDEV: return "leads outside the policy directory or to another mount";
	default: return strerror(-r);
	}
}

static int json_name_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return d->d_name[0] != '.' && n > 5 && !strcmp(d->d_name + n - 5, ".json");
}

/* FD: the open file, or -errno of its open. */
static void load_fd(struct loader *ld, const char *path, int fd)
{
	_cleanup_free_ char *text = NULL;
	int r = fd;

	ld->file = path;
	if (fd >= 0)
		r = read_fd(fd, &text);
	if (r < 0) {
		err(ld, "(file)", "cannot read: %s", read_error(r));
		return;
	}
	parse_document(ld, text);
}

/* Every *.json of the directory DFD, in name order. An entry may be a
 * symlink within the directory (a Kubernetes ConfigMap's ..data/x.json),
 * never one that leaves it or crosses into another mount. */
static void load_dir(struct loader *ld, const char *path, int dfd)
{
	struct dirent **names = NULL;
	int n, i;

	n = scandirat(dfd, ".", &names, json_name_filter, alphasort);
	if (n < 0)
		err(ld, "(directory)", "%s", strerror(errno));
	else if (n == 0)
		err(ld, "(directory)", "no *.json files");
	for (i = 0; i < n; i++) {
		_cleanup_free_ char *p = NULL;
		_cleanup_close_ int fd = -1;

		if (asprintf(&p, "%s/%s", path, names[i]->d_name) < 0) {
			ld->oom = true;
		} else {
			fd = openat2_fd(dfd, names[i]->d_name, O_RDONLY | O_NONBLOCK | O_NOCTTY,
					RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
			load_fd(ld, p, fd);
		}
		ld->file = path;
		free(names[i]);
	}
	free(names);
}

static struct policy *policy_new(void)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (p) {
		/* 0: chosen per volume by the io_uring geometry (zcfsd/budget/budget.c) */
		p->queue_depth = 0;
		p->max_write = 0;
		p->transport = POLICY_TRANSPORT_AUTO;
		p->dirty_limit = 1ULL << 30;
		p->stall_timeout_ms = 10000;
	}
	return p;
}

static int finish(struct loader *ld, struct policy **ret)
{
	if (!ld->oom)
		cross_check(ld);
	free(ld->admin_file);
	free(ld->defaults_file);
	free(ld->metrics_file);
	if (ld->oom || ld->errs->n) {
		policy_free(ld->p);
		return ld->oom ? -ENOMEM : -EINVAL;
	}
	*ret = ld->p;
	return 0;
}

int policy_load(const char *path, struct policy **ret, struct policy_errors *errs)
{
	struct loader ld = { .errs = errs, .file = path };
	_cleanup_close_ int fd = -1;
	struct stat st;

	ld.p = policy_new();
	if (!ld.p)
		return -ENOMEM;
	/* The policy path itself is never a symlink: what zcfsd reads is
	 * what its command line names. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		err(&ld, "(file)", "%s", read_error(-errno));
	else if (fstat(fd, &st) < 0)
		err(&ld, "(file)", "%s", strerror(errno));
	else if (S_ISDIR(st.st_mode))
		load_dir(&ld, path, fd);
	else
		load_fd(&ld, path, fd);
	return finish(&ld, ret);
}

int policy_load_string(const char *name, const char *json, struct policy **ret,
		       struct policy_errors *errs)
{
	struct loader ld = { .errs = errs, .file = name };

	ld.p = policy_new();
	if (!ld.p)
		return -ENOMEM;
	parse_document(&ld, json);
	return finish(&ld, ret);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_tenants; i++)
		tenant_clear(&p->tenants[i]);
	free(p->tenants);
	free(p->admin_group);
	free(p->metrics_listen);
	free(p->metrics_uids);
	free(p->metrics_gids);
	free(p);
}

const struct policy_tenant *policy_find_tenant(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_tenants; i++)
		if (!strcmp(p->tenants[i].name, name))
			return &p->tenants[i];
	return NULL;
}
