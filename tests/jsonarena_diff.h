/* jsonarena_diff.h - the arena JSON reader (common/jsonarena.h) against
 * the cJSON library it stands in for: both parse one text and must agree
 * on success, on the end / failure position and on every node.  Shared by
 * tests/test_jsonarena.c and the kernel fuzz harness (tests/fuzz). */
#ifndef TPB_JSONARENA_DIFF_H
#define TPB_JSONARENA_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "jsonarena.h"

static inline bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* A sibling list's links as cJSON makes them: next ends in NULL, each
 * prev is the one before, the first's prev is the last. */
static inline bool links_ok(const cJSON *head)
{
    const cJSON *last = NULL;
    for (const cJSON *c = head; c; c = c->next) {
        if (last && c->prev != last)
            return false;
        last = c;
    }
    return !head || head->prev == last;
}

/* cJSON's node `ref` and ours `mine` describe the same value. */
static inline const char *node_diff(const cJSON *ref, const cJSON *mine)
{
    if ((ref->type & 0xFF) != (mine->type & 0xFF))
        return "type";
    int flags = mine->type & ~0xFF;
    if (flags != (mine->string ? cJSON_StringIsConst : 0))
        return "flags (keys are cJSON_StringIsConst, nothing else)";
    if (!same_str(ref->string, mine->string))
        return "key";
    if (!same_str(ref->valuestring, mine->valuestring))
        return "valuestring";
    if (memcmp(&ref->valuedouble, &mine->valuedouble, sizeof(double)))
        return "valuedouble bits";
    if (ref->valueint != mine->valueint)
        return "valueint";
    if (!links_ok(ref->child) || !links_ok(mine->child))
        return "sibling links";
    const cJSON *a = ref->child, *b = mine->child;
    for (; a && b; a = a->next, b = b->next) {
        const char *d = node_diff(a, b);
        if (d)
            return d;
    }
    return a || b ? "number of children" : NULL;
}

/* Whether the linked cJSON still reads numbers through its original
 * 63-byte window (a build without the CVE-2023-26819 fix, which the
 * reader follows): texts with a longer run of number bytes are then not
 * compared. */
static inline bool cjson_windows_numbers(void)
{
    char s[64];
    memset(s, '1', sizeof s);
    const char *end = NULL;
    cJSON *r = cJSON_ParseWithLengthOpts(s, sizeof s, &end, 0);
    cJSON_Delete(r);
    return end != s + sizeof s;
}

static inline bool long_number_run(const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n && run < 64; i++)
        run = strchr("0123456789+-eE.", s[i]) && s[i] ? run + 1 : 0;
    return run >= 64;
}

/* Parse s[0..n) with both; NULL when they agree (*parsed: cJSON accepted
 * the text), else what differs. */
static inline const char *ja_diff_text(const char *s, size_t n, bool *parsed)
{
    *parsed = false;
    if (long_number_run(s, n) && cjson_windows_numbers())
        return NULL;
    const char *end_ref = NULL, *end_mine = NULL;
    cJSON *ref = cJSON_ParseWithLengthOpts(s, n, &end_ref, 0);
    tpb_arena_t a = {0};
    cJSON *mine = NULL;
    tpb_ja_status_t st = tpb_json_arena_parse(&a, s, n, &mine, &end_mine);
    const char *d = NULL;
    if (st == TPB_JA_NOMEM)
        d = "out of memory";
    else if (!ref != !mine)
        d = ref ? "cJSON accepts, the arena reader refuses" : "the arena reader accepts, cJSON refuses";
    else if (end_ref != end_mine)
        d = "end / failure position";
    else if (ref)
        d = node_diff(ref, mine);
    *parsed = ref != NULL;
    cJSON_Delete(ref);
    tpb_arena_free(&a);
    return d;
}

#endif
