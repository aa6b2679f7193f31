/* Generic protobuf-c <-> JSON conversion over message descriptors (see
 * pb_json.h). Decoding goes through a counting allocator: it caps the
 * memory one request may take and remembers each block's size, which is
 * how a string cut short at a NUL byte is recognised (protobuf-c copies
 * the wire length into a block of length + 1, then C sees up to the NUL). */
#include <stdlib.h>
#include <string.h>
#include "pb_json.h"

struct block {
	const void *p;
	size_t size;
};

struct dec_alloc {
	size_t used, n, cap;
	struct block *blocks;
	bool failed;		/* over the cap or out of memory */
};

static void *dec_alloc_fn(void *data, size_t size)
{
	struct dec_alloc *a = data;
	void *p;

	if (a->failed || size > PB_DECODE_MEM_MAX - a->used) {
		a->failed = true;
		return NULL;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct block *b = realloc(a->blocks, cap * sizeof(*b));
		if (!b) {
			a->failed = true;
			return NULL;
		}
		a->blocks = b;
		a->cap = cap;
	}
	p = malloc(size ? size : 1);
	if (!p) {
		a->failed = true;
		return NULL;
	}
	a->blocks[a->n++] = (struct block){ p, size };
	a->used += size;
	return p;
}

static void dec_free_fn(void *data, void *p)
{
	(void)data;
	free(p);	/* blocks[] is only read before the first free */
}

static int block_cmp(const void *x, const void *y)
{
	const struct block *a = x, *b = y;

	return a->p < b->p ? -1 : a->p > b->p;
}

/* The size protobuf-c asked for when it allocated P; 0 = not allocated by it. */
static size_t block_size(const struct dec_alloc *a, const void *p)
{
	struct block key = { p, 0 }, *b;

	b = bsearch(&key, a->blocks, a->n, sizeof(*a->blocks), block_cmp);
	return b ? b->size : 0;
}

static bool utf8_valid(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s++, n, min, cp;
		if (c < 0x80)
			continue;
		if ((c & 0xe0) == 0xc0) { n = 1; min = 0x80; cp = c & 0x1f; }
		else if ((c & 0xf0) == 0xe0) { n = 2; min = 0x800; cp = c & 0x0f; }
		else if ((c & 0xf8) == 0xf0) { n = 3; min = 0x10000; cp = c & 0x07; }
		else return false;
		for (; n; n--, s++) {
			if ((*s & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (*s & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
	}
	return true;
}

static bool is_map_entry(const ProtobufCFieldDescriptor *f)
{
	const ProtobufCMessageDescriptor *d = f->descriptor;
	size_t n;

	if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
		return false;
	n = strlen(d->name);
	return n > 5 && !strcmp(d->name + n - 5, "Entry") && d->n_fields == 2 &&
	       !strcmp(d->fields[0].name, "key") && !strcmp(d->fields[1].name, "value");
}

/* google.protobuf.BoolValue and friends: JSON carries the bare value. */
static bool is_wrapper(const ProtobufCMessageDescriptor *d)
{
	size_t n = strlen(d->name);

	return !strncmp(d->name, "google.protobuf.", 16) && n > 5 && !strcmp(d->name + n - 5, "Value") &&
	       d->n_fields == 1 && !strcmp(d->fields[0].name, "value");
}

/* ---- decode: message -> JSON ---- */

struct dec {
	struct dec_alloc *a;
	struct zcfs_err *e;
};

static json_object *msg_to_json(struct dec *d, const ProtobufCMessage *m);

static int check_string(struct dec *d, const ProtobufCFieldDescriptor *f, const char *s)
{
	size_t bs;

	if (!s || s == protobuf_c_empty_string)
		return 0;
	bs = block_size(d->a, s);
	if (bs && bs != strlen(s) + 1)
		return zcfs_fail(d->e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "field %s holds a NUL byte", f->name);
	if (!utf8_valid((const unsigned char *)s))
		return zcfs_fail(d->e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "field %s is not valid UTF-8", f->name);
	return 0;
}

/* One value of field F stored at P. NULL with E set on failure. */
static json_object *value_to_json(struct dec *d, const ProtobufCFieldDescriptor *f, const void *p)
{
	const ProtobufCEnumValue *ev;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return json_object_new_int64(*(const int32_t *)p);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return json_object_new_int64(*(const uint32_t *)p);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return json_object_new_int64(*(const int64_t *)p);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return json_object_new_uint64(*(const uint64_t *)p);
	case PROTOBUF_C_TYPE_FLOAT:
		return json_object_new_double(*(const float *)p);
	case PROTOBUF_C_TYPE_DOUBLE:
		return json_object_new_double(*(const double *)p);
	case PROTOBUF_C_TYPE_BOOL:
		return json_object_new_boolean(*(const protobuf_c_boolean *)p);
	case PROTOBUF_C_TYPE_ENUM:
		ev = protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
		return ev ? json_object_new_string(ev->name) : json_object_new_int64(*(const int *)p);
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)p;
		if (check_string(d, f, s) < 0)
			return NULL;
		return json_object_new_string(s ? s : "");
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
		const ProtobufCMessageDescriptor *sd = f->descriptor;
		if (!sub)
			return json_object_new_object();
		if (is_wrapper(sd))
			return value_to_json(d, &sd->fields[0], (const char *)sub + sd->fields[0].offset);
		return msg_to_json(d, sub);
	}
	case PROTOBUF_C_TYPE_BYTES:
	default:
		zcfs_fail(d->e, ZCFS_INVALID_ARGUMENT, -EINVAL, "field %s: bytes fields are not accepted",
			  f->name);
		return NULL;
	}
}

static size_t value_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
		return 4;
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_FLOAT: return sizeof(float);
	case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_ENUM: return sizeof(int);
	case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
	default: return sizeof(void *);
	}
}

/* A proto3 implicit-presence field at its default is absent in JSON. */
static bool is_default(const ProtobufCFieldDescriptor *f, const void *p)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)p;
		return !s || !*s;
	}
	case PROTOBUF_C_TYPE_MESSAGE:
		return !*(void *const *)p;
	case PROTOBUF_C_TYPE_BYTES:
		return ((const ProtobufCBinaryData *)p)->len == 0;
	case PROTOBUF_C_TYPE_FLOAT:
		return *(const float *)p == 0;
	case PROTOBUF_C_TYPE_DOUBLE:
		return *(const double *)p == 0;
	default: {
		static const char zero[8];
		return !memcmp(p, zero, value_size(f));
	}
	}
}

static json_object *map_to_json(struct dec *d, const ProtobufCFieldDescriptor *f, size_t n,
				ProtobufCMessage *const *entries)
{
	const ProtobufCMessageDescriptor *ed = f->descriptor;
	json_object *o = json_object_new_object();

	if (!o)
		goto oom;
	if (ed->fields[0].type != PROTOBUF_C_TYPE_STRING) {
		json_object_put(o);
		zcfs_fail(d->e, ZCFS_INVALID_ARGUMENT, -EINVAL, "field %s: only string map keys are accepted",
			  f->name);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *key = *(char *const *)((const char *)entries[i] + ed->fields[0].offset);
		json_object *v;

		if (check_string(d, f, key) < 0)
			goto fail;
		v = value_to_json(d, &ed->fields[1], (const char *)entries[i] + ed->fields[1].offset);
		if (!v)
			goto fail;
		/* the last of repeated keys wins, as in every protobuf library */
		if (json_object_object_add(o, key ? key : "", v) < 0) {
			json_object_put(v);
			goto oom;
		}
	}
	return o;
oom:
	zcfs_fail(d->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
fail:
	json_object_put(o);
	return NULL;
}

static json_object *msg_to_json(struct dec *d, const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *md = m->descriptor;
	json_object *o = json_object_new_object();

	if (!o) {
		zcfs_fail(d->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		return NULL;
	}
	for (unsigned i = 0; i < md->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &md->fields[i];
		const char *p = (const char *)m + f->offset;
		json_object *v = NULL;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
			const char *arr = *(char *const *)p;
			if (n == 0)
				continue;
			if (is_map_entry(f)) {
				v = map_to_json(d, f, n, (ProtobufCMessage *const *)arr);
			} else {
				v = json_object_new_array();
				for (size_t k = 0; v && k < n; k++) {
					json_object *x = value_to_json(d, f, arr + k * value_size(f));
					if (!x) {
						json_object_put(v);
						v = NULL;
						break;
					}
					json_object_array_add(v, x);
				}
			}
		} else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			if (*(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id)
				continue;
			v = value_to_json(d, f, p);
		} else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
			   f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_STRING) {
			if (!*(const protobuf_c_boolean *)((const char *)m + f->quantifier_offset))
				continue;
			v = value_to_json(d, f, p);
		} else {
			if (is_default(f, p))
				continue;
			v = value_to_json(d, f, p);
		}
		if (!v) {
			if (d->e->code == ZCFS_OK)
				zcfs_fail(d->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
			json_object_put(o);
			return NULL;
		}
		json_object_object_add(o, f->name, v);
	}
	return o;
}

int pb_decode_json(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
		   json_object **ret, struct zcfs_err *e)
{
	struct dec_alloc a = { 0 };
	ProtobufCAllocator al = { .alloc = dec_alloc_fn, .free = dec_free_fn, .allocator_data = &a };
	ProtobufCMessage *m;
	struct dec d = { &a, e };
	int r = 0;

	*ret = NULL;
	m = protobuf_c_message_unpack(desc, &al, len, buf);
	if (!m) {
		r = a.failed && a.used + 1024 > PB_DECODE_MEM_MAX ?
			zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EFBIG,
				  "%s: the request unpacks to more than %u MiB", desc->name, PB_DECODE_MEM_MAX >> 20) :
			zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s: malformed protobuf message", desc->name);
		/* protobuf-c freed what it had allocated */
		free(a.blocks);
		return r;
	}
	qsort(a.blocks, a.n, sizeof(*a.blocks), block_cmp);
	*ret = msg_to_json(&d, m);
	if (!*ret)
		r = e->code == ZCFS_OK ? zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory") : -EINVAL;
	free(a.blocks);
	a.blocks = NULL;
	a.n = a.cap = 0;
	protobuf_c_message_free_unpacked(m, &al);
	return r;
}

/* ---- encode: JSON -> message ---- */

/* Every block of the message being built, freed together after packing. */
struct arena {
	void **p;
	size_t n, cap;
	struct zcfs_err *e;
};

static void *arena_alloc(struct arena *a, size_t size)
{
	void *p;

	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 32;
		void **v = realloc(a->p, cap * sizeof(*v));
		if (!v)
			return NULL;
		a->p = v;
		a->cap = cap;
	}
	p = calloc(1, size ? size : 1);
	if (p)
		a->p[a->n++] = p;
	return p;
}

static void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
}

static int json_to_msg(struct arena *a, const ProtobufCMessageDescriptor *md, json_object *o,
		       ProtobufCMessage **ret);

static int bad(struct arena *a, const ProtobufCFieldDescriptor *f, const char *why)
{
	return zcfs_fail(a->e, ZCFS_INTERNAL, -EPROTO, "answer field %s: %s", f->name, why);
}

static int set_value(struct arena *a, const ProtobufCFieldDescriptor *f, json_object *v, void *p)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64: {
		int64_t x;
		if (!json_object_is_type(v, json_type_int))
			return bad(a, f, "not an integer");
		x = json_object_get_int64(v);
		if (value_size(f) == 4)
			*(int32_t *)p = (int32_t)x;
		else
			*(int64_t *)p = x;
		return 0;
	}
	case PROTOBUF_C_TYPE_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return bad(a, f, "not a boolean");
		*(protobuf_c_boolean *)p = json_object_get_boolean(v);
		return 0;
	case PROTOBUF_C_TYPE_ENUM:
		if (json_object_is_type(v, json_type_string)) {
			const ProtobufCEnumValue *ev =
				protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, json_object_get_string(v));
			if (!ev)
				return bad(a, f, "unknown enum name");
			*(int *)p = ev->value;
			return 0;
		}
		if (!json_object_is_type(v, json_type_int))
			return bad(a, f, "not an enum");
		*(int *)p = (int)json_object_get_int64(v);
		return 0;
	case PROTOBUF_C_TYPE_STRING: {
		char *s;
		if (!json_object_is_type(v, json_type_string))
			return bad(a, f, "not a string");
		s = arena_alloc(a, (size_t)json_object_get_string_len(v) + 1);
		if (!s)
			return zcfs_fail(a->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		memcpy(s, json_object_get_string(v), (size_t)json_object_get_string_len(v));
		*(char **)p = s;
		return 0;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessageDescriptor *sd = f->descriptor;
		ProtobufCMessage *sub;
		int r;
		if (is_wrapper(sd) && !json_object_is_type(v, json_type_object)) {
			sub = arena_alloc(a, sd->sizeof_message);
			if (!sub)
				return zcfs_fail(a->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
			sd->message_init(sub);
			r = set_value(a, &sd->fields[0], v, (char *)sub + sd->fields[0].offset);
		} else {
			if (!json_object_is_type(v, json_type_object))
				return bad(a, f, "not an object");
			r = json_to_msg(a, sd, v, &sub);
		}
		if (r < 0)
			return r;
		*(ProtobufCMessage **)p = sub;
		return 0;
	}
	default:
		return bad(a, f, "type not supported");
	}
}

static int set_repeated(struct arena *a, const ProtobufCFieldDescriptor *f, json_object *v,
			ProtobufCMessage *m)
{
	size_t *n = (size_t *)((char *)m + f->quantifier_offset), i = 0;
	char *arr;
	int r;

	if (is_map_entry(f)) {
		const ProtobufCMessageDescriptor *ed = f->descriptor;
		ProtobufCMessage **entries;
		if (!json_object_is_type(v, json_type_object))
			return bad(a, f, "a map must be an object");
		entries = arena_alloc(a, sizeof(*entries) * (size_t)json_object_object_length(v));
		if (!entries)
			return zcfs_fail(a->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		json_object_object_foreach(v, key, val) {
			ProtobufCMessage *en = arena_alloc(a, ed->sizeof_message);
			if (!en)
				return zcfs_fail(a->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
			ed->message_init(en);
			json_object *k = json_object_new_string(key);
			r = k ? set_value(a, &ed->fields[0], k, (char *)en + ed->fields[0].offset) : -ENOMEM;
			json_object_put(k);
			if (r == 0)
				r = set_value(a, &ed->fields[1], val, (char *)en + ed->fields[1].offset);
			if (r < 0)
				return r == -ENOMEM ? zcfs_fail(a->e, ZCFS_INTERNAL, r, "out of memory") : r;
			entries[i++] = en;
		}
		*n = i;
		*(ProtobufCMessage ***)((char *)m + f->offset) = entries;
		return 0;
	}
	if (!json_object_is_type(v, json_type_array))
		return bad(a, f, "a repeated field must be an array");
	arr = arena_alloc(a, value_size(f) * json_object_array_length(v));
	if (!arr)
		return zcfs_fail(a->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	for (i = 0; i < json_object_array_length(v); i++) {
		r = set_value(a, f, json_object_array_get_idx(v, i), arr + i * value_size(f));
		if (r < 0)
			return r;
	}
	*n = i;
	*(char **)((char *)m + f->offset) = arr;
	return 0;
}

static int json_to_msg(struct arena *a, const ProtobufCMessageDescriptor *md, json_object *o,
		       ProtobufCMessage **ret)
{
	ProtobufCMessage *m = arena_alloc(a, md->sizeof_message);
	int r;

	if (!m)
		return zcfs_fail(a->e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	md->message_init(m);
	json_object_object_foreach(o, key, v) {
		const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(md, key);
		if (!f)
			return zcfs_fail(a->e, ZCFS_INTERNAL, -EPROTO, "answer field %s.%.64s is not in csi.proto",
					 md->name, key);
		if (json_object_is_type(v, json_type_null))
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			r = set_repeated(a, f, v, m);
		else
			r = set_value(a, f, v, (char *)m + f->offset);
		if (r < 0)
			return r;
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			*(uint32_t *)((char *)m + f->quantifier_offset) = f->id;
	}
	*ret = m;
	return 0;
}

int pb_encode_json(const ProtobufCMessageDescriptor *desc, json_object *o, uint8_t **ret,
		   size_t *len, struct zcfs_err *e)
{
	struct arena a = { .e = e };
	ProtobufCMessage *m;
	uint8_t *buf;
	size_t n;
	int r;

	*ret = NULL;
	*len = 0;
	r = json_to_msg(&a, desc, o, &m);
	if (r == 0) {
		n = protobuf_c_message_get_packed_size(m);
		buf = malloc(n ? n : 1);
		if (!buf) {
			r = zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		} else {
			*len = protobuf_c_message_pack(m, buf);
			*ret = buf;
		}
	}
	arena_free(&a);
	return r;
}
