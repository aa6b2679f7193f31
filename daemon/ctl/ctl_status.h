/* zcfsctl's human-readable rendering of daemon answers. */
#ifndef ZCFS_CTL_STATUS_H
#define ZCFS_CTL_STATUS_H

#include <stdio.h>
#include <json-c/json.h>

/* Bytes as "64.0M"-style text into BUF. */
const char *ctl_human_bytes(long long bytes, char *buf, size_t len);
void ctl_print_status(FILE *out, json_object *result);
void ctl_print_volume(FILE *out, json_object *volume);

#endif
