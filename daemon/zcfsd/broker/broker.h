/* Passthrough broker, zcfsd's side: registers the backing files of a
 * sandboxed server on the volume's fuse connection after checking them.
 * Wire format: common/zcfs_broker.h; why each check exists:
 * docs/security.md "Passthrough broker". */
#ifndef ZCFSD_BROKER_H
#define ZCFSD_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "common/util.h"
#include "common/zcfs_broker.h"
#include "daemon/zcfsd/model/loop.h"

struct zcfsd;
struct zcfsd_volume;
struct policy_tenant;

/* The kernel calls; unit tests substitute their own. */
struct zcfsd_broker_kernel {
	/* Registers the open file fd on fuse_fd; backing id > 0 or -errno. */
	int (*open)(int fuse_fd, int fd, uid_t uid, gid_t gid);
	int (*close)(int fuse_fd, int id);
};
extern const struct zcfsd_broker_kernel zcfsd_broker_kernel_real;

enum zcfsd_pt_state {
	ZCFSD_PT_PENDING,	/* server started, no HELLO yet */
	ZCFSD_PT_ON,
	ZCFSD_PT_NOT_OFFERED,
	ZCFSD_PT_QUOTA,
	ZCFSD_PT_UNKNOWN,	/* adopted after a zcfsd restart: HELLO went to the old zcfsd */
	ZCFSD_PT_LOST,		/* zcfsd hung up on an abusive server */
};

/* Which file an id was registered for: inode and birth time (an inode
 * number alone may be reused once the file is deleted). */
struct zcfsd_file_id {
	uint64_t ino;
	int64_t btime_sec;
	uint32_t btime_nsec;
	bool valid;		/* the file system reports a birth time */
};

struct zcfsd_backing {
	int32_t id;
	bool carried;		/* registered for a server that died; see zcfsd_broker_carry() */
	bool keep;		/* was carried once: closed only when the volume stops */
	struct zcfsd_file_id file;
};

/* At most this many ids per volume: each pins a file in the kernel. */
#define ZCFSD_BROKER_MAX_IDS 65536
/* Malformed messages before zcfsd hangs up on the server. */
#define ZCFSD_BROKER_BAD_LIMIT 1000

struct zcfsd_broker {
	int fd;			/* zcfsd's end (nonblocking), -1 between servers */
	int peer;		/* the server's end until the spawn hands it over, then -1 */
	int fuse_fd;		/* the volume's connection (zcfsd's dup, not owned) */
	dev_t dev;		/* st_dev of the volume's storage directory */
	int storage_fd;		/* O_PATH of it: backing files must lie beneath */
	uid_t uid;		/* the tenant: owner of every backing file */
	gid_t gid;
	const char *volume;	/* for log lines (the volume's id) */
	struct zcfsd_watch watch;	/* its socket in zcfsd's loop */
	bool inherited;		/* adopted: ids of the old zcfsd are not in the table */
	enum zcfsd_pt_state state;
	struct zcfsd_backing *ents;	/* ascending by id */
	size_t n_ents, cap_ents;
	uint64_t registered, reused, refused, bad, dropped;
	const struct zcfsd_broker_kernel *kernel;
};

/* 0 if the open file FD lies beneath directory STORAGE_FD (its current
 * path, walked again from STORAGE_FD with RESOLVE_BENEATH, reaches the
 * same inode), else -EXDEV or another -errno. */
int zcfsd_broker_check_beneath(int fd, int storage_fd) _must_check_;

/* A broker for the volume's servers; dev from STORAGE (opened without
 * following symlinks). Its socket comes with zcfsd_broker_prepare(). */
int zcfsd_broker_new(const char *volume, int fuse_fd, const char *storage, uid_t uid, gid_t gid,
		     struct zcfsd_broker **ret) _must_check_;
/* A new socketpair for the next server (closes the previous one). */
int zcfsd_broker_open_socket(struct zcfsd_broker *b) _must_check_;
/* Takes zcfsd's end back from a running server (fd
 * ZCFSD_SERVER_BROKER_PARK_FD) after a zcfsd restart. */
int zcfsd_broker_adopt(const char *volume, int pidfd, int fuse_fd, const char *storage, uid_t uid,
		       gid_t gid, struct zcfsd_broker **ret) _must_check_;
/* Frees memory and fds; registered ids stay (the server keeps running). */
void zcfsd_broker_free(struct zcfsd_broker *b);
/* Closes every id in the table (the volume stops serving). */
void zcfsd_broker_release_ids(struct zcfsd_broker *b);

/* Reads and answers up to max requests without blocking. Returns how
 * many, or -ECONNRESET once the server hung up, -EPROTO once it sent
 * too many malformed requests, or another -errno. */
int zcfsd_broker_serve(struct zcfsd_broker *b, unsigned max);

/* What zcfsd requires of a file before registering it: an open file (not
 * O_PATH), regular, on the volume's file system (dev), owned by the
 * tenant (uid), neither immutable nor append-only. 0 or -errno; fills
 * *file (may be NULL). */
int zcfsd_broker_check_fd(int fd, dev_t dev, uid_t uid, struct zcfsd_file_id *file) _must_check_;

/* The id table (broker_ids.c). */
int zcfsd_broker_ids_add(struct zcfsd_broker *b, int32_t id, const struct zcfsd_file_id *file)
	_must_check_;
/* The live (not carried) entry of id, or NULL. */
struct zcfsd_backing *zcfsd_broker_ids_find(struct zcfsd_broker *b, int32_t id);
bool zcfsd_broker_ids_remove(struct zcfsd_broker *b, int32_t id);
size_t zcfsd_broker_ids_live(const struct zcfsd_broker *b);
/* The server died and a successor will serve the same connection: its
 * ids stay registered, because files the kernel opened with one keep
 * using it, and the kernel refuses a second backing file for such an
 * inode (EBUSY, the open fails). The successor's OPEN of the same file
 * gets the carried id back (zcfsd_broker_ids_claim). */
void zcfsd_broker_carry(struct zcfsd_broker *b);
/* A carried id registered for the same file, made live again; 0 if none.
 * When the successor closes it, it is carried again, not closed: files
 * its predecessor opened may still use it, which no server can know. */
int32_t zcfsd_broker_ids_claim(struct zcfsd_broker *b, const struct zcfsd_file_id *file);

/* Spawn glue: the broker for v's next server when the tenant may use
 * passthrough (a failure only costs passthrough, logged); after the fork
 * zcfsd drops the server's end and watches its own, or closes both when
 * the server did not start. */
void zcfsd_broker_prepare(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			  const char *storage);
void zcfsd_broker_spawned(struct zcfsd *d, struct zcfsd_volume *v, bool started);
/* A standby successor's socket (server/standby.c), made while its
 * predecessor's is still in use: *MINE zcfsd's end, *PEER the server's,
 * both -1 when the tenant has no passthrough or it failed (logged: the
 * successor runs without). Returns 0. At the promotion, after
 * zcfsd_broker_server_gone(), zcfsd_broker_standby_take() makes *MINE
 * the broker's socket (watched); without a broker it is closed. */
int zcfsd_broker_standby_socket(struct zcfsd *d, struct zcfsd_volume *v,
				const struct policy_tenant *t, const char *storage, int *mine,
				int *peer);
void zcfsd_broker_standby_take(struct zcfsd *d, struct zcfsd_volume *v, int fd);

/* Event loop glue (zcfsd/model/model.h's volume list). */
int zcfsd_broker_watch(struct zcfsd *d, struct zcfsd_volume *v);
/* The server exited and will be restarted: unwatch, close the socket,
 * carry its ids. */
void zcfsd_broker_server_gone(struct zcfsd *d, struct zcfsd_volume *v);
/* The volume stops: unwatch, close every id, free; v->broker = NULL. */
void zcfsd_broker_stop(struct zcfsd *d, struct zcfsd_volume *v);

const char *zcfsd_broker_state_name(enum zcfsd_pt_state s);
/* "passthrough" object of a volume (status, volume.get). */
json_object *zcfsd_broker_json(const struct zcfsd_broker *b, bool allowed);

#endif
