/* sidecar_form.c - expand a compact sidecar into the full form; see
 * sidecar_form.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sidecar_form.h"

long long tpb_sidecar_compact_min(void)
{
    const char *s = getenv("TPB_SIDECAR_COMPACT_MIN");
    if (!s || *s < '0' || *s > '9')
        return TPB_SIDECAR_COMPACT_MIN;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return *end || errno ? TPB_SIDECAR_COMPACT_MIN : v;
}

bool tpb_sidecar_is_compact(const cJSON *root)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "debug_form");
    return cJSON_IsString(f) && !strcmp(f->valuestring, "compact");
}

/* A member inherited from the previous entry (prev: its value there, or
 * NULL); returns the value this entry has afterwards (NULL: none). */
static const cJSON *inherit(cJSON *e, const char *key, const cJSON *prev, bool *oom)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    if (v || !prev)
        return v;
    cJSON *copy = cJSON_Duplicate(prev, false);
    if (!copy || !cJSON_AddItemToObject(e, key, copy)) {
        cJSON_Delete(copy);
        *oom = true;
        return NULL;
    }
    return copy;
}

int tpb_sidecar_expand(cJSON *root)
{
    if (!tpb_sidecar_is_compact(root))
        return 0;
    cJSON *dbg = cJSON_GetObjectItemCaseSensitive(root, "debug");
    double prev_pc = -1;
    const cJSON *prev_src = NULL, *prev_op = NULL, *prev_name = NULL, *prev_idx = NULL,
                *prev_buf = NULL;
    bool oom = false;
    cJSON *e;
    cJSON_ArrayForEach(e, dbg)
    {
        if (!cJSON_IsObject(e))
            continue;
        const cJSON *pc = cJSON_GetObjectItemCaseSensitive(e, "pc");
        if (!pc)
            oom |= !cJSON_AddNumberToObject(e, "pc", prev_pc + 1);
        if (!pc || cJSON_IsNumber(pc))
            prev_pc = pc ? pc->valuedouble : prev_pc + 1;
        if (!cJSON_GetObjectItemCaseSensitive(e, "name")) { /* the previous entry's op */
            inherit(e, "op_index", prev_idx, &oom);
            inherit(e, "buf", prev_buf, &oom);
        }
        prev_name = inherit(e, "name", prev_name, &oom);
        prev_idx = cJSON_GetObjectItemCaseSensitive(e, "op_index");
        prev_buf = cJSON_GetObjectItemCaseSensitive(e, "buf");
        if (cJSON_IsString(prev_name) && !cJSON_GetObjectItemCaseSensitive(e, "inst"))
            oom |= !cJSON_AddStringToObject(e, "inst", prev_name->valuestring);
        prev_src = inherit(e, "src", prev_src, &oom);
        prev_op = inherit(e, "op", prev_op, &oom);
        if (oom)
            return -1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "debug_form");
    return 0;
}
