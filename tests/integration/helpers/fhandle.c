/* fhandle PATH: name_to_handle_at(PATH); when a handle is given, drops
 * the kernel's caches and opens it again with open_by_handle_at on the
 * mount's root. Prints "nohandle ERRNO-NAME", "open ok" or "open
 * ERRNO-NAME"; exit 0 for nohandle/open ok (a refused handle and a
 * working one are both honest), 1 for a handle that does not open. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct file_handle *h = calloc(1, sizeof(*h) + MAX_HANDLE_SZ);
	int mount_id, root, fd, dc;

	if (argc != 3 || !h) {
		fprintf(stderr, "usage: fhandle PATH MOUNTPOINT\n");
		free(h);
		return 2;
	}
	h->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, argv[1], h, &mount_id, 0) < 0) {
		printf("nohandle %s\n", strerrorname_np(errno));
		free(h);
		return 0;
	}
	root = open(argv[2], O_RDONLY | O_DIRECTORY);
	dc = open("/proc/sys/vm/drop_caches", O_WRONLY);
	sync();
	if (dc >= 0 && write(dc, "2", 1) != 1)
		perror("drop_caches");
	fd = open_by_handle_at(root, h, O_RDONLY);
	free(h);
	if (fd < 0) {
		printf("open %s\n", strerrorname_np(errno));
		return 1;
	}
	printf("open ok\n");
	return 0;
}
