/* protobuf-c messages <-> the csi.proto snake_case JSON the CSI methods
 * take and answer (csi.h): one generic walk over protobuf-c's descriptors,
 * so the gRPC front only converts and the method logic stays shared.
 * Mapping: proto3 fields at their default value are absent; enums become
 * their names (an unknown number stays a number); map<string,string> is an
 * object; google.protobuf.*Value wrappers are their plain value. */
#ifndef ZCFS_PB_JSON_H
#define ZCFS_PB_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include <protobuf-c/protobuf-c.h>
#include "common/zcfs_err.h"

/* Memory one request may take once unpacked (protobuf-c allocates a
 * message per empty sub-message on the wire: about 20x the bytes). */
#define PB_DECODE_MEM_MAX (16u << 20)

/* Unpacks BUF[0..LEN) as a DESC message and converts it to JSON (*ret,
 * caller puts). Malformed protobuf, more than PB_DECODE_MEM_MAX, a string
 * holding a NUL byte (C strings cannot carry it, so it would be cut
 * short silently), invalid UTF-8 or bytes fields: INVALID_ARGUMENT. */
int pb_decode_json(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
		   json_object **ret, struct zcfs_err *e) _must_check_;

/* Packs the JSON object O as a DESC message into *ret (malloc'ed, *len
 * bytes). A field the descriptor does not know, or a value of the wrong
 * type: -EPROTO with INTERNAL (our own answer does not fit csi.proto). */
int pb_encode_json(const ProtobufCMessageDescriptor *desc, json_object *o, uint8_t **ret,
		   size_t *len, struct zcfs_err *e) _must_check_;

#endif
