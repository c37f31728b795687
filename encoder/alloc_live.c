/* alloc_live.c - the allocator's liveness (alloc_live.h): by a pass over
 * the ops, or from the facts another pass gathered. */
#include "alloc_live.h"

#include <stdlib.h>
#include <string.h>

#include "hugepage.h"
#include "lower.h"

/* The operands whose tensors an op keeps live: both destinations, the
 * four sources, index, bias and the scalar operands that are APs -- one
 * list for the allocator's own pass and the gathered one, as a statement
 * that runs DO(ap) on each (a walk without an array: 10^5 ops). */
#define FOR_LIVE_APS(op, DO)                                                    \
    do {                                                                        \
        DO((op)->dst);                                                          \
        DO((op)->dst2);                                                         \
        for (int s_ = 0; s_ < 4; s_++)                                          \
            DO((op)->src[s_]);                                                  \
        DO((op)->index);                                                        \
        DO((op)->bias);                                                         \
        if ((op)->s0.is_ap)                                                     \
            DO((op)->s0.ap);                                                    \
        if ((op)->s1.is_ap)                                                     \
            DO((op)->s1.ap);                                                    \
    } while (0)

static void touch(bir_mloc_t *ml, int nml, const tir_ap_t *a, int op)
{
    if (a->tensor < 0 || a->tensor >= nml)
        return;
    bir_mloc_t *m = &ml[a->tensor];
    if (m->first_use < 0)
        m->first_use = op;
    m->last_use = op;
}

/* Op i's scratch partial of sb bytes (sb != 0).  The per-op records are
 * allocated at the first op with one: most kernels have none (the array of
 * a few thousand ops was calloc'ed and cleared for nothing).  -1 when out
 * of memory. */
static int add_scratch(bir_module_t *m, const tpb_target_t *t, int nops, int i, uint64_t sb)
{
    if (!m->op_scratch &&
        !(m->op_scratch = tpb_array_zalloc((size_t)nops * sizeof *m->op_scratch)))
        return -1;
    m->nscratch++;
    bir_mloc_t *sc = &m->op_scratch[i];
    sc->tensor = -1;
    sc->space = ISA_SPACE_SBUF;
    sc->bytes = sb;
    sc->partitions = t->partitions;
    sc->first_use = sc->last_use = i;
    return 0;
}

/* Op i's touches and scratch partial (ident: the shared identity's tile). */
static int live_op(const tir_kernel_t *k, const tpb_target_t *t, bir_module_t *m, int ident,
                   int i)
{
    const tir_op_t *op = &k->ops[i];
    uint64_t sb = lower_scratch_bytes(k, op);
    if (sb && add_scratch(m, t, k->nops, i, sb))
        return -1;
    if (ident >= 0 && lower_pe_transpose_needs_identity(k, op)) {
        /* a PE transpose reads the shared identity (moving operand) */
        tir_ap_t id = {.tensor = ident};
        touch(m->mlocs, m->nmlocs, &id, i);
    }
#define TOUCH(a) touch(m->mlocs, m->nmlocs, (a), i)
    FOR_LIVE_APS(op, TOUCH);
#undef TOUCH
    return 0;
}

/* Widen ml's live range to ops [lo, hi]: what touching it at each op of
 * an ascending sequence from lo to hi does (the first touch sets
 * first_use, the last one last_use), in any order of merging. */
static void span(bir_mloc_t *ml, int lo, int hi)
{
    if (ml->first_use < 0 || lo < ml->first_use)
        ml->first_use = lo;
    if (hi > ml->last_use)
        ml->last_use = hi;
}

bool enc_live_fits(const enc_live_t *l, const tir_kernel_t *k)
{
    return l && l->use && !l->failed && l->shift >= 0 && l->nops + l->shift == k->nops &&
           l->ntensors <= k->ntensors;
}

int alloc_liveness(const tir_kernel_t *k, const tpb_target_t *t, bir_module_t *m,
                   const enc_live_t *live)
{
    int ident = m->ident_tile;
    if (!enc_live_fits(live, k) || live->ntensors > m->nmlocs) {
        for (int i = 0; i < k->nops; i++)
            if (live_op(k, t, m, ident, i))
                return -1;
        return 0;
    }
    int s = live->shift;
    for (int i = 0; i < s; i++)   /* the ops put in front */
        if (live_op(k, t, m, ident, i))
            return -1;
    for (int i = 0; i < live->ntensors; i++)
        if (live->use[i][0])
            span(&m->mlocs[i], (int)live->use[i][0] - 1 + s, (int)live->use[i][1] - 1 + s);
    if (ident >= 0 && live->ident_lo >= 0)
        span(&m->mlocs[ident], live->ident_lo + s, live->ident_hi + s);
    for (int j = 0; j < live->nscratch; j++)
        if (add_scratch(m, t, k->nops, live->scratch[j].op + s, live->scratch[j].bytes))
            return -1;
    return 0;
}

void enc_live_begin(enc_live_t *l, const tir_kernel_t *k)
{
    memset(l, 0, sizeof *l);
    l->ident_lo = l->ident_hi = -1;
    l->ntensors = k->ntensors;
    l->nops = k->nops;
    if (k->ntensors <= 0)
        return;
    /* zero: "no use" (a fresh mapping from TPB_ARRAY_MAP_MIN on: not cleared) */
    l->use_bytes = (size_t)k->ntensors * sizeof *l->use;
    l->use = tpb_array_zalloc(l->use_bytes);
    l->nuse = l->use ? k->ntensors : 0;
    l->hbm_ok = true;
}

static inline void use_touch(uint32_t (*use)[2], unsigned n, const tir_ap_t *a, uint32_t i1)
{
    unsigned t = (unsigned)a->tensor;   /* -1 (absent): past n */
    if (t < n) {
        if (!use[t][0])
            use[t][0] = i1;
        use[t][1] = i1;
    }
}

/* Op i's scratch partial of sb bytes (sb != 0) on the list; false when out
 * of memory. */
static bool note_scratch(enc_live_t *l, int i, uint64_t sb)
{
    if (l->nscratch == l->cap_scratch) {
        void *p = tpb_array_double(l->scratch, &l->cap_scratch, sizeof *l->scratch, 16);
        if (!p)
            return false;
        l->scratch = p;
    }
    l->scratch[l->nscratch++] = (struct enc_live_scratch){i, sb};
    return true;
}

void enc_live_op(enc_live_t *l, const tir_kernel_t *k, const tir_op_t *op, int i,
                 bool needs_ident)
{
    if (!l->nuse)
        return;
    l->deps_seen |= op->rare->ndeps > 0;
    /* (only a tensor_reduce or a dropout has one: no call for the other ops) */
    uint64_t sb = op->kind == TIR_TENSOR_REDUCE || op->kind == TIR_DROPOUT
                      ? lower_scratch_bytes(k, op) : 0;
    if (sb && !note_scratch(l, i, sb)) {   /* rare: a multi-step reduce, a tile-prob dropout */
        l->failed = true;
        l->nuse = 0;
        return;
    }
    if (needs_ident) {
        if (l->ident_lo < 0)
            l->ident_lo = i;
        l->ident_hi = i;
    }
    uint32_t (*use)[2] = l->use, i1 = (uint32_t)i + 1;
    unsigned n = (unsigned)l->nuse;
#define USE_TOUCH(a) use_touch(use, n, (a), i1)
    FOR_LIVE_APS(op, USE_TOUCH);
#undef USE_TOUCH
}

void enc_live_tensor(enc_live_t *l, int i, const tir_tensor_t *t)
{
    if (!l->hbm_ok || t->kind == TIR_T_SBUF || t->kind == TIR_T_PSUM)
        return;
    if (l->nhbm == l->cap_hbm) {   /* a few inputs and outputs: rarely grown */
        int *p = tpb_array_double(l->hbm, &l->cap_hbm, sizeof *p, 16);
        if (!p) {
            l->hbm_ok = false;
            return;
        }
        l->hbm = p;
    }
    l->hbm[l->nhbm++] = i;
}

void enc_live_free(enc_live_t *l)
{
    tpb_array_free(l->use, l->use_bytes);
    tpb_array_free(l->scratch, (size_t)l->cap_scratch * sizeof *l->scratch);
    tpb_array_free(l->hbm, (size_t)l->cap_hbm * sizeof *l->hbm);
    memset(l, 0, sizeof *l);
}
