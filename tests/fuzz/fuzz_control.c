/* libFuzzer target: arbitrary bytes as what a client writes on zcfsd's
 * control socket, through the real socket code (accept with the
 * SO_PEERCRED check, newline framing with its 64 KiB cap, the envelope
 * checks, zcfsd_dispatch and every method's parameter and path checks)
 * against a daemon whose policy, state and storage live in a private
 * tmpfs.
 *
 * No real mounts: the fuzzer runs in its own mount namespace, and mount(2)
 * and umount2(2) are replaced below by stubs that fail, so a publish gets
 * as far as the mount (target checks, budget, target and storage dirs)
 * and must then undo everything. Whatever the bytes, each answer must be
 * one line of JSON carrying either a result or a known error code, and a
 * failed request must leave the directories as they were. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include "log.h"
#include "zcfsd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Fixed paths so that seeds can name valid targets; private to this
 * process (tmpfs in our own mount namespace). */
#define BASE "/srv/zcfs-fuzz"

/* The executable's definitions win over libc's for every caller in it
 * (zcfsd's sources are linked in): no request can mount or unmount. */
int mount(const char *source, const char *target, const char *fstype, unsigned long flags,
	  const void *data)
{
	(void)source; (void)target; (void)fstype; (void)flags; (void)data;
	errno = EPERM;
	return -1;
}

int umount2(const char *target, int flags)
{
	(void)target; (void)flags;
	errno = EINVAL;
	return -1;
}

static struct zcfsd d;

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

static void setup_once(void)
{
	static char policy[2048];
	struct policy_errors errs = { 0 };

	/* A private mount namespace and tmpfs: our own paths, and anything
	 * mounted by mistake would vanish with the process. */
	if (unshare(CLONE_NEWNS) < 0 ||
	    syscall(SYS_mount, "none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    syscall(SYS_mount, "zcfs-fuzz", "/srv", "tmpfs", 0UL, "size=64m,mode=755") < 0) {
		perror("fuzz_control: private tmpfs on /srv (needs root)");
		abort();
	}
	if (mkdir(BASE, 0755) < 0 || mkdir(BASE "/targets", 0755) < 0 ||
	    mkdir(BASE "/targets/t2", 0755) < 0 || mkdir(BASE "/storage", 0755) < 0 ||
	    mkdir(BASE "/state", 0700) < 0 || mkdir(BASE "/state/logs", 0700) < 0 ||
	    mkdir(BASE "/targets/file-parent", 0755) < 0 ||
	    symlink(BASE "/targets", BASE "/targets/link") < 0)
		abort();
	write_file(BASE "/targets/file", "not a directory\n");
	snprintf(policy, sizeof(policy),
		 "{\"admin_group\": \"0\","
		 " \"defaults\": {\"queue_depth\": 4, \"max_write\": \"128K\", \"transport\": \"auto\"},"
		 " \"tenants\": ["
		 "  {\"name\": \"t1\", \"uid\": 2001, \"gid\": 2001, \"memlock_budget\": \"4M\","
		 "   \"max_volumes\": 4, \"storage_root\": \"%s/storage/t1\","
		 "   \"allowed_target_prefixes\": [\"%s/targets\"],"
		 "   \"data_paths\": {\"io_uring\": true}},"
		 "  {\"name\": \"t2\", \"uid\": 2002, \"gid\": 2002, \"storage_root\": \"%s/storage/t2\","
		 "   \"allowed_target_prefixes\": [\"%s/targets/t2\"]}]}\n",
		 BASE, BASE, BASE, BASE);
	write_file(BASE "/policy.json", policy);

	log_set_level(LOG_CRIT);
	signal(SIGPIPE, SIG_IGN);
	d.listen_fd = d.signal_fd = -1;
	d.policy_path = BASE "/policy.json";
	d.state_dir = BASE "/state";
	d.socket_path = BASE "/zcfsd.sock";
	d.serve_bin = "/nonexistent/zcfs-serve";
	d.serve_prints_pinned = false;	/* the formula: no exec of zcfs-serve */
	d.ncpus = 2;
	if (policy_load(d.policy_path, &d.policy, &errs) < 0)
		abort();
	d.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d.epoll_fd < 0 || zcfsd_control_listen(&d) < 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	setup_once();
	return 0;
}

/* One pass of zcfsd's event loop without blocking. */
static void pump(void)
{
	struct epoll_event evs[8];
	int n;

	while ((n = epoll_wait(d.epoll_fd, evs, 8, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64 & ~0xffffffffULL;
			int fd = (int)(uint32_t)evs[i].data.u64;

			if (tag == ZCFSD_EV_LISTEN)
				zcfsd_control_accept(&d);
			else if (tag == ZCFSD_EV_CLIENT)
				zcfsd_control_client_event(&d, fd, evs[i].events);
			else
				abort();	/* nothing else may be registered: no server was started */
		}
	}
}

static const char *const codes[] = { "INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS",
	"RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "PERMISSION_DENIED", "INTERNAL",
	"UNAVAILABLE", "UNIMPLEMENTED", NULL };

/* One answer line: {"result": {...}} or {"error": {"code": KNOWN, "message": S}}. */
static void check_response(const char *line)
{
	json_object *o = json_tokener_parse(line), *x, *c, *m;

	if (!o || !json_object_is_type(o, json_type_object) || json_object_object_length(o) != 1)
		abort();
	if (json_object_object_get_ex(o, "result", &x)) {
		if (!json_object_is_type(x, json_type_object))
			abort();
	} else if (json_object_object_get_ex(o, "error", &x)) {
		const char *const *k;
		if (!json_object_object_get_ex(x, "code", &c) || !json_object_is_type(c, json_type_string) ||
		    !json_object_object_get_ex(x, "message", &m) || !json_object_is_type(m, json_type_string))
			abort();
		for (k = codes; *k && strcmp(*k, json_object_get_string(c)); k++)
			;
		if (!*k)
			abort();
	} else {
		abort();
	}
	json_object_put(o);
}

/* The client's reading side runs in its own thread, as a real client's
 * would: zcfsd waits up to 2 s for a client that does not read. */
struct reader {
	int fd;
	size_t lines;
};

static void *read_answers(void *arg)
{
	static char buf[1 << 20];
	struct reader *rd = arg;
	size_t len = 0;
	char *nl;
	ssize_t n;

	while ((n = recv(rd->fd, buf + len, sizeof(buf) - 1 - len, 0)) > 0) {
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = memchr(buf, '\n', len))) {
			*nl = '\0';
			check_response(buf);
			rd->lines++;
			memmove(buf, nl + 1, len - (size_t)(nl + 1 - buf));
			len -= (size_t)(nl + 1 - buf);
		}
		if (len >= sizeof(buf) - 1)
			abort();	/* an answer line larger than any zcfsd writes */
	}
	return NULL;
}

/* Nothing under the storage root and no target dir may survive a
 * failed publish (all publishes fail here: mount is stubbed). */
static size_t entries(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	size_t n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(dir);
	return n;
}

static void check_no_leftovers(void)
{
	/* storage roots empty; targets/ holds t2, file-parent, file, link */
	if (entries(BASE "/storage/t1") || entries(BASE "/storage/t2") ||
	    entries(BASE "/targets") != 4 || entries(BASE "/targets/t2") ||
	    entries(BASE "/targets/file-parent"))
		abort();	/* a failed publish left a directory behind */
}

static void reset_daemon(void)
{
	while (d.volumes) {
		struct zcfsd_volume *v = d.volumes;
		d.volumes = v->next;
		zcfsd_volume_free(v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = BASE "/zcfsd.sock" };
	struct reader rd = { .fd = -1 };
	size_t off = 0, requests = 0;
	pthread_t th;
	int fd;

	if (size > 256 * 1024)
		return 0;
	for (size_t i = 0; i < size; i++)
		requests += data[i] == '\n';
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		abort();
	rd.fd = fd;
	if (pthread_create(&th, NULL, read_answers, &rd))
		abort();
	pump();	/* accept */
	while (off < size) {
		ssize_t n = send(fd, data + off, size - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN)
			break;	/* zcfsd hung up (an oversized line) */
		if (n > 0)
			off += (size_t)n;
		pump();
	}
	/* End of the client's stream: zcfsd answers what is complete and
	 * closes, which ends the reader; an unterminated last line is
	 * never answered. */
	(void)shutdown(fd, SHUT_WR);
	pump();
	pump();
	if (pthread_join(th, NULL))
		abort();
	/* One answer per request line, plus at most the "too large" one. */
	if (rd.lines > requests + 1)
		abort();
	close(fd);
	check_no_leftovers();
	reset_daemon();
	return 0;
}
