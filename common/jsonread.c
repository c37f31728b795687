#include "jsonread.h"

#include <stdbool.h>
#include <stdlib.h>

#include "fileio.h"
#include "jsonarena.h"

long tpb_json_too_deep_at(const uint8_t *buf, size_t len, size_t limit)
{
    size_t depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = buf[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit)
                return (long)i;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return -1;
}

/* The first byte at or after p (before stop) that is not JSON white space. */
static const char *skip_blanks(const char *p, const char *stop)
{
    while (p < stop && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Whether buf[0..len) holds only blanks from `end` (just past the value) on;
 * otherwise the message naming the first other byte.  Returns 0 or -1. */
static int check_tail(const uint8_t *buf, size_t len, const char *end, const char *path,
                      tpb_err_t *err)
{
    const char *text = (const char *)buf;
    const char *p = skip_blanks(end ? end : text + len, text + len);
    if (p >= text + len)
        return 0;
    return tpb_errf(err, "%s: byte offset %zu: unexpected text after the JSON value", path,
                    (size_t)(p - text));
}

/* The message for a text refused at `end` (where the parser stopped). */
static int refused(const uint8_t *buf, size_t len, const char *end, const char *path,
                   tpb_err_t *err)
{
    size_t off = end ? (size_t)(end - (const char *)buf) : 0;
    long deep = tpb_json_too_deep_at(buf, off + 1 < len ? off + 1 : len, CJSON_NESTING_LIMIT);
    if (deep >= 0)
        return tpb_errf(err, "%s: byte offset %ld: JSON nested deeper than the limit of %d levels",
                        path, deep, CJSON_NESTING_LIMIT);
    return tpb_errf(err, "%s: invalid JSON near byte offset %zu", path, off);
}

int tpb_json_parse(const uint8_t *buf, size_t len, const char *path, cJSON **out, tpb_err_t *err)
{
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts((const char *)buf, len, &end, 0);
    if (!*out)
        return refused(buf, len, end, path, err);
    if (check_tail(buf, len, end, path, err) == 0)
        return 0;
    cJSON_Delete(*out);
    *out = NULL;
    return -1;
}

int tpb_json_parse_arena(tpb_arena_t *a, const uint8_t *buf, size_t len, const char *path,
                         cJSON **out, tpb_err_t *err)
{
    const char *end = NULL;
    tpb_ja_status_t st = tpb_json_arena_parse(a, (const char *)buf, len, out, &end);
    if (st == TPB_JA_NOMEM) {
        *out = NULL;
        return tpb_errf(err, "%s: out of memory", path);
    }
    if (st != TPB_JA_OK) {
        *out = NULL;
        return refused(buf, len, end, path, err);
    }
    if (check_tail(buf, len, end, path, err) == 0)
        return 0;
    *out = NULL; /* the nodes stay in the arena until the caller frees it */
    return -1;
}

/* Read a whole file and hand it to parse (one of the two above). */
static int read_file(const char *path, tpb_arena_t *a, cJSON **out, tpb_err_t *err)
{
    uint8_t *buf;
    size_t len;
    *out = NULL;
    if (fio_read_all(path, &buf, &len, err) != 0)
        return -1;
    int rc = len == 0 ? tpb_errf(err, "%s: empty file (expected a JSON document)", path)
             : a      ? tpb_json_parse_arena(a, buf, len, path, out, err)
                      : tpb_json_parse(buf, len, path, out, err);
    free(buf);
    return rc;
}

int tpb_json_read_file(const char *path, cJSON **out, tpb_err_t *err)
{
    return read_file(path, NULL, out, err);
}

int tpb_json_read_file_arena(tpb_arena_t *a, const char *path, cJSON **out, tpb_err_t *err)
{
    return read_file(path, a, out, err);
}

const char *tpb_json_trailing_text(const char *text, size_t len, const char *end)
{
    end = skip_blanks(end, text + len);
    return end < text + len && *end ? end : NULL;
}

/* 1-based line and column of `at` in text (a NUL ends the text). */
static void line_col(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

int tpb_json_fail_linecol(const char *text, size_t len, const char *end, bool parsed,
                          const char *src, tpb_err_t *err)
{
    int line = 0, col = 0;
    if (parsed) {
        line_col(text, end, &line, &col);
        return tpb_errf(err, "%s:%d:%d: invalid JSON: unexpected text after the top-level value",
                        src, line, col);
    }
    bool at = text && end && end >= text && end <= text + len;
    size_t off = at ? (size_t)(end - text) : 0;
    long deep = text ? tpb_json_too_deep_at((const uint8_t *)text, off + 1 < len ? off + 1 : len,
                                            CJSON_NESTING_LIMIT)
                     : -1;
    if (deep >= 0) {
        line_col(text, text + deep, &line, &col);
        return tpb_errf(err, "%s:%d:%d: invalid JSON: nested deeper than the limit of %d levels",
                        src, line, col, CJSON_NESTING_LIMIT);
    }
    if (at)
        line_col(text, end, &line, &col);
    return tpb_errf(err, "%s:%d:%d: invalid JSON near here", src, line, col);
}
