/* The volume plugin's connection guard: libmicrohttpd's own limits count
 * connections and idle time, but a client that trickles a request byte
 * by byte resets its idle timer, and once the connection limit is full a
 * new client is refused however old the others are. So every connection
 * gets a slot (peer uid from SO_PEERCRED, a dup of its socket): a request
 * must be complete, and an answer taken, within VP_CONN_WAIT_MS; at most
 * VP_CONN_MAX connections and VP_CONN_PER_UID of one uid, a new one over
 * a limit closing the one that has waited longest. Docker and Podman
 * connect and send at once, so they are never that one.
 *
 * Closing is shutdown(2) on our dup: libmicrohttpd sees the end of the
 * stream and closes its fd itself (no race on fd numbers); a connection
 * that is not in the middle of an answer first gets an HTTP 503 saying
 * why. libmicrohttpd calls us from its one thread; the watchdog thread
 * enforces the deadlines; a mutex guards the slots. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <microhttpd.h>
#include "common/log.h"
#include "vp.h"
#include "vp_conn.h"

struct vp_slot {
	bool used;
	bool in_handler;	/* vp_handle runs for it: never closed then */
	bool answering;		/* an answer is queued: no 503 on top of it */
	int fd;			/* our dup of the connection's socket */
	uid_t uid;
	int64_t wait_since_ms;	/* connected, or its last answer queued/taken */
};

/* Closed slots linger until libmicrohttpd reports the close: room for them. */
static struct vp_slot slots[VP_CONN_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_t watchdog;
static bool watchdog_running, stopping;
static struct vp_conn_counts counts;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1, 10, 100, ...: log lines for a flood stay few. */
static bool worth_logging(unsigned n)
{
	while (n >= 10 && n % 10 == 0)
		n /= 10;
	return n == 1;
}

/* Closes S's connection (lock held), with a 503 saying WHY when nothing
 * else is being written to it. */
static void slot_close(struct vp_slot *s, const char *why)
{
	char body[256], msg[512];
	int n;

	if (!s->answering && why) {
		snprintf(body, sizeof(body), "{\"Err\":\"UNAVAILABLE: %s; retry\"}", why);
		n = snprintf(msg, sizeof(msg),
			     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " VP_CONTENT_TYPE "\r\n"
			     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", strlen(body), body);
		if (n > 0 && (size_t)n < sizeof(msg))
			(void)send(s->fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	(void)shutdown(s->fd, SHUT_RDWR);
	/* The slot stays until libmicrohttpd reports the close. */
	s->wait_since_ms = INT64_MAX;
}

static struct vp_slot *longest_waiting(bool of_uid, uid_t uid)
{
	struct vp_slot *best = NULL;

	for (int i = 0; i < VP_CONN_SLOTS; i++) {
		struct vp_slot *s = &slots[i];
		if (!s->used || s->in_handler || s->wait_since_ms == INT64_MAX || (of_uid && s->uid != uid))
			continue;
		if (!best || s->wait_since_ms < best->wait_since_ms)
			best = s;
	}
	return best;
}

static void on_started(struct MHD_Connection *c, void **socket_context)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred uc = { .uid = (uid_t)-1 };
	socklen_t len = sizeof(uc);
	struct vp_slot *s = NULL, *victim;
	unsigned of_uid = 0, used = 0;
	int fd;

	if (!ci)
		return;
	/* Unknown peer: counted as uid -1, so it is limited too. */
	(void)getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &uc, &len);
	fd = fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 3);
	pthread_mutex_lock(&lock);
	for (int i = 0; i < VP_CONN_SLOTS; i++) {
		if (!slots[i].used) {
			if (!s)
				s = &slots[i];
			continue;
		}
		if (slots[i].wait_since_ms == INT64_MAX)
			continue;	/* closing */
		used++;
		of_uid += slots[i].uid == uc.uid;
	}
	victim = NULL;
	if (of_uid >= VP_CONN_PER_UID) {
		victim = longest_waiting(true, uc.uid);
		if (victim && worth_logging(++counts.evicted_uid))
			log_warn("event=connection-closed reason=uid-connection-limit uid=%u count=%u",
				 (unsigned)uc.uid, counts.evicted_uid);
	} else if (used >= VP_CONN_MAX) {
		victim = longest_waiting(false, 0);
		if (victim && worth_logging(++counts.evicted_total))
			log_warn("event=connection-closed reason=connection-limit count=%u", counts.evicted_total);
	}
	if (victim)
		slot_close(victim, of_uid >= VP_CONN_PER_UID
			   ? "too many connections of this uid; this one waited longest"
			   : "too many connections; this one waited longest");
	if (!s || fd < 0) {
		/* No slot (all closing) or no dup: it cannot be guarded, so it goes. */
		pthread_mutex_unlock(&lock);
		(void)shutdown(ci->connect_fd, SHUT_RDWR);
		if (fd >= 0)
			close(fd);
		return;
	}
	*s = (struct vp_slot){ .used = true, .fd = fd, .uid = uc.uid, .wait_since_ms = now_ms() };
	counts.accepted++;
	*socket_context = s;
	pthread_mutex_unlock(&lock);
}

void vp_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		    enum MHD_ConnectionNotificationCode toe)
{
	struct vp_slot *s = *socket_context;

	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		on_started(c, socket_context);
		return;
	}
	if (!s)
		return;
	pthread_mutex_lock(&lock);
	close(s->fd);
	*s = (struct vp_slot){ 0 };
	pthread_mutex_unlock(&lock);
	*socket_context = NULL;
}

static struct vp_slot *slot_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void vp_conn_handler(struct MHD_Connection *c, bool running)
{
	struct vp_slot *s = slot_of(c);

	if (!s)
		return;
	pthread_mutex_lock(&lock);
	s->in_handler = running;
	pthread_mutex_unlock(&lock);
}

void vp_conn_answer(struct MHD_Connection *c, bool queued)
{
	struct vp_slot *s = slot_of(c);

	if (!s)
		return;
	pthread_mutex_lock(&lock);
	s->answering = queued;
	if (s->wait_since_ms != INT64_MAX)
		s->wait_since_ms = now_ms();	/* the answer, then the next request, have their time */
	pthread_mutex_unlock(&lock);
}

static void *watchdog_main(void *arg)
{
	struct timespec ts;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!stopping) {
		int64_t now = now_ms();
		for (int i = 0; i < VP_CONN_SLOTS; i++) {
			struct vp_slot *s = &slots[i];
			if (!s->used || s->in_handler || s->wait_since_ms == INT64_MAX ||
			    now - s->wait_since_ms < VP_CONN_WAIT_MS)
				continue;
			if (s->answering)
				counts.dropped_answer++;
			else
				counts.dropped_request++;
			if (worth_logging(counts.dropped_answer + counts.dropped_request))
				log_warn("event=connection-closed reason=%s uid=%u count=%u",
					 s->answering ? "answer-not-taken" : "request-timeout", (unsigned)s->uid,
					 counts.dropped_answer + counts.dropped_request);
			slot_close(s, "no complete request within the time limit");
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&wake, &lock, &ts);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int vp_conn_start(void)
{
	stopping = false;
	if (pthread_create(&watchdog, NULL, watchdog_main, NULL) != 0)
		return -EAGAIN;
	watchdog_running = true;
	return 0;
}

void vp_conn_stop(void)
{
	if (!watchdog_running)
		return;
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	pthread_join(watchdog, NULL);
	watchdog_running = false;
}

struct vp_conn_counts vp_conn_counts(void)
{
	struct vp_conn_counts k;

	pthread_mutex_lock(&lock);
	k = counts;
	pthread_mutex_unlock(&lock);
	return k;
}
