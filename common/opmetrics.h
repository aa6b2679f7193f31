/* Requests counted and timed by method and result code, written as a
 * Prometheus counter family NAME_requests_total{method,code} and a
 * histogram NAME_request_duration_seconds{method,code} (text format
 * 0.0.4). One table per program: zcfsd's control calls, zcfs-csi's gRPC
 * methods, the volume plugin's endpoints. Thread-safe (zcfs-csi records
 * from a thread per call). */
#ifndef ZCFS_OPMETRICS_H
#define ZCFS_OPMETRICS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define OPMETRICS_MAX_METHODS 40
#define OPMETRICS_MAX_CODES 17
#define OPMETRICS_BOUNDS 11

struct opmetrics_cell {
	uint64_t count, buckets[OPMETRICS_BOUNDS];
	double sum;
};

struct opmetrics {
	const char *name;		  /* family prefix, e.g. "zcfs_csi" */
	const char *what;		  /* the help texts' subject: "gRPC calls zcfs-csi answered" */
	const char *const *methods;	  /* NULL-terminated; a name not in it counts as "other" */
	const char *const *codes;	  /* result code names, by code number */
	unsigned n_codes;
	pthread_mutex_t lock;
	struct opmetrics_cell cells[OPMETRICS_MAX_METHODS + 1][OPMETRICS_MAX_CODES];
};

#define OPMETRICS_INIT(NAME, WHAT, METHODS, CODES, N_CODES) \
	{ .name = (NAME), .what = (WHAT), .methods = (METHODS), .codes = (CODES), \
	  .n_codes = (N_CODES), .lock = PTHREAD_MUTEX_INITIALIZER }

/* One answered request of METHOD with result CODE (out of range: the last
 * code) after US microseconds. */
void opmetrics_record(struct opmetrics *m, const char *method, unsigned code, int64_t us);
/* Both families, every method/code pair seen so far. */
void opmetrics_write(struct opmetrics *m, FILE *f);

/* The process_* families of the Prometheus client libraries for this
 * process (procmetrics.c). */
void metrics_write_process(FILE *f);

/* Microseconds on CLOCK_MONOTONIC, for a request's duration. */
int64_t opmetrics_now_us(void);

#endif
