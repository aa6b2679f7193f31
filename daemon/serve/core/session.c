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
	/* nothing may wait for an INIT that will not come */
	pthread_mutex_lock(&se->init_lock);
	pthread_cond_broadcast(&se->init_cond);
	pthread_mutex_unlock(&se->init_lock);
}

void session_set_initialized(struct zcfs_session *se)
{
	pthread_mutex_lock(&se->init_lock);
	atomic_store(&se->initialized, true);
	pthread_cond_broadcast(&se->init_cond);
	pthread_mutex_unlock(&se->init_lock);
}

bool session_wait_initialized(struct zcfs_session *se)
{
	pthread_mutex_lock(&se->init_lock);
	while (!atomic_load(&se->initialized) && !atomic_load(&se->exiting))
		pthread_cond_wait(&se->init_cond, &se->init_lock);
	pthread_mutex_unlock(&se->init_lock);
	return atomic_load(&se->initialized);
}
