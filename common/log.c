/* stderr log sink; one fprintf per line so threads do not interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "log.h"

static int log_level = LOG_INFO;
static const char *log_ident = "zcfs";

void log_set_level(int level) { log_level = level; }
int log_get_level(void) { return log_level; }
void log_set_ident(const char *ident) { log_ident = ident; }

void log_msg(int level, const char *fmt, ...)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error",
					      "warning", "notice", "info", "debug" };
	char line[1024];
	va_list ap;
	int saved = errno;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: level=%s %s\n", log_ident, names[level & 7], line);
	errno = saved;
}

void log_external_warning(void *event, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warn("event=%s message=\"%s\"", (const char *)event, line);
}
