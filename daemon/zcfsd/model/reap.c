/* Children zcfsd gave up waiting for (a syncfs child past its deadline,
 * a server killed after a failed publish): each pidfd is watched and the
 * child reaped when it fires, so no wait blocks the loop and none stays
 * a zombie. */
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "model.h"

static void on_exited(struct zcfsd *d, void *obj, uint32_t events)
{
	struct zcfsd_reaping *r = obj;
	siginfo_t si = { 0 };

	(void)events;
	if (waitid(P_PIDFD, (id_t)r->pidfd, &si, WEXITED | WNOHANG) == 0 && !si.si_pid)
		return;	/* not yet (a spurious wake-up) */
	zcfsd_unwatch(d, &r->watch);
	r->pidfd = safe_close(r->pidfd);
}

void zcfsd_reap_later(struct zcfsd *d, int pidfd)
{
	if (pidfd < 0)
		return;
	for (size_t i = 0; i < ZCFSD_REAP_MAX; i++) {
		struct zcfsd_reaping *r = &d->reaping[i];

		if (r->watch.on)
			continue;
		if (zcfsd_watch(d, &r->watch, pidfd, EPOLLIN, on_exited, r) < 0)
			break;
		r->pidfd = pidfd;
		return;
	}
	close(pidfd);	/* stays a zombie: 64 children hung at once */
}

void zcfsd_reap_release(struct zcfsd *d, int pidfd, bool ours, siginfo_t *si)
{
	siginfo_t tmp;

	if (!si)
		si = &tmp;
	memset(si, 0, sizeof(*si));
	if (pidfd < 0)
		return;
	/* Still exiting (just SIGKILLed): reaped by the loop, not waited for. */
	if (ours && waitid(P_PIDFD, (id_t)pidfd, si, WEXITED | WNOHANG) == 0 && !si->si_pid)
		zcfsd_reap_later(d, pidfd);
	else
		close(pidfd);
}
