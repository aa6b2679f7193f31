/* zcfsctl: command line client of zcfsd, and the offline policy checker.
 * Exit 0 on success, 1 when the daemon answered an error (CODE: message
 * on stderr), 2 on a bad command line or an invalid policy, 3 when the
 * daemon cannot be reached. */
#include <getopt.h>
#include <string.h>
#include "ctl_kernel.h"
#include "ctl_status.h"
#include "policy.h"
#include "zcfs_proto.h"

static const char *sock;

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: zcfsctl [--socket PATH] COMMAND\n"
		"  status [--json]                      tenants, budgets, volumes\n"
		"  volume create ID [--tenant T] [--queue-depth N] [--max-write SIZE]\n"
		"                   [--transport auto|devfuse|uring] [--read-only] [--size SIZE]\n"
		"  volume publish ID TARGET [--read-only] | unpublish ID TARGET\n"
		"  volume delete ID | get ID | list\n"
		"  tenant list\n"
		"  policy check PATH                    validate a policy file or directory\n"
		"  policy reload                        make zcfsd re-read its policy\n"
		"  call METHOD [PARAMS-JSON]            one raw request; prints the response\n"
		"  raw                                  send stdin verbatim as one request\n"
		"  kernel [--json]                      probe the kernel's FUSE data paths (root)\n"
		"Socket: --socket, else $ZCFS_SOCKET, else %s\n", ZCFS_DEFAULT_SOCKET);
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
	int r = zcfs_call(zcfs_socket_path(sock), method, params, resp);

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
	json_object *resp = NULL, *res;
	bool as_json = argc > 1 && !strcmp(argv[1], "--json");
	int rc = call("status", NULL, &resp);

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
		{ 0 }
	};
	json_object *p = json_object_new_object();
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': json_object_object_add(p, "tenant", json_object_new_string(optarg)); break;
		case 'q': json_object_object_add(p, "queue_depth", json_object_new_int64(atoll(optarg))); break;
		case 'w': json_object_object_add(p, "max_write", json_object_new_string(optarg)); break;
		case 'T': json_object_object_add(p, "transport", json_object_new_string(optarg)); break;
		case 'r': json_object_object_add(p, "read_only", json_object_new_boolean(1)); break;
		case 's': json_object_object_add(p, "size", json_object_new_string(optarg)); break;
		default: json_object_put(p); usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		json_object_put(p);
		usage(stderr);
		return 2;
	}
	json_object_object_add(p, "id", json_object_new_string(argv[optind]));
	return simple("volume.create", p);
}

static json_object *id_params(const char *id, const char *target)
{
	json_object *p = json_object_new_object();

	json_object_object_add(p, "id", json_object_new_string(id));
	if (target)
		json_object_object_add(p, "target", json_object_new_string(target));
	return p;
}

static int cmd_volume(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (!strcmp(sub, "create"))
		return cmd_volume_create(argc - 1, argv + 1);
	if ((!strcmp(sub, "publish") || !strcmp(sub, "unpublish")) && argc == 4)
		return simple(!strcmp(sub, "publish") ? "volume.publish" : "volume.unpublish",
			      id_params(argv[2], argv[3]));
	if (!strcmp(sub, "publish") && argc == 5 && !strcmp(argv[4], "--read-only")) {
		json_object *p = id_params(argv[2], argv[3]);
		json_object_object_add(p, "read_only", json_object_new_boolean(1));
		return simple("volume.publish", p);
	}
	if ((!strcmp(sub, "delete") || !strcmp(sub, "get")) && argc == 3)
		return simple(!strcmp(sub, "delete") ? "volume.delete" : "volume.get",
			      id_params(argv[2], NULL));
	if (!strcmp(sub, "list") && argc == 2)
		return simple("volume.list", NULL);
	usage(stderr);
	return 2;
}

static int cmd_call(int argc, char **argv)
{
	json_object *params = NULL, *resp = NULL;
	int rc;

	if (argc < 2 || argc > 3) {
		usage(stderr);
		return 2;
	}
	if (argc == 3 && !(params = json_tokener_parse(argv[2]))) {
		fprintf(stderr, "zcfsctl: PARAMS is not valid JSON\n");
		return 2;
	}
	rc = zcfs_call(zcfs_socket_path(sock), argv[1], params, &resp);
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

int main(int argc, char **argv)
{
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "--socket")) {
		sock = argv[2];
		i = 3;
	} else if (argc > 1 && !strncmp(argv[1], "--socket=", 9)) {
		sock = argv[1] + 9;
		i = 2;
	}
	argc -= i;
	argv += i;
	if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? 2 : 0;
	}
	if (!strcmp(argv[0], "status"))
		return cmd_status(argc, argv);
	if (!strcmp(argv[0], "volume"))
		return cmd_volume(argc, argv);
	if (!strcmp(argv[0], "tenant") && argc == 2 && !strcmp(argv[1], "list"))
		return simple("tenant.list", NULL);
	if (!strcmp(argv[0], "policy") && argc == 3 && !strcmp(argv[1], "check"))
		return cmd_policy_check(argv[2]);
	if (!strcmp(argv[0], "policy") && argc == 2 && !strcmp(argv[1], "reload"))
		return simple("policy.reload", NULL);
	if (!strcmp(argv[0], "call"))
		return cmd_call(argc, argv);
	if (!strcmp(argv[0], "kernel"))
		return ctl_kernel(argc, argv);
	if (!strcmp(argv[0], "raw") && argc == 1)
		return cmd_raw();
	usage(stderr);
	return 2;
}
