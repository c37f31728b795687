/* lnc_color.c - coloring_allocator_dram_shared (seed 003 §1, order 82):
 * colour the shared HBM scratch of a multi-core kernel so that two scratch
 * tensors share bytes when, and only when, every core has passed a
 * rendezvous between the last access of one and the first access of the
 * other.
 *
 * Epochs.  Walking core c's kernel in program order, the epoch starts at 0
 * and moves on after every core_barrier whose cores are all the kernel's
 * cores.  Such a barrier is a rendezvous every core passes, and the per-core
 * compile models it as writing all of HBM (lower_misc.c), so on each core
 * every earlier HBM access has completed before it and every later one
 * waits for it; the k-th all-core barrier of every core is the same
 * rendezvous (barriers of one cores mask pair by ordinal, lnc_link.c).
 * Collectives and partial-mask barriers do not move the epoch (a collective
 * orders only the data it exchanges).
 *
 * A scratch tensor is live over [first, last] epoch of any access by any
 * core.  Two tensors whose intervals are disjoint are separated by a whole
 * rendezvous, so the later one may take the earlier one's bytes.  Placement
 * is first fit in order of (first epoch, declaration order) at the lowest
 * 64-byte aligned address of the scratch region that no placed tensor with
 * an intersecting interval uses; with one epoch (no all-core barrier) that
 * is exactly the dense layout.  Scratch tensors that no op names, or that a
 * register-offset DMA addresses (its address moves at run time), are live
 * everywhere; a kernel with inline assembly (raw addresses) or with a
 * different number of all-core barriers on some core keeps the dense
 * layout.  docs/multicore.md "Shared DRAM colouring". */
#include "lnc.h"

#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define COLOR_ALIGN 64u

typedef struct {
    int tensor;
    int lo, hi;        /* live epochs; lo > hi: not accessed yet */
    uint64_t addr, bytes;
} live_t;

static void touch(live_t *lv, const int *slot, int ntensors, const tir_ap_t *a, int epoch,
                  bool pin, int nepochs)
{
    if (a->tensor < 0 || a->tensor >= ntensors || slot[a->tensor] < 0)
        return;
    live_t *l = &lv[slot[a->tensor]];
    int lo = pin ? 0 : epoch, hi = pin ? nepochs - 1 : epoch;
    if (l->lo > l->hi) {
        l->lo = lo;
        l->hi = hi;
        return;
    }
    if (lo < l->lo)
        l->lo = lo;
    if (hi > l->hi)
        l->hi = hi;
}

static void touch_op(live_t *lv, const int *slot, int nt, const tir_op_t *op, int epoch,
                     int nepochs)
{
    touch(lv, slot, nt, op->dst, epoch, op->rare->dst_reg >= 0, nepochs);
    touch(lv, slot, nt, op->dst2, epoch, false, nepochs);
    for (int i = 0; i < op->nsrc && i < 4; i++)
        touch(lv, slot, nt, op->src[i], epoch, i == 0 && op->rare->src_reg >= 0, nepochs);
    touch(lv, slot, nt, op->index, epoch, false, nepochs);
    touch(lv, slot, nt, op->bias, epoch, false, nepochs);
    if (op->s0.is_ap)
        touch(lv, slot, nt, op->s0.ap, epoch, false, nepochs);
    if (op->s1.is_ap)
        touch(lv, slot, nt, op->s1.ap, epoch, false, nepochs);
}

static bool all_core_barrier(const tir_op_t *op, int ncores)
{
    unsigned all = (1u << ncores) - 1u;
    return op->kind == TIR_CORE_BARRIER && (op->rare->barrier_cores & all) == all;
}

/* Number of all-core barriers of core kernel k; -1 when it has inline
 * assembly (raw addresses the colouring cannot see). */
static int count_rendezvous(const tir_kernel_t *k, int ncores)
{
    int n = 0;
    for (int i = 0; i < k->nops; i++) {
        if (k->ops[i].kind == TIR_INLINE_ASM || k->ops[i].kind == TIR_INLINE_ASM_BYTES)
            return -1;
        n += all_core_barrier(&k->ops[i], ncores);
    }
    return n;
}

static int by_first(const void *a, const void *b)
{
    const live_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->tensor > y->tensor) - (x->tensor < y->tensor);
}

static int by_addr(const void *a, const void *b)
{
    const live_t *x = *(const live_t *const *)a, *y = *(const live_t *const *)b;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

/* First fit of lv[i] among lv[0..i) (already placed) from `base`. */
static uint64_t first_fit(live_t *lv, int i, uint64_t base, live_t **tmp)
{
    int n = 0;
    for (int j = 0; j < i; j++)
        if (lv[j].lo <= lv[i].hi && lv[i].lo <= lv[j].hi)
            tmp[n++] = &lv[j];
    qsort(tmp, (size_t)n, sizeof *tmp, by_addr);
    uint64_t at = base;
    for (int j = 0; j < n; j++) {
        if (at + lv[i].bytes <= tmp[j]->addr)
            break;
        uint64_t end = tmp[j]->addr + tmp[j]->bytes;
        if (end > at)
            at = (end + COLOR_ALIGN - 1) / COLOR_ALIGN * COLOR_ALIGN;
    }
    return at;
}

static int place(live_t *lv, int n, enc_hbm_layout_t *hbm,
                 uint64_t base, tpb_err_t *err)
{
    live_t **tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    int *lo = calloc((size_t)(hbm->ntensors > 0 ? hbm->ntensors : 1), sizeof *lo);
    int *hi = calloc((size_t)(hbm->ntensors > 0 ? hbm->ntensors : 1), sizeof *hi);
    if (!tmp || !lo || !hi) {
        free(tmp), free(lo), free(hi);
        return tpb_errf(err, "out of memory colouring shared DRAM");
    }
    qsort(lv, (size_t)n, sizeof *lv, by_first);
    uint64_t total = base;
    for (int i = 0; i < n; i++) {
        lv[i].addr = first_fit(lv, i, base, tmp);
        hbm->addr[lv[i].tensor] = lv[i].addr;
        lo[lv[i].tensor] = lv[i].lo;
        hi[lv[i].tensor] = lv[i].hi;
        if (lv[i].addr + lv[i].bytes > total)
            total = lv[i].addr + lv[i].bytes;
    }
    free(tmp);
    free(hbm->live_lo);
    free(hbm->live_hi);
    hbm->live_lo = lo;
    hbm->live_hi = hi;
    hbm->total = total;
    return 0;
}

int lnc_color_dram_shared(const lnc_split_t *s, enc_hbm_layout_t *hbm, tpb_err_t *err)
{
    if (s->ncores < 2 || !hbm->addr)
        return 0;
    const tir_kernel_t *k0 = &s->core_k[0];
    int nt = hbm->ntensors < k0->ntensors ? hbm->ntensors : k0->ntensors;
    int nepochs = count_rendezvous(k0, s->ncores);
    for (int c = 1; c < s->ncores && nepochs >= 0; c++)
        if (count_rendezvous(&s->core_k[c], s->ncores) != nepochs)
            nepochs = -1;
    if (nepochs < 1)
        return 0;   /* one epoch (dense is the colouring), or not colourable */
    nepochs++;
    int *slot = malloc((size_t)(nt > 0 ? nt : 1) * sizeof *slot);
    live_t *lv = calloc((size_t)(nt > 0 ? nt : 1), sizeof *lv);
    if (!slot || !lv) {
        free(slot), free(lv);
        return tpb_errf(err, "out of memory colouring shared DRAM");
    }
    int n = 0;
    uint64_t base = UINT64_MAX;
    for (int t = 0; t < nt; t++) {
        slot[t] = -1;
        if (k0->tensors[t].kind != TIR_T_SCRATCH)
            continue;
        if (hbm->addr[t] < base)
            base = hbm->addr[t];
        slot[t] = n;
        lv[n++] = (live_t){t, 1, 0, 0, enc_tensor_bytes(&k0->tensors[t])};
    }
    for (int c = 0; c < s->ncores && n > 0; c++) {
        const tir_kernel_t *k = &s->core_k[c];
        int epoch = 0;
        for (int i = 0; i < k->nops; i++) {
            touch_op(lv, slot, nt, &k->ops[i], epoch, nepochs);
            epoch += all_core_barrier(&k->ops[i], s->ncores);
        }
    }
    for (int i = 0; i < n; i++)
        if (lv[i].lo > lv[i].hi)
            lv[i].lo = 0, lv[i].hi = nepochs - 1;   /* never named: live everywhere */
    int rc = n > 0 ? place(lv, n, hbm, base, err) : 0;
    free(slot);
    free(lv);
    return rc;
}
