/* zcfsctl: command line client of zcfsd, and the offline policy checker.
 * Exit 0 on success, 1 when the daemon answered an error (CODE: message
 * on stderr), 2 on a bad command line or an invalid policy, 3 when the
 * daemon cannot be reached. The global options (--socket, --help,
 * --version) may stand before or after the command; every other option
 * belongs to its command, and one the command does not know is refused. */
#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include "ctl_kernel.h"
#include "ctl_status.h"
#include "common/names.h"
#include "common/parse.h"
#include "common/policy.h"
#include "common/version.h"
#include "common/zcfs_proto.h"

static const char *sock;

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: zcfsctl [--socket PATH] COMMAND\n"
		"  status [--json]                      tenants, budgets, volumes\n"
		"  volume create ID [--tenant T] [--queue-depth N] [--max-write SIZE]\n"
		"                   [--transport auto|devfuse|uring] [--read-only] [--size SIZE]\n"
		"                   [--ring-holder]  (io_uring: rings in a holder process, so a\n"
		"                                     server kill loses no request; slower)\n"
		"  volume publish ID TARGET [--read-only] | unpublish ID TARGET\n"
		"  volume delete ID | get ID | list\n"
		"  volume restart ID                    replace its server, handing requests over\n"
		"  volume resize ID SIZE                grow it (online: df and ENOSPC move at once)\n"
		"  tenant list\n"
		"  policy check PATH                    validate a policy file or directory\n"
		"  policy reload                        make zcfsd re-read its policy\n"
		"  upgrade                              zcfsd re-execs its binary, keeping every volume\n"
		"  call METHOD [PARAMS-JSON]            one raw request; prints the response\n"
		"  raw                                  send stdin verbatim as one request\n"
		"  kernel [--json]                      probe the kernel's FUSE data paths (root)\n"
		"Global options (before or after the command): --socket PATH, --help, --version\n"
		"Socket: --socket, else $ZCFS_SOCKET, else %s\n", ZCFS_DEFAULT_SOCKET);
}

/* "zcfsctl: WHAT" and the usage on stderr; exit status 2. */
__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("zcfsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr);
	return 2;
}

/* getopt_long over a command's ARGV (ARGV[0] = the command's last word)
 * with our own messages: returns the option, -1 at the end, or '?' after
 * printing what was wrong (the caller returns 2). */
static int next_opt(int argc, char **argv, const struct option *opts, const char *cmd)
{
	int c, i = optind;

	opterr = 0;
	c = getopt_long(argc, argv, ":", opts, NULL);
	if (c == '?' || c == ':') {
		const char *arg = argv[optind - 1 < argc ? optind - 1 : i];
		if (c == ':')
			bad_usage("%s: option '%s' needs a value", cmd, arg);
		else if (optopt && strchr(arg, '='))
			bad_usage("%s: option '%s' takes no value", cmd, arg);
		else
			bad_usage("%s: unknown option '%s'", cmd, arg);
		return '?';
	}
	return c;
}

/* Prints an error response; returns the exit status for RESP. */
static int report(json_object *resp)
{
	json_object *e, *c, *m;

	if (!json_object_object_get_ex(resp, "error", &e))
		return 0;
	json_object_object_get_ex(e, "code", &c);
	json_object_object_get_ex(e, "message", &m);
	fprintf(stderr, "%s: %s\n", c ? json_object_get_string(c) : "?", m ? json_object_get_string(m) : "");
	return 1;
}

static int call(const char *method, json_object *params, json_object **resp)
{
	int r = zcfs_call_raw(zcfs_socket_path(sock), method, params, resp);

	if (r < 0) {
		fprintf(stderr, "zcfsctl: %s: %s\n", zcfs_socket_path(sock), strerror(-r));
		return 3;
	}
	return report(*resp);
}

static void print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* call METHOD PARAMS and print its result as JSON. */
static int simple(const char *method, json_object *params)
{
	json_object *resp = NULL, *res;
	int rc = call(method, params, &resp);

	if (rc == 0 && json_object_object_get_ex(resp, "result", &res))
		print_json(res);
	json_object_put(resp);
	json_object_put(params);
	return rc;
}

static int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' }, { 0 } };
	json_object *resp = NULL, *res;
	bool as_json = false;
	int c, rc;

	optind = 1;
	while ((c = next_opt(argc, argv, opts, "status")) != -1) {
		if (c != 'j')
			return 2;
		as_json = true;
	}
	if (optind != argc)
		return bad_usage("status: unexpected argument '%s'", argv[optind]);
	rc = call("status", NULL, &resp);

	if (rc == 0 && json_object_object_get_ex(resp, "result", &res)) {
		if (as_json)
			print_json(res);
		else
			ctl_print_status(stdout, res);
	}
	json_object_put(resp);
	return rc;
}

static int cmd_policy_check(const char *path)
{
	struct policy_errors errs = { 0 };
	struct policy *p = NULL;
	int r = policy_load(path, &p, &errs);

	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.msgs[i]);
	if (r < 0) {
		fprintf(stderr, "policy %s: %zu problem%s\n", path, errs.n, errs.n == 1 ? "" : "s");
		policy_errors_clear(&errs);
		return 2;
	}
	printf("policy %s: ok, %zu tenant%s\n", path, p->n_tenants, p->n_tenants == 1 ? "" : "s");
	policy_free(p);
	return 0;
}

static int cmd_volume_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ "queue-depth", required_argument, NULL, 'q' },
		{ "max-write", required_argument, NULL, 'w' },
		{ "transport", required_argument, NULL, 'T' },
		{ "read-only", no_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "ring-holder", no_argument, NULL, 'H' },
		{ 0 }
	};
	json_object *p = json_object_new_object();
	uint64_t n;
	int c;

	optind = 1;
	while ((c = next_opt(argc, argv, opts, "volume create")) != -1) {
		switch (c) {
		case 't':
			if (!name_is_valid_id(optarg))
				goto bad_value;
			json_object_object_add(p, "tenant", json_object_new_string(optarg));
			break;
		case 'q':
			if (parse_u64(optarg, 1, 1024, &n) < 0) {
				json_object_put(p);
				return bad_usage("volume create: --queue-depth '%s': want an integer from 1 to 1024",
						 optarg);
			}
			json_object_object_add(p, "queue_depth", json_object_new_int64((int64_t)n));
			break;
		case 'w':
			if (parse_size(optarg, 4096, 16u << 20, &n) < 0 || n % 4096) {
				json_object_put(p);
				return bad_usage("volume create: --max-write '%s': want a multiple of 4K from 4K to 16M",
						 optarg);
			}
			json_object_object_add(p, "max_write", json_object_new_int64((int64_t)n));
			break;
		case 'T':
			if (strcmp(optarg, "auto") && strcmp(optarg, "devfuse") && strcmp(optarg, "uring")) {
				json_object_put(p);
				return bad_usage("volume create: --transport '%s': want auto, devfuse or uring", optarg);
			}
			json_object_object_add(p, "transport", json_object_new_string(optarg));
			break;
		case 'r': json_object_object_add(p, "read_only", json_object_new_boolean(1)); break;
		case 'H': json_object_object_add(p, "ring_holder", json_object_new_boolean(1)); break;
		case 's':
			/* 0 = no limit (docs/control-protocol.md); zcfsd checks the 4K floor. */
			if (parse_size(optarg, 0, UINT64_MAX, &n) < 0) {
				json_object_put(p);
				return bad_usage("volume create: --size '%s': want a byte count (0 = no limit), optionally with K, M or G",
						 optarg);
			}
			json_object_object_add(p, "size", json_object_new_string(optarg));
			break;
		default: json_object_put(p); return 2;
		}
	}
	if (optind + 1 != argc) {
		json_object_put(p);
		return bad_usage("volume create: want exactly one ID (got %d)", argc - optind);
	}
	if (!name_is_valid_id(argv[optind])) {
		json_object_put(p);
		return bad_usage("volume create: ID '%s' must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}", argv[optind]);
	}
	json_object_object_add(p, "id", json_object_new_string(argv[optind]));
	return simple("volume.create", p);
bad_value:
	json_object_put(p);
	return bad_usage("volume create: --tenant '%s' is not a valid tenant name", optarg);
}

static json_object *id_params(const char *id, const char *target)
{
	json_object *p = json_object_new_object();

	json_object_object_add(p, "id", json_object_new_string(id));
	if (target)
		json_object_object_add(p, "target", json_object_new_string(target));
	return p;
}

/* volume resize ID SIZE: the size checked here first, like create's. */
static int cmd_volume_resize(const char *id, const char *size_s)
{
	json_object *p;
	uint64_t size;

	if (parse_size(size_s, 4096, 1ULL << 60, &size) < 0)
		return bad_usage("volume resize: SIZE '%s': want a byte count from 4K, or a size like 10G",
				 size_s);
	p = id_params(id, NULL);
	json_object_object_add(p, "size", json_object_new_int64((int64_t)size));
	return simple("volume.resize", p);
}

/* The volume subcommands that take positional arguments only (and
 * publish's --read-only): METHOD, how many, and their names for messages. */
static const struct {
	const char *sub, *method, *args;
	int nargs;
} volume_cmds[] = {
	{ "publish", "volume.publish", "ID TARGET", 2 },
	{ "unpublish", "volume.unpublish", "ID TARGET", 2 },
	{ "restart", "volume.restart", "ID", 1 },
	{ "resize", "volume.resize", "ID SIZE", 2 },
	{ "delete", "volume.delete", "ID", 1 },
	{ "get", "volume.get", "ID", 1 },
	{ "list", "volume.list", "", 0 },
};

static int cmd_volume(int argc, char **argv)
{
	static const struct option ro_opt[] = { { "read-only", no_argument, NULL, 'r' }, { 0 } };
	static const struct option no_opt[] = { { 0 } };
	const char *sub = argc > 1 ? argv[1] : "";
	char cmd[64];
	bool ro = false;
	size_t i;
	int c;

	if (!strcmp(sub, "create"))
		return cmd_volume_create(argc - 1, argv + 1);
	for (i = 0; i < ARRAY_SIZE(volume_cmds); i++)
		if (!strcmp(sub, volume_cmds[i].sub))
			break;
	if (i == ARRAY_SIZE(volume_cmds))
		return *sub ? bad_usage("unknown command 'volume %s'", sub) : bad_usage("volume: missing subcommand");
	snprintf(cmd, sizeof(cmd), "volume %s", sub);
	argc--;
	argv++;
	optind = 1;
	while ((c = next_opt(argc, argv, !strcmp(sub, "publish") ? ro_opt : no_opt, cmd)) != -1) {
		if (c != 'r')
			return 2;
		ro = true;
	}
	if (argc - optind != volume_cmds[i].nargs)
		return bad_usage("%s: want %s%s (got %d argument%s)", cmd, volume_cmds[i].nargs ? "" : "no arguments",
				 volume_cmds[i].args, argc - optind, argc - optind == 1 ? "" : "s");
	if (volume_cmds[i].nargs == 0)
		return simple(volume_cmds[i].method, NULL);
	if (!name_is_valid_id(argv[optind]))
		return bad_usage("%s: ID '%s' must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}", cmd, argv[optind]);
	if (!strcmp(sub, "resize"))
		return cmd_volume_resize(argv[optind], argv[optind + 1]);
	json_object *p = id_params(argv[optind], volume_cmds[i].nargs > 1 ? argv[optind + 1] : NULL);
	if (ro)
		json_object_object_add(p, "read_only", json_object_new_boolean(1));
	return simple(volume_cmds[i].method, p);
}

static int cmd_call(int argc, char **argv)
{
	json_object *params = NULL, *resp = NULL;
	int rc;

	if (argc < 2 || argc > 3)
		return bad_usage("call: want METHOD [PARAMS-JSON]");
	if (argc == 3 && !(params = json_tokener_parse(argv[2]))) {
		fprintf(stderr, "zcfsctl: PARAMS is not valid JSON\n");
		return 2;
	}
	rc = zcfs_call_raw(zcfs_socket_path(sock), argv[1], params, &resp);
	json_object_put(params);
	if (rc < 0) {
		fprintf(stderr, "zcfsctl: %s\n", strerror(-rc));
		return 3;
	}
	printf("%s\n", json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN));
	rc = json_object_object_get_ex(resp, "error", NULL) ? 1 : 0;
	json_object_put(resp);
	return rc;
}

/* Hostile-input tests need bytes the JSON library would never write. */
static int cmd_raw(void)
{
	_cleanup_free_ char *buf = NULL, *resp = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0, cap = 0;
	ssize_t n;
	int r;

	do {
		if (len + 65536 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 65536);
			if (!nb)
				return 1;
			buf = nb;
		}
		n = read(STDIN_FILENO, buf + len, cap - len);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	fd = zcfs_connect(zcfs_socket_path(sock));
	if (fd < 0) {
		fprintf(stderr, "zcfsctl: %s\n", strerror(-fd));
		return 3;
	}
	r = zcfs_roundtrip(fd, buf ? buf : "", len, &resp);
	if (r < 0) {
		fprintf(stderr, "zcfsctl: %s\n", strerror(-r));
		return 3;
	}
	printf("%s\n", resp);
	return strstr(resp, "\"error\"") ? 1 : 0;
}

/* Takes the global options out of ARGV wherever they stand (up to a
 * "--"), leaving the command and its own arguments. Returns 0, or 2
 * after printing what was wrong. */
static int take_global_options(int *argc, char **argv, bool *help, bool *version)
{
	int i, n = 1;

	for (i = 1; i < *argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			while (++i < *argc)
				argv[n++] = argv[i];
			break;
		}
		if (!strcmp(a, "--socket")) {
			if (i + 1 == *argc || !*argv[i + 1])
				return bad_usage("option '--socket' needs a PATH");
			sock = argv[++i];
		} else if (!strncmp(a, "--socket=", 9)) {
			if (!a[9])
				return bad_usage("option '--socket' needs a PATH");
			sock = a + 9;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			*help = true;
		} else if (!strcmp(a, "--version")) {
			*version = true;
		} else {
			argv[n++] = argv[i];
		}
	}
	*argc = n;
	argv[n] = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	bool help = false, version = false;

	if (take_global_options(&argc, argv, &help, &version))
		return 2;
	if (help) {
		usage(stdout);
		return 0;
	}
	if (version) {
		zcfs_print_version("zcfsctl");
		return 0;
	}
	argc--;
	argv++;
	if (argc < 1)
		return bad_usage("missing command");
	if (argv[0][0] == '-')
		return bad_usage("unknown option '%s'", argv[0]);
	if (!strcmp(argv[0], "status"))
		return cmd_status(argc, argv);
	if (!strcmp(argv[0], "volume"))
		return cmd_volume(argc, argv);
	if (!strcmp(argv[0], "tenant")) {
		if (argc == 2 && !strcmp(argv[1], "list"))
			return simple("tenant.list", NULL);
		return bad_usage("tenant: want 'tenant list'");
	}
	if (!strcmp(argv[0], "policy")) {
		if (argc == 3 && !strcmp(argv[1], "check"))
			return cmd_policy_check(argv[2]);
		if (argc == 2 && !strcmp(argv[1], "reload"))
			return simple("policy.reload", NULL);
		return bad_usage("policy: want 'policy check PATH' or 'policy reload'");
	}
	if (!strcmp(argv[0], "upgrade")) {
		if (argc == 1)
			return simple("daemon.upgrade", NULL);
		return bad_usage("upgrade: takes no arguments");
	}
	if (!strcmp(argv[0], "call"))
		return cmd_call(argc, argv);
	if (!strcmp(argv[0], "kernel"))
		return ctl_kernel(argc, argv);
	if (!strcmp(argv[0], "raw")) {
		if (argc == 1)
			return cmd_raw();
		return bad_usage("raw: takes no arguments (the request comes on stdin)");
	}
	return bad_usage("unknown command '%s'", argv[0]);
}
