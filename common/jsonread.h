/* jsonread.h - parse JSON text with cJSON and say why it failed: the byte
 * offset, and when the text nests deeper than cJSON's limit
 * (CJSON_NESTING_LIMIT, 1000 levels) that limit instead of a bare
 * "invalid JSON" (docs/reliability.md). */
#ifndef TPB_JSONREAD_H
#define TPB_JSONREAD_H

#include <stddef.h>
#include <stdint.h>

#include "cJSON.h"
#include "diag.h"

/* Parse buf[0..len) (trailing text after the value is an error).  On
 * failure *out is NULL and err says "<path>: invalid JSON near byte
 * offset N" or "<path>: byte offset N: JSON nested deeper than the limit
 * of 1000 levels". */
int tpb_json_parse(const uint8_t *buf, size_t len, const char *path, cJSON **out, tpb_err_t *err);
/* Offset in buf[0..len) where the bracket depth (outside strings) first
 * exceeds `limit`, or -1: why cJSON refused a text that nests too deep. */
long tpb_json_too_deep_at(const uint8_t *buf, size_t len, size_t limit);
/* Read and parse a whole file; an empty file is named as such. */
int tpb_json_read_file(const char *path, cJSON **out, tpb_err_t *err);

#endif
