/* Per-method request counters and latency histograms (opmetrics.h). */
#include <string.h>
#include <time.h>
#include "opmetrics.h"
#include "util.h"

/* Upper bounds in seconds: a cached answer (ms) up to a publish that waits
 * for its server or a call that waits out zcfsd's timeout (tens of s). */
static const double bounds[OPMETRICS_BOUNDS] = { 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60 };

int64_t opmetrics_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static size_t method_index(const struct opmetrics *m, const char *method)
{
	size_t i;

	for (i = 0; m->methods[i] && i < OPMETRICS_MAX_METHODS; i++)
		if (method && !strcmp(m->methods[i], method))
			return i;
	return i;	/* "other" */
}

static const char *method_name(const struct opmetrics *m, size_t i)
{
	return i < OPMETRICS_MAX_METHODS && m->methods[i] ? m->methods[i] : "other";
}

void opmetrics_record(struct opmetrics *m, const char *method, unsigned code, int64_t us)
{
	double s = (double)(us > 0 ? us : 0) / 1e6;
	unsigned n = MIN(m->n_codes, (unsigned)OPMETRICS_MAX_CODES);
	struct opmetrics_cell *c;

	if (code >= n)
		code = n - 1;
	pthread_mutex_lock(&m->lock);
	c = &m->cells[method_index(m, method)][code];
	c->count++;
	c->sum += s;
	for (size_t b = 0; b < OPMETRICS_BOUNDS; b++)
		if (s <= bounds[b])
			c->buckets[b]++;
	pthread_mutex_unlock(&m->lock);
}

static void write_histogram(const struct opmetrics *m, FILE *f, const char *meth, const char *code,
			    const struct opmetrics_cell *c)
{
	for (size_t b = 0; b < OPMETRICS_BOUNDS; b++)
		fprintf(f, "%s_request_duration_seconds_bucket{method=\"%s\",code=\"%s\",le=\"%g\"} %llu\n",
			m->name, meth, code, bounds[b], (unsigned long long)c->buckets[b]);
	fprintf(f, "%s_request_duration_seconds_bucket{method=\"%s\",code=\"%s\",le=\"+Inf\"} %llu\n",
		m->name, meth, code, (unsigned long long)c->count);
	fprintf(f, "%s_request_duration_seconds_sum{method=\"%s\",code=\"%s\"} %.6f\n", m->name, meth, code,
		c->sum);
	fprintf(f, "%s_request_duration_seconds_count{method=\"%s\",code=\"%s\"} %llu\n", m->name, meth,
		code, (unsigned long long)c->count);
}

void opmetrics_write(struct opmetrics *m, FILE *f)
{
	unsigned n = MIN(m->n_codes, (unsigned)OPMETRICS_MAX_CODES);

	pthread_mutex_lock(&m->lock);
	fprintf(f, "# HELP %s_requests_total %s, by method and result code.\n"
		   "# TYPE %s_requests_total counter\n", m->name, m->what, m->name);
	for (size_t i = 0; i <= OPMETRICS_MAX_METHODS; i++)
		for (unsigned c = 0; c < n; c++)
			if (m->cells[i][c].count)
				fprintf(f, "%s_requests_total{method=\"%s\",code=\"%s\"} %llu\n", m->name,
					method_name(m, i), m->codes[c], (unsigned long long)m->cells[i][c].count);
	fprintf(f, "# HELP %s_request_duration_seconds Time from a request's arrival to its answer "
		   "(%s).\n# TYPE %s_request_duration_seconds histogram\n", m->name, m->what, m->name);
	for (size_t i = 0; i <= OPMETRICS_MAX_METHODS; i++)
		for (unsigned c = 0; c < n; c++)
			if (m->cells[i][c].count)
				write_histogram(m, f, method_name(m, i), m->codes[c], &m->cells[i][c]);
	pthread_mutex_unlock(&m->lock);
}
