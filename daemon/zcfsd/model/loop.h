/* zcfsd's event loop core: watches and deadlines.
 *
 * A watch is an fd in the epoll set with the callback and the object it
 * belongs to (epoll's data.ptr points at the watch): an event goes
 * straight to its owner, no tag, no search by fd. A deadline is a
 * callback with its object and a monotonic time, kept in one list,
 * soonest first; epoll_wait sleeps until the first. A watch or deadline
 * is a member of its owner's record; zeroed, it is off. The owner turns
 * it off before the record goes (unwatch, cancel): an event of the batch
 * being handled whose watch went off meanwhile is dropped, never
 * delivered to freed memory. */
#ifndef ZCFSD_LOOP_H
#define ZCFSD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct zcfsd;
struct epoll_event;

typedef void zcfsd_watch_fn(struct zcfsd *d, void *obj, uint32_t events);
struct zcfsd_watch {
	zcfsd_watch_fn *fn;
	void *obj;
	int fd;
	uint32_t events;		/* what epoll reports now */
	bool on;			/* in the epoll set */
};

typedef void zcfsd_deadline_fn(struct zcfsd *d, void *obj);
struct zcfsd_deadline {
	zcfsd_deadline_fn *fn;
	void *obj;
	int64_t due_ms;			/* monotonic (zcfsd_now_ms) */
	uint64_t round;			/* armed during this round: not run before the next */
	bool armed;			/* in the list */
	struct zcfsd_deadline *prev, *next;
};

struct zcfsd_loop {
	int epoll_fd;			/* -1: none */
	struct zcfsd_deadline *first;	/* armed deadlines, soonest first */
	struct epoll_event *batch;	/* the events being handled; a watch turned off */
	int batch_n;			/* meanwhile loses its own */
	uint64_t round;			/* one per zcfsd_loop_once */
};

int zcfsd_loop_open(struct zcfsd_loop *l);
void zcfsd_loop_close(struct zcfsd_loop *l);

/* FD into the set for EVENTS (EPOLLIN, ...): FN(d, OBJ, revents) on each.
 * -errno from epoll_ctl, W then off. EVENTS 0 keeps FD in the set muted. */
int zcfsd_watch(struct zcfsd *d, struct zcfsd_watch *w, int fd, uint32_t events,
		zcfsd_watch_fn *fn, void *obj);
/* What W waits for now (0: nothing, still in the set). */
int zcfsd_watch_events(struct zcfsd *d, struct zcfsd_watch *w, uint32_t events);
/* Out of the set (before its fd is closed); off already: nothing. */
void zcfsd_unwatch(struct zcfsd *d, struct zcfsd_watch *w);

/* T armed for DUE_MS (re-armed when it was): FN(d, OBJ) once then. One
 * armed while the due ones run waits for the next round, so a callback
 * that arms itself for "now" lets the events in first. init binds T to
 * FN and OBJ without arming it; arm arms a bound T (an unbound one:
 * nothing), so a file may set the time of a deadline whose callback
 * another file owns. */
void zcfsd_deadline_at(struct zcfsd *d, struct zcfsd_deadline *t, int64_t due_ms,
		       zcfsd_deadline_fn *fn, void *obj);
void zcfsd_deadline_init(struct zcfsd_deadline *t, zcfsd_deadline_fn *fn, void *obj);
void zcfsd_deadline_arm(struct zcfsd *d, struct zcfsd_deadline *t, int64_t due_ms);
void zcfsd_deadline_cancel(struct zcfsd *d, struct zcfsd_deadline *t);
static inline bool zcfsd_deadline_armed(const struct zcfsd_deadline *t)
{
	return t->armed;
}
/* The ms until the first deadline (0: due now), -1: none. */
int zcfsd_loop_timeout_ms(struct zcfsd *d);
/* Every deadline due at NOW that was armed before this round, in time order. */
void zcfsd_loop_run_due(struct zcfsd *d, int64_t now);
/* One round: epoll_wait until the first deadline, each event to its
 * watch, then the deadlines due. -errno when epoll_wait fails. */
int zcfsd_loop_once(struct zcfsd *d);

#endif
