/* The volume plugin's HTTP connection guard (vp_conn.c): limits and
 * deadlines of the connections, hooked into libmicrohttpd by vp_http.c. */
#ifndef ZCFS_VP_CONN_H
#define ZCFS_VP_CONN_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "common/util.h"

#define VP_CONN_MAX 64		/* connections served at once */
#define VP_CONN_PER_UID 32	/* of them, of one peer uid */
#define VP_CONN_SLOTS (VP_CONN_MAX + 16)	/* + closed ones not yet reaped */
#define VP_CONN_WAIT_MS 10000	/* for a whole request, or to take an answer */
struct vp_conn_counts {
	unsigned long long accepted;
	unsigned evicted_uid, evicted_total;	/* closed to make room */
	unsigned dropped_request, dropped_answer;	/* past VP_CONN_WAIT_MS */
};
/* MHD_OPTION_NOTIFY_CONNECTION */
void vp_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		    enum MHD_ConnectionNotificationCode toe);
/* vp_handle runs for C (never closed then) / has ended. */
void vp_conn_handler(struct MHD_Connection *c, bool running);
/* C's answer is queued (true) or was taken (false). */
void vp_conn_answer(struct MHD_Connection *c, bool queued);
int vp_conn_start(void) _must_check_;
void vp_conn_stop(void);
struct vp_conn_counts vp_conn_counts(void);

#endif
