/* libFuzzer target: arbitrary bytes as a node policy, through the same
 * loader zcfsd and `zcfsctl policy check` use (daemon/common/policy.c).
 * The first byte picks how it is read: from memory, from one file, or
 * split at "\n--\n" into up to 8 files of a policy directory (merging,
 * sections claimed by two files). Whatever the bytes: either an error
 * list (every message "FILE: FIELD: message") or a policy whose every
 * value is inside the documented ranges (policy/README.md). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/dev/shm/zcfs-fuzz-policy.XXXXXX";
static char file[sizeof(dir) + 16], pdir[sizeof(dir) + 16];

static void cleanup(void)
{
	char p[sizeof(pdir) + 32];

	for (int i = 0; i < 8; i++) {
		snprintf(p, sizeof(p), "%s/%02d.json", pdir, i);
		(void)unlink(p);
	}
	(void)unlink(file);
	(void)rmdir(pdir);
	(void)rmdir(dir);
}

static void setup_once(void)
{
	if (dir[sizeof(dir) - 2] != 'X')
		return;
	if (!mkdtemp(dir))
		abort();
	snprintf(file, sizeof(file), "%s/p.json", dir);
	snprintf(pdir, sizeof(pdir), "%s/d", dir);
	if (mkdir(pdir, 0755) < 0)
		abort();
	atexit(cleanup);
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || close(fd) < 0)
		abort();
}

static void check_policy(const struct policy *p)
{
	if (p->queue_depth < 1 || p->queue_depth > 1024 || p->max_write < 4096 ||
	    p->max_write > (16u << 20) || p->max_write % 4096 ||
	    (p->transport != POLICY_TRANSPORT_AUTO && p->transport != POLICY_TRANSPORT_DEVFUSE &&
	     p->transport != POLICY_TRANSPORT_URING))
		abort();
	if (p->admin_group && !p->has_admin_gid)
		abort();
	if (p->metrics_listen && !path_is_normalized_absolute(p->metrics_listen))
		abort();
	for (size_t i = 0; i < p->n_tenants; i++) {
		const struct policy_tenant *t = &p->tenants[i];
		if (!name_is_valid_id(t->name) || t->uid == 0 || t->gid == 0 ||
		    t->uid == (uid_t)-1 || t->gid == (gid_t)-1 || t->max_volumes > 100000 ||
		    t->memlock_budget > (1ULL << 40) || t->default_quota > (1ULL << 50) ||
		    !path_is_normalized_absolute(t->storage_root) || !strcmp(t->storage_root, "/") ||
		    t->n_prefixes == 0 || (t->zero_copy && !t->io_uring) || !t->file)
			abort();
		for (size_t k = 0; k < t->n_prefixes; k++)
			if (!path_is_normalized_absolute(t->prefixes[k]) || !strcmp(t->prefixes[k], "/"))
				abort();
		if (policy_find_tenant(p, t->name) != t)
			abort();	/* names are unique */
		for (size_t j = 0; j < i; j++)
			if (p->tenants[j].uid == t->uid ||
			    !strcmp(p->tenants[j].storage_root, t->storage_root))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_errors errs = { 0 };
	struct policy *p = NULL;
	char *text;
	int r, mode;

	setup_once();
	if (size < 1 || size > 64 * 1024)
		return 0;
	mode = data[0] % 3;
	data++, size--;
	if (mode == 0) {
		text = malloc(size + 1);
		if (!text)
			abort();
		memcpy(text, data, size);
		text[size] = '\0';
		r = policy_load_string("fuzz.json", text, &p, &errs);
		free(text);
	} else if (mode == 1) {
		write_file(file, data, size);
		r = policy_load(file, &p, &errs);
	} else {
		const uint8_t *s = data, *end = data + size;
		char path[sizeof(pdir) + 32];
		int i;

		for (i = 0; i < 8; i++) {
			snprintf(path, sizeof(path), "%s/%02d.json", pdir, i);
			(void)unlink(path);
		}
		for (i = 0; i < 8 && s <= end; i++) {
			const uint8_t *sep = memmem(s, (size_t)(end - s), "\n--\n", 4);
			const uint8_t *e = sep && i < 7 ? sep : end;
			snprintf(path, sizeof(path), "%s/%02d.json", pdir, i);
			write_file(path, s, (size_t)(e - s));
			if (e == end)
				break;
			s = e + 4;
		}
		r = policy_load(pdir, &p, &errs);
	}
	if (r == 0) {
		if (!p || errs.n)
			abort();
		check_policy(p);
		policy_free(p);
	} else {
		if (p || (r == -EINVAL && errs.n == 0) || (r != -EINVAL && r != -ENOMEM))
			abort();
		for (size_t i = 0; i < errs.n; i++)
			if (!errs.msgs[i] || !strstr(errs.msgs[i], ": "))
				abort();
	}
	policy_errors_clear(&errs);
	return 0;
}
