/* jsonarena.h - parse JSON text into cJSON nodes allocated from an arena.
 *
 * The nodes have cJSON's public layout (struct cJSON), so cJSON's read-only
 * functions (cJSON_GetObjectItem*, cJSON_IsX, cJSON_GetArraySize, ...) work
 * on them, but every node, key and string lives in a tpb_arena_t: the tree
 * costs no malloc/free per node and is freed whole by tpb_arena_free.  It
 * must never be given to cJSON_Delete or to any cJSON function that frees
 * or reallocates (cJSON_SetValuestring, cJSON_Delete*, cJSON_Replace*).
 * Keys are marked cJSON_StringIsConst (the node does not own them).
 *
 * Accepts and rejects exactly what cJSON 1.7.15's cJSON_ParseWithLengthOpts
 * (require_null_terminated 0) does, with the same values (numbers through
 * strtod and cJSON's int saturation, \uXXXX and
 * surrogate pairs to UTF-8, duplicate keys kept in order, the nesting limit
 * CJSON_NESTING_LIMIT), the same links (the first child's prev is the last
 * child) and the same end / failure position.  tests/test_jsonarena.c
 * checks this against the library. */
#ifndef TPB_JSONARENA_H
#define TPB_JSONARENA_H

#include <stddef.h>

#include "arena.h"
#include "cJSON.h"

typedef enum {
    TPB_JA_OK = 0,
    TPB_JA_SYNTAX,   /* not JSON (or nested too deep): *end is where cJSON stops */
    TPB_JA_NOMEM,    /* the arena could not grow */
} tpb_ja_status_t;

/* Parse text[0..len) into nodes in `a` (which the caller frees, on failure
 * too).  On success *root is the value and *end points just past it (no
 * blanks skipped: trailing text is the caller's decision, as with cJSON's
 * return_parse_end).  On TPB_JA_SYNTAX *root is NULL and *end is the
 * position cJSON_ParseWithLengthOpts would report (text for an empty
 * text).  text NULL: TPB_JA_SYNTAX with *end NULL. */
tpb_ja_status_t tpb_json_arena_parse(tpb_arena_t *a, const char *text, size_t len, cJSON **root,
                                     const char **end);
/* The bytes tpb_json_arena_parse takes from the arena at once for a text
 * of len bytes (its guess at the tree, zero-filled by the mapping it comes
 * from), 0 when it takes them as it goes.  An owner that puts the text in
 * the same arena first reserves both (tpb_arena_reserve): one mapping. */
size_t tpb_json_arena_presize(size_t len);

#endif
