/* fj_mask.c - NKI mask= on compute ops without a predicate of their own
 * (docs/kernel-format.md "mask").  tensor_scalar and tensor_copy carry the
 * mask themselves (a PredExt in keep mode); every other op listed in
 * `general` is computed into a fresh compiler tile of dst's shape, dtype and
 * buffer (from dst's start partition), then a masked tensor_copy moves it into dst, so masked-out dst
 * elements keep their value.  That is NKI's meaning exactly when every dst
 * element comes from its own point of the iteration space and the op has no
 * other effect; the ops where it is not are refused with the reason.  A
 * matmul runs on the mask's rectangle of dst when it keeps one, which also
 * lets it accumulate (fj_mask_mm.c). */
#include <stdio.h>
#include <string.h>

#include "fj.h"

/* ops whose dst is indexed like the masked iteration space */
static const char *const general[] = {
    "activation", "activate2", "tensor_tensor", "scalar_tensor_tensor", "tensor_reduce",
    "tensor_partition_reduce", "iota", "memset", "affine_select", "select",
    "reciprocal", "transpose", "matmul", "range_select", "select_reduce", NULL};

static const struct { const char *op, *why; } refused[] = {
    {"tensor_tensor_scan", "each element carries the scan into the next, so a masked-out "
                           "element would still feed the elements after it"},
    {"dropout", "masked-out elements would still draw from the random-number state"},
    {"max8", "dst holds the row's top 8, not one element per masked index"},
    {"find_index8", "dst holds indices found over the whole row, not one element per masked "
                    "index"},
    {"match_replace8", "it writes two outputs (dst and dst_idx) from the whole row"},
    {"bn_stats", "dst holds statistics over the whole row, not one element per masked index"},
    {"bn_aggr", "dst holds statistics over the whole row, not one element per masked index"},
    {"quantize_mx", "dst and its scales are computed per block, not per masked index"},
    {"tensor_copy_predicated", "dst keeps its value where the predicate fails, and the "
                               "compiler tile the op would be computed into does not hold it"},
    {NULL, NULL}};

static bool in_list(const char *const *l, const char *s)
{
    for (; *l; l++)
        if (!strcmp(*l, s))
            return true;
    return false;
}

/* the forms a copy into dst cannot make exact */
static int refuse(jx_t *j, const cJSON *o, const char *path, const fj_opdef_t *d)
{
    for (int i = 0; refused[i].op; i++)
        if (!strcmp(refused[i].op, d->name))
            return fj_jfail(j, path, "mask", "%s cannot take a mask: %s", d->name, refused[i].why);
    if (!in_list(general, d->name))
        return fj_jfail(j, path, "mask", "%s cannot take a mask (NKI mask= applies to compute "
                        "ops whose dst is indexed like their iteration space)", d->name);
    if (fj_field(o, "reduce_res"))
        return fj_jfail(j, path, "mask", "a masked %s cannot also write reduce_res: the "
                        "masked-out elements would still reach the reduction", d->name);
    if (!strcmp(d->name, "activation") && cJSON_IsTrue(fj_field(o, "accumulate")))
        return fj_jfail(j, path, "mask", "a masked activation cannot accumulate: the "
                        "masked-out elements would still reach the accumulator");
    return 0;
}

int fj_mask_scratch(jx_t *j, tir_op_t *copy, const char *name, const char *dname)
{
    const tir_tensor_t *t = &j->b.k->tensors[copy->dst->tensor];
    /* the scratch starts at dst's partition (engines keep partitions) */
    int64_t row = 1, shape[TIR_MAX_DIMS];
    for (int i = 1; i < t->ndim; i++)
        row *= t->shape[i];
    int64_t p0 = copy->dst->offset / row;
    memcpy(shape, copy->dst->count, sizeof shape);
    shape[0] = p0 + copy->dst->count[0];
    char nm[64];
    snprintf(nm, sizeof nm, "%.36s_unmasked%d", name ? name : dname, j->b.k->ntensors % 100000);
    int tile = enc_own_tile(&j->b, nm, t->kind, t->dtype, copy->dst->ndim, shape);
    if (tile < 0)
        return -1;
    j->mask_dst = enc_ap(&j->b, tile, 1, (enc_slice_t[]){ENC_RANGE(p0, shape[0])}, "dst");
    copy->src[0] = enc_in(&j->b, j->mask_dst);   /* the op's "dst" is the scratch tile */
    return j->b.failed ? -1 : 0;
}

/* Run the op: a matmul through fj_mask_matmul (mm, from h_matmul), any
 * other into the scratch tile (mm->scratch). */
static int run_masked(jx_t *j, const cJSON *o, const char *path, const fj_opdef_t *d,
                      fj_run_fn run, fj_mask_mm_t *mm)
{
    bool matmul = !strcmp(d->name, "matmul");
    if (matmul)
        j->mask_mm = mm;
    else if (fj_mask_scratch(j, mm->copy, mm->name, d->name))
        return -1;
    mm->scratch = !matmul;
    j->mask_redirect = !matmul;
    int rc = run(j, o, path, d);
    j->mask_redirect = false;
    j->mask_mm = NULL;
    enc_set_acc_dst(&j->b, NULL);   /* consumed by the emit, unless it failed first */
    return rc;
}

int fj_masked_op(jx_t *j, const cJSON *o, const char *path, const fj_opdef_t *d, fj_run_fn run)
{
    const char *fields[sizeof d->fields / sizeof d->fields[0] + 1];
    int n = 0;
    while (d->fields[n]) {
        fields[n] = d->fields[n];
        n++;
    }
    fields[n++] = "mask";
    fields[n] = NULL;
    if (fj_check_fields(j, o, path, fields) || refuse(j, o, path, d))
        return -1;
    tir_op_t cp;
    tir_op_init(&cp, TIR_TENSOR_COPY);
    const char *nm;
    int eng;
    if (fj_get_ap(j, o, path, "dst", true, &cp.dst) || fj_get_str(j, o, path, "name", &nm, false) ||
        fj_get_engine(j, o, path, &eng))
        return -1;
    const tir_tensor_t *t = &j->b.k->tensors[cp.dst->tensor];
    if (t->kind != TIR_T_SBUF && t->kind != TIR_T_PSUM)
        return fj_jfail(j, path, "mask", "a masked %s writes a tile (SBUF or PSUM), not "
                        "tensor '%s'", d->name, t->name);
    cp.nsrc = 1;
    cp.engine = eng == ISA_ENG_DVE || eng == ISA_ENG_POOL ? eng : ISA_ENG_UNASSIGNED;
    fj_mask_mm_t mm = {&cp, nm, d->name, false, false};
    if (fj_get_mask(j, o, path, &cp) || run_masked(j, o, path, d, run, &mm) < 0)
        return -1;
    if (!mm.scratch)
        return 0;   /* a matmul on the mask's rectangle, or nothing (fj_mask_mm.c) */
    enc_set_path(&j->b, path);
    if (nm) {
        char name[64];
        snprintf(name, sizeof name, "%.50s_mask", nm);
        enc_set_name(&j->b, name);
    }
    if (enc_emit(&j->b, &cp) < 0)
        return -1;
    return mm.note ? fj_mask_matmul_note(j, &cp) : 0;
}
