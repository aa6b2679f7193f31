/* openat2(2) through syscall(2): glibc 2.36 has no wrapper. */
#include <errno.h>
#include <fcntl.h>
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
