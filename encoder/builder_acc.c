/* builder_acc.c - NKI accumulate=None for the matmul family.
 *
 * NKI's default (accumulate=None) overwrites on the first write to a PSUM
 * location and accumulates afterwards.  The builder keeps, per PSUM tile,
 * the regions (access patterns) earlier matmuls wrote, in program order:
 *
 *   - an auto matmul whose dst equals a written region accumulates;
 *   - one whose dst touches no written region overwrites and records it;
 *   - one that overlaps a written region without matching it is an error
 *     (give `accumulate` explicitly): partial accumulation groups have no
 *     single NKI reading;
 *   - any other write to the tile (tensor_copy, memset, a transpose, ...)
 *     forgets the regions it overlaps, so the next matmul starts a group.
 *
 * "Overlap" is NKI's "this PSUM location": two regions overlap when they
 * write a common byte (regions_touch: exact for the partition-major access
 * patterns matmul outputs have, so interleaved slices psum[:, q, :] of one
 * tile are separate groups); a match is the same access pattern.
 * Resolution happens in enc_emit(), so JSON, C and every later front-end
 * get the same rule.  A masked matmul lowered on a slice of its dst
 * (fj_mask_mm.c) is looked up and recorded by the dst the kernel names
 * (enc_set_acc_dst), so it joins the group of that region. */
#include "builder.h"

#include <stdlib.h>
#include <string.h>

struct enc_acc_region {
    tir_ap_t ap;
    int64_t lo, hi;               /* flat element range touched, inclusive */
    int next;                     /* next region of the same tensor, -1 */
    bool dead;
};

static bool is_matmul(tir_opkind_t kind)
{
    return kind == TIR_MATMUL || kind == TIR_MATMUL_MX || kind == TIR_MATMUL_SPARSE;
}

/* The largest partition row regions_touch compares byte by byte: a whole
 * PSUM partition (8 banks of 2 KiB). */
#define ACC_ROW_MAX 16384

/* Mark (set) or look up (!set) in bits the bytes of one partition row that
 * the free dims of tile-form AP a touch; its elements are esize bytes and
 * its free start is f0 (in elements).  Returns whether a looked-up byte was
 * marked. */
static bool row_bytes(const tir_ap_t *a, int64_t f0, unsigned esize, uint64_t *bits, bool set)
{
    int64_t idx[TIR_MAX_DIMS] = {0};
    for (;;) {
        int64_t f = f0;
        for (int d = 1; d < a->ndim; d++)
            f += idx[d] * a->step[d];
        for (int64_t byte = f * esize; byte < (f + 1) * esize; byte++) {
            if (byte < 0 || byte >= ACC_ROW_MAX)
                return !set;   /* outside the row (the op check names it): assume a touch */
            uint64_t m = 1ull << (byte & 63);
            if (set)
                bits[byte >> 6] |= m;
            else if (bits[byte >> 6] & m)
                return true;
        }
        int d = a->ndim - 1;
        while (d >= 1 && ++idx[d] == a->count[d])
            idx[d--] = 0;
        if (d < 1)
            return false;
    }
}

/* Partitions [*p0, *p0 + *np) and free start *f0 of tile-form AP a over t
 * (dim 0 steps over partitions), in a's elements of *esize bytes; false for
 * any other form. */
static bool tile_form(const tir_tensor_t *t, const tir_ap_t *a, int64_t *p0, int64_t *np,
                      int64_t *f0, unsigned *esize)
{
    tir_tensor_t vt;
    const tir_tensor_t *v = tir_ap_tensor(t, a, &vt);   /* a dtype view: its elements */
    if (!v || v->ndim < 1 || a->ndim < 1)
        return false;
    int64_t row = tir_tile_row(v);
    *esize = isa_dtype_size(v->dtype);
    if (row < 1 || row * *esize > ACC_ROW_MAX || (a->count[0] > 1 && a->step[0] != row))
        return false;
    *p0 = a->offset / row;
    *np = a->count[0];
    *f0 = a->offset % row;
    return true;
}

/* Whether APs a and b of PSUM tile t write a common byte (their flat
 * ranges already overlap): exactly for two tile-form APs -- a common
 * partition and a common byte of the row -- else assumed. */
static bool regions_touch(const tir_tensor_t *t, const tir_ap_t *a, const tir_ap_t *b)
{
    int64_t ap0, anp, af0, bp0, bnp, bf0;
    unsigned aes, bes;
    if (!tile_form(t, a, &ap0, &anp, &af0, &aes) || !tile_form(t, b, &bp0, &bnp, &bf0, &bes))
        return true;
    if (ap0 + anp <= bp0 || bp0 + bnp <= ap0)
        return false;
    uint64_t bits[ACC_ROW_MAX / 64] = {0};
    row_bytes(a, af0, aes, bits, true);
    return row_bytes(b, bf0, bes, bits, false);
}

static int head_of(enc_builder_t *b, int t)
{
    if (t < 0 || t >= b->acc_nheads)
        return -1;
    return b->acc_head[t];
}

void enc_set_acc_dst(enc_builder_t *b, const tir_ap_t *declared)
{
    b->acc_dst = declared;
}

/* The dst op's bookkeeping sees: enc_set_acc_dst's, else its own. */
static const tir_ap_t *acc_dst(const enc_builder_t *b, const tir_op_t *op)
{
    return b->acc_dst ? b->acc_dst : op->dst;
}

int enc_acc_resolve(enc_builder_t *b, tir_op_t *op)
{
    if (!(op->flags & TIR_F_ACC_AUTO))
        return 0;
    op->flags &= ~TIR_F_ACC_AUTO;
    if (!is_matmul(op->kind) || (op->flags & TIR_F_TRANSPOSE))
        return 0;   /* a transpose never accumulates */
    const tir_ap_t *dst = acc_dst(b, op);
    int t = dst->tensor;
    if (t < 0 || t >= b->k->ntensors)
        return 0;   /* no dst: the op check names it */
    int64_t lo, hi;
    tir_ap_range(&b->k->tensors[t], dst, &lo, &hi);   /* its tensor's elements, as the
                                                         regions (a dtype view's too) */
    for (int r = head_of(b, t); r >= 0; r = b->acc[r].next) {
        const struct enc_acc_region *g = &b->acc[r];
        if (g->dead || g->hi < lo || g->lo > hi)
            continue;
        if (tir_ap_equal(&g->ap, dst)) {
            op->flags |= TIR_F_ACCUMULATE;
            return 0;
        }
        if (!regions_touch(&b->k->tensors[t], &g->ap, dst))
            continue;   /* interleaved, not overlapping: another location */
        return enc_fail(b, "%s (%s): field 'accumulate': dst overlaps the output of an earlier "
                        "matmul without matching it, so accumulate=None has no single meaning; "
                        "give accumulate (true/false or an expression)",
                        op->path, tir_op_name(op->kind));
    }
    return 0;
}

static int add_region(enc_builder_t *b, const tir_ap_t *ap, int64_t lo, int64_t hi)
{
    int t = ap->tensor;
    if (t >= b->acc_nheads) {
        int n = b->acc_nheads ? b->acc_nheads : 64;
        while (n <= t)
            n *= 2;
        int *h = realloc(b->acc_head, (size_t)n * sizeof *h);
        if (!h)
            return -1;
        for (int i = b->acc_nheads; i < n; i++)
            h[i] = -1;
        b->acc_head = h;
        b->acc_nheads = n;
    }
    if (b->acc_n == b->acc_cap) {
        int n = b->acc_cap ? b->acc_cap * 2 : 64;
        struct enc_acc_region *g = realloc(b->acc, (size_t)n * sizeof *g);
        if (!g)
            return -1;
        b->acc = g;
        b->acc_cap = n;
    }
    struct enc_acc_region *g = &b->acc[b->acc_n];
    g->ap = *ap;
    g->lo = lo;
    g->hi = hi;
    g->dead = false;
    g->next = b->acc_head[t];
    b->acc_head[t] = b->acc_n++;
    return 0;
}

/* enc_acc_note's work where there is a region to retire or add (not
 * inlined: the test before it is all most ops need, and small enough for
 * the link-time optimiser to put into enc_emit) */
static __attribute__((noinline)) int acc_note_regions(enc_builder_t *b, const tir_op_t *op)
{
    const tir_ap_t *w[2] = {acc_dst(b, op), op->dst2};
    for (int i = 0; i < 2; i++) {
        int t = w[i]->tensor;
        if (t < 0 || t >= b->k->ntensors || b->k->tensors[t].kind != TIR_T_PSUM)
            continue;
        int64_t lo, hi;
        tir_ap_range(&b->k->tensors[t], w[i], &lo, &hi);
        bool group = i == 0 && is_matmul(op->kind) && !(op->flags & TIR_F_TRANSPOSE);
        bool known = false;
        for (int r = head_of(b, t); r >= 0; r = b->acc[r].next) {
            struct enc_acc_region *g = &b->acc[r];
            if (g->dead || g->hi < lo || g->lo > hi)
                continue;
            if (group && tir_ap_equal(&g->ap, w[i]))
                known = true;
            else if (regions_touch(&b->k->tensors[t], &g->ap, w[i]))
                g->dead = true;
        }
        if (group && !known && add_region(b, w[i], lo, hi))
            return enc_fail(b, "out of memory recording matmul outputs");
    }
    return 0;
}

int enc_acc_note(enc_builder_t *b, const tir_op_t *op)
{
    if (!b->acc_n && !is_matmul(op->kind))
        return 0;   /* no region to retire, none to add (a kernel before its first matmul) */
    return acc_note_regions(b, op);
}

void enc_acc_free(enc_builder_t *b)
{
    free(b->acc);
    free(b->acc_head);
    b->acc = NULL;
    b->acc_head = NULL;
    b->acc_n = b->acc_cap = b->acc_nheads = 0;
}
