/* spill.c - SBUF spilling: when the live tiles do not fit SBUF, store one to
 * HBM and load it back before its next use (docs/compiler.md "SBUF
 * spilling").
 *
 * The compile calls enc_spill only after the allocator refused the kernel
 * (compile.c), on a copy of the kernel (enc_spill_copy).  Each round places
 * the kernel (alloc_kernel_loops, rotating buffers as the compile would);
 * where SBUF placement fails -- op f, the first use of the tile that found
 * no room -- a victim is chosen among the SBUF tiles live at f:
 *
 *   - a tile accessed before f and after f but not by op f itself (so it
 *     holds data across f and op f does not need it), not the shared
 *     identity nor a tile the kernel placed ("addr", fixed placement);
 *   - every element written before f (a store of a partly written tile
 *     would read bytes nothing wrote);
 *   - Belady's rule: the one whose next use after f is furthest; ties: the
 *     larger tile, then the lower tensor index.
 *
 * One victim per round: what it frees is then placed again (several at
 * once, until their bytes reached the new tiles' need, spilled more on the
 * trn2 matmul tutorial on trn1 -- 12 096 victims against 8 064 -- at the
 * same compile time).
 *
 * The victim's data is stored whole to an HBM spill slot (a scratch
 * tensor [partitions, free elements] of its dtype) right after its last
 * write before f, and a new tile (same shape, "<tile>.s<n>", declaration
 * path "<path>.spill") is loaded from the slot right before the next use;
 * that use and every later one name the new tile.  A victim that is itself
 * a reload not written since, whose slot still holds its data, is clean:
 * no store, only the reload.  A slot is reused for a later victim of the
 * same dtype and shape once its last reload is behind the new store.  Then
 * the kernel is placed again; the rounds stop when it fits, or with the
 * allocator's error verbatim and why spilling could not help.  Values are
 * the same bytes moved out and back: bit-identical. */
#include "spill.h"

#include "backend.h"
#include "strutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rounds before giving up: each round places the whole kernel again. */
#define SPILL_MAX_ROUNDS 20000

typedef struct {
    int tensor;          /* the scratch tensor */
    int holder;          /* the reload tile whose data it holds while that stays clean, -1 */
    int last_reload;     /* op index of its last reload */
} slot_t;

typedef struct {
    tir_kernel_t *k;
    enc_spill_stats_t *st;
    slot_t *slots;
    int nslots, cap_slots;
    int *slot_of;        /* per tensor: the slot it was reloaded from, -1 */
    int cap_slot_of;
    /* a tensor of the kernel as given is named spill_slot...: each slot
     * name is checked (tir_free_name); found with the first slot */
    bool slot_names_used;
    /* per tensor, recomputed each round around the pressure op f */
    int *prev, *next, *lastw;   /* last access before f, first after f, last write before f */
    int cap_t;
} sp_t;

/* ---- the kernel copy ---- */

int enc_spill_copy(tir_kernel_t *d, const tir_kernel_t *k, tpb_err_t *err)
{
    tir_kernel_init(d);
    memcpy(d->name, k->name, sizeof d->name);
    memcpy(d->target, k->target, sizeof d->target);
    memcpy(d->source, k->source, sizeof d->source);
    d->num_cores = k->num_cores;
    d->program_id = k->program_id;
    d->core = k->core;
    d->num_programs = k->num_programs;
    d->grid_ndim = k->grid_ndim;
    memcpy(d->grid_dims, k->grid_dims, sizeof d->grid_dims);
    d->regs_used = k->regs_used;
    for (int i = 0; i < k->ntensors; i++)
        if (tir_add_tensor(d, &k->tensors[i]) < 0)
            goto oom;
    for (int i = 0; i < k->nops; i++) {
        tir_op_t op = k->ops[i];
        if (tir_op_copy_into(d, &op) || tir_add_op(d, &op) < 0)
            goto oom;
    }
    if (k->nloops) {
        if (!(d->loops = malloc((size_t)k->nloops * sizeof *d->loops)))
            goto oom;
        memcpy(d->loops, k->loops, (size_t)k->nloops * sizeof *d->loops);
        d->nloops = d->cap_loops = k->nloops;
    }
    if (k->nmarks) {
        d->loop_marks = tir_array_reserve(NULL, &d->cap_marks, k->nmarks, sizeof *d->loop_marks,
                                          64, false);
        if (!d->loop_marks)
            goto oom;
        memcpy(d->loop_marks, k->loop_marks, (size_t)k->nmarks * sizeof *d->loop_marks);
        d->nmarks = k->nmarks;
    }
    return 0;
oom:
    enc_spill_free(d);
    return tpb_errf(err, "out of memory copying the kernel for spilling");
}

void enc_spill_free(tir_kernel_t *k)
{
    for (int i = 0; i < k->ntensors; i++)   /* borrowed from the original */
        k->tensors[i].const_data = NULL, k->tensors[i].const_path = NULL;
    tir_kernel_free(k);
}

/* ---- one placement ---- */

/* Place k as the compile would; *fail_op: the op SBUF placement failed at,
 * -1 when it fitted or failed otherwise (then err is the error). */
static int place(const tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
                 int *fail_op, tpb_err_t *err)
{
    *fail_op = -1;
    bir_module_t m;
    if (bir_module_init(&m, 0, k->ntensors, err))
        return -1;
    unsigned char *cand = NULL;
    sched_rr_event_t *ev = NULL;
    int nev = 0;
    enc_stats_t st;
    int rc = roll_candidates(k, loops, &cand, &ev, &nev, err);
    if (!rc) {
        rc = alloc_kernel_loops(k, t, NULL, &m, &st, buffers, cand, err);
        if (rc)
            *fail_op = m.sbuf_fail_op;
    }
    free(cand);
    free(ev);
    bir_module_free(&m);
    return rc ? -1 : 0;
}

/* ---- the victim ---- */

static int grow_ints(int **a, int *cap, int need)
{
    if (need <= *cap)
        return 0;
    int nc = need * 2;
    int *p = realloc(*a, (size_t)nc * sizeof *p);
    if (!p)
        return -1;
    for (int i = *cap; i < nc; i++)
        p[i] = -1;
    *a = p;
    *cap = nc;
    return 0;
}

/* BODY for every operand of op naming a tensor: T its tensor, W whether
 * the operand is written (dst, dst2). */
#define FOR_OPERANDS(op, T, W, BODY)                                               \
    do {                                                                           \
        const tir_ap_t *aps_[TIR_MAX_READ_APS + 2];                                \
        int n_ = tir_op_read_aps((op), aps_);                                      \
        aps_[n_++] = (op)->dst;                                                    \
        aps_[n_++] = (op)->dst2;                                                   \
        for (int a_ = 0; a_ < n_; a_++) {                                          \
            int T = aps_[a_]->tensor;                                              \
            bool W = a_ >= n_ - 2;                                                 \
            if (T < 0)                                                             \
                continue;                                                          \
            BODY;                                                                  \
        }                                                                          \
    } while (0)

/* prev / next / lastw of every tensor around op f. */
static int scan_uses(sp_t *s, int f)
{
    tir_kernel_t *k = s->k;
    if (grow_ints(&s->prev, &s->cap_t, k->ntensors))
        return -1;
    int cap = s->cap_t;
    int *n2 = realloc(s->next, (size_t)cap * sizeof *n2);
    if (!n2)
        return -1;
    s->next = n2;
    int *w2 = realloc(s->lastw, (size_t)cap * sizeof *w2);
    if (!w2)
        return -1;
    s->lastw = w2;
    for (int i = 0; i < k->ntensors; i++)
        s->prev[i] = s->next[i] = s->lastw[i] = -1;
    for (int i = 0; i < f; i++)
        FOR_OPERANDS(&k->ops[i], tn, wr, {
            s->prev[tn] = i;
            if (wr)
                s->lastw[tn] = i;
        });
    for (int i = k->nops - 1; i > f; i--)
        FOR_OPERANDS(&k->ops[i], tn, wr, { (void)wr; s->next[tn] = i; });
    FOR_OPERANDS(&k->ops[f], tn, wr, { (void)wr; s->next[tn] = -2; });   /* accessed at f */
    return 0;
}

/* Whether ap covers the whole of a tile of `elems` elements densely
 * (row-major, from 0): the common full-tile write, known without a walk. */
static bool dense_full(const tir_ap_t *ap, uint64_t elems)
{
    if (ap->offset != 0 || ap->view)   /* a dtype view: taken as a partial write */
        return false;
    int64_t want = 1;
    for (int d = ap->ndim - 1; d >= 0; d--) {
        if (ap->count[d] == 1)
            continue;
        if (ap->step[d] != want)
            return false;
        want *= ap->count[d];
    }
    return (uint64_t)want == elems;
}

/* a dtype view's elements are not the tile's: it marks nothing (partial) */
static void mark(const tir_ap_t *a, uint8_t *bits, uint64_t nbits)
{
    if (!a->view)
        tir_ap_mark_bits(a, bits, nbits, false);
}

/* Whether the ops before f write every element of tile v (-1: out of memory). */
static int written_whole(const tir_kernel_t *k, int v, int f)
{
    uint64_t n = enc_tensor_elems(&k->tensors[v]);
    for (int i = 0; i < f; i++) {
        const tir_op_t *op = &k->ops[i];
        if ((op->dst->tensor == v && dense_full(op->dst, n)) ||
            (op->dst2->tensor == v && dense_full(op->dst2, n)))
            return 1;
    }
    uint8_t *bits = calloc((size_t)(n / 8 + 1), 1);
    if (!bits)
        return -1;
    for (int i = 0; i < f; i++) {
        const tir_op_t *op = &k->ops[i];
        if (op->dst->tensor == v)
            mark(op->dst, bits, n);
        if (op->dst2->tensor == v)
            mark(op->dst2, bits, n);
    }
    int all = 1;
    for (uint64_t b = 0; b < n / 8 && all; b++)   /* whole bytes, then the tail's bits */
        all = bits[b] == 0xff;
    for (uint64_t e = n & ~(uint64_t)7; e < n && all; e++)
        all = bits[e >> 3] >> (e & 7) & 1;
    free(bits);
    return all;
}

/* Whether v is a reload whose slot still holds its data (no store needed). */
static bool clean(const sp_t *s, int v)
{
    if (v >= s->cap_slot_of || s->slot_of[v] < 0)
        return false;
    const slot_t *sl = &s->slots[s->slot_of[v]];
    int w = s->lastw[v];
    return sl->holder == v && w >= 0 && (s->k->ops[w].flags & TIR_F_SPILL_RELOAD) &&
           s->k->ops[w].dst->tensor == v;
}

/* Whether v is last written by its own spill reload and only spill
 * reloads come between that and its next use: the reloads placed right
 * before one op are all for that op's operands, so spilling v again would
 * only put its reload after the others', and that op still needs them all
 * at once (without this rule such a kernel swapped two reloads 20 000
 * times before giving up). */
static bool reloaded_for_next(const sp_t *s, int v)
{
    const tir_kernel_t *k = s->k;
    int r = s->lastw[v];
    if (r < 0 || !(k->ops[r].flags & TIR_F_SPILL_RELOAD) || k->ops[r].dst->tensor != v)
        return false;
    for (int j = r + 1; j < s->next[v]; j++)
        if (!(k->ops[j].flags & TIR_F_SPILL_RELOAD))
            return false;
    return true;
}

/* The victim at f, or -1 with why[] saying why there is none (-2: out of
 * memory). */
static int choose(sp_t *s, int f, char *why, size_t len)
{
    tir_kernel_t *k = s->k;
    int at_f = 0, partial = -1, pinned = -1, pinned_use = -1;
    for (;;) {
        int best = -1;
        for (int v = 0; v < k->ntensors; v++) {
            const tir_tensor_t *tt = &k->tensors[v];
            if (tt->kind != TIR_T_SBUF || s->prev[v] < 0 || enc_is_ident_tile(tt) || tt->fixed1)
                continue;
            if (s->next[v] == -2) {
                at_f++;
                continue;
            }
            if (s->next[v] < 0 || s->lastw[v] == -3)   /* dead at f / refused below */
                continue;
            if (best < 0 || s->next[v] > s->next[best] ||
                (s->next[v] == s->next[best] &&
                 enc_tensor_bytes(tt) > enc_tensor_bytes(&k->tensors[best])))
                best = v;
        }
        if (best < 0)
            break;
        if (reloaded_for_next(s, best)) {
            pinned = best;
            pinned_use = s->next[best];
            s->lastw[best] = -3;   /* refused: the next best */
            at_f = 0;
            continue;
        }
        int whole = s->lastw[best] < 0 ? 0 : clean(s, best) ? 1 : written_whole(k, best, f);
        if (whole)
            return whole > 0 ? best : -2;
        partial = best;
        s->lastw[best] = -3;   /* refused: the next best */
        at_f = 0;
    }
    const tir_op_t *op = &k->ops[f];
    if (partial >= 0)
        snprintf(why, len, "the SBUF tiles live at %s (%s) that it does not access are not "
                           "wholly written before it (storing '%s' would read bytes nothing "
                           "wrote)", op->path, tir_op_name(op->kind), k->tensors[partial].name);
    else if (pinned >= 0)
        snprintf(why, len, "the SBUF tiles live at %s (%s) that it does not access are "
                           "reloaded right before %s (%s), which reads them (spilling '%s' again "
                           "would only reorder those reloads)", op->path, tir_op_name(op->kind),
                 k->ops[pinned_use].path, tir_op_name(k->ops[pinned_use].kind),
                 k->tensors[pinned].name);
    else if (at_f)
        snprintf(why, len, "every SBUF tile live at %s (%s) is accessed by it", op->path,
                 tir_op_name(op->kind));
    else
        snprintf(why, len, "no other SBUF tile is live at %s (%s)", op->path,
                 tir_op_name(op->kind));
    return -1;
}

/* ---- the rewrite ---- */

static tir_ap_t whole(int tensor, int64_t p, int64_t fr)
{
    tir_ap_t a = {.tensor = tensor, .ndim = 2, .step = {fr, 1}, .count = {p, fr}};
    return a;
}

/* A slot for tile v free for a store at op position pos, or a new one. */
static int get_slot(sp_t *s, int v, int pos)
{
    tir_kernel_t *k = s->k;
    const tir_tensor_t *vt = &k->tensors[v];
    int64_t p = vt->shape[0], fr = (int64_t)(enc_tensor_elems(vt) / (uint64_t)p);
    for (int i = 0; i < s->nslots; i++) {
        const tir_tensor_t *st = &k->tensors[s->slots[i].tensor];
        if (s->slots[i].last_reload < pos && st->dtype == vt->dtype && st->shape[0] == p &&
            st->shape[1] == fr)
            return i;
    }
    if (s->nslots == s->cap_slots) {
        int nc = s->cap_slots ? s->cap_slots * 2 : 8;
        slot_t *ns = realloc(s->slots, (size_t)nc * sizeof *ns);
        if (!ns)
            return -1;
        s->slots = ns;
        s->cap_slots = nc;
    }
    char name[TIR_NAME_LEN], free_name[TIR_NAME_LEN];
    snprintf(name, sizeof name, "spill_slot%d", s->nslots);
    if (s->nslots == 0)   /* a kernel may name a tensor so: one pass, a check per name if so */
        s->slot_names_used = tir_name_prefix_used(k, "spill_slot");
    tir_tensor_t nt;
    memset(&nt, 0, sizeof nt);
    nt.name = s->slot_names_used ? tir_free_name(k, name, free_name) : name;
    nt.path = "(compiler: spill slot)";
    nt.kind = TIR_T_SCRATCH;
    nt.dtype = vt->dtype;
    nt.ndim = 2;
    nt.shape[0] = p;
    nt.shape[1] = fr;
    nt.shared_with = -1;
    int id = tir_add_tensor(k, &nt);
    if (id < 0)
        return -1;
    s->slots[s->nslots] = (slot_t){id, -1, -1};
    s->st->slots++;
    return s->nslots++;
}

/* The reload tile of v: same shape and dtype, "<base>.s<n>", path
 * "<path>.spill" (the reloads of one declaration rotate together). */
static int reload_tile(sp_t *s, int v)
{
    tir_kernel_t *k = s->k;
    tir_tensor_t nt = k->tensors[v];
    char name[TIR_NAME_LEN], path[TIR_PATH_LEN], base[TIR_NAME_LEN];
    su_copy(base, sizeof base, nt.name);
    char *cut = strrchr(base, '.');   /* a reload of a reload: one suffix */
    if (cut && v < s->cap_slot_of && s->slot_of[v] >= 0)
        *cut = 0;
    snprintf(name, sizeof name, "%.40s.s%u", base, s->st->reloads);
    const char *sfx = ".spill";
    size_t pl = strlen(nt.path), sl = strlen(sfx);
    if (pl >= sl && strcmp(nt.path + pl - sl, sfx) == 0)
        su_copy(path, sizeof path, nt.path);
    else
        snprintf(path, sizeof path, "%.*s%s", (int)(sizeof path - sl - 1), nt.path, sfx);
    nt.name = name;
    nt.path = path;
    nt.const_data = NULL;
    nt.const_path = NULL;
    nt.print_prefix = NULL;
    return tir_add_tensor(k, &nt);
}

static int spill_op(sp_t *s, tir_op_t *op, tir_opkind_t kind, const tir_ap_t *dst,
                    const tir_ap_t *src, const char *path, unsigned flag)
{
    tir_op_init(op, kind);
    char name[TIR_NAME_LEN];
    snprintf(name, sizeof name, "%s_%u", flag == TIR_F_SPILL_SAVE ? "spill_save" : "spill_reload",
             flag == TIR_F_SPILL_SAVE ? s->st->saves : s->st->reloads);
    op->name = tir_name(s->k, name);
    op->path = path;
    op->dst = tir_ap_intern(s->k, dst);
    op->src[0] = tir_ap_intern(s->k, src);
    op->nsrc = 1;
    op->flags = flag;
    return op->name && op->dst && op->src[0] ? 0 : -1;
}

/* Rename tensor v to v2 in every operand of op. */
static int rename_op(tir_kernel_t *k, tir_op_t *op, int v, int v2)
{
    const tir_ap_t **slot[TIR_MAX_READ_APS + 2];
    int n = tir_op_read_slots(op, slot);
    slot[n++] = &op->dst;
    slot[n++] = &op->dst2;
    for (int i = 0; i < n; i++) {
        if ((*slot[i])->tensor != v)
            continue;
        tir_ap_t a = **slot[i];
        a.tensor = v2;
        if (!(*slot[i] = tir_ap_intern(k, &a)))
            return -1;
    }
    return 0;
}

/* Split v's live range at f: store after its last write (unless clean),
 * reload before its next use n into a new tile that the uses from n on
 * name. */
static int spill_one(sp_t *s, int v)
{
    tir_kernel_t *k = s->k;
    int w = s->lastw[v], n = s->next[v];
    bool save = !clean(s, v);
    int sl = save ? get_slot(s, v, w + 1) : s->slot_of[v];
    int v2 = sl >= 0 ? reload_tile(s, v) : -1;
    if (v2 < 0 || grow_ints(&s->slot_of, &s->cap_slot_of, k->ntensors))
        return -1;
    const tir_tensor_t *vt = &k->tensors[v];
    int64_t p = vt->shape[0], fr = (int64_t)(enc_tensor_elems(vt) / (uint64_t)p);
    uint64_t bytes = enc_tensor_bytes(vt);
    tir_ap_t hb = whole(s->slots[sl].tensor, p, fr), a1 = whole(v, p, fr), a2 = whole(v2, p, fr);
    tir_op_t st, ld;
    if ((save && spill_op(s, &st, TIR_STORE, &hb, &a1, vt->path, TIR_F_SPILL_SAVE)) ||
        spill_op(s, &ld, TIR_LOAD, &a2, &hb, k->tensors[v2].path, TIR_F_SPILL_RELOAD))
        return -1;
    /* in place: ops [0, w] stay, the store goes after op w, ops (w, n)
     * move up by one, the reload and ops [n, nops) by one more (copying the
     * whole op array into a new one per victim cost more than the
     * placement on kernels of 10^5 ops) */
    int old_n = k->nops, up = save ? 1 : 0;
    tir_op_t *ops = tir_array_reserve(k->ops, &k->cap_ops, old_n + 2, sizeof *ops, 64, false);
    if (!ops)
        return -1;
    k->ops = ops;
    int *newpos = malloc(sizeof *newpos * ((size_t)old_n + 1));
    if (!newpos)
        return -1;
    memmove(&ops[n + up + 1], &ops[n], (size_t)(old_n - n) * sizeof *ops);
    if (save) {
        memmove(&ops[w + 2], &ops[w + 1], (size_t)(n - w - 1) * sizeof *ops);
        ops[w + 1] = st;
    }
    ops[n + up] = ld;
    k->nops = old_n + up + 1;
    /* old op i is now at i (i <= w), i + up (w < i < n), i + up + 1 (i >=
     * n); a loop boundary at n stays before op n, after the reload, as does
     * the end (old_n) */
    for (int i = 0; i <= old_n; i++)
        newpos[i] = i <= w ? i : i < n ? i + up : i + up + 1;
    int rc = 0;
    for (int i = n + up + 1; i < k->nops && !rc; i++)
        rc = rename_op(k, &ops[i], v, v2);
    tir_ops_renumber(k, ops, k->nops, old_n, newpos, NULL);
    for (int i = 0; i < s->nslots; i++)
        if (s->slots[i].last_reload >= 0)
            s->slots[i].last_reload = newpos[s->slots[i].last_reload];
    free(newpos);
    if (rc)
        return -1;
    s->slots[sl].holder = v2;
    s->slots[sl].last_reload = n + up;   /* the reload, right before op n */
    s->slot_of[v2] = sl;
    s->st->victims++;
    s->st->reloads++;
    s->st->reload_bytes += bytes;
    if (save) {
        s->st->saves++;
        s->st->save_bytes += bytes;
    }
    return 0;
}

/* One round's spill at pressure op f (scan_uses done): the victim by the
 * rule, split; then the kernel is placed again.  Returns the victim, -1
 * with why[] when there is none, -2 when out of memory. */
static int spill_at(sp_t *s, int f, char *why, size_t len)
{
    int v = choose(s, f, why, len);
    if (v >= 0 && spill_one(s, v))
        return -2;
    return v;
}

int enc_spill(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
              enc_spill_stats_t *st, tpb_err_t *err)
{
    memset(st, 0, sizeof *st);
    sp_t s = {.k = k, .st = st};
    int rc = -1;
    char why[400], first[sizeof err->msg];
    why[0] = first[0] = 0;
    for (int l = 0; l < k->nloops; l++)
        if (k->loops[l].dynamic)
            snprintf(why, sizeof why, "the kernel has a dynamic loop (%s), whose body runs "
                                      "a number of times known only at run time",
                     k->loops[l].path);
    for (int round = 0;; round++) {
        int f;
        if (place(k, t, buffers, loops, &f, err) == 0) {
            rc = 0;
            break;
        }
        if (f < 0)
            break;   /* not an SBUF placement failure: that error as it is */
        if (!first[0])   /* the error of the kernel as given (its op numbers) */
            su_copy(first, sizeof first, err->msg);
        if (!why[0] && round >= SPILL_MAX_ROUNDS)
            snprintf(why, sizeof why, "it still did not fit (spilling stops at %d rounds)",
                     SPILL_MAX_ROUNDS);
        if (!why[0] && scan_uses(&s, f) == 0) {
            int v = spill_at(&s, f, why, sizeof why);
            if (v == -2) {
                tpb_errf(err, "out of memory spilling SBUF tiles");
                break;
            }
            if (v >= 0)
                continue;
        } else if (!why[0]) {
            tpb_errf(err, "out of memory spilling SBUF tiles");
            break;
        }
        if (st->victims)
            tpb_errf(err, "%s; spilling could not help: after %u spill%s, %s", first,
                     st->victims, st->victims == 1 ? "" : "s", why);
        else
            tpb_errf(err, "%s; spilling could not help: %s", first, why);
        break;
    }
    free(s.slots);
    free(s.slot_of);
    free(s.prev);
    free(s.next);
    free(s.lastw);
    return rc;
}
