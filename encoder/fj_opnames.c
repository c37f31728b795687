/* fj_opnames.c - an op statement's names: the op's table entry (nki.isa
 * spellings such as nc_matmul included) and NKI argument names mapped to
 * kernel-format fields (split from frontend_json.c). */
#include "fj.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

const fj_opdef_t *fj_find_opdef(const char *name)
{
    /* nki.isa spellings */
    static const fj_alias_t op_aliases[] = {
        {"nc_matmul", "matmul"}, {"nc_matmul_mx", "matmul_mx"}, {"nc_transpose", "transpose"},
        {"nc_find_index8", "find_index8"}, {"nc_match_replace8", "match_replace8"},
        {"nc_stream_shuffle", "stream_shuffle"}, {"activation_reduce", "activation"},
        {"nc_n_gather", "gather_flattened"},
        {NULL, NULL}};
    for (int i = 0; op_aliases[i].alias; i++)
        if (!strcmp(name, op_aliases[i].alias))
            name = op_aliases[i].name;
    static const fj_opdef_t *const families[] = {fj_ops_dma, fj_ops_compute,
                                                       fj_ops_collective, fj_ops_rng,
                                                       fj_ops_reg, fj_ops_seq};
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const fj_opdef_t *d = families[f]; d->name; d++)
            if (!strcmp(d->name, name))
                return d;
    return NULL;
}

/* NKI argument names of ops whose kernel-format fields predate them:
 * {op, NKI name, field}.  Applied once per statement (the key is renamed in
 * the parsed tree), before the allowed-field check, so both spellings work
 * and messages name the kernel-format field.  NKI's `op` argument cannot be
 * mapped (the key names the statement): it is `operator` / `func`. */
static const struct { const char *op, *nki, *field; } nki_params[] = {
    {"tensor_tensor", "data1", "in0"}, {"tensor_tensor", "data2", "in1"},
    {"tensor_scalar", "data", "src"},
    {"scalar_tensor_tensor", "data", "in0"}, {"scalar_tensor_tensor", "operand0", "scalar"},
    {"scalar_tensor_tensor", "operand1", "in1"},
    {"tensor_reduce", "data", "src"},
    {"tensor_partition_reduce", "data", "src"},
    {"tensor_tensor_scan", "data0", "in0"}, {"tensor_tensor_scan", "data1", "in1"},
    {"activation", "data", "src"},
    {"activate2", "data", "src"},
    {"transpose", "data", "src"},
    {"affine_select", "on_true_tile", "on_true"},
    {"range_select", "on_true_tile", "on_true"},
    {"find_index8", "data", "src"}, {"match_replace8", "data", "src"},
    {"dropout", "data", "src"},
    {"quantize_mx", "dst_scale", "scale"},
};

bool fj_has_nki_params(const fj_opdef_t *d)
{
    for (size_t i = 0; i < sizeof nki_params / sizeof nki_params[0]; i++)
        if (!strcmp(nki_params[i].op, d->name))
            return true;
    return false;
}

int fj_rename_nki_params(jx_t *j, const cJSON *o, const char *path, const fj_opdef_t *d)
{
    enum { NP = sizeof nki_params / sizeof nki_params[0] };
    size_t mine[NP], nmine = 0;   /* the op's entries, in table order */
    for (size_t i = 0; i < NP; i++)
        if (nki_params[i].op[0] == d->name[0] && !strcmp(nki_params[i].op, d->name))
            mine[nmine++] = i;
    for (cJSON *c = o->child; c && nmine; c = c->next) {
        for (size_t m = 0; m < nmine; m++) {
            size_t i = mine[m];
            if (!c->string || strcmp(c->string, nki_params[i].nki))
                continue;
            if (fj_field(o, nki_params[i].field))
                return fj_jfail(j, path, nki_params[i].nki, "given twice (also as '%s')",
                               nki_params[i].field);
            /* the tree lives in an arena (jsonarena.h): the key becomes
             * the table's name, which the node does not own */
            c->string = (char *)nki_params[i].field;
            c->type |= cJSON_StringIsConst;
            break;
        }
    }
    return 0;
}
