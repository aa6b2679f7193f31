/* Session lifetime: who ends it and how main learns about it. */
#include <signal.h>
#include "session.h"

void session_exit(struct zcfs_session *se, int status)
{
	bool was = atomic_exchange(&se->exiting, true);

	if (!was) {
		se->exit_status = status;
		pthread_kill(se->main_thread, SIGUSR1);
	}
}
