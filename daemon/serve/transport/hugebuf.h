/* Anonymous buffers on a 2 MiB boundary with transparent huge pages asked
 * for: the buffers the kernel copies FUSE payloads into and out of. */
#ifndef ZCFS_HUGEBUF_H
#define ZCFS_HUGEBUF_H

#include <stddef.h>
#include <sys/mman.h>

#define HUGEBUF_ALIGN (2UL << 20)

/* size bytes, MAP_FAILED (errno set) on failure; free with munmap(p, size).
 * Only whole 2 MiB stretches can be huge pages: round size up to
 * HUGEBUF_ALIGN to have all of it on them. */
void *hugebuf_map(size_t size);

#endif
