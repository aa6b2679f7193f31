/* Kicking requests that wait in the kernel for a server: a NOTIFY_RETRIEVE
 * of a regular file the kernel caches makes it send this queue's CPU a
 * NOTIFY_REPLY request, and committing that fetches the first waiting
 * one; each commit after it fetches the next. Sent from the queue thread
 * (pinned to CPU qid) so the request comes to this queue. */
#ifndef ZCFS_URING_KICK_H
#define ZCFS_URING_KICK_H

#include <stdbool.h>

struct uring_queue;

/* One kick; false when SOURCE (walked, bounded) has no file the kernel
 * still caches. */
bool uring_kick(struct uring_queue *q);
/* A restarted server: one kick, and a log line when none could go out. */
void uring_kick_waiting(struct uring_queue *q);

#endif
