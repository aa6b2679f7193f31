/* One logging API for every zcfs program: syslog levels, key=value lines
 * on stderr, one event per line. Library code returns errors; the layer
 * that decides logs once. */
#ifndef ZCFS_LOG_H
#define ZCFS_LOG_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <syslog.h>
#include "util.h"

enum log_format {
	LOG_FORMAT_TEXT,	/* IDENT: level=NAME key=value ... */
	LOG_FORMAT_JSON,	/* {"time","program","level","message"} per line */
};

void log_set_level(int level);
void log_set_format(enum log_format f);
/* "text" or "json" (--log-format): 0, or -EINVAL. */
int log_parse_format(const char *s, enum log_format *ret);
void log_set_ident(const char *ident);
int log_get_level(void);
void log_msg(int level, const char *fmt, ...) _printf_(2, 3);
/* A library's printf-style logger callback (libmicrohttpd's
 * MHD_OPTION_EXTERNAL_LOGGER): one warning line, `event=EVENT
 * message="..."`, EVENT the callback's context string, cut at the first
 * newline. */
void log_external_warning(void *event, const char *fmt, va_list ap) _printf_(2, 0);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) \
	do { if (log_get_level() >= LOG_DEBUG) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
