/* case.c - read a golden case directory's case.json (schema: docs/golden.md). */
#include "case.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jsonread.h"

static int copy_str(char *dst, size_t len, const char *src, const char *path,
                    const char *field, tpb_err_t *err)
{
    if (strlen(src) >= len)
        return tpb_errf(err, "%s: field '%s': string too long (max %zu)", path, field, len - 1);
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

static int get_number(const cJSON *it, const char *path, const char *field, double lo,
                      double hi, double *out, tpb_err_t *err)
{
    if (!cJSON_IsNumber(it))
        return tpb_errf(err, "%s: field '%s': expected a number", path, field);
    double v = it->valuedouble;
    if (!(v >= lo && v <= hi))
        return tpb_errf(err, "%s: field '%s': %g not in [%g, %g]", path, field, v, lo, hi);
    *out = v;
    return 0;
}

static bool key_in(const char *key, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (strcmp(key, *allowed) == 0)
            return true;
    return false;
}

static int check_keys(const cJSON *obj, const char *const *allowed, const char *path,
                      const char *where, tpb_err_t *err)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj) {
        if (!key_in(it->string, allowed))
            return tpb_errf(err, "%s: %sunknown field '%s'", path, where, it->string);
    }
    return 0;
}

/* {"rtol": x, "atol": y, "check": "dropout", "keep_fraction": [lo, hi]} */
static int parse_tol(const cJSON *obj, const char *path, const char *where, gc_tol_t *tol,
                     tpb_err_t *err)
{
    static const char *const keys[] = { "rtol", "atol", "check", "keep_fraction", NULL };
    char field[256];
    if (!cJSON_IsObject(obj))
        return tpb_errf(err, "%s: field '%s': expected an object", path, where);
    snprintf(field, sizeof field, "%s.", where);
    if (check_keys(obj, keys, path, field, err) != 0)
        return -1;
    const cJSON *it;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "rtol"))) {
        snprintf(field, sizeof field, "%s.rtol", where);
        if (get_number(it, path, field, 0, 1e30, &tol->rtol, err) != 0)
            return -1;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "atol"))) {
        snprintf(field, sizeof field, "%s.atol", where);
        if (get_number(it, path, field, 0, 1e30, &tol->atol, err) != 0)
            return -1;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "check"))) {
        if (!cJSON_IsString(it))
            return tpb_errf(err, "%s: field '%s.check': expected a string", path, where);
        if (strcmp(it->valuestring, "dropout") == 0)
            tol->mode = GC_MODE_DROPOUT;
        else if (strcmp(it->valuestring, "values") == 0)
            tol->mode = GC_MODE_VALUES;
        else
            return tpb_errf(err, "%s: field '%s.check': unknown check '%s' (values, dropout)",
                            path, where, it->valuestring);
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "keep_fraction"))) {
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
            return tpb_errf(err, "%s: field '%s.keep_fraction': expected [min, max]", path, where);
        snprintf(field, sizeof field, "%s.keep_fraction", where);
        if (get_number(cJSON_GetArrayItem(it, 0), path, field, 0, 1, &tol->keep_min, err) ||
            get_number(cJSON_GetArrayItem(it, 1), path, field, tol->keep_min, 1, &tol->keep_max, err))
            return -1;
    }
    return 0;
}

static int parse_tags(const cJSON *it, const char *path, gc_case_t *c, tpb_err_t *err)
{
    if (!cJSON_IsArray(it))
        return tpb_errf(err, "%s: field 'tags': expected a list of strings", path);
    const cJSON *t;
    cJSON_ArrayForEach(t, it) {
        if (!cJSON_IsString(t))
            return tpb_errf(err, "%s: field 'tags': expected a list of strings", path);
        if (c->ntags >= GC_MAX_TAGS)
            return tpb_errf(err, "%s: field 'tags': more than %d tags", path, GC_MAX_TAGS);
        if (copy_str(c->tags[c->ntags++], sizeof c->tags[0], t->valuestring, path, "tags", err))
            return -1;
    }
    return 0;
}

static int parse_cycles(const cJSON *it, const char *path, gc_case_t *c, tpb_err_t *err)
{
    if (cJSON_IsNull(it))
        return 0;
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
        return tpb_errf(err, "%s: field 'cycles': expected [min, max] or null", path);
    double lo = 0, hi = 0;
    if (get_number(cJSON_GetArrayItem(it, 0), path, "cycles[0]", 0, 9e15, &lo, err) ||
        get_number(cJSON_GetArrayItem(it, 1), path, "cycles[1]", lo, 9e15, &hi, err))
        return -1;
    c->has_cycles = true;
    c->cycles_min = (uint64_t)lo;
    c->cycles_max = (uint64_t)hi;
    return 0;
}

/* "xfail": "reason" | {"reason": "..."} | false | null */
static int parse_xfail(const cJSON *it, const char *path, gc_case_t *c, tpb_err_t *err)
{
    if (cJSON_IsNull(it) || cJSON_IsFalse(it))
        return 0;
    if (cJSON_IsObject(it))
        it = cJSON_GetObjectItemCaseSensitive(it, "reason");
    if (!cJSON_IsString(it) || !it->valuestring[0])
        return tpb_errf(err, "%s: field 'xfail': expected a non-empty reason string", path);
    c->xfail = true;
    return copy_str(c->xfail_reason, sizeof c->xfail_reason, it->valuestring, path, "xfail", err);
}

static int parse_outputs(const cJSON *it, const char *path, gc_case_t *c, tpb_err_t *err)
{
    if (!cJSON_IsObject(it))
        return tpb_errf(err, "%s: field 'outputs': expected an object {name: tolerance}", path);
    const cJSON *o;
    cJSON_ArrayForEach(o, it) {
        if (c->noutputs >= GC_MAX_OUTPUTS)
            return tpb_errf(err, "%s: field 'outputs': more than %d entries", path, GC_MAX_OUTPUTS);
        gc_output_cfg_t *oc = &c->outputs[c->noutputs++];
        char where[200];
        snprintf(where, sizeof where, "outputs.%s", o->string);
        if (copy_str(oc->name, sizeof oc->name, o->string, path, where, err))
            return -1;
        oc->tol = c->default_tol;
        if (parse_tol(o, path, where, &oc->tol, err) != 0)
            return -1;
    }
    return 0;
}

static int parse_kernel_path(const cJSON *it, const char *path, gc_case_t *c, tpb_err_t *err)
{
    const char *k = "kernel.json";
    if (it) {
        if (!cJSON_IsString(it))
            return tpb_errf(err, "%s: field 'kernel': expected a file name", path);
        k = it->valuestring;
    }
    return fio_join(c->kernel, sizeof c->kernel, c->dir, k, err);
}

int gc_case_parse(const char *text, const char *path, gc_case_t *c, tpb_err_t *err)
{
    static const char *const keys[] = { "description", "kernel", "target", "lnc", "tags", "seed",
                                        "tolerance", "outputs", "cycles", "xfail", NULL };
    cJSON *root;
    if (tpb_json_parse((const uint8_t *)text, strlen(text), path, &root, err))
        return -1;
    int rc = -1;
    const cJSON *it;
    double v = 0;
    if (!cJSON_IsObject(root)) {
        tpb_errf(err, "%s: expected a JSON object at the top level", path);
        goto out;
    }
    if (check_keys(root, keys, path, "", err) != 0)
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "description"))) {
        if (!cJSON_IsString(it)) {
            tpb_errf(err, "%s: field 'description': expected a string", path);
            goto out;
        }
        snprintf(c->description, sizeof c->description, "%s", it->valuestring);
    }
    if (parse_kernel_path(cJSON_GetObjectItemCaseSensitive(root, "kernel"), path, c, err))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "target"))) {
        if (!cJSON_IsString(it)) {
            tpb_errf(err, "%s: field 'target': expected a string", path);
            goto out;
        }
        if (copy_str(c->target, sizeof c->target, it->valuestring, path, "target", err))
            goto out;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "lnc"))) {
        if (get_number(it, path, "lnc", 1, 8, &v, err) != 0)
            goto out;
        c->lnc = (int)v;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "seed"))) {
        if (get_number(it, path, "seed", 0, 9e15, &v, err) != 0)
            goto out;
        c->seed = (uint64_t)v;
        c->has_seed = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "tags")) && parse_tags(it, path, c, err))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "tolerance")) &&
        parse_tol(it, path, "tolerance", &c->default_tol, err))
        goto out;
    /* after "tolerance": per-output entries inherit the case default */
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "outputs")) && parse_outputs(it, path, c, err))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "cycles")) && parse_cycles(it, path, c, err))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "xfail")) && parse_xfail(it, path, c, err))
        goto out;
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

static void case_name_from_dir(gc_case_t *c)
{
    char tmp[GC_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", c->dir);
    size_t n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/')
        tmp[--n] = 0;
    const char *slash = strrchr(tmp, '/');
    const char *base = slash ? slash + 1 : tmp;
    size_t len = strlen(base) < sizeof c->name - 1 ? strlen(base) : sizeof c->name - 1;
    memcpy(c->name, base, len);
    c->name[len] = 0;
}

int gc_case_load(const char *dir, gc_case_t *c, tpb_err_t *err)
{
    memset(c, 0, sizeof *c);
    if (strlen(dir) >= sizeof c->dir)
        return tpb_errf(err, "%s: path too long", dir);
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    case_name_from_dir(c);
    c->lnc = 1;
    gc_tol_default(&c->default_tol);
    char path[GC_PATH_MAX];
    if (fio_join(path, sizeof path, dir, "case.json", err) != 0)
        return -1;
    if (!fio_exists(path))
        return fio_join(c->kernel, sizeof c->kernel, dir, "kernel.json", err);
    uint8_t *buf;
    size_t len;
    if (fio_read_all(path, &buf, &len, err) != 0)
        return -1;
    int rc = gc_case_parse((const char *)buf, path, c, err);
    free(buf);
    return rc;
}

const gc_tol_t *gc_case_tol(const gc_case_t *c, const char *output)
{
    for (int i = 0; i < c->noutputs; i++)
        if (strcmp(c->outputs[i].name, output) == 0)
            return &c->outputs[i].tol;
    return &c->default_tol;
}

bool gc_case_has_tag(const gc_case_t *c, const char *tag)
{
    for (int i = 0; i < c->ntags; i++)
        if (strcmp(c->tags[i], tag) == 0)
            return true;
    return false;
}
