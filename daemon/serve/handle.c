#include <stdlib.h>
#include <string.h>
#include "handle.h"

struct slot {
	struct zcfs_handle *h;
	uint32_t gen;
};

struct handle_table {
	pthread_mutex_t lock;
	struct slot *slots;
	uint32_t nslots;
	uint32_t *free_list;
	uint32_t nfree;
};

int handle_table_new(struct handle_table **ret)
{
	struct handle_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	*ret = t;
	return 0;
}

void handle_table_free(struct handle_table *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->nslots; i++) {
		struct zcfs_handle *h = t->slots[i].h;
		if (!h)
			continue;
		if (h->dir)
			closedir(h->dir);
		else
			safe_close(h->fd);
		free(h);
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

	if (n > (1u << 24))
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
		t->slots[idx].gen++;
		*fh = ((uint64_t)t->slots[idx].gen << 32) | idx;
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

static struct slot *slot_of(struct handle_table *t, uint64_t fh)
{
	uint32_t idx = (uint32_t)fh, gen = (uint32_t)(fh >> 32);

	if (idx >= t->nslots || !t->slots[idx].h || t->slots[idx].gen != gen)
		return NULL;
	return &t->slots[idx];
}

struct zcfs_handle *handle_get(struct handle_table *t, uint64_t fh)
{
	struct slot *s;
	struct zcfs_handle *h;

	pthread_mutex_lock(&t->lock);
	s = slot_of(t, fh);
	h = s ? s->h : NULL;
	pthread_mutex_unlock(&t->lock);
	return h;
}

struct zcfs_handle *handle_unregister(struct handle_table *t, uint64_t fh)
{
	struct slot *s;
	struct zcfs_handle *h = NULL;

	pthread_mutex_lock(&t->lock);
	s = slot_of(t, fh);
	if (s) {
		h = s->h;
		s->h = NULL;
		t->free_list[t->nfree++] = (uint32_t)(s - t->slots);
	}
	pthread_mutex_unlock(&t->lock);
	return h;
}
