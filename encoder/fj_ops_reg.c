/* fj_ops_reg.c - NKI's virtual registers in the JSON front-end (see fj.h):
 * register_alloc, register_move, register_load, register_store.
 *
 * A register is named by register_alloc's `reg` and gets a physical
 * sequencer register from the kernel's set (regalloc.h; one per
 * register_alloc statement, so a loop body reuses it).  The name is also
 * bound as an integer (the register number) for the rest of the enclosing
 * body, so `src_reg` / `dst_reg` of a load/store can name it.  Without an
 * `engine`, every TPB engine keeps its own copy (each register op is
 * emitted on each engine), so any engine's later use sees the value. */
#include <stdio.h>
#include <string.h>

#include "fj.h"
#include "regalloc.h"

static const char memo_key = 0;   /* fj_memo "what": a register_alloc's register */

static int find_vreg(jx_t *j, const char *path, const char *field, const char *name)
{
    for (int i = j->nvregs - 1; i >= 0; i--)
        if (!strcmp(j->vregs[i].name, name))
            return j->vregs[i].phys;
    return fj_jfail(j, path, field, "'%s' is not a register (allocate it with register_alloc)",
                    name);
}

static int get_vreg(jx_t *j, const cJSON *o, const char *path, const char *field)
{
    const char *name;
    if (fj_get_str(j, o, path, field, &name, true))
        return -1;
    return find_vreg(j, path, field, fj_strip_prefix(name));
}

static int bind(jx_t *j, const char *path, const char *name, int phys)
{
    int i = 0;
    while (i < j->nvregs && strcmp(j->vregs[i].name, name))
        i++;
    if (i == j->nvregs) {
        if (j->nvregs == (int)(sizeof j->vregs / sizeof j->vregs[0]))
            return fj_jfail(j, path, "reg", "more than 64 register names");
        j->nvregs++;
    }
    strncpy(j->vregs[i].name, name, sizeof j->vregs[i].name - 1);
    j->vregs[i].name[sizeof j->vregs[i].name - 1] = 0;
    j->vregs[i].phys = phys;
    if (enc_env_push(&j->env, name, phys, false))
        return fj_jfail(j, path, NULL, "out of memory");
    return 0;
}

int fj_reg_named(jx_t *j, const cJSON *o, const char *path)
{
    const char *name;
    if (fj_get_str(j, o, path, "reg", &name, true))
        return -1;
    if (!name[0] || strlen(name) >= ENC_VAR_NAME || strchr(name, '[') || strchr(name, ' '))
        return fj_jfail(j, path, "reg", "'%s' is not a register name", name);
    uintptr_t m = (uintptr_t)fj_memo_get(j, o, &memo_key);
    int phys = m ? (int)m - 1 : enc_reg_alloc(&j->b.k->regs_used);
    if (phys < 0)
        return fj_jfail(j, path, "reg", "all %d sequencer registers are allocated",
                        ISA_NUM_REGS);
    if (!m)
        fj_memo_put(j, o, &memo_key, (const void *)(uintptr_t)(phys + 1));
    return bind(j, path, name, phys) ? -1 : phys;
}

int fj_reg_set(jx_t *j, const char *path, const char *name, int reg, int src, int64_t imm,
               bool add)
{
    tir_op_t op;
    tir_op_init(&op, TIR_REGISTER_MOVE);
    op.flags |= add ? TIR_F_ACCUMULATE : 0;
    tir_op_rare_t r = *op.rare;
    r.reg = reg;
    r.reg_src = src;
    r.reg_imm = imm;
    op.rare = enc_rare_in(&j->b, &r);
    enc_set_path(&j->b, path);
    enc_set_name(&j->b, name);
    return enc_emit(&j->b, &op) < 0 ? -1 : 0;
}

/* register_alloc(x=None): {"reg": name, "x": int (optional)} */
static int h_alloc(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int phys = fj_reg_named(j, o, path);
    if (phys < 0)
        return -1;
    if (!fj_field(o, "x") || cJSON_IsNull(fj_field(o, "x")))
        return 0;   /* uninitialised: nothing to emit */
    op->kind = TIR_REGISTER_MOVE;
    tir_op_rare_t r = *op->rare;
    r.reg = phys;
    if (fj_get_int(j, o, path, "x", &r.reg_imm, 0, true))
        return -1;
    op->rare = enc_rare_in(&j->b, &r);
    op->nsrc = 0;
    return 1;
}

/* register_move(dst, src): src a register name or an integer */
static int h_move(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    tir_op_rare_t r = *op->rare;
    if ((r.reg = get_vreg(j, o, path, "dst")) < 0)
        return -1;
    const cJSON *s = fj_field(o, "src");
    if (!s)
        return fj_jfail(j, path, "src", "missing");
    if (cJSON_IsString(s)) {
        const char *nm = fj_strip_prefix(s->valuestring);
        for (int i = j->nvregs - 1; i >= 0; i--)
            if (!strcmp(j->vregs[i].name, nm)) {
                r.reg_src = j->vregs[i].phys;
                break;
            }
    }
    if (r.reg_src < 0 && fj_get_int(j, o, path, "src", &r.reg_imm, 0, true))
        return -1;
    op->rare = enc_rare_in(&j->b, &r);
    op->nsrc = 0;
    return 1;
}

static bool in_hbm(const jx_t *j, const tir_ap_t *a)
{
    tir_tensor_kind_t k = j->b.k->tensors[a->tensor].kind;
    return k != TIR_T_SBUF && k != TIR_T_PSUM;
}

/* An HBM side goes through a compiler tile "<reg>_<what><n>" [1,1] of the
 * tensor's dtype (as the notes' legalize_store_value). */
static int bounce_tile(jx_t *j, const tir_ap_t *hbm, const char *what, tir_ap_t *full)
{
    char name[64];
    snprintf(name, sizeof name, "register_%s%d", what, j->b.k->ntensors % 100000);
    int64_t shape[2] = {1, 1};
    int tile =
        enc_own_tile(&j->b, name, TIR_T_SBUF, j->b.k->tensors[hbm->tensor].dtype, 2, shape);
    if (tile < 0)
        return -1;
    *full = enc_ap_full(&j->b, tile);
    return 0;
}

/* register_load(dst, src): one element of a tile, or of an HBM tensor
 * (DMA'd into a compiler tile first) -> the register */
static int h_load(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int reg = get_vreg(j, o, path, "dst");
    if (reg < 0 || fj_get_ap(j, o, path, "src", true, &op->src[0]))
        return -1;
    ENC_RARE_SET(&j->b, op, reg, reg);
    int64_t n = 1;
    for (int d = 0; d < op->src[0]->ndim; d++)
        n *= op->src[0]->count[d];
    if (n != 1)
        return fj_jfail(j, path, "src", "%lld elements; a register load reads exactly one",
                        (long long)n);
    op->kind = TIR_LOAD_TENSOR_TO_REGISTER;
    op->nsrc = 1;
    if (in_hbm(j, op->src[0])) {
        tir_ap_t full;
        if (bounce_tile(j, op->src[0], "load", &full) || enc_load(&j->b, full, *op->src[0]) < 0)
            return -1;
        op->src[0] = enc_in(&j->b, full);
    }
    return 1;
}

/* register_store(dst, src): the register -> one element of a tile, or of
 * an HBM tensor (through a compiler tile and a DMA) */
static int h_store(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int reg;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        (reg = get_vreg(j, o, path, "src")) < 0)
        return -1;
    ENC_RARE_SET(&j->b, op, reg, reg);
    op->nsrc = 0;
    if (!in_hbm(j, op->dst))
        return 1;
    tir_ap_t hbm = *op->dst, full;
    if (bounce_tile(j, &hbm, "store", &full))
        return -1;
    op->dst = enc_in(&j->b, full);
    if (enc_emit(&j->b, op) < 0 || enc_store(&j->b, hbm, full, false) < 0)
        return -1;
    return 0;
}

const fj_opdef_t fj_ops_reg[] = {
    {"register_alloc", TIR_REGISTER_MOVE, h_alloc, {F_COMMON, "reg", "x", NULL}},
    {"register_move", TIR_REGISTER_MOVE, h_move, {F_COMMON, "dst", "src", NULL}},
    {"register_load", TIR_LOAD_TENSOR_TO_REGISTER, h_load, {F_COMMON, "dst", "src", NULL}},
    {"register_store", TIR_REGISTER_STORE, h_store, {F_COMMON, "dst", "src", NULL}},
    {NULL, 0, NULL, {NULL}},
};

/* A register name's physical register (dynamic_range's stop), -1 after
 * the error. */
int fj_vreg(jx_t *j, const char *path, const char *field, const char *name)
{
    return find_vreg(j, path, field, fj_strip_prefix(name));
}
