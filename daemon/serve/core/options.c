/* zcfs-serve's command line. Every bad argument is one line and -EINVAL;
 * main turns that into exit code 2. */
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include "options.h"
#include "common/parse.h"
#include "common/util.h"

enum {
	OPT_TRANSPORT = 256, OPT_THREADS, OPT_QUEUE_DEPTH, OPT_MAX_WRITE, OPT_READ_ONLY,
	OPT_OWNERSHIP, OPT_CACHE, OPT_WRITEBACK, OPT_PASSTHROUGH, OPT_ALLOW_OTHER,
	OPT_NO_ALLOW_OTHER, OPT_FD, OPT_PRINT_PINNED, OPT_SANDBOX, OPT_RESUME, OPT_STATS_FD,
	OPT_BUFFER_POOL, OPT_ZERO_COPY, OPT_POOL_BUFFERS, OPT_QUOTA_BYTES,
	OPT_BROKER_FD, OPT_NO_WRITEBACK, OPT_DIRTY_LIMIT, OPT_RING_MEMFD, OPT_NO_ACL, OPT_PINNED_BUDGET,
	OPT_READY_FD, OPT_COUNT_INODES, OPT_STANDBY_FD, OPT_RING_HOLDER, OPT_HOLDER_RINGS,
	OPT_URING_BACKING,
};

static const struct option long_opts[] = {
	{ "transport", required_argument, NULL, OPT_TRANSPORT },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "queue-depth", required_argument, NULL, OPT_QUEUE_DEPTH },
	{ "max-write", required_argument, NULL, OPT_MAX_WRITE },
	{ "pinned-budget", required_argument, NULL, OPT_PINNED_BUDGET },
	{ "read-only", no_argument, NULL, OPT_READ_ONLY },
	{ "ownership", required_argument, NULL, OPT_OWNERSHIP },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "writeback", no_argument, NULL, OPT_WRITEBACK },
	{ "no-writeback", no_argument, NULL, OPT_NO_WRITEBACK },
	{ "dirty-limit", required_argument, NULL, OPT_DIRTY_LIMIT },
	{ "ring-memfd", required_argument, NULL, OPT_RING_MEMFD },
	{ "passthrough", no_argument, NULL, OPT_PASSTHROUGH },
	{ "no-acl", no_argument, NULL, OPT_NO_ACL },
	{ "allow-other", no_argument, NULL, OPT_ALLOW_OTHER },
	{ "no-allow-other", no_argument, NULL, OPT_NO_ALLOW_OTHER },
	{ "fd", required_argument, NULL, OPT_FD },
	{ "print-pinned", no_argument, NULL, OPT_PRINT_PINNED },
	{ "sandbox", no_argument, NULL, OPT_SANDBOX },
	{ "resume", no_argument, NULL, OPT_RESUME },
	{ "stats-fd", required_argument, NULL, OPT_STATS_FD },
	{ "ready-fd", required_argument, NULL, OPT_READY_FD },
	{ "standby-fd", required_argument, NULL, OPT_STANDBY_FD },
	{ "ring-holder", no_argument, NULL, OPT_RING_HOLDER },
	{ "holder-rings", required_argument, NULL, OPT_HOLDER_RINGS },
	{ "buffer-pool", required_argument, NULL, OPT_BUFFER_POOL },
	{ "uring-backing", required_argument, NULL, OPT_URING_BACKING },
	{ "zero-copy", required_argument, NULL, OPT_ZERO_COPY },
	{ "pool-buffers", required_argument, NULL, OPT_POOL_BUFFERS },
	{ "quota-bytes", required_argument, NULL, OPT_QUOTA_BYTES },
	{ "count-inodes", no_argument, NULL, OPT_COUNT_INODES },
	{ "broker-fd", required_argument, NULL, OPT_BROKER_FD },
	{ "foreground", no_argument, NULL, 'f' },
	{ "debug", no_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

/* zcfsd's ring holder (transport/uring_holder.h), and --print-pinned. */
static void usage_holder(void)
{
	printf("  --ring-holder         zcfsd's owner of the io_uring rings of --fd (SQPOLL, at\n"
	       "                        fds 12..; it only sleeps): a server's death cancels none\n"
	       "  --holder-rings=N      serve on a ring holder's rings, fds N.. (one per queue;\n"
	       "                        --ring-memfd, --zero-copy=off; a pool is unregistered)\n"
	       "  --print-pinned        print the bytes of memory this volume would pin with\n"
	       "                        these options (rings, entry headers, payloads), exit\n");
}

void options_usage(const char *prog)
{
	printf("Usage: %s [options] SOURCE MOUNTPOINT\n"
	       "Serve directory SOURCE at MOUNTPOINT through FUSE.\n\n"
	       "  --transport=auto|devfuse|uring  data path (default auto: io_uring when the\n"
	       "                                  kernel offers it, else /dev/fuse)\n"
	       "  --threads=N           /dev/fuse reader threads (default: one per CPU)\n"
	       "  --queue-depth=N       io_uring entries per queue (default: 8, or fewer\n"
	       "                        to fit --pinned-budget)\n"
	       "  --max-write=SIZE      largest WRITE/READ payload (default: 1M; on io_uring\n"
	       "                        smaller where CPUs x depth x 1M exceeds the budget)\n"
	       "  --pinned-budget=SIZE  most an io_uring volume's default geometry may pin\n"
	       "                        (default 32M; rings, headers, payloads)\n"
	       "  --buffer-pool=auto|on|registered|off  io_uring payloads from a per-queue pool\n"
	       "                        (kernel protocol 7.46); registered: the pool is an\n"
	       "                        io_uring fixed buffer (default auto: registered when\n"
	       "                        the kernel has pools and memlock allows, else stock)\n"
	       "  --pool-buffers=N      buffers in each queue's pool (default: queue depth)\n"
	       "  --uring-backing=auto|inline  backing I/O on the ring (auto: if RWF_NOWAIT works)\n"
	       "  --zero-copy=auto|on|off  READ/WRITE data moved by READ_FIXED/WRITE_FIXED into\n"
	       "                        the client's pages (7.46 + CAP_SYS_ADMIN until the\n"
	       "                        rings are registered; default auto)\n"
	       "  --ownership=native|xattr  where file owners live: chown on the backing files\n"
	       "                        (default as root) or the user.containers.override_stat\n"
	       "                        xattr (default otherwise; needs no privilege)\n"
	       "  --cache=exclusive|shared|none  kernel caching (default shared); exclusive\n"
	       "                        when nothing else changes SOURCE\n"
	       "  --writeback / --no-writeback  kernel writeback cache for buffered writes\n"
	       "                        (default: on with --cache=exclusive, unless\n"
	       "                        --passthrough)\n"
	       "  --dirty-limit=SIZE    with writeback, when zcfs-serve mounts as root: dirty\n"
	       "                        pages the mount may hold before writers are throttled\n"
	       "                        (the bdi's max_bytes; default 1G; 0: kernel default)\n"
	       "  --passthrough         kernel passthrough of file I/O (needs CAP_SYS_ADMIN,\n"
	       "                        or --broker-fd)\n"
	       "  --broker-fd=N         with --passthrough: zcfsd registers backing files on\n"
	       "                        the server's behalf over the socket at fd N\n"
	       "  --read-only           refuse every change\n"
	       "  --quota-bytes=SIZE    the volume's size: blocks allocated under SOURCE\n"
	       "                        may not exceed SIZE (ENOSPC; STATFS shows SIZE);\n"
	       "                        turns kernel passthrough off, as its writes\n"
	       "                        bypass the count\n"
	       "  --count-inodes        count the inodes under SOURCE (one scan at start, then\n"
	       "                        kept by requests) so that STATFS reports the volume's\n"
	       "                        own inodes in use (implied by --quota-bytes)\n"
	       "  --allow-other / --no-allow-other  let other users in (default: allow)\n"
	       "  --no-acl              no POSIX ACLs (-o noacl); with --ownership=native they\n"
	       "                        are on: the kernel enforces the backing files' ACLs,\n"
	       "                        a default ACL replaces the umask (--ownership=xattr\n"
	       "                        has none: setfacl gets EOPNOTSUPP)\n"
	       "  --fd=N                serve an already mounted /dev/fuse fd (from zcfsd)\n"
	       "  --sandbox             before serving: no_new_privs, Landlock confined to\n"
	       "                        SOURCE, seccomp allowlist (other syscalls kill the\n"
	       "                        process); needs --fd, since mounting and unmounting\n"
	       "                        are not allowed inside it\n"
	       "  --stats-fd=N          count requests, errors, bytes and latency in the\n"
	       "                        shared memory of fd N (zcfsd's metrics)\n"
	       "  --ready-fd=N          one byte 'R' to fd N, closed, once INIT is answered and\n"
	       "                        the transport serves (zcfsd waits for it; none if exiting)\n"
	       "  --ring-memfd=N        io_uring buffers in memfd N (zcfsd keeps it): with\n"
	       "                        --resume, requests the previous server's ring\n"
	       "                        entries held are answered too\n"
	       "  --resume              with --fd: take over a live connection whose server\n"
	       "                        died (INIT done; node ids and open files found again)\n"
	       "  --standby-fd=N        with --resume (zcfsd's planned restart): set up, 'R' on\n"
	       "                        --ready-fd, serve only after one 'G' on fd N (EOF: exit)\n"
	       "  -o OPT[,OPT...]       mount options: ro, rw, dev/nodev, suid/nosuid,\n"
	       "                        exec/noexec, atime/noatime/relatime/strictatime,\n"
	       "                        nodiratime, sync, dirsync, lazytime, allow_other,\n"
	       "                        default_permissions, fsname=NAME, subtype=TYPE\n"
	       "                        (type fuse.TYPE, default zcfs; subtype= : fuse),\n"
	       "                        and every long option above as key[=value]\n"
	       "                        (-o cache=exclusive,transport=uring); default\n"
	       "                        nodev,nosuid. mount -t fuse.zcfs and fstab use\n"
	       "                        them through mount.fuse.zcfs\n"
	       "  -f, --foreground      stay in the foreground\n"
	       "  -d, --debug           log every request\n"
	       "  -h, --help            this text\n"
	       "  -V, --version         version\n", prog);
	usage_holder();
}

static int fail(char *errbuf, size_t errlen, const char *fmt, ...) _printf_(3, 4);
static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* -o's generic mount options that are mount(2) flags. */
static const struct mount_flag_opt {
	const char *name;
	unsigned long set, clear;
} mount_flag_opts[] = {
	{ "dev", 0, MS_NODEV },			{ "nodev", MS_NODEV, 0 },
	{ "suid", 0, MS_NOSUID },		{ "nosuid", MS_NOSUID, 0 },
	{ "exec", 0, MS_NOEXEC },		{ "noexec", MS_NOEXEC, 0 },
	{ "atime", 0, MS_NOATIME | MS_RELATIME | MS_STRICTATIME },
	{ "noatime", MS_NOATIME, 0 },
	{ "diratime", 0, MS_NODIRATIME },	{ "nodiratime", MS_NODIRATIME, 0 },
	{ "relatime", MS_RELATIME, MS_STRICTATIME | MS_NOATIME },
	{ "norelatime", 0, MS_RELATIME },
	{ "strictatime", MS_STRICTATIME, MS_RELATIME | MS_NOATIME },
	{ "nostrictatime", 0, MS_STRICTATIME },
	{ "lazytime", MS_LAZYTIME, 0 },		{ "nolazytime", 0, MS_LAZYTIME },
	{ "sync", MS_SYNCHRONOUS, 0 },		{ "async", 0, MS_SYNCHRONOUS },
	{ "dirsync", MS_DIRSYNC, 0 },
	{ "silent", MS_SILENT, 0 },		{ "loud", 0, MS_SILENT },
};

/* Options mount(8) and fstab pass along that mean nothing to the mount
 * itself (zcfs always mounts with default_permissions). */
static bool ignored_mount_option(const char *opt)
{
	static const char *const names[] = { "defaults", "auto", "noauto", "nofail", "_netdev",
					     "user", "users", "nouser", "owner", "group", "nomand",
					     "default_permissions" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(opt, names[i]))
			return true;
	return !strncmp(opt, "x-", 2) || !strncmp(opt, "comment=", 8);
}

/* One item of -o: a generic mount option applied to o, or a long
 * option appended to args as --key[=value]. */
static int o_item(const char *item, struct zcfs_options *o, char **args, int *nargs,
		  char *errbuf, size_t errlen)
{
	const char *eq = strchr(item, '=');
	size_t klen = eq ? (size_t)(eq - item) : strlen(item);
	char key[64];

	for (size_t i = 0; i < ARRAY_SIZE(mount_flag_opts); i++)
		if (!strcmp(item, mount_flag_opts[i].name)) {
			o->mount_flags = (o->mount_flags & ~mount_flag_opts[i].clear) |
					 mount_flag_opts[i].set;
			return 0;
		}
	if (ignored_mount_option(item))
		return 0;
	if (!strcmp(item, "ro") || !strcmp(item, "rw")) {
		o->read_only = item[1] == 'o';
		return 0;
	}
	if (!strcmp(item, "acl") || !strcmp(item, "noacl")) {
		o->no_acl = item[0] == 'n';
		return 0;
	}
	if (!strcmp(item, "allow_other")) {
		o->allow_other = true;
		return 0;
	}
	if (!strncmp(item, "fsname=", 7) || !strncmp(item, "subtype=", 8)) {
		char *dst = item[0] == 'f' ? o->fsname : o->subtype;
		size_t cap = item[0] == 'f' ? sizeof(o->fsname) : sizeof(o->subtype);

		/* subtype= (empty): type "fuse", as servers without a subtype */
		if (item[0] == 's' && !eq[1]) {
			o->no_subtype = true;
			return 0;
		}
		if (!eq[1] || strlen(eq + 1) >= cap || strpbrk(eq + 1, " \t\n,"))
			return fail(errbuf, errlen, "-o %s: empty, too long or has a blank or comma", item);
		memcpy(dst, eq + 1, strlen(eq + 1) + 1);
		if (item[0] == 's')
			o->no_subtype = false;
		return 0;
	}
	if (!klen || klen >= sizeof(key))
		return fail(errbuf, errlen, "-o '%s': not a mount option", item);
	for (size_t i = 0; i < klen; i++)
		key[i] = item[i] == '_' ? '-' : item[i];
	key[klen] = '\0';
	for (const struct option *lo = long_opts; lo->name; lo++) {
		if (strcmp(lo->name, key))
			continue;
		if (lo->has_arg == required_argument && !eq)
			return fail(errbuf, errlen, "-o %s needs a value (%s=...)", item, item);
		if (lo->has_arg == no_argument && eq)
			return fail(errbuf, errlen, "-o %s: %.*s takes no value", item, (int)klen, item);
		if (asprintf(&args[(*nargs)++], "--%s%s", key, eq ? eq : "") < 0) {
			(*nargs)--;
			return fail(errbuf, errlen, "out of memory");
		}
		return 0;
	}
	return fail(errbuf, errlen, "-o %s: not a mount option or zcfs-serve option (see --help)", item);
}

/* Frees what expand_o allocated: the array and the --key=value strings
 * it made (the others are argv's own, which source and mountpoint keep
 * pointing into). */
static void free_expanded(char **args, int nargs, char **argv, int argc)
{
	for (int i = 0; i < nargs; i++) {
		bool own = true;

		for (int j = 0; j < argc && own; j++)
			own = args[i] != argv[j];
		if (own)
			free(args[i]);
	}
	free(args);
}

/* argv with every -o LIST / -oLIST expanded: generic mount options
 * applied to o, the rest turned into long options for getopt. */
static int expand_o(int argc, char **argv, struct zcfs_options *o, char ***ret, int *ret_argc,
		    char *errbuf, size_t errlen)
{
	char **args;
	int n = 0, r = 0;
	size_t cap = (size_t)argc + 1;

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "-o", 2))
			cap += strlen(argv[i]) + (i + 1 < argc ? strlen(argv[i + 1]) : 0);
	args = calloc(cap, sizeof(*args));
	if (!args)
		return fail(errbuf, errlen, "out of memory");
	args[n++] = argv[0];
	for (int i = 1; i < argc && r == 0; i++) {
		const char *list = NULL;
		char *copy, *save = NULL;

		if (!strcmp(argv[i], "--")) {
			for (; i < argc; i++)
				args[n++] = argv[i];
			break;
		}
		if (!strcmp(argv[i], "-o")) {
			if (i + 1 >= argc)
				r = fail(errbuf, errlen, "option '-o' needs a value");
			list = argv[++i];
		} else if (!strncmp(argv[i], "-o", 2)) {
			list = argv[i] + 2;
		} else {
			args[n++] = argv[i];
			continue;
		}
		if (r < 0)
			break;
		copy = strdup(list);
		for (char *it = copy ? strtok_r(copy, ",", &save) : NULL; it && r == 0;
		     it = strtok_r(NULL, ",", &save))
			r = o_item(it, o, args, &n, errbuf, errlen);
		if (!copy)
			r = fail(errbuf, errlen, "out of memory");
		free(copy);
	}
	if (r < 0) {
		free_expanded(args, n, argv, argc);
		return r;
	}
	*ret = args;
	*ret_argc = n;
	return 0;
}

/* The options a table can parse: a number or size into a field, one of
 * a few names into an enum field, a flag. Each field is stored through
 * memcpy of its own size (FIELD), so one table holds unsigned, uint32_t,
 * uint64_t, int, enum and bool fields alike. */
#define FIELD(f) offsetof(struct zcfs_options, f), sizeof(((struct zcfs_options *)0)->f)

static void store_field(struct zcfs_options *o, size_t off, size_t size, uint64_t v)
{
	char *p = (char *)o + off;
	uint32_t v32 = (uint32_t)v;
	bool b = v != 0;

	_Static_assert(sizeof(enum zcfs_cache) == sizeof(uint32_t), "enum fields are 32 bits");
	if (size == sizeof(bool))
		memcpy(p, &b, sizeof(b));
	else if (size == sizeof(v32))
		memcpy(p, &v32, sizeof(v32));
	else
		memcpy(p, &v, sizeof(v));
}

static const struct num_opt {
	int opt;
	const char *name;
	bool size;		/* parse_size (K, M, G suffixes), else parse_u64 */
	uint64_t min, max, align;
	const char *what;	/* "--NAME: 'ARG' is not WHAT" */
	size_t off, len;
} num_opts[] = {
	{ OPT_THREADS, "threads", false, 1, 256, 1, "a number from 1 to 256", FIELD(threads) },
	{ OPT_QUEUE_DEPTH, "queue-depth", false, 1, 1024, 1, "a number from 1 to 1024",
	  FIELD(queue_depth) },
	{ OPT_MAX_WRITE, "max-write", true, 4096, 16u << 20, 4096,
	  "a multiple of 4K from 4K to 16M", FIELD(max_write) },
	{ OPT_PINNED_BUDGET, "pinned-budget", true, 1u << 20, 1ULL << 40, 1,
	  "a size from 1M to 1T", FIELD(pinned_budget) },
	{ OPT_POOL_BUFFERS, "pool-buffers", false, 1, 1024, 1, "a number from 1 to 1024",
	  FIELD(pool_buffers) },
	{ OPT_FD, "fd", false, 0, 1 << 20, 1, "a file descriptor number", FIELD(fuse_fd) },
	{ OPT_RING_MEMFD, "ring-memfd", false, 0, 1 << 20, 1, "a file descriptor number",
	  FIELD(ring_memfd) },
	{ OPT_BROKER_FD, "broker-fd", false, 0, 1 << 20, 1, "a file descriptor number",
	  FIELD(broker_fd) },
	{ OPT_QUOTA_BYTES, "quota-bytes", true, 4096, 1ULL << 60, 1,
	  "a size of at least 4K (K, M, G suffixes)", FIELD(quota_bytes) },
	{ OPT_DIRTY_LIMIT, "dirty-limit", true, 0, 1ULL << 50, 1, "a size (K, M, G suffixes)",
	  FIELD(dirty_limit) },
	{ OPT_STATS_FD, "stats-fd", false, 0, 1 << 20, 1, "a file descriptor number",
	  FIELD(stats_fd) },
	{ OPT_READY_FD, "ready-fd", false, 0, 1 << 20, 1, "a file descriptor number",
	  FIELD(ready_fd) },
	{ OPT_STANDBY_FD, "standby-fd", false, 0, 1 << 20, 1, "a file descriptor number",
	  FIELD(standby_fd) },
	{ OPT_HOLDER_RINGS, "holder-rings", false, 0, 1 << 20, 1, "a file descriptor number",
	  FIELD(holder_rings) },
};

static const struct enum_opt {
	int opt;
	const char *name;
	const char *const *names;	/* NULL-terminated, in the enum's order */
	bool no_first;			/* names[0] is the enum's "not given" */
	const char *what;
	size_t off, len;
} enum_opts[] = {
	{ OPT_TRANSPORT, "transport", (const char *const[]){ "auto", "devfuse", "uring", NULL },
	  false, "auto, devfuse or uring", FIELD(transport) },
	{ OPT_OWNERSHIP, "ownership", (const char *const[]){ "default", "native", "xattr", NULL },
	  true, "native or xattr", FIELD(ownership) },
	{ OPT_CACHE, "cache", (const char *const[]){ "default", "exclusive", "shared", "none", NULL },
	  true, "exclusive, shared or none", FIELD(cache) },
	{ OPT_BUFFER_POOL, "buffer-pool",
	  (const char *const[]){ "auto", "on", "registered", "off", NULL }, false,
	  "auto, on, registered or off", FIELD(buffer_pool) },
	{ OPT_ZERO_COPY, "zero-copy", (const char *const[]){ "auto", "on", "off", NULL }, false,
	  "auto, on or off", FIELD(zero_copy) },
	{ OPT_URING_BACKING, "uring-backing", (const char *const[]){ "auto", "inline", NULL }, false,
	  "auto or inline", FIELD(uring_backing) },
};

static const struct flag_opt {
	int opt;
	bool value;
	size_t off, len;
} flag_opts[] = {
	{ OPT_COUNT_INODES, true, FIELD(count_inodes) },
	{ OPT_READ_ONLY, true, FIELD(read_only) },
	{ OPT_PASSTHROUGH, true, FIELD(passthrough) },
	{ OPT_PRINT_PINNED, true, FIELD(print_pinned) },
	{ OPT_SANDBOX, true, FIELD(sandbox) },
	{ OPT_RESUME, true, FIELD(resume) },
	{ OPT_RING_HOLDER, true, FIELD(ring_holder) },
	{ OPT_NO_ACL, true, FIELD(no_acl) },
	{ OPT_ALLOW_OTHER, true, FIELD(allow_other) },
	{ OPT_NO_ALLOW_OTHER, false, FIELD(allow_other) },
	{ 'f', true, FIELD(foreground) },
	{ 'd', true, FIELD(debug) },
};

/* Option C with ARG through the tables: 0 stored, -EINVAL with the
 * message in errbuf, -ENOENT when no table has C. */
static int table_option(int c, const char *arg, struct zcfs_options *o, char *errbuf,
			size_t errlen)
{
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(num_opts); i++) {
		const struct num_opt *n = &num_opts[i];

		if (n->opt != c)
			continue;
		if ((n->size ? parse_size(arg, n->min, n->max, &v) : parse_u64(arg, n->min, n->max, &v)) < 0 ||
		    v % n->align)
			return fail(errbuf, errlen, "--%s: '%s' is not %s", n->name, arg, n->what);
		store_field(o, n->off, n->len, v);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(enum_opts); i++) {
		const struct enum_opt *en = &enum_opts[i];

		if (en->opt != c)
			continue;
		for (v = en->no_first; en->names[v] && strcmp(arg, en->names[v]); v++)
			;
		if (!en->names[v])
			return fail(errbuf, errlen, "--%s: '%s' is not %s", en->name, arg, en->what);
		store_field(o, en->off, en->len, v);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(flag_opts); i++)
		if (flag_opts[i].opt == c) {
			store_field(o, flag_opts[i].off, flag_opts[i].len, flag_opts[i].value);
			return 0;
		}
	return -ENOENT;
}

/* What the options ask together, once all are read: the positional
 * arguments, the combinations that cannot work, the defaults that
 * depend on others (WB: --writeback 1, --no-writeback 0, neither -1). */
static int check_args(int argc, char **argv, struct zcfs_options *o, int wb, char *errbuf,
		      size_t errlen)
{
	int npos = argc - optind;
	bool ring_only = o->buffer_pool == ZCFS_BUFPOOL_ON ||
			 o->buffer_pool == ZCFS_BUFPOOL_REGISTERED || o->zero_copy == ZCFS_ZEROCOPY_ON;

	if (npos < 1 || (npos < 2 && o->fuse_fd < 0))
		return fail(errbuf, errlen, "missing %s (usage: zcfs-serve [options] SOURCE MOUNTPOINT)",
			    npos < 1 ? "SOURCE and MOUNTPOINT" : "MOUNTPOINT");
	if (npos > 2)
		return fail(errbuf, errlen, "unexpected argument '%s'", argv[optind + 2]);
	if (o->sandbox && o->fuse_fd < 0 && !o->print_pinned)
		return fail(errbuf, errlen, "--sandbox needs --fd=N: mount(2), umount2(2) and "
			    "fusermount3 are not allowed inside the sandbox");
	if (o->broker_fd >= 0 && (!o->passthrough || o->fuse_fd < 0))
		return fail(errbuf, errlen, "--broker-fd needs --passthrough and --fd=N (it is zcfsd's)");
	if (o->resume && o->fuse_fd < 0)
		return fail(errbuf, errlen, "--resume needs --fd=N (the live connection to take over)");
	if (o->standby_fd >= 0 && !o->resume)
		return fail(errbuf, errlen, "--standby-fd needs --resume (a standby takes over a live connection)");
	/* A holder's ring refuses buffer registration (sandbox_holder.c): a
	 * pool there is unregistered, and zero-copy (pages registered in the
	 * ring the command came on) cannot be had. */
	if ((o->ring_holder || o->holder_rings >= 0) &&
	    (o->fuse_fd < 0 || o->ring_memfd < 0 || o->transport != ZCFS_TRANSPORT_URING ||
	     o->buffer_pool == ZCFS_BUFPOOL_REGISTERED || o->zero_copy != ZCFS_ZEROCOPY_OFF))
		return fail(errbuf, errlen, "--%s needs --fd=N, --ring-memfd=N, --transport=uring, "
			    "--zero-copy=off and no --buffer-pool=registered (holder rings take "
			    "no registered buffers)", o->ring_holder ? "ring-holder" : "holder-rings");
	if (o->ring_holder && o->holder_rings >= 0)
		return fail(errbuf, errlen, "--ring-holder and --holder-rings exclude each other");
	/* Pools and zero-copy exist only on the ring, and zero-copy pages
	 * are delivered only to queues that have a pool. */
	if (o->transport == ZCFS_TRANSPORT_DEVFUSE && ring_only)
		return fail(errbuf, errlen, "--buffer-pool/--zero-copy=on need the io_uring transport, "
			    "not --transport=devfuse");
	/* Demanding a ring extension demands the ring: auto must not
	 * quietly settle for /dev/fuse. */
	if (o->transport == ZCFS_TRANSPORT_AUTO && ring_only)
		o->transport = ZCFS_TRANSPORT_URING;
	if (o->zero_copy == ZCFS_ZEROCOPY_ON && o->buffer_pool == ZCFS_BUFPOOL_OFF)
		return fail(errbuf, errlen, "--zero-copy=on needs a buffer pool (--buffer-pool=off given)");
	o->source = argv[optind];
	o->mountpoint = npos > 1 ? argv[optind + 1] : NULL;
	if (o->cache == ZCFS_CACHE_DEFAULT)
		o->cache = ZCFS_CACHE_SHARED;
	/* Only the volume's own server changes SOURCE, so the kernel may hold
	 * writes back (docs/caching.md). Passthrough excludes it. */
	o->writeback = wb >= 0 ? wb == 1 : o->cache == ZCFS_CACHE_EXCLUSIVE && !o->passthrough;
	return 0;
}

static int parse_args(int argc, char **argv, struct zcfs_options *o, char *errbuf, size_t errlen)
{
	int c, r, wb = -1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fdhV", long_opts, NULL)) != -1) {
		r = table_option(c, optarg, o, errbuf, errlen);
		if (r != -ENOENT) {
			if (r < 0)
				return r;
			continue;
		}
		switch (c) {
		case OPT_WRITEBACK: wb = 1; break;
		case OPT_NO_WRITEBACK: wb = 0; break;
		case 'h': o->help = true; return 0;
		case 'V': o->version = true; return 0;
		case ':':
			return fail(errbuf, errlen, "option '%s' needs a value", argv[optind - 1]);
		default:
			return fail(errbuf, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	return check_args(argc, argv, o, wb, errbuf, errlen);
}

int options_parse(int argc, char **argv, struct zcfs_options *o, char *errbuf, size_t errlen)
{
	char **args = NULL;
	int nargs = 0, r;

	*o = (struct zcfs_options){ .fuse_fd = -1, .stats_fd = -1, .allow_other = true,
				    .broker_fd = -1, .ring_memfd = -1, .ready_fd = -1, .standby_fd = -1,
				    .holder_rings = -1, .dirty_limit = 1ULL << 30,
				    .mount_flags = MS_NODEV | MS_NOSUID };
	r = expand_o(argc, argv, o, &args, &nargs, errbuf, errlen);
	if (r < 0)
		return r;
	r = parse_args(nargs, args, o, errbuf, errlen);
	free_expanded(args, nargs, argv, argc);
	return r;
}
