/* libFuzzer target: arbitrary bytes as a node policy, through the same
 * loader zcfsd and `zcfsctl policy check` use (common/policy.c).
 * The first byte picks how it is read: from memory, from one file, or
 * split at "\n--\n" into up to 4 files of a policy directory (merging,
 * sections claimed by two files). Whatever the bytes: either an error
 * list (every message "FILE: FIELD: message") or a policy whose every
 * value is inside the documented ranges (policy/README.md). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/names.h"
#include "common/policy.h"
#include "tests/fuzz/fuzz_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/dev/shm/zcfs-fuzz-policy.XXXXXX";
static char pdir[sizeof(dir) + 16];

/* Files of the policy directory: four are enough for merging and
 * conflicts between files, and a directory input costs a file read and
 * parse per file (with eight, most of the run). */
#define DIR_FILES 4

/* The single file, then the policy directory's 00.json..03.json. They
 * stay open and are rewritten in place (pwrite, ftruncate) when their
 * content changes; a directory file is unlinked only when an input has
 * fewer files than the one before: creating, truncating and removing
 * them per input cost as much as the parsing. fd -1: no such file. */
static struct {
	char path[sizeof(dir) + 32];
	int fd;
	size_t size;
	uint8_t text[64 * 1024];	/* what the file holds: unchanged files are not rewritten */
} files[1 + DIR_FILES];

static void setup_once(void)
{
	if (!fuzz_dir_once(dir))
		return;
	snprintf(pdir, sizeof(pdir), "%s/d", dir);
	if (mkdir(pdir, 0755) < 0)
		abort();
	snprintf(files[0].path, sizeof(files[0].path), "%s/p.json", dir);
	for (size_t i = 1; i < ARRAY_SIZE(files); i++)
		snprintf(files[i].path, sizeof(files[i].path), "%s/%02zu.json", pdir, i - 1);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		files[i].fd = -1;
}

/* FILES[I] holds exactly the N bytes at P. */
static void put_file(size_t i, const uint8_t *p, size_t n)
{
	if (files[i].fd < 0) {
		files[i].fd = open(files[i].path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		files[i].size = 0;
		if (files[i].fd < 0)
			abort();
	}
	if (n == files[i].size && !memcmp(files[i].text, p, n))
		return;
	if ((n && pwrite(files[i].fd, p, n, 0) != (ssize_t)n) ||
	    (n < files[i].size && ftruncate(files[i].fd, (off_t)n) < 0))
		abort();
	memcpy(files[i].text, p, n);
	files[i].size = n;
}

static void drop_file(size_t i)
{
	if (files[i].fd < 0)
		return;
	if (unlink(files[i].path) < 0 || close(files[i].fd) < 0)
		abort();
	files[i].fd = -1;
}

static void check_policy(const struct policy *p)
{
	/* 0: chosen per volume by the io_uring geometry */
	if ((p->queue_depth && (p->queue_depth < 1 || p->queue_depth > 1024)) ||
	    (p->max_write && (p->max_write < 4096 || p->max_write > (16u << 20))) ||
	    p->max_write % 4096 ||
	    (p->transport != POLICY_TRANSPORT_AUTO && p->transport != POLICY_TRANSPORT_DEVFUSE &&
	     p->transport != POLICY_TRANSPORT_URING))
		abort();
	if (p->admin_group && !p->has_admin_gid)
		abort();
	if (p->metrics_listen && p->metrics_listen[0] == '/' &&
	    !path_is_normalized_absolute(p->metrics_listen))
		abort();
	if (p->metrics_listen && p->metrics_listen[0] != '/') {
		char host[64];
		unsigned port;
		if (policy_parse_tcp_listen(p->metrics_listen, host, sizeof(host), &port) < 0)
			abort();
	}
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
		put_file(0, data, size);
		r = policy_load(files[0].path, &p, &errs);
	} else {
		const uint8_t *s = data, *end = data + size;
		size_t i;

		for (i = 0; i < DIR_FILES; i++) {
			const uint8_t *sep = memmem(s, (size_t)(end - s), "\n--\n", 4);
			const uint8_t *e = sep && i < DIR_FILES - 1 ? sep : end;
			put_file(1 + i, s, (size_t)(e - s));
			if (e == end)
				break;
			s = e + 4;
		}
		while (++i < DIR_FILES)
			drop_file(1 + i);
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
