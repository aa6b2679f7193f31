/* Mount flag inspection and the per-target read-only flag. */
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include "mnt.h"

void mnt_unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

int mnt_top_readonly(const char *path, bool *ro)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int found = -ENOENT;

	if (!f)
		return -errno;
	/* later lines are mounted on top of earlier ones: the last match wins */
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok, *mp = NULL, *opts = NULL;
		int i = 0;
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++) {
			if (i == 4)
				mp = tok;
			else if (i == 5) {
				opts = tok;
				break;
			}
		}
		if (!mp || !opts)
			continue;
		mnt_unescape(mp);
		if (strcmp(mp, path))
			continue;
		*ro = !strncmp(opts, "ro", 2) && (opts[2] == ',' || opts[2] == '\0');
		found = 0;
	}
	return found;
}

int mnt_set_readonly(const char *path, bool ro)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_DIRECTORY,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct mount_attr attr = {
		.attr_set = ro ? MOUNT_ATTR_RDONLY : 0,
		.attr_clr = ro ? 0 : MOUNT_ATTR_RDONLY,
	};
	_cleanup_close_ int fd = -1;

	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	return RET_NERRNO((int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)));
}
