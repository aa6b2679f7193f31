/* The event loop core (loop.h): the epoll set of watches, the one list
 * of deadlines, a round of both. */
#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "model.h"

int zcfsd_loop_open(struct zcfsd_loop *l)
{
	*l = (struct zcfsd_loop){ .epoll_fd = epoll_create1(EPOLL_CLOEXEC) };
	return l->epoll_fd < 0 ? -errno : 0;
}

void zcfsd_loop_close(struct zcfsd_loop *l)
{
	l->epoll_fd = safe_close(l->epoll_fd);
}

int zcfsd_watch(struct zcfsd *d, struct zcfsd_watch *w, int fd, uint32_t events,
		zcfsd_watch_fn *fn, void *obj)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	zcfsd_unwatch(d, w);
	if (epoll_ctl(d->loop.epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	*w = (struct zcfsd_watch){ .fn = fn, .obj = obj, .fd = fd, .events = events, .on = true };
	return 0;
}

int zcfsd_watch_events(struct zcfsd *d, struct zcfsd_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	if (!w->on)
		return -ENOENT;
	if (w->events == events)
		return 0;
	if (epoll_ctl(d->loop.epoll_fd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
		return -errno;
	w->events = events;
	return 0;
}

void zcfsd_unwatch(struct zcfsd *d, struct zcfsd_watch *w)
{
	if (!w->on)
		return;
	(void)epoll_ctl(d->loop.epoll_fd, EPOLL_CTL_DEL, w->fd, NULL);
	w->on = false;
	w->fd = -1;
	/* Its events still to be handled in this batch are not its any more. */
	for (int i = 0; i < d->loop.batch_n; i++)
		if (d->loop.batch[i].data.ptr == w)
			d->loop.batch[i].data.ptr = NULL;
}

void zcfsd_deadline_cancel(struct zcfsd *d, struct zcfsd_deadline *t)
{
	if (!t->armed)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		d->loop.first = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->prev = t->next = NULL;
	t->armed = false;
}

void zcfsd_deadline_init(struct zcfsd_deadline *t, zcfsd_deadline_fn *fn, void *obj)
{
	t->fn = fn;
	t->obj = obj;
}

void zcfsd_deadline_at(struct zcfsd *d, struct zcfsd_deadline *t, int64_t due_ms,
		       zcfsd_deadline_fn *fn, void *obj)
{
	zcfsd_deadline_cancel(d, t);
	zcfsd_deadline_init(t, fn, obj);
	zcfsd_deadline_arm(d, t, due_ms);
}

void zcfsd_deadline_arm(struct zcfsd *d, struct zcfsd_deadline *t, int64_t due_ms)
{
	struct zcfsd_deadline *p = NULL, *q;

	zcfsd_deadline_cancel(d, t);
	if (!t->fn)
		return;
	t->due_ms = due_ms;
	t->round = d->loop.round;
	for (q = d->loop.first; q && q->due_ms <= due_ms; q = q->next)
		p = q;
	t->prev = p;
	t->next = q;
	if (q)
		q->prev = t;
	if (p)
		p->next = t;
	else
		d->loop.first = t;
	t->armed = true;
}

int zcfsd_loop_timeout_ms(struct zcfsd *d)
{
	int64_t left;

	if (!d->loop.first)
		return -1;
	left = d->loop.first->due_ms - zcfsd_now_ms();
	return (int)MAX(0, MIN(left, 60000));
}

void zcfsd_loop_run_due(struct zcfsd *d, int64_t now)
{
	struct zcfsd_deadline *t;
	uint64_t round = ++d->loop.round;

	/* Each callback may arm or cancel any deadline: start over from the
	 * first after each one. */
	for (t = d->loop.first; t && t->due_ms <= now;) {
		if (t->round == round) {
			t = t->next;
			continue;
		}
		zcfsd_deadline_cancel(d, t);
		t->fn(d, t->obj);
		t = d->loop.first;
	}
}

int zcfsd_loop_once(struct zcfsd *d)
{
	struct epoll_event evs[16];
	int n = epoll_wait(d->loop.epoll_fd, evs, ARRAY_SIZE(evs), zcfsd_loop_timeout_ms(d));

	if (n < 0 && errno != EINTR)
		return -errno;
	d->loop.batch = evs;
	d->loop.batch_n = MAX(n, 0);
	for (int i = 0; i < n; i++) {
		struct zcfsd_watch *w = evs[i].data.ptr;

		if (w)
			w->fn(d, w->obj, evs[i].events);
	}
	d->loop.batch_n = 0;
	d->loop.batch = NULL;
	zcfsd_loop_run_due(d, zcfsd_now_ms());
	return 0;
}
