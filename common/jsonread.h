/* jsonread.h - parse JSON text with cJSON (or into an arena) and say why it failed: the byte
 * offset, and when the text nests deeper than cJSON's limit
 * (CJSON_NESTING_LIMIT, 1000 levels) that limit instead of a bare
 * "invalid JSON" (docs/reliability.md). */
#ifndef TPB_JSONREAD_H
#define TPB_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
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
/* For a parser that reads a whole kernel file (tpb_json_arena_parse,
 * jsonarena.h) and names positions as "<src>:<line>:<col>": where text
 * other than blanks (' ', tab, CR, LF) follows the value that ends at
 * `end` in text[0..len) -- a NUL ends the text -- or NULL when none does. */
const char *tpb_json_trailing_text(const char *text, size_t len, const char *end);
/* Its message when the text was refused: `end` is where the parser stopped
 * (cJSON's return_parse_end; NULL when unknown), `parsed` whether a value
 * was read before trailing text at `end`.  "<src>:L:C: invalid JSON near
 * here", "...: invalid JSON: nested deeper than the limit of 1000 levels"
 * or "...: invalid JSON: unexpected text after the top-level value".
 * Returns -1. */
int tpb_json_fail_linecol(const char *text, size_t len, const char *end, bool parsed,
                          const char *src, tpb_err_t *err);
/* Read and parse a whole file; an empty file is named as such. */
int tpb_json_read_file(const char *path, cJSON **out, tpb_err_t *err);
/* The same two for a read-only tree whose nodes live in the arena `a`
 * (tpb_json_arena_parse, jsonarena.h): no malloc per node, freed with
 * tpb_arena_free(a) and never with cJSON_Delete.  Same accepted texts,
 * values and messages as the cJSON versions; "<path>: out of memory" when
 * the arena cannot grow.  Whatever was parsed stays in `a` on failure. */
int tpb_json_parse_arena(tpb_arena_t *a, const uint8_t *buf, size_t len, const char *path,
                         cJSON **out, tpb_err_t *err);
int tpb_json_read_file_arena(tpb_arena_t *a, const char *path, cJSON **out, tpb_err_t *err);

#endif
