/* mountfd SOURCE MOUNTPOINT CMD...: mounts a new FUSE connection at
 * MOUNTPOINT the way zcfsd does (mount(2) with fd=N, default_permissions,
 * allow_other), then execs CMD with the /dev/fuse fd as fd 3. Lets tests
 * run zcfs-serve --fd=3 with no privilege at all. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char opts[256];
	struct stat st;
	int fd;

	if (argc < 4) {
		fprintf(stderr, "usage: mountfd SOURCE MOUNTPOINT CMD...\n");
		return 2;
	}
	if (stat(argv[2], &st) < 0) {
		perror(argv[2]);
		return 1;
	}
	fd = open("/dev/fuse", O_RDWR);
	if (fd < 0 || (fd != 3 && dup2(fd, 3) < 0)) {
		perror("/dev/fuse");
		return 1;
	}
	if (fd != 3)
		close(fd);
	snprintf(opts, sizeof(opts),
		 "fd=3,rootmode=%o,user_id=0,group_id=0,default_permissions,allow_other,max_read=1048576",
		 st.st_mode & S_IFMT);
	if (mount(argv[1], argv[2], "fuse.zcfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		perror("mount");
		return 1;
	}
	execvp(argv[3], &argv[3]);
	perror(argv[3]);
	umount2(argv[2], MNT_DETACH);
	return 1;
}
