/* Children zcfsd gave up waiting for (a syncfs child past its deadline,
 * a server killed after a failed publish): reaped once they exit, from
 * the event loop, so no wait blocks it and none stays a zombie. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "model.h"

#define MAX_ABANDONED 64
static int abandoned[MAX_ABANDONED];
static unsigned n_abandoned;

void zcfsd_reap_later(int pidfd)
{
	if (pidfd < 0)
		return;
	if (n_abandoned < MAX_ABANDONED)
		abandoned[n_abandoned++] = pidfd;
	else
		close(pidfd);	/* stays a zombie: 64 children hung at once */
}

void zcfsd_reap_release(int pidfd, bool ours, siginfo_t *si)
{
	siginfo_t tmp;

	if (!si)
		si = &tmp;
	memset(si, 0, sizeof(*si));
	if (pidfd < 0)
		return;
	/* Still exiting (just SIGKILLed): reaped by the loop, not waited for. */
	if (ours && waitid(P_PIDFD, (id_t)pidfd, si, WEXITED | WNOHANG) == 0 && !si->si_pid)
		zcfsd_reap_later(pidfd);
	else
		close(pidfd);
}

void zcfsd_reap_abandoned(void)
{
	unsigned i = 0;

	while (i < n_abandoned) {
		siginfo_t si = { 0 };
		if (waitid(P_PIDFD, (id_t)abandoned[i], &si, WEXITED | WNOHANG) < 0 || si.si_pid) {
			close(abandoned[i]);
			abandoned[i] = abandoned[--n_abandoned];
			continue;
		}
		i++;
	}
}

int zcfsd_reap_timeout_ms(void)
{
	return n_abandoned ? 250 : -1;
}
