/* zcfsctl kernel [--json]: probes the running kernel by doing (a scratch
 * FUSE mount whose INIT is read, see kernel_probe.c) and prints, per data
 * path, supported / not supported / disabled and why, plus the FUSE
 * protocol version the kernel offered. The memlock verdict uses the
 * default geometry (common/uring_sizing.c, the sizing zcfs-serve
 * and zcfsd use), so no two programs disagree on what "the default" pins. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "ctl_kernel.h"
#include "common/kernel_probe.h"
#include "common/uring_sizing.h"

static uint64_t default_pinned(void)
{
	unsigned ncpu = 1;

	if (uring_possible_cpus(&ncpu) < 0)
		ncpu = 1;
	return uring_default_pinned_bytes(ncpu);
}

static json_object *to_json(const struct kernel_facts *f, const struct kernel_verdict *v)
{
	json_object *o = json_object_new_object(), *paths = json_object_new_object();
	json_object *mem = json_object_new_object();
	char proto[16], flags[24];
	int i;

	snprintf(proto, sizeof(proto), "%u.%u", f->major, f->minor);
	snprintf(flags, sizeof(flags), "0x%llx", (unsigned long long)f->offered);
	json_object_object_add(o, "kernel", json_object_new_string(f->release));
	json_object_object_add(o, "fuse_protocol", f->init_read ? json_object_new_string(proto) : NULL);
	json_object_object_add(o, "fuse_minor", f->init_read ? json_object_new_int64(f->minor) : NULL);
	json_object_object_add(o, "init_flags", f->init_read ? json_object_new_string(flags) : NULL);
	json_object_object_add(o, "enable_uring", f->enable_uring < 0 ? NULL :
			       json_object_new_string(f->enable_uring ? "Y" : "N"));
	json_object_object_add(o, "cap_sys_admin", json_object_new_boolean(f->cap_sys_admin));
	for (i = 0; i < KPATH_COUNT; i++) {
		json_object *p = json_object_new_object();
		json_object_object_add(p, "status", json_object_new_string(kernel_status_name(v[i].status)));
		json_object_object_add(p, "supported", json_object_new_boolean(v[i].status == KSTATUS_SUPPORTED));
		json_object_object_add(p, "reason", json_object_new_string(v[i].why));
		json_object_object_add(paths, kernel_path_name((enum kernel_path)i), p);
	}
	json_object_object_add(o, "paths", paths);
	json_object_object_add(mem, "limit", f->memlock_limit == UINT64_MAX ? NULL :
			       json_object_new_int64((int64_t)f->memlock_limit));
	json_object_object_add(mem, "default_pinned", json_object_new_int64((int64_t)f->default_pinned));
	json_object_object_add(mem, "cap_ipc_lock", json_object_new_boolean(f->cap_ipc_lock));
	json_object_object_add(o, "memlock", mem);
	return o;
}

static void print_text(const struct kernel_facts *f, const struct kernel_verdict *v)
{
	int i;

	printf("kernel %s", f->release);
	if (f->init_read)
		printf(", FUSE protocol %u.%u offered (INIT flags 0x%llx)\n", f->major, f->minor,
		       (unsigned long long)f->offered);
	else
		printf(", FUSE protocol unknown (no INIT read)\n");
	for (i = 0; i < KPATH_COUNT; i++) {
		if (v[i].why[0])
			printf("%-12s %-14s %s\n", kernel_path_name((enum kernel_path)i),
			       kernel_status_name(v[i].status), v[i].why);
		else
			printf("%-12s %s\n", kernel_path_name((enum kernel_path)i), kernel_status_name(v[i].status));
	}
}

int ctl_kernel(int argc, char **argv)
{
	struct kernel_verdict v[KPATH_COUNT];
	struct kernel_facts f;
	bool as_json = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json")) {
			fprintf(stderr, "zcfsctl: kernel: %s '%s'\nUsage: zcfsctl kernel [--json]\n",
				argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i]);
			return 2;
		}
		as_json = true;
	}
	kernel_probe_run(&f);
	f.default_pinned = default_pinned();
	kernel_verdicts(&f, v);
	if (as_json) {
		json_object *o = to_json(&f, v);
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		print_text(&f, v);
	}
	return 0;
}
