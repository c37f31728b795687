/* lnc_programs.c - the programs the split receives (lnc_split.c): whether
 * they are uniform (every program declares the same tensors and runs the
 * same op kinds: one tensor list serves them all, slot copies of the
 * tiles), or diverge on the program id (Python control flow or a kernel
 * `if` / `for` on pid), and what diverging programs must still share: the
 * HBM tensors, and the same sequence of core barriers, sendrecvs and
 * collectives, so that the cores meet at every exchange.
 * See docs/multicore.md "Launch grids and the front-end". */
#include "lnc.h"
#include "collective.h"

#include "../common/bytehash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_local(const tir_tensor_t *t)
{
    return t->kind == TIR_T_SBUF || t->kind == TIR_T_PSUM;
}

/* Ops the cores meet at: matched across programs by their order. */
static bool is_exchange(tir_opkind_t k)
{
    return k == TIR_CORE_BARRIER || k == TIR_SENDRECV || enc_is_collective(k);
}

static bool same_tile(const tir_tensor_t *a, const tir_tensor_t *b)
{
    if (a->kind != b->kind || a->dtype != b->dtype || a->ndim != b->ndim ||
        a->fixed1 != b->fixed1)
        return false;
    for (int d = 0; d < a->ndim && d < TIR_MAX_DIMS; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

/* The same tensors: names, kinds, dtypes, shapes (a tile's shape may depend
 * on pid), fixed addresses. */
static bool same_tensors(const tir_kernel_t *a, const tir_kernel_t *b)
{
    if (a->ntensors != b->ntensors)
        return false;
    for (int t = 0; t < a->ntensors; t++)
        if (strcmp(a->tensors[t].name, b->tensors[t].name) ||
            !same_tile(&a->tensors[t], &b->tensors[t]))
            return false;
    return true;
}

static bool same_ops(const tir_kernel_t *a, const tir_kernel_t *b)
{
    if (a->nops != b->nops)
        return false;
    for (int o = 0; o < a->nops; o++)
        if (a->ops[o].kind != b->ops[o].kind)
            return false;
    return true;
}

/* The next HBM (non-local) tensor of k from index *t on, or -1. */
static int next_shared(const tir_kernel_t *k, int *t)
{
    while (*t < k->ntensors && is_local(&k->tensors[*t]))
        (*t)++;
    return *t < k->ntensors ? (*t)++ : -1;
}

/* Diverging program p must declare program 0's HBM tensors in its order. */
static int check_shared(const tir_kernel_t *k0, const tir_kernel_t *k, int p, tpb_err_t *err)
{
    int i0 = 0, i = 0;
    for (;;) {
        int a = next_shared(k0, &i0), b = next_shared(k, &i);
        if (a < 0 && b < 0)
            return 0;
        if (a < 0 || b < 0 || strcmp(k0->tensors[a].name, k->tensors[b].name) ||
            k0->tensors[a].kind != k->tensors[b].kind)
            return tpb_errf(err, "kernel '%s': programs 0 and %d declare different HBM tensors "
                                 "('%s' and '%s'): every program must declare the same inputs, "
                                 "outputs, constants and scratch tensors",
                            k0->name, p, a < 0 ? "(none)" : k0->tensors[a].name,
                            b < 0 ? "(none)" : k->tensors[b].name);
    }
}

/* Diverging program p must meet the other cores at the same exchanges. */
static int check_exchanges(const tir_kernel_t *k0, const tir_kernel_t *k, int p, tpb_err_t *err)
{
    int o0 = 0, o = 0, j = 0;
    for (;; j++) {
        while (o0 < k0->nops && !is_exchange(k0->ops[o0].kind))
            o0++;
        while (o < k->nops && !is_exchange(k->ops[o].kind))
            o++;
        if (o0 == k0->nops && o == k->nops)
            return 0;
        if (o0 == k0->nops || o == k->nops || k0->ops[o0].kind != k->ops[o].kind)
            return tpb_errf(err, "kernel '%s': control flow diverges on the program id: "
                                 "exchange %d (core barrier, sendrecv or collective) is %s in "
                                 "program %d but %s in program 0 (every program must run the "
                                 "same exchanges in the same order)",
                            k0->name, j, o == k->nops ? "missing" : tir_op_name(k->ops[o].kind),
                            p, o0 == k0->nops ? "missing" : tir_op_name(k0->ops[o0].kind));
        o0++, o++;
    }
}

int lnc_check_programs(const tir_kernel_t *p, int n, bool *uniform, tpb_err_t *err)
{
    const tir_kernel_t *k0 = &p[0];
    *uniform = true;
    if (k0->num_programs != n)
        return tpb_errf(err, "kernel '%s': %d programs parsed but the grid has %d", k0->name, n,
                        k0->num_programs);
    if (k0->num_cores < 1 || k0->num_cores > LNC_MAX_CORES)
        return tpb_errf(err, "kernel '%s': %d cores (the multi-core link supports 1..%d)",
                        k0->name, k0->num_cores, LNC_MAX_CORES);
    int busy = 0;   /* programs with ops: the others leave their core idle */
    for (int i = 0; i < n; i++) {
        const tir_kernel_t *k = &p[i];
        if (k->program_id != i || k->num_cores != k0->num_cores)
            return tpb_errf(err, "kernel '%s': program %d was parsed as program %d of %d cores",
                            k0->name, i, k->program_id, k->num_cores);
        busy += k->nops > 0;
        for (int o = 0; o < k->nops; o++)
            if (k->ops[o].core != k->ops[0].core)
                return tpb_errf(err, "kernel '%s': program %d: op %d is on core %d, op 0 on "
                                     "core %d",
                                k0->name, i, o, k->ops[o].core, k->ops[0].core);
        int c = lnc_core_of(p, i);
        if (c < 0 || c >= k0->num_cores)
            return tpb_errf(err, "kernel '%s': program %d is mapped to core %d of %d", k0->name,
                            i, c, k0->num_cores);
        if (!same_tensors(k0, k) || !same_ops(k0, k))
            *uniform = false;
    }
    if (!busy)
        return tpb_errf(err, "kernel '%s' has no ops", k0->name);
    for (int i = 1; i < n && !*uniform; i++)
        if (check_shared(k0, &p[i], i, err) || check_exchanges(k0, &p[i], i, err))
            return -1;
    return 0;
}

int lnc_exchange_index(const tir_kernel_t *p, int n, int **out, int *nx, tpb_err_t *err)
{
    int cnt = 0;
    for (int o = 0; o < p[0].nops; o++)
        cnt += p[0].ops[o].kind == TIR_SENDRECV || enc_is_collective(p[0].ops[o].kind);
    *nx = cnt;
    *out = malloc((size_t)(n * cnt + 1) * sizeof **out);
    if (!*out)
        return tpb_errf(err, "out of memory (split)");
    for (int i = 0; i < n; i++) {
        int j = 0;
        for (int o = 0; o < p[i].nops && j < cnt; o++)
            if (p[i].ops[o].kind == TIR_SENDRECV || enc_is_collective(p[i].ops[o].kind))
                (*out)[i * cnt + j++] = o;
    }
    return 0;
}

void lnc_copy_name(char *out, const char *name, int keep, char tag, int n, int id)
{
    if (strlen(name) <= (size_t)keep)
        snprintf(out, TIR_NAME_LEN, "%s@%c%d", name, tag, n);
    else   /* "~": in no kernel name nor other copy name */
        snprintf(out, TIR_NAME_LEN, "%.*s~%d@%c%d", keep - 12, name, id, tag, n);
}

/* Tile entries of the core kernels by (program slot, the program's tile
 * name): an open-addressing table of out's tensor indices (-1: empty). */
typedef struct {
    int *slot_of;        /* [cap]: the slot each entry serves */
    int *ent;
    const char **key;    /* [cap]: the tile's name in its program */
    size_t cap;          /* a power of two, > 2 x the entries */
} tiles_t;

static size_t tile_hash(const tiles_t *tb, int slot, const char *name)
{
    uint64_t h = tpb_hash_bytes(tpb_hash_word(0, (uint64_t)slot), name, strlen(name));
    return (size_t)h & (tb->cap - 1);
}

/* The entry of (slot, name) in out, or -1. */
static int tile_find(const tiles_t *tb, int slot, const char *name, size_t *at)
{
    size_t i = tile_hash(tb, slot, name);
    for (; tb->ent[i] >= 0; i = (i + 1) & (tb->cap - 1))
        if (tb->slot_of[i] == slot && !strcmp(tb->key[i], name))
            break;
    *at = i;
    return tb->ent[i];
}

/* Program i's (slot `slot`) tile tt: the entry of the tile of that name its
 * slot already has when it is the same tile (kind, dtype, shape, fixed
 * address), else a new one: "<name>" in slot 0, "<name>@p<slot>" in the
 * others (as uniform programs' slot copies), "<name>@q<i>" when the name is
 * taken by another tile (lnc_copy_name). */
static int tile_entry(tiles_t *tb, tir_kernel_t *out, int slot, int i, const tir_tensor_t *tt)
{
    char name[TIR_NAME_LEN];   /* tir_add_tensor copies it */
    size_t at;
    int e = tile_find(tb, slot, tt->name, &at);
    if (e >= 0 && same_tile(&out->tensors[e], tt))
        return e;
    tir_tensor_t c = *tt;
    if (e >= 0)
        lnc_copy_name(name, tt->name, 44, 'q', i, out->ntensors);
    else if (slot)
        lnc_copy_name(name, tt->name, 50, 'p', slot, out->ntensors);
    else
        snprintf(name, sizeof name, "%s", tt->name);
    c.name = name;
    int k = tir_add_tensor(out, &c);
    if (k >= 0 && e < 0) {
        tb->ent[at] = k;
        tb->slot_of[at] = slot;
        tb->key[at] = tt->name;
    }
    return k;
}

int lnc_program_maps(const tir_kernel_t *p, int n, tir_kernel_t *out, int **off, int **map,
                     tpb_err_t *err)
{
    size_t total = 0;
    *map = NULL;
    if (!(*off = malloc((size_t)(n + 1) * sizeof **off)))
        return tpb_errf(err, "out of memory (split)");
    for (int i = 0; i < n; i++) {
        (*off)[i] = (int)total;
        total += (size_t)p[i].ntensors;
    }
    tiles_t tb = {NULL, NULL, NULL, 16};
    while (tb.cap <= 2 * total)
        tb.cap *= 2;
    int slots[LNC_MAX_CORES] = {0};   /* programs seen per core: the next slot */
    int rc = -1;
    *map = malloc((total + 1) * sizeof **map);
    tb.ent = malloc(tb.cap * sizeof *tb.ent);
    tb.slot_of = malloc(tb.cap * sizeof *tb.slot_of);
    tb.key = malloc(tb.cap * sizeof *tb.key);
    if (!*map || !tb.ent || !tb.slot_of || !tb.key) {
        tpb_errf(err, "out of memory (split)");
        goto out;
    }
    memset(tb.ent, -1, tb.cap * sizeof *tb.ent);
    const tir_kernel_t *k0 = &p[0];
    for (int i = 0; i < n; i++) {
        int *m = *map + (*off)[i], s0 = 0, slot = slots[lnc_core_of(p, i)]++;
        for (int t = 0; t < p[i].ntensors; t++) {
            const tir_tensor_t *tt = &p[i].tensors[t];
            if (!is_local(tt))   /* the same HBM tensor as program 0's (check_shared) */
                m[t] = i ? next_shared(k0, &s0) : tir_add_tensor(out, tt);
            else
                m[t] = tile_entry(&tb, out, slot, i, tt);
            if (m[t] < 0) {
                tpb_errf(err, "out of memory (split)");
                goto out;
            }
        }
    }
    rc = 0;
out:
    free(tb.ent);
    free(tb.slot_of);
    free(tb.key);
    return rc;
}
