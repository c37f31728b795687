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
 * the same bytes moved out and back: bit-identical.
 *
 * Those rounds cost a whole placement each (rounds x ops): the compile
 * runs the resumed spiller (spill_fast.c), which makes the same decisions
 * from one placement resumed after each victim, and this file's rounds
 * only where that one does not apply (and as the tests' reference). */
#include "spill_int.h"

#include "backend.h"
#include "strutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef spill_slot_t slot_t;

typedef struct {
    tir_kernel_t *k;
    enc_spill_stats_t *st;
    spill_slots_t *sl;
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

/* ---- shared with the resumed spiller (spill_int.h) ---- */

tir_ap_t spill_whole(int tensor, int64_t p, int64_t fr)
{
    tir_ap_t a = {.tensor = tensor, .ndim = 2, .step = {fr, 1}, .count = {p, fr}};
    return a;
}

void spill_shape(const tir_tensor_t *v, int64_t *p, int64_t *fr)
{
    *p = v->shape[0];
    *fr = (int64_t)(enc_tensor_elems(v) / (uint64_t)*p);
}

/* (row-major, from 0: the common full-tile write, known without a walk) */
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

bool spill_op_writes_whole(const tir_op_t *op, int t, uint64_t elems)
{
    return (op->dst->tensor == t && dense_full(op->dst, elems)) ||
           (op->dst2->tensor == t && dense_full(op->dst2, elems));
}

void spill_op_mark(const tir_op_t *op, int t, uint8_t *bits, uint64_t nbits)
{
    if (op->dst->tensor == t)
        mark(op->dst, bits, nbits);
    if (op->dst2->tensor == t)
        mark(op->dst2, bits, nbits);
}

bool spill_all_set(const uint8_t *bits, uint64_t n)
{
    bool all = true;
    uint64_t b = 0;
    for (; b + 8 <= n / 8 && all; b += 8) {   /* whole words, bytes, then the tail's bits */
        uint64_t w;
        memcpy(&w, bits + b, sizeof w);
        all = w == UINT64_MAX;
    }
    for (; b < n / 8 && all; b++)
        all = bits[b] == 0xff;
    for (uint64_t e = n & ~(uint64_t)7; e < n && all; e++)
        all = bits[e >> 3] >> (e & 7) & 1;
    return all;
}

int spill_slot_tensor(tir_kernel_t *k, const tir_tensor_t *vt, int nslots, bool *names_checked,
                      bool *names_used)
{
    char name[TIR_NAME_LEN], free_name[TIR_NAME_LEN];
    snprintf(name, sizeof name, "spill_slot%d", nslots);
    if (!*names_checked) {   /* a kernel may name a tensor so: one pass, a check per name if so */
        *names_used = tir_name_prefix_used(k, "spill_slot");
        *names_checked = true;
    }
    int64_t p, fr;
    spill_shape(vt, &p, &fr);
    tir_tensor_t nt;
    memset(&nt, 0, sizeof nt);
    nt.name = *names_used ? tir_free_name(k, name, free_name) : name;
    nt.path = "(compiler: spill slot)";
    nt.kind = TIR_T_SCRATCH;
    nt.dtype = vt->dtype;
    nt.ndim = 2;
    nt.shape[0] = p;
    nt.shape[1] = fr;
    nt.shared_with = -1;
    return tir_add_tensor(k, &nt);
}

int spill_reload_tensor(tir_kernel_t *k, int v, bool v_is_reload, unsigned reloads)
{
    tir_tensor_t nt = k->tensors[v];
    char name[TIR_NAME_LEN], path[TIR_PATH_LEN], base[TIR_NAME_LEN];
    su_copy(base, sizeof base, nt.name);
    char *cut = strrchr(base, '.');   /* a reload of a reload: one suffix */
    if (cut && v_is_reload)
        *cut = 0;
    snprintf(name, sizeof name, "%.40s.s%u", base, reloads);
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

int spill_make_op(tir_kernel_t *k, tir_op_t *op, const tir_ap_t *dst, const tir_ap_t *src,
                  const char *path, unsigned flag, unsigned num)
{
    bool save = flag == TIR_F_SPILL_SAVE;
    tir_op_init(op, save ? TIR_STORE : TIR_LOAD);
    char name[TIR_NAME_LEN];
    snprintf(name, sizeof name, "%s_%u", save ? "spill_save" : "spill_reload", num);
    op->name = tir_name(k, name);
    op->path = path;
    op->dst = tir_ap_intern(k, dst);
    op->src[0] = tir_ap_intern(k, src);
    op->nsrc = 1;
    op->flags = flag;
    return op->name && op->dst && op->src[0] ? 0 : -1;
}

void spill_why_none(char *why, size_t len, const char *path, tir_opkind_t kind,
                    const char *partial, const char *pinned, const char *pin_path,
                    tir_opkind_t pin_kind, bool at_f)
{
    if (partial)
        snprintf(why, len, "the SBUF tiles live at %s (%s) that it does not access are not "
                           "wholly written before it (storing '%s' would read bytes nothing "
                           "wrote)", path, tir_op_name(kind), partial);
    else if (pinned)
        snprintf(why, len, "the SBUF tiles live at %s (%s) that it does not access are "
                           "reloaded right before %s (%s), which reads them (spilling '%s' again "
                           "would only reorder those reloads)", path, tir_op_name(kind),
                 pin_path, tir_op_name(pin_kind), pinned);
    else if (at_f)
        snprintf(why, len, "every SBUF tile live at %s (%s) is accessed by it", path,
                 tir_op_name(kind));
    else
        snprintf(why, len, "no other SBUF tile is live at %s (%s)", path, tir_op_name(kind));
}

void spill_slots_free(spill_slots_t *s)
{
    free(s->slots);
    free(s->slot_of);
    memset(s, 0, sizeof *s);
}

int spill_slot_of_reserve(spill_slots_t *s, int need)
{
    if (need <= s->cap_slot_of)
        return 0;
    int nc = need * 2;
    int *p = realloc(s->slot_of, (size_t)nc * sizeof *p);
    if (!p)
        return -1;
    for (int i = s->cap_slot_of; i < nc; i++)
        p[i] = -1;
    s->slot_of = p;
    s->cap_slot_of = nc;
    return 0;
}

int spill_slots_reserve(spill_slots_t *s)
{
    if (s->nslots < s->cap_slots)
        return 0;
    int nc = s->cap_slots ? s->cap_slots * 2 : 8;
    spill_slot_t *ns = realloc(s->slots, (size_t)nc * sizeof *ns);
    if (!ns)
        return -1;
    s->slots = ns;
    s->cap_slots = nc;
    return 0;
}

/* ---- one placement ---- */

int spill_place(const tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
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
        SPILL_FOR_OPERANDS(&k->ops[i], tn, wr, {
            s->prev[tn] = i;
            if (wr)
                s->lastw[tn] = i;
        });
    for (int i = k->nops - 1; i > f; i--)
        SPILL_FOR_OPERANDS(&k->ops[i], tn, wr, { (void)wr; s->next[tn] = i; });
    SPILL_FOR_OPERANDS(&k->ops[f], tn, wr, { (void)wr; s->next[tn] = -2; });   /* accessed at f */
    return 0;
}

/* Whether the ops before f write every element of tile v (-1: out of memory). */
static int written_whole(const tir_kernel_t *k, int v, int f)
{
    uint64_t n = enc_tensor_elems(&k->tensors[v]);
    for (int i = 0; i < f; i++)
        if (spill_op_writes_whole(&k->ops[i], v, n))
            return 1;
    uint8_t *bits = calloc((size_t)(n / 8 + 1), 1);
    if (!bits)
        return -1;
    for (int i = 0; i < f; i++)
        spill_op_mark(&k->ops[i], v, bits, n);
    int all = spill_all_set(bits, n);
    free(bits);
    return all;
}

/* Whether v is a reload whose slot still holds its data (no store needed). */
static bool clean(const sp_t *s, int v)
{
    if (v >= s->sl->cap_slot_of || s->sl->slot_of[v] < 0)
        return false;
    const slot_t *sl = &s->sl->slots[s->sl->slot_of[v]];
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
    const tir_op_t *pu = pinned >= 0 ? &k->ops[pinned_use] : op;
    spill_why_none(why, len, op->path, op->kind, partial >= 0 ? k->tensors[partial].name : NULL,
                   pinned >= 0 ? k->tensors[pinned].name : NULL, pu->path, pu->kind, at_f > 0);
    return -1;
}

/* ---- the rewrite ---- */

/* A slot for tile v free for a store at op position pos, or a new one. */
static int get_slot(sp_t *s, int v, int pos)
{
    tir_kernel_t *k = s->k;
    spill_slots_t *ss = s->sl;
    const tir_tensor_t *vt = &k->tensors[v];
    int64_t p, fr;
    spill_shape(vt, &p, &fr);
    for (int i = 0; i < ss->nslots; i++) {
        const tir_tensor_t *st = &k->tensors[ss->slots[i].tensor];
        if (ss->slots[i].last_reload < pos && st->dtype == vt->dtype && st->shape[0] == p &&
            st->shape[1] == fr)
            return i;
    }
    if (spill_slots_reserve(ss))
        return -1;
    int id = spill_slot_tensor(k, vt, ss->nslots, &ss->names_checked, &ss->names_used);
    if (id < 0)
        return -1;
    ss->slots[ss->nslots] = (slot_t){id, -1, -1};
    s->st->slots++;
    return ss->nslots++;
}

int spill_rename_op(tir_kernel_t *k, tir_op_t *op, int v, int v2)
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
    spill_slots_t *ss = s->sl;
    int w = s->lastw[v], n = s->next[v];
    bool save = !clean(s, v);
    int sl = save ? get_slot(s, v, w + 1) : ss->slot_of[v];
    int v2 = sl >= 0 ? spill_reload_tensor(k, v, v < ss->cap_slot_of && ss->slot_of[v] >= 0,
                                           s->st->reloads)
                     : -1;
    if (v2 < 0 || spill_slot_of_reserve(ss, k->ntensors))
        return -1;
    const tir_tensor_t *vt = &k->tensors[v];
    int64_t p, fr;
    spill_shape(vt, &p, &fr);
    uint64_t bytes = enc_tensor_bytes(vt);
    tir_ap_t hb = spill_whole(ss->slots[sl].tensor, p, fr), a1 = spill_whole(v, p, fr),
             a2 = spill_whole(v2, p, fr);
    tir_op_t st, ld;
    if ((save && spill_make_op(k, &st, &hb, &a1, vt->path, TIR_F_SPILL_SAVE, s->st->saves)) ||
        spill_make_op(k, &ld, &a2, &hb, k->tensors[v2].path, TIR_F_SPILL_RELOAD, s->st->reloads))
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
        rc = spill_rename_op(k, &ops[i], v, v2);
    tir_ops_renumber(k, ops, k->nops, old_n, newpos, NULL);
    for (int i = 0; i < ss->nslots; i++)
        if (ss->slots[i].last_reload >= 0)
            ss->slots[i].last_reload = newpos[ss->slots[i].last_reload];
    free(newpos);
    if (rc)
        return -1;
    ss->slots[sl].holder = v2;
    ss->slots[sl].last_reload = n + up;   /* the reload, right before op n */
    ss->slot_of[v2] = sl;
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

/* why[] when the kernel has a dynamic loop (spilling assumes op order is
 * execution order), else why[] unchanged. */
static void dynamic_why(const tir_kernel_t *k, char *why, size_t len)
{
    for (int l = 0; l < k->nloops; l++)
        if (k->loops[l].dynamic)
            snprintf(why, len, "the kernel has a dynamic loop (%s), whose body runs "
                               "a number of times known only at run time",
                     k->loops[l].path);
}

int spill_rounds(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
                 enc_spill_stats_t *st, spill_slots_t *slots, const char *first0,
                 tpb_err_t *err)
{
    sp_t s = {.k = k, .st = st, .sl = slots};
    int rc = -1;
    char why[400], first[sizeof err->msg];
    why[0] = 0;
    su_copy(first, sizeof first, first0);
    dynamic_why(k, why, sizeof why);
    for (int round = (int)st->victims;; round++) {
        int f;
        if (spill_place(k, t, buffers, loops, &f, err) == 0) {
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
    spill_slots_free(slots);
    free(s.prev);
    free(s.next);
    free(s.lastw);
    return rc;
}

int enc_spill_reference(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
                        enc_spill_stats_t *st, tpb_err_t *err)
{
    memset(st, 0, sizeof *st);
    spill_slots_t slots;
    memset(&slots, 0, sizeof slots);
    return spill_rounds(k, t, buffers, loops, st, &slots, "", err);
}

int enc_spill(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
              enc_spill_stats_t *st, tpb_err_t *err)
{
    memset(st, 0, sizeof *st);
    int rc = spill_fast(k, t, buffers, loops, st, err);
    return rc <= 0 ? rc : enc_spill_reference(k, t, buffers, loops, st, err);
}
