/* stderr log sink; one fprintf per line so threads do not interleave.
 * Under systemd (JOURNAL_STREAM names our stderr) each line starts with
 * its syslog priority, `<N>`, which journald takes and strips, so
 * `journalctl -p err` sorts them; --log-format=json writes one JSON
 * object per line for log shippers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "log.h"

static int log_level = LOG_INFO;
static const char *log_ident = "zcfs";
static enum log_format log_format = LOG_FORMAT_TEXT;
static int journal = -1;	/* -1: not looked at yet */

static const char *const names[] = { "emerg", "alert", "crit", "error",
				      "warning", "notice", "info", "debug" };

void log_set_level(int level) { log_level = level; }
int log_get_level(void) { return log_level; }
void log_set_ident(const char *ident) { log_ident = ident; }
void log_set_format(enum log_format f) { log_format = f; }

int log_parse_format(const char *s, enum log_format *ret)
{
	if (!strcmp(s, "text"))
		*ret = LOG_FORMAT_TEXT;
	else if (!strcmp(s, "json"))
		*ret = LOG_FORMAT_JSON;
	else
		return -EINVAL;
	return 0;
}

/* systemd sets JOURNAL_STREAM=DEV:INO of the stream it connected; a
 * child that inherited the variable but writes elsewhere (a server's
 * stderr is a pipe to zcfsd) must not prefix. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* The length of the valid UTF-8 sequence at S (a byte >= 0x80), or 0:
 * no overlong form, no surrogate, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 :
		   s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* S as a JSON string body into OUT (always terminated). A byte that is
 * not UTF-8 (a client's string in a message) becomes U+FFFD: a shipper's
 * parser refuses the whole line otherwise. */
static void json_escape(const char *s, char *out, size_t len)
{
	size_t o = 0, n;

	for (; *s && o + 7 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, len - o, "\\u%04x", c);
		} else if (c < 0x80) {
			out[o++] = (char)c;
		} else if ((n = utf8_seq((const unsigned char *)s)) == 0) {
			o += (size_t)snprintf(out + o, len - o, "\\ufffd");
		} else if (o + n + 7 < len) {
			memcpy(out + o, s, n);
			o += n;
			s += n - 1;
		} else {
			break;
		}
	}
	out[o] = '\0';
}

/* One event per line: a control byte in a text line (a client's string
 * in a message) would start a line of its own, which journald reads
 * with whatever <N> priority it begins with. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

static void write_json(const char *pre, int level, const char *line)
{
	char msg[2300], ts[40];
	struct timespec now;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	json_escape(line, msg, sizeof(msg));
	fprintf(stderr, "%s{\"time\":\"%s.%06ldZ\",\"program\":\"%s\",\"level\":\"%s\",\"message\":\"%s\"}\n",
		pre, ts, now.tv_nsec / 1000, log_ident, names[level & 7], msg);
}

void log_msg(int level, const char *fmt, ...)
{
	char line[1024], pre[8] = "";
	va_list ap;
	int saved = errno;

	if (level > log_level)
		return;
	if (journal < 0)
		journal = stderr_is_journal();
	if (journal)
		snprintf(pre, sizeof(pre), "<%d>", level & 7);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_format == LOG_FORMAT_JSON) {
		write_json(pre, level, line);
	} else {
		one_line(line);
		fprintf(stderr, "%s%s: level=%s %s\n", pre, log_ident, names[level & 7], line);
	}
	errno = saved;
}

void log_external_warning(void *event, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warn("event=%s message=\"%s\"", (const char *)event, line);
}
