#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "handle.h"

/* An fh is epoch:24 | gen:16 | slot:24. The kernel keeps using the fhs
 * of a dead server after a restart on the same connection, so each
 * server of a connection numbers its handles in its own epoch: an fh of
 * a predecessor never names one of this server's handles (before, the
 * first file opened after a restart got the fh of the first file the
 * predecessor had opened, and writes to that one went into it). */
#define FH_SLOT_BITS 24
#define FH_GEN_BITS 16
#define FH_EPOCH_SHIFT (FH_SLOT_BITS + FH_GEN_BITS)
#define FH_SLOT_MASK ((1u << FH_SLOT_BITS) - 1)
#define FH_GEN_MASK ((1u << FH_GEN_BITS) - 1)
#define FH_EPOCH_MASK ((1u << (64 - FH_EPOCH_SHIFT)) - 1)

struct slot {
	struct zcfs_handle *h;
	uint32_t gen;
};

/* A handle a restarted server re-created for an fh its predecessor gave
 * the kernel: kept under that fh, outside the slot space. */
struct adopted {
	uint64_t fh;
	struct zcfs_handle *h;
	struct adopted *next;
};

struct handle_table {
	pthread_mutex_t lock;
	struct slot *slots;
	uint32_t nslots;
	uint32_t *free_list;
	uint32_t nfree;
	struct adopted *adopted;
	uint32_t epoch;
};

int handle_table_new(struct handle_table **ret)
{
	struct handle_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	/* Without a counter shared by the connection's servers
	 * (handle_table_set_epoch) a random one. */
	if (getrandom(&t->epoch, sizeof(t->epoch), 0) != sizeof(t->epoch))
		t->epoch = (uint32_t)time(NULL);
	t->epoch &= FH_EPOCH_MASK;
	*ret = t;
	return 0;
}

void handle_table_set_epoch(struct handle_table *t, uint32_t epoch)
{
	pthread_mutex_lock(&t->lock);
	t->epoch = epoch & FH_EPOCH_MASK;
	pthread_mutex_unlock(&t->lock);
}

static bool is_writer(const struct zcfs_handle *h, uint64_t nodeid, uid_t uid)
{
	return h && h->writable && h->nodeid == nodeid && h->opener == uid;
}

bool handle_writer_exists(struct handle_table *t, uint64_t nodeid, uid_t uid)
{
	bool found = false;

	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < t->nslots && !found; i++)
		found = is_writer(t->slots[i].h, nodeid, uid);
	for (struct adopted *a = t->adopted; a && !found; a = a->next)
		found = is_writer(a->h, nodeid, uid);
	pthread_mutex_unlock(&t->lock);
	return found;
}

int handle_new(int fd, bool dir, struct zcfs_handle **ret)
{
	struct zcfs_handle *h = calloc(1, sizeof(*h));
	int r;

	if (!h)
		return -ENOMEM;
	h->fd = fd;
	if (dir) {
		h->dir = fdopendir(fd);
		if (!h->dir) {
			r = -errno;
			free(h);
			return r;
		}
		pthread_mutex_init(&h->dir_lock, NULL);
	}
	*ret = h;
	return 0;
}

void handle_free(struct zcfs_handle *h)
{
	if (!h)
		return;
	if (h->dir) {
		closedir(h->dir);	/* closes h->fd too */
		pthread_mutex_destroy(&h->dir_lock);
	} else {
		safe_close(h->fd);
	}
	free(h);
}

void handle_table_free(struct handle_table *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->nslots; i++) {
		handle_free(t->slots[i].h);
	}
	while (t->adopted) {
		struct adopted *a = t->adopted;
		t->adopted = a->next;
		handle_free(a->h);
		free(a);
	}
	free(t->slots);
	free(t->free_list);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static int grow(struct handle_table *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 256, i;
	struct slot *s;
	uint32_t *fl;

	if (n > (1u << FH_SLOT_BITS))
		return -EMFILE;
	s = realloc(t->slots, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->slots = s;
	fl = realloc(t->free_list, n * sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	t->free_list = fl;
	memset(&s[t->nslots], 0, (n - t->nslots) * sizeof(*s));
	for (i = n; i > t->nslots; i--)
		t->free_list[t->nfree++] = i - 1;
	t->nslots = n;
	return 0;
}

int handle_register(struct handle_table *t, struct zcfs_handle *h, uint64_t *fh)
{
	uint32_t idx;
	int r = 0;

	pthread_mutex_lock(&t->lock);
	if (!t->nfree)
		r = grow(t);
	if (r == 0) {
		idx = t->free_list[--t->nfree];
		t->slots[idx].h = h;
		t->slots[idx].gen = (t->slots[idx].gen + 1) & FH_GEN_MASK;
		*fh = ((uint64_t)t->epoch << FH_EPOCH_SHIFT) | ((uint64_t)t->slots[idx].gen << FH_SLOT_BITS) | idx;
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

static struct slot *slot_of(struct handle_table *t, uint64_t fh)
{
	uint32_t idx = (uint32_t)fh & FH_SLOT_MASK, gen = (uint32_t)(fh >> FH_SLOT_BITS) & FH_GEN_MASK;

	if (fh >> FH_EPOCH_SHIFT != t->epoch || idx >= t->nslots || !t->slots[idx].h ||
	    t->slots[idx].gen != gen)
		return NULL;
	return &t->slots[idx];
}

static struct adopted **adopted_of(struct handle_table *t, uint64_t fh)
{
	struct adopted **a;

	for (a = &t->adopted; *a; a = &(*a)->next)
		if ((*a)->fh == fh)
			return a;
	return NULL;
}

struct zcfs_handle *handle_get(struct handle_table *t, uint64_t fh)
{
	struct adopted **a;
	struct slot *s;
	struct zcfs_handle *h;

	pthread_mutex_lock(&t->lock);
	s = slot_of(t, fh);
	h = s ? s->h : NULL;
	if (!h && t->adopted && (a = adopted_of(t, fh)))
		h = (*a)->h;
	pthread_mutex_unlock(&t->lock);
	return h;
}

int handle_adopt(struct handle_table *t, uint64_t fh, struct zcfs_handle *h,
		 struct zcfs_handle **ret)
{
	struct adopted *a = calloc(1, sizeof(*a)), **old;

	if (!a)
		return -ENOMEM;
	pthread_mutex_lock(&t->lock);
	old = slot_of(t, fh) ? NULL : adopted_of(t, fh);
	if (slot_of(t, fh) || old) {
		/* Another thread adopted (or the slot is live): use that one. */
		*ret = old ? (*old)->h : slot_of(t, fh)->h;
		pthread_mutex_unlock(&t->lock);
		free(a);
		return 1;
	}
	a->fh = fh;
	a->h = h;
	a->next = t->adopted;
	t->adopted = a;
	*ret = h;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

struct zcfs_handle *handle_unregister(struct handle_table *t, uint64_t fh)
{
	struct slot *s;
	struct zcfs_handle *h = NULL;

	struct adopted **a;

	pthread_mutex_lock(&t->lock);
	s = slot_of(t, fh);
	if (s) {
		h = s->h;
		s->h = NULL;
		t->free_list[t->nfree++] = (uint32_t)(s - t->slots);
	} else if (t->adopted && (a = adopted_of(t, fh))) {
		struct adopted *gone = *a;
		*a = gone->next;
		h = gone->h;
		free(gone);
	}
	pthread_mutex_unlock(&t->lock);
	return h;
}
