/* openat2(2) through syscall(2): glibc 2.36 has no wrapper. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "openat2.h"

int openat2_fd(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .resolve = resolve };

	return RET_NERRNO((int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how)));
}

int open_nofollow(const char *path, uint64_t flags)
{
	return openat2_fd(AT_FDCWD, path, flags, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* The parent is walked without symlinks, so a component swapped for a
 * symlink after the directory was made cannot redirect the removal. */
int rmdir_nofollow(const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int pfd = -1;
	char *slash, *base;
	size_t n;

	if (!dir)
		return -ENOMEM;
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash || !slash[1] || !strcmp(slash + 1, ".") || !strcmp(slash + 1, ".."))
		return -EINVAL;
	base = slash + 1;
	*slash = '\0';
	pfd = open_nofollow(*dir ? dir : "/", O_PATH | O_DIRECTORY);
	if (pfd < 0)
		return pfd;
	return RET_NERRNO(unlinkat(pfd, base, AT_REMOVEDIR));
}
