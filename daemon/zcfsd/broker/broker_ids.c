/* The backing ids zcfsd registered for a volume's servers, ascending by
 * id: a server may close only ids in this table, and everything in it is
 * closed when the volume stops. Ids of a server that died are carried
 * over to its successor (broker.h says why). */
#include <string.h>
#include "broker.h"

static size_t pos(const struct zcfsd_broker *b, int32_t id)
{
	size_t lo = 0, hi = b->n_ents;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->ents[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int zcfsd_broker_ids_add(struct zcfsd_broker *b, int32_t id, const struct zcfsd_file_id *file)
{
	size_t i = pos(b, id);

	if (i < b->n_ents && b->ents[i].id == id)
		return -EEXIST;
	if (b->n_ents >= ZCFSD_BROKER_MAX_IDS)
		return -EMFILE;
	if (b->n_ents == b->cap_ents) {
		size_t cap = b->cap_ents ? b->cap_ents * 2 : 64;
		struct zcfsd_backing *n = realloc(b->ents, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		b->ents = n;
		b->cap_ents = cap;
	}
	memmove(&b->ents[i + 1], &b->ents[i], (b->n_ents - i) * sizeof(*b->ents));
	b->ents[i] = (struct zcfsd_backing){ .id = id };
	if (file)
		b->ents[i].file = *file;
	b->n_ents++;
	return 0;
}

struct zcfsd_backing *zcfsd_broker_ids_find(struct zcfsd_broker *b, int32_t id)
{
	size_t i = pos(b, id);

	return i < b->n_ents && b->ents[i].id == id && !b->ents[i].carried ? &b->ents[i] : NULL;
}

bool zcfsd_broker_ids_remove(struct zcfsd_broker *b, int32_t id)
{
	size_t i = pos(b, id);

	if (i >= b->n_ents || b->ents[i].id != id)
		return false;
	memmove(&b->ents[i], &b->ents[i + 1], (b->n_ents - i - 1) * sizeof(*b->ents));
	b->n_ents--;
	return true;
}

size_t zcfsd_broker_ids_live(const struct zcfsd_broker *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->n_ents; i++)
		n += !b->ents[i].carried;
	return n;
}

void zcfsd_broker_carry(struct zcfsd_broker *b)
{
	for (size_t i = 0; i < b->n_ents; i++)
		b->ents[i].carried = b->ents[i].keep = true;
}

int32_t zcfsd_broker_ids_claim(struct zcfsd_broker *b, const struct zcfsd_file_id *file)
{
	if (!file->valid)
		return 0;
	for (size_t i = 0; i < b->n_ents; i++) {
		struct zcfsd_backing *e = &b->ents[i];
		if (e->carried && e->file.valid && e->file.ino == file->ino &&
		    e->file.btime_sec == file->btime_sec && e->file.btime_nsec == file->btime_nsec) {
			e->carried = false;
			return e->id;
		}
	}
	return 0;
}
