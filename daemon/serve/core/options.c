/* zcfs-serve's command line. Every bad argument is one line and -EINVAL;
 * main turns that into exit code 2. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include "options.h"
#include "daemon/common/parse.h"
#include "daemon/common/util.h"

enum {
	OPT_TRANSPORT = 256, OPT_THREADS, OPT_QUEUE_DEPTH, OPT_MAX_WRITE, OPT_READ_ONLY,
	OPT_OWNERSHIP, OPT_CACHE, OPT_WRITEBACK, OPT_PASSTHROUGH, OPT_ALLOW_OTHER,
	OPT_NO_ALLOW_OTHER, OPT_FD, OPT_PRINT_PINNED, OPT_SANDBOX, OPT_RESUME, OPT_STATS_FD,
	OPT_BUFFER_POOL, OPT_ZERO_COPY, OPT_POOL_BUFFERS, OPT_QUOTA_BYTES,
	OPT_BROKER_FD, OPT_NO_WRITEBACK, OPT_DIRTY_LIMIT, OPT_RING_MEMFD, OPT_NO_ACL, OPT_PINNED_BUDGET,
	OPT_READY_FD, OPT_COUNT_INODES,
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
	{ "buffer-pool", required_argument, NULL, OPT_BUFFER_POOL },
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
	       "  --ready-fd=N          write one byte 'R' to fd N and close it once INIT is\n"
	       "                        answered and the transport serves (zcfsd's publish\n"
	       "                        waits for it; exit before that closes it unwritten)\n"
	       "  --ring-memfd=N        io_uring buffers in memfd N (zcfsd keeps it): with\n"
	       "                        --resume, requests the previous server's ring\n"
	       "                        entries held are answered too\n"
	       "  --resume              with --fd: take over a live connection whose server\n"
	       "                        died (INIT done; node ids and open files found again)\n"
	       "  --print-pinned        print the bytes of memory this volume would pin with\n"
	       "                        these options (rings, entry headers, payloads), exit\n"
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

static int parse_enum(const char *val, const char *const *names, int n, int *ret)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(val, names[i])) {
			*ret = i;
			return 0;
		}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct zcfs_options *o, char *errbuf, size_t errlen)
{
	static const char *const transports[] = { "auto", "devfuse", "uring" };
	static const char *const ownerships[] = { "default", "native", "xattr" };
	static const char *const caches[] = { "default", "exclusive", "shared", "none" };
	static const char *const pools[] = { "auto", "on", "registered", "off" };
	static const char *const zcs[] = { "auto", "on", "off" };
	uint64_t v;
	int c, e, npos, wb = -1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fdhV", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_TRANSPORT:
			if (parse_enum(optarg, transports, 3, &e) < 0)
				return fail(errbuf, errlen, "--transport: '%s' is not auto, devfuse or uring", optarg);
			o->transport = (enum zcfs_transport_kind)e;
			break;
		case OPT_THREADS:
			if (parse_u64(optarg, 1, 256, &v) < 0)
				return fail(errbuf, errlen, "--threads: '%s' is not a number from 1 to 256", optarg);
			o->threads = (unsigned)v;
			break;
		case OPT_QUEUE_DEPTH:
			if (parse_u64(optarg, 1, 1024, &v) < 0)
				return fail(errbuf, errlen, "--queue-depth: '%s' is not a number from 1 to 1024", optarg);
			o->queue_depth = (unsigned)v;
			break;
		case OPT_MAX_WRITE:
			if (parse_size(optarg, 4096, 16u << 20, &v) < 0 || v % 4096)
				return fail(errbuf, errlen, "--max-write: '%s' is not a multiple of 4K from 4K to 16M", optarg);
			o->max_write = (uint32_t)v;
			break;
		case OPT_PINNED_BUDGET:
			if (parse_size(optarg, 1u << 20, 1ULL << 40, &v) < 0)
				return fail(errbuf, errlen, "--pinned-budget: '%s' is not a size from 1M to 1T", optarg);
			o->pinned_budget = v;
			break;
		case OPT_OWNERSHIP:
			if (parse_enum(optarg, ownerships, 3, &e) < 0 || e == 0)
				return fail(errbuf, errlen, "--ownership: '%s' is not native or xattr", optarg);
			o->ownership = (enum zcfs_ownership)e;
			break;
		case OPT_CACHE:
			if (parse_enum(optarg, caches, 4, &e) < 0 || e == 0)
				return fail(errbuf, errlen, "--cache: '%s' is not exclusive, shared or none", optarg);
			o->cache = (enum zcfs_cache)e;
			break;
		case OPT_BUFFER_POOL:
			if (parse_enum(optarg, pools, 4, &e) < 0)
				return fail(errbuf, errlen, "--buffer-pool: '%s' is not auto, on, registered or off", optarg);
			o->buffer_pool = (enum zcfs_bufpool_mode)e;
			break;
		case OPT_ZERO_COPY:
			if (parse_enum(optarg, zcs, 3, &e) < 0)
				return fail(errbuf, errlen, "--zero-copy: '%s' is not auto, on or off", optarg);
			o->zero_copy = (enum zcfs_zerocopy_mode)e;
			break;
		case OPT_POOL_BUFFERS:
			if (parse_u64(optarg, 1, 1024, &v) < 0)
				return fail(errbuf, errlen, "--pool-buffers: '%s' is not a number from 1 to 1024", optarg);
			o->pool_buffers = (unsigned)v;
			break;
		case OPT_FD:
			if (parse_u64(optarg, 0, 1 << 20, &v) < 0)
				return fail(errbuf, errlen, "--fd: '%s' is not a file descriptor number", optarg);
			o->fuse_fd = (int)v;
			break;
		case OPT_RING_MEMFD:
			if (parse_u64(optarg, 0, 1 << 20, &v) < 0)
				return fail(errbuf, errlen, "--ring-memfd: '%s' is not a file descriptor number", optarg);
			o->ring_memfd = (int)v;
			break;
		case OPT_BROKER_FD:
			if (parse_u64(optarg, 0, 1 << 20, &v) < 0)
				return fail(errbuf, errlen, "--broker-fd: '%s' is not a file descriptor number", optarg);
			o->broker_fd = (int)v;
			break;
		case OPT_QUOTA_BYTES:
			if (parse_size(optarg, 4096, 1ULL << 60, &v) < 0)
				return fail(errbuf, errlen, "--quota-bytes: '%s' is not a size of at least 4K (K, M, G suffixes)", optarg);
			o->quota_bytes = v;
			break;
		case OPT_COUNT_INODES: o->count_inodes = true; break;
		case OPT_READ_ONLY: o->read_only = true; break;
		case OPT_WRITEBACK: wb = 1; break;
		case OPT_NO_WRITEBACK: wb = 0; break;
		case OPT_DIRTY_LIMIT:
			if (parse_size(optarg, 0, 1ULL << 50, &v) < 0)
				return fail(errbuf, errlen, "--dirty-limit: '%s' is not a size (K, M, G suffixes)", optarg);
			o->dirty_limit = v;
			break;
		case OPT_PASSTHROUGH: o->passthrough = true; break;
		case OPT_PRINT_PINNED: o->print_pinned = true; break;
		case OPT_SANDBOX: o->sandbox = true; break;
		case OPT_RESUME: o->resume = true; break;
		case OPT_STATS_FD:
			if (parse_u64(optarg, 0, 1 << 20, &v) < 0)
				return fail(errbuf, errlen, "--stats-fd: '%s' is not a file descriptor number", optarg);
			o->stats_fd = (int)v;
			break;
		case OPT_READY_FD:
			if (parse_u64(optarg, 0, 1 << 20, &v) < 0)
				return fail(errbuf, errlen, "--ready-fd: '%s' is not a file descriptor number", optarg);
			o->ready_fd = (int)v;
			break;
		case OPT_NO_ACL: o->no_acl = true; break;
		case OPT_ALLOW_OTHER: o->allow_other = true; break;
		case OPT_NO_ALLOW_OTHER: o->allow_other = false; break;
		case 'f': o->foreground = true; break;
		case 'd': o->debug = true; break;
		case 'h': o->help = true; return 0;
		case 'V': o->version = true; return 0;
		case ':':
			return fail(errbuf, errlen, "option '%s' needs a value", argv[optind - 1]);
		default:
			return fail(errbuf, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	npos = argc - optind;
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
	/* Pools and zero-copy exist only on the ring, and zero-copy pages
	 * are delivered only to queues that have a pool. */
	if (o->transport == ZCFS_TRANSPORT_DEVFUSE &&
	    (o->buffer_pool == ZCFS_BUFPOOL_ON || o->buffer_pool == ZCFS_BUFPOOL_REGISTERED ||
	     o->zero_copy == ZCFS_ZEROCOPY_ON))
		return fail(errbuf, errlen, "--buffer-pool/--zero-copy=on need the io_uring transport, "
			    "not --transport=devfuse");
	/* Demanding a ring extension demands the ring: auto must not
	 * quietly settle for /dev/fuse. */
	if (o->transport == ZCFS_TRANSPORT_AUTO &&
	    (o->buffer_pool == ZCFS_BUFPOOL_ON || o->buffer_pool == ZCFS_BUFPOOL_REGISTERED ||
	     o->zero_copy == ZCFS_ZEROCOPY_ON))
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

int options_parse(int argc, char **argv, struct zcfs_options *o, char *errbuf, size_t errlen)
{
	char **args = NULL;
	int nargs = 0, r;

	*o = (struct zcfs_options){ .fuse_fd = -1, .stats_fd = -1, .allow_other = true,
				    .broker_fd = -1, .ring_memfd = -1, .ready_fd = -1, .dirty_limit = 1ULL << 30,
				    .mount_flags = MS_NODEV | MS_NOSUID };
	r = expand_o(argc, argv, o, &args, &nargs, errbuf, errlen);
	if (r < 0)
		return r;
	r = parse_args(nargs, args, o, errbuf, errlen);
	free_expanded(args, nargs, argv, argc);
	return r;
}
