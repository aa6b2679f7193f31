/* Where zcfsd must mount when the plugin runs as a Docker managed plugin.
 * The plugin sees its propagatedMount (MOUNT_ROOT, e.g. /mnt/zcfs) inside
 * its own container; Docker bind-mounts it there from the host's
 * DATA_ROOT/plugins/ID/propagated-mount (rshared) and looks for a
 * volume's Mountpoint at that host path. zcfsd runs on the host and
 * checks targets against the policy's allowed_target_prefixes in its own
 * mount namespace, so it is sent the host path: DATA_ROOT from the
 * operator (dockerd's --data-root, /var/lib/docker by default), ID from
 * this container's mount table, whose entry for MOUNT_ROOT has the host
 * directory as its root (relative to that file system's root, so only
 * the ".../plugins/ID/propagated-mount" end is relied on). */
#include <stdio.h>
#include <string.h>
#include "common/names.h"
#include "vp.h"

#define PLUGIN_ID_LEN 64	/* Docker's plugin ids: sha256 in hex */

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

/* The plugin id in ROOT, a path ending in /plugins/ID/propagated-mount. */
static int plugin_id_of(const char *root, char id[PLUGIN_ID_LEN + 1])
{
	static const char tail[] = "/propagated-mount";
	static const char mid[] = "/plugins/";
	size_t n = strlen(root), start;

	if (n < sizeof(mid) - 1 + PLUGIN_ID_LEN + sizeof(tail) - 1 ||
	    strcmp(root + n - (sizeof(tail) - 1), tail))
		return -ENOENT;
	start = n - (sizeof(tail) - 1) - PLUGIN_ID_LEN;
	if (strncmp(root + start - (sizeof(mid) - 1), mid, sizeof(mid) - 1))
		return -ENOENT;
	memcpy(id, root + start, PLUGIN_ID_LEN);
	id[PLUGIN_ID_LEN] = '\0';
	return strspn(id, "0123456789abcdef") == PLUGIN_ID_LEN ? 0 : -ENOENT;
}

/* The root field of the last (topmost) mount at MOUNT_ROOT in MOUNTINFO. */
static int mount_root_field(const char *mountinfo, const char *mount_root, char **ret)
{
	_cleanup_free_ char *line = NULL;
	FILE *f = fopen(mountinfo, "re");
	size_t cap = 0;
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char root[4096], mp[4096];
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
		if (sscanf(line, "%*u %*u %*u:%*u %4095s %4095s", root, mp) != 2)
			continue;
		unescape(root);
		unescape(mp);
		if (strcmp(mp, mount_root))
			continue;
		free(*ret);
		*ret = strdup(root);
		r = *ret ? 0 : -ENOMEM;
	}
	fclose(f);
	return r;
}

int vp_docker_host_root(const char *mountinfo, const char *mount_root, const char *data_root,
			char **ret, struct zcfs_err *e)
{
	_cleanup_free_ char *root = NULL;
	char id[PLUGIN_ID_LEN + 1];
	int r;

	*ret = NULL;
	if (!path_is_normalized_absolute(data_root))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "Docker data root '%s' must be a normalized absolute path", data_root);
	r = mount_root_field(mountinfo, mount_root, &root);
	if (r == -ENOENT)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, r,
				 "%s is not a mount point here: not running as a Docker managed plugin "
				 "with propagatedMount %s", mount_root, mount_root);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "%s: %s", mountinfo, strerror(-r));
	if (plugin_id_of(root, id) < 0)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -ENOENT,
				 "the mount at %s comes from '%.200s', not from Docker's "
				 "plugins/ID/propagated-mount", mount_root, root);
	if (asprintf(ret, "%s/plugins/%s/propagated-mount", data_root, id) < 0) {
		*ret = NULL;
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	return 0;
}
