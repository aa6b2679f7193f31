/* libFuzzer target: arbitrary bytes as STATE_DIR/state.json, through
 * zcfsd_state_load() exactly as zcfsd runs it at start. Re-adoption is
 * not driven: it opens pidfds of the recorded pids and may kill them.
 *
 * Properties: the loader either refuses the file (zcfsd then exits
 * without touching anything) or loads volumes that are all sane (valid
 * unique ids, known transport, queue depth and max_write in range,
 * normalized targets); and what it loaded survives a save and a second
 * load unchanged, so zcfsd never rewrites a state file into something
 * that means more or less than what it read. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "common/names.h"
#include "daemon/zcfsd/state/state.h"
#include "tests/fuzz/fuzz_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/dev/shm/zcfs-fuzz-state.XXXXXX";
static char path[sizeof(dir) + 32], tmp[sizeof(dir) + 32], logs[sizeof(dir) + 16];
static struct policy policy;	/* no tenants: loading does not consult it */

static void setup_once(void)
{
	if (!fuzz_dir_once(dir))
		return;
	snprintf(path, sizeof(path), "%s/state.json", dir);
	snprintf(tmp, sizeof(tmp), "%s/.state.json.tmp.%d", dir, (int)getpid());
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	if (mkdir(logs, 0700) < 0)
		abort();
	policy.queue_depth = 8;
	policy.max_write = 1u << 20;
	log_set_level(LOG_CRIT);
}

static void free_volumes(struct zcfsd *d)
{
	while (d->volumes) {
		struct zcfsd_volume *v = d->volumes;
		d->volumes = v->next;
		zcfsd_volume_free(v);
	}
}

static void check_volumes(struct zcfsd *d)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next) {
		if (!v->id || !name_is_valid_id(v->id) || !v->tenant || !name_is_valid_id(v->tenant))
			abort();
		for (struct zcfsd_volume *w = v->next; w; w = w->next)
			if (!strcmp(v->id, w->id))
				abort();	/* duplicate id */
		if (v->queue_depth < 1 || v->queue_depth > 1024 || v->max_write < 4096 ||
		    v->max_write > (16u << 20) || v->max_write % 4096)
			abort();
		if (v->transport != POLICY_TRANSPORT_AUTO && v->transport != POLICY_TRANSPORT_DEVFUSE &&
		    v->transport != POLICY_TRANSPORT_URING)
			abort();
		if (v->n_targets && !v->targets)
			abort();
		for (size_t i = 0; i < v->n_targets; i++)
			if (!path_is_normalized_absolute(v->targets[i]))
				abort();
		/* The loader only reads: no fd, no pidfd, no record of server/ (nothing scheduled). */
		if (v->fuse_fd != -1 || v->srv.pidfd != -1 || v->sup || v->srv.pid < 0)
			abort();
	}
}

static char *slurp(const char *p)
{
	FILE *f = fopen(p, "re");
	char *buf = NULL;
	size_t cap = 0;

	if (!f)
		abort();
	if (getdelim(&buf, &cap, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zcfsd d = { .policy = &policy, .listen_fd = -1, .signal_fd = -1, .loop.epoll_fd = -1 };
	char *first, *second;
	int fd, r;

	setup_once();
	if (size > 256 * 1024)
		return 0;
	d.state_dir = dir;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) < 0)
		abort();
	r = zcfsd_state_load(&d);
	if (r < 0) {
		/* Refused: zcfsd exits before touching anything. */
		free_volumes(&d);
		return 0;
	}
	check_volumes(&d);
	/* Round trip: save, load, save again: the same file. */
	if (zcfsd_state_save(&d) < 0)
		abort();
	first = slurp(path);
	free_volumes(&d);
	if (zcfsd_state_load(&d) < 0)
		abort();	/* zcfsd refuses what it wrote itself */
	check_volumes(&d);
	if (zcfsd_state_save(&d) < 0)
		abort();
	second = slurp(path);
	if (strcmp(first, second))
		abort();
	free(first);
	free(second);
	free_volumes(&d);
	return 0;
}
