/* lnc_tmap.c - verifyTensorMap: the unified tensor map the link directory
 * publishes (tensor-map.json, read back from disk) must bind every HBM
 * memory location of the linked module to the same region, and its regions
 * must be disjoint, inside hbm_bytes, and carry a boolean sbuf_compatible.
 * See docs/multicore.md "Link directory and emission". */
#include "lnc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fileio.h"

typedef struct {
    const char *name;
    double addr, bytes;
    double lo, hi;           /* live_epochs (shared DRAM colouring); lo > hi: none */
} tm_ent_t;

/* "live_epochs": [lo, hi] of a coloured scratch tensor (lnc_color.c). */
static int live_epochs(const char *path, const cJSON *t, const char *name, tm_ent_t *e,
                       tpb_err_t *err)
{
    const cJSON *le = cJSON_GetObjectItemCaseSensitive(t, "live_epochs");
    e->lo = 1, e->hi = 0;
    if (!le)
        return 0;
    const cJSON *a = cJSON_GetArrayItem(le, 0), *b = cJSON_GetArrayItem(le, 1);
    if (!cJSON_IsArray(le) || cJSON_GetArraySize(le) != 2 || !cJSON_IsNumber(a) ||
        !cJSON_IsNumber(b) || a->valuedouble < 0 || b->valuedouble < a->valuedouble)
        return tpb_errf(err, "verifyTensorMap: %s: tensor '%s': live_epochs must be [first, "
                             "last] with 0 <= first <= last", path, name);
    e->lo = a->valuedouble, e->hi = b->valuedouble;
    return 0;
}

/* Two regions may share bytes only when both are coloured scratch live in
 * disjoint epochs (a rendezvous of every core separates them). */
static bool may_share(const tm_ent_t *x, const tm_ent_t *y)
{
    return x->lo <= x->hi && y->lo <= y->hi && (x->hi < y->lo || y->hi < x->lo);
}

static int by_addr(const void *a, const void *b)
{
    double x = ((const tm_ent_t *)a)->addr, y = ((const tm_ent_t *)b)->addr;
    return x < y ? -1 : x > y;
}

static int check_entries(const char *path, const cJSON *ts, double hbm, tm_ent_t *e, int n,
                         tpb_err_t *err)
{
    int i = 0;
    for (const cJSON *t = ts->child; t; t = t->next, i++) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(t, "name");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(t, "hbm_addr");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(t, "bytes");
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(t, "sbuf_compatible");
        if (!cJSON_IsString(nm) || !cJSON_IsNumber(a) || !cJSON_IsNumber(b))
            return tpb_errf(err, "verifyTensorMap: %s: tensors[%d] needs name, hbm_addr and "
                                 "bytes", path, i);
        if (!cJSON_IsBool(sc))
            return tpb_errf(err, "verifyTensorMap: %s: tensor '%s': sbuf_compatible must be "
                                 "true or false", path, nm->valuestring);
        if (a->valuedouble < 0 || a->valuedouble + b->valuedouble > hbm)
            return tpb_errf(err, "verifyTensorMap: %s: tensor '%s' [%.0f, %.0f) is outside the "
                                 "%.0f bytes of HBM", path, nm->valuestring, a->valuedouble,
                            a->valuedouble + b->valuedouble, hbm);
        e[i] = (tm_ent_t){nm->valuestring, a->valuedouble, b->valuedouble, 1, 0};
        if (live_epochs(path, t, nm->valuestring, &e[i], err))
            return -1;
    }
    qsort(e, (size_t)n, sizeof *e, by_addr);
    for (i = 1; i < n; i++)
        for (int j = i - 1; j >= 0; j--)   /* every earlier region reaching into e[i] */
            if (e[j].addr + e[j].bytes > e[i].addr && !may_share(&e[j], &e[i]))
                return tpb_errf(err, "verifyTensorMap: %s: tensors '%s' and '%s' overlap",
                                path, e[j].name, e[i].name);
    return 0;
}

static int check_mlocs(const char *path, const lnc_module_t *lnk, const tm_ent_t *e, int n,
                       tpb_err_t *err)
{
    for (int m = 0; m < lnk->nmlocs; m++) {
        const lnc_mloc_t *ml = &lnk->mlocs[m];
        if (ml->space != ISA_SPACE_HBM)
            continue;
        int i = 0;
        while (i < n && strcmp(e[i].name, ml->name))
            i++;
        if (i == n)
            return tpb_errf(err, "verifyTensorMap: %s: memory location '%s' of %s has no entry",
                            path, ml->name, lnk->name);
        if (e[i].addr != (double)ml->addr || e[i].bytes != (double)ml->bytes)
            return tpb_errf(err, "verifyTensorMap: %s: '%s' is [%.0f, +%.0f) in the map but "
                                 "[%llu, +%llu) in %s",
                            path, ml->name, e[i].addr, e[i].bytes, (unsigned long long)ml->addr,
                            (unsigned long long)ml->bytes, lnk->name);
    }
    return 0;
}

int lnc_verify_tensor_map(const lnc_module_t *lnk, const char *path, tpb_err_t *err)
{
    size_t len;
    uint8_t *txt;
    if (fio_read_all(path, &txt, &len, err))
        return -1;
    cJSON *root = cJSON_ParseWithLength((const char *)txt, len);
    free(txt);
    const cJSON *ts = root ? cJSON_GetObjectItemCaseSensitive(root, "tensors") : NULL;
    const cJSON *hb = root ? cJSON_GetObjectItemCaseSensitive(root, "hbm_bytes") : NULL;
    int rc = -1;
    if (!cJSON_IsArray(ts) || !cJSON_IsNumber(hb)) {
        tpb_errf(err, "verifyTensorMap: %s: not a tensor map (tensors, hbm_bytes)", path);
        goto out;
    }
    int n = cJSON_GetArraySize(ts);
    tm_ent_t *e = calloc((size_t)n + 1, sizeof *e);
    if (!e) {
        tpb_errf(err, "out of memory (tensor map)");
        goto out;
    }
    rc = check_entries(path, ts, hb->valuedouble, e, n, err) ||
         check_mlocs(path, lnk, e, n, err) ? -1 : 0;
    free(e);
out:
    cJSON_Delete(root);
    return rc;
}
