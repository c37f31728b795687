/* fj_ops_collective.c - the collective op family of the JSON front-end
 * (nki.collectives: all_reduce, all_gather, reduce_scatter, all_to_all,
 * collective_permute, rank_id; see fj.h and docs/multicore.md). */
#include <stdbool.h>
#include <stdint.h>

#include "fj.h"

/* srcs/dsts: a one-tensor list (or a bare operand) */
static int one_of_list(jx_t *j, const cJSON *o, const char *path, const char *fname,
                       const tir_ap_t **out)
{
    const cJSON *it = fj_field(o, fname);
    if (!it)
        return fj_jfail(j, path, fname, "missing");
    if (cJSON_IsArray(it)) {
        if (cJSON_GetArraySize(it) != 1)
            return fj_jfail(j, path, fname, "expected a list of exactly one tensor (coalesced "
                            "collectives are not supported), got %d", cJSON_GetArraySize(it));
        it = it->child;
    }
    fj_operand_t op;
    if (fj_operand_item(j, it, path, fname, false, &op))
        return -1;
    return fj_intern_ap(j, path, fname, &op.ap, out);
}

static int int_list(jx_t *j, const cJSON *it, const char *path, const char *fname, int64_t *v,
                    int max, int *n)
{
    if (!cJSON_IsArray(it))
        return fj_jfail(j, path, fname, "expected a list of ranks, got %s", fj_type_name(it));
    *n = 0;
    for (const cJSON *x = it->child; x; x = x->next) {
        if (*n >= max)
            return fj_jfail(j, path, fname, "more than %d entries in a list", max);
        if (fj_get_int_item(j, x, path, fname, &v[*n], NULL))
            return -1;
        if (v[*n] < 0 || v[*n] >= 8)
            return fj_jfail(j, path, fname, "rank %lld out of range 0..7", (long long)v[*n]);
        (*n)++;
    }
    return 0;
}

/* replica_group: [[0, 1, 2, 3]] or [[0, 1], [2, 3]]; absent = every core. */
static int get_replica_group(jx_t *j, const cJSON *o, const char *path, tir_op_rare_t *r)
{
    const cJSON *rg = fj_field(o, "replica_group");
    if (!rg) {   /* every core of the kernel */
        for (int c = 0; c < 8 && c < j->b.k->num_cores; c++)
            r->rgroup[c] = 0;
        return 0;
    }
    if (!cJSON_IsArray(rg) || !rg->child)
        return fj_jfail(j, path, "replica_group", "expected a list of rank lists");
    bool flat = !cJSON_IsArray(rg->child);   /* [0, 1]: one group */
    int g = 0;
    for (const cJSON *sub = flat ? rg : rg->child; sub; sub = flat ? NULL : sub->next, g++) {
        int64_t v[8];
        int n;
        if (int_list(j, sub, path, "replica_group", v, 8, &n))
            return -1;
        for (int i = 0; i < n; i++) {
            if (r->rgroup[v[i]] >= 0)
                return fj_jfail(j, path, "replica_group", "rank %lld is in more than one group "
                                "(sub-groups may not overlap)", (long long)v[i]);
            r->rgroup[v[i]] = (int8_t)g;
        }
    }
    return 0;
}

static int get_permute_pairs(jx_t *j, const cJSON *o, const char *path, tir_op_rare_t *r)
{
    const cJSON *pairs = fj_field(o, "source_target_pairs");
    if (!pairs || !cJSON_IsArray(pairs))
        return fj_jfail(j, path, "source_target_pairs",
                        pairs ? "expected a list of [source, target]" : "missing");
    for (const cJSON *x = pairs->child; x; x = x->next) {
        int64_t v[2];
        int n;
        if (int_list(j, x, path, "source_target_pairs", v, 2, &n))
            return -1;
        if (n != 2)
            return fj_jfail(j, path, "source_target_pairs", "each pair is [source, target]");
        if (r->perm_from[v[1]] >= 0)
            return fj_jfail(j, path, "source_target_pairs", "rank %lld is the target of two pairs",
                            (long long)v[1]);
        r->perm_from[v[1]] = (int8_t)v[0];
    }
    return 0;
}

static int h_collective(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (op->kind == TIR_RANK_ID)
        return fj_get_ap(j, o, path, "dst", true, &op->dst) ? -1 : 1;
    if (one_of_list(j, o, path, "dsts", &op->dst) || one_of_list(j, o, path, "srcs", &op->src[0]))
        return -1;
    op->nsrc = 1;
    bool reduce = op->kind == TIR_ALL_REDUCE || op->kind == TIR_REDUCE_SCATTER;
    if (reduce) {
        /* NKI's `op` argument: "operator" names the operation in a kernel file */
        if (fj_get_enum8(j, o, path, "operator", ISA_FT_ALU, fj_alu_aliases, &op->op0, -1))
            return -1;
        if (op->op0 < 0)
            return fj_jfail(j, path, "operator", "missing");
        if (op->op0 != ISA_ALU_ADD && op->op0 != ISA_ALU_MAX && op->op0 != ISA_ALU_MIN)
            return fj_jfail(j, path, "operator", "must be add, maximum or minimum");
    }
    tir_op_rare_t r = *op->rare;
    if (op->kind != TIR_ALL_REDUCE && op->kind != TIR_COLLECTIVE_PERMUTE &&
        fj_get_int_range(j, o, path, "collective_dim", &r.coll_dim, 0, 0, 1))
        return -1;
    int rc = op->kind == TIR_COLLECTIVE_PERMUTE ? get_permute_pairs(j, o, path, &r)
                                                : get_replica_group(j, o, path, &r);
    op->rare = enc_rare_in(&j->b, &r);
    return rc ? -1 : 1;
}

const fj_opdef_t fj_ops_collective[] = {
    {"all_reduce", TIR_ALL_REDUCE, h_collective, {F_COMMON, "srcs", "dsts", "replica_group", "operator", "priority", NULL}},
    {"all_gather", TIR_ALL_GATHER, h_collective, {F_COMMON, "srcs", "dsts", "replica_group", "collective_dim", "priority", NULL}},
    {"reduce_scatter", TIR_REDUCE_SCATTER, h_collective, {F_COMMON, "srcs", "dsts", "replica_group", "collective_dim", "operator", "priority", NULL}},
    {"all_to_all", TIR_ALL_TO_ALL, h_collective, {F_COMMON, "srcs", "dsts", "replica_group", "collective_dim", "priority", NULL}},
    {"collective_permute", TIR_COLLECTIVE_PERMUTE, h_collective, {F_COMMON, "srcs", "dsts", "source_target_pairs", "priority", NULL}},
    {"rank_id", TIR_RANK_ID, h_collective, {F_COMMON, "dst", NULL}},
    {NULL, 0, NULL, {NULL}},
};
