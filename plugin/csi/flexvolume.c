/* zcfs-flexvolume: the Kubernetes FlexVolume driver alone (flex.c), the
 * binary the DaemonSet's init container copies onto the host, where
 * kubelet execs it: `init`, `mount DIR JSON`, `unmount DIR`. It is linked
 * statically (json-c, libc), so it runs on hosts whose libraries are not
 * the image's (RHEL 8, Ubuntu 20.04, AL2, COS, Bottlerocket); zcfs-csi
 * has the same driver but links gRPC. Options come from the environment
 * only: kubelet passes none ($ZCFS_SOCKET, $ZCFS_CSI_STATE_DIR). */
#include <string.h>
#include "csi.h"
#include "common/log.h"
#include "plugin/common/plugin_json.h"
#include "common/version.h"

static void print(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	_cleanup_json_ json_object *out = NULL;
	struct csi_ctx c = { 0 };
	const char *sd = getenv("ZCFS_CSI_STATE_DIR");
	int r;

	log_set_ident("zcfs-flexvolume");
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		zcfs_print_version(CSI_DRIVER_NAME);
		return 0;
	}
	if (argc < 2 || !strcmp(argv[1], "--help")) {
		printf("Usage: zcfs-flexvolume init | mount DIR OPTIONS-JSON | unmount DIR | --version\n"
		       "Kubernetes FlexVolume driver zcfs.io/zcfs; talks to zcfsd at $ZCFS_SOCKET (default %s),\n"
		       "locks in $ZCFS_CSI_STATE_DIR (default %s).\n",
		       ZCFS_DEFAULT_SOCKET, CSI_DEFAULT_STATE_DIR);
		return argc < 2 ? 2 : 0;
	}
	c.socket = zcfs_socket_path(NULL);
	c.state_dir = sd && *sd ? sd : CSI_DEFAULT_STATE_DIR;
	r = flex_main(&c, argc - 1, argv + 1, &out);
	print(out);
	return r;
}
