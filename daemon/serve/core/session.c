/* Session lifetime: who ends it and how main learns about it. */
#include <sys/eventfd.h>
#include <unistd.h>
#include "common/log.h"
#include "session.h"

/* The first caller's status wins; init_lock orders it before exiting
 * becomes visible, so whoever sees exiting reads the final status. */
void session_exit(struct zcfs_session *se, int status)
{
	pthread_mutex_lock(&se->init_lock);
	if (!atomic_load(&se->exiting)) {
		se->exit_status = status;
		atomic_store(&se->exiting, true);
		if (se->wake_fd >= 0 && eventfd_write(se->wake_fd, 1) < 0)
			log_warn("waking main: %m");
	}
	/* nothing may wait for an INIT that will not come */
	pthread_cond_broadcast(&se->init_cond);
	pthread_mutex_unlock(&se->init_lock);
}

int session_exit_status(struct zcfs_session *se)
{
	int status;

	pthread_mutex_lock(&se->init_lock);
	status = se->exit_status;
	pthread_mutex_unlock(&se->init_lock);
	return status;
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

bool session_wait_go(struct zcfs_session *se)
{
	pthread_mutex_lock(&se->init_lock);
	while (atomic_load(&se->standby) && !atomic_load(&se->exiting))
		pthread_cond_wait(&se->init_cond, &se->init_lock);
	pthread_mutex_unlock(&se->init_lock);
	return !atomic_load(&se->exiting);
}

void session_go(struct zcfs_session *se)
{
	pthread_mutex_lock(&se->init_lock);
	atomic_store(&se->standby, false);
	pthread_cond_broadcast(&se->init_cond);
	pthread_mutex_unlock(&se->init_lock);
}

void session_ready(struct zcfs_session *se)
{
	int fd = atomic_exchange(&se->ready_fd, -1);

	if (fd < 0)
		return;
	/* One byte into an empty pipe never blocks; a reader that gave up
	 * (EPIPE, SIGPIPE is ignored) changes nothing for the mount. */
	if (write(fd, "R", 1) != 1)
		log_debug("--ready-fd: %m");
	close(fd);
}
