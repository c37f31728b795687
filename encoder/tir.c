#include "tir.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytehash.h"
#include "hugepage.h"

const char *tir_op_name(tir_opkind_t k)
{
    /* NKI spellings, in TIR_OPS order */
    static const char *const lower[TIR_OP_COUNT] = {
        "load", "store", "dma_copy", "dma_transpose", "indirect_load", "indirect_save",
        "local_gather", "gather_flattened", "memset", "stream_shuffle",
        "load_tensor_to_register", "broadcast_partition",
        "matmul", "matmul_mx", "matmul_sparse", "transpose", "activation", "activate2",
        "tensor_tensor", "tensor_scalar", "scalar_tensor_tensor", "tensor_reduce",
        "tensor_partition_reduce", "tensor_copy", "tensor_tensor_scan", "iota",
        "affine_select", "max8", "find_index8", "match_replace8", "select", "dropout",
        "quantize_mx", "core_barrier", "sendrecv", "bn_stats", "bn_aggr", "all_reduce",
        "all_gather", "reduce_scatter", "all_to_all", "collective_permute", "rank_id", "noop",
        "range_select", "select_reduce",
        "rng", "rand2", "rand_get_state", "rand_set_state", "set_rng_seed",
        "register_move", "register_store", "coll_sync",
        "inline_asm", "inline_asm_bytes",
        "tensor_scalar_cumulative", "tensor_scalar_reduce",
        "sequence_bounds", "nonzero_with_count", "topk", "exponential",
    };
    return (unsigned)k < TIR_OP_COUNT ? lower[k] : "?";
}

void tir_kernel_init(tir_kernel_t *k)
{
    memset(k, 0, sizeof *k);
    k->num_cores = 1;
    k->num_programs = 1;
    k->grid_ndim = 1;
    k->grid_dims[0] = 1;
}

void tir_kernel_free(tir_kernel_t *k)
{
    for (int i = 0; i < k->ntensors; i++)
        free(k->tensors[i].const_data), free(k->tensors[i].const_path);
    tir_array_free(k->tensors, k->cap_tensors, sizeof *k->tensors);
    tir_array_free(k->ops, k->cap_ops, sizeof *k->ops);
    free(k->loops);
    tpb_array_free(k->loop_marks, (size_t)k->cap_marks * sizeof *k->loop_marks);
    for (tir_asm_t *a = k->asms, *next; a; a = next)
        next = a->next, free(a);
    for (tir_pred_t *p = k->preds, *next; p; p = next)
        next = p->next_block, free(p);
    tir_pools_free(k);
    memset(k, 0, sizeof *k);
}

/* The ops and tensors arrays: 10^5+ elements, grown without moving bytes
 * (tpb_array_grow); free them with tir_array_free. */
static int grow(void **arr, int *cap, int n, size_t elem)
{
    if (n < *cap)
        return 0;
    void *p = tpb_array_double(*arr, cap, elem, 64);
    if (!p)
        return -1;
    *arr = p;
    return 0;
}

void tir_array_free(void *arr, int cap, size_t elem) { tpb_array_free(arr, (size_t)cap * elem); }

/* Zeroing relies on how tpb_array_grow grows: below TPB_ARRAY_MAP_MIN it
 * reallocs (the new bytes are cleared here); from it on the bytes past the
 * old capacity are pages the owner never wrote, of a fresh mapping or of
 * the old mapping's unused room, so they are zero already
 * (tests/test_tir_reserve.c checks it across the threshold). */
void *tir_array_reserve(void *p, int *cap, int need, size_t elem, int first, bool zero)
{
    if (need <= *cap)
        return p;
    /* elem small: *cap * elem, room - elem at least, names the same mapping */
    if (first <= 0 || elem == 0 || elem > ((size_t)64 << 10))
        return NULL;
    int64_t nc = *cap > 0 ? *cap : first;
    while (nc < need)
        nc *= 2;
    if ((uint64_t)nc > SIZE_MAX / elem)
        return NULL;
    size_t old_bytes = (size_t)*cap * elem, bytes = tpb_array_room((size_t)nc * elem);
    if (bytes / elem > (size_t)INT_MAX)
        return NULL;
    void *q = tpb_array_grow(p, old_bytes, bytes);
    if (!q)
        return NULL;
    if (zero && !tpb_array_fresh_zero(bytes))
        memset((char *)q + old_bytes, 0, bytes - old_bytes);
    *cap = (int)(bytes / elem);
    return q;
}

void *tir_array_hint(void *p, int *cap, int64_t need, size_t elem)
{
    if (need <= *cap || need > INT_MAX)
        return p;
    if (tpb_array_fresh_zero((size_t)need * elem)) {
        void *q = tir_array_reserve(p, cap, (int)need, elem, 64, true);
        return q ? q : p;
    }
    if (need < 2 * (int64_t)*cap)
        return p;
    void *q = tpb_array_grow(p, (size_t)*cap * elem, (size_t)need * elem);
    if (!q)   /* out of memory: it grows as it fills (and fails there) */
        return p;
    memset((char *)q + (size_t)*cap * elem, 0, (size_t)(need - *cap) * elem);
    *cap = (int)need;
    return q;
}

static void reserve_chains(tir_kernel_t *k, int64_t n);

/* One array's hint: room for `more` elements past n.  Below
 * TPB_ARRAY_MAP_MIN exactly that, in the heap: doubling from 64 would
 * realloc a dozen times and could cross into a mapping of its own (a 2
 * MiB page to clear) for an array that fits the heap (compile-live's 6 000
 * ops: 8 192 slots, 1.2 MB, against 0.9 MB).  Only a hint that at least
 * doubles the room is taken there: an inner loop's hint, given again at
 * every outer iteration, would otherwise realloc the array each time
 * (its growth is left to the doubling, as before). */
static void reserve_hint(void **arr, int *cap, int n, int64_t more, size_t elem)
{
    if (more <= 0 || more > INT_MAX - n || n + more <= *cap)
        return;
    if (!tpb_array_fresh_zero((size_t)(n + more) * elem)) {
        if (n + more < 2 * (int64_t)*cap)
            return;
        void *p = tpb_array_grow(*arr, (size_t)*cap * elem, (size_t)(n + more) * elem);
        if (p)   /* out of memory: it grows as it fills (and fails there) */
            *arr = p, *cap = (int)(n + more);
        return;
    }
    void *p = tir_array_reserve(*arr, cap, (int)(n + more), elem, 64, false);
    if (p)
        *arr = p;
}

void tir_reserve_hint(tir_kernel_t *k, int64_t ops, int64_t tensors)
{
    reserve_hint((void **)&k->ops, &k->cap_ops, k->nops, ops, sizeof *k->ops);
    reserve_hint((void **)&k->tensors, &k->cap_tensors, k->ntensors, tensors, sizeof *k->tensors);
    if (tensors > 0 && tensors < INT_MAX - k->ntensors)
        reserve_chains(k, k->ntensors + tensors);
}

tir_op_t *tir_ops_new(int cap)
{
    return tpb_array_grow(NULL, 0, (size_t)(cap > 0 ? cap : 1) * sizeof(tir_op_t));
}

void tir_ops_set(tir_kernel_t *k, tir_op_t *ops, int n, int cap)
{
    tir_array_free(k->ops, k->cap_ops, sizeof *k->ops);
    k->ops = ops;
    k->nops = n;
    k->cap_ops = cap > 0 ? cap : 1;
}

/* The loop records: few, in malloc'ed memory. */
static int grow_loops(tir_kernel_t *k)
{
    if (k->nloops < k->cap_loops)
        return 0;
    int nc = k->cap_loops ? k->cap_loops * 2 : 64;
    tir_loop_t *p = realloc(k->loops, (size_t)nc * sizeof *p);
    if (!p)
        return -1;
    k->loops = p;
    k->cap_loops = nc;
    return 0;
}

/* k's copy of s (NULL: ""), cut to max - 1 bytes as a char[max] held it:
 * interned (shared by equal strings) or an exact-length copy in k's name
 * arena (names are unique per loop iteration: a set would not share them,
 * only cost its slots).  NULL on out-of-memory. */
static const char *own_str(tir_kernel_t *k, const char *s, size_t max, bool intern)
{
    if (!s || !*s)
        return "";
    char cut[TIR_PATH_LEN > TIR_NAME_LEN ? TIR_PATH_LEN : TIR_NAME_LEN];
    _Static_assert(TIR_PRINT_PREFIX_LEN <= sizeof cut, "room for every cut string");
    size_t n = strnlen(s, max);
    if (n >= max) {
        memcpy(cut, s, max - 1);
        cut[max - 1] = '\0';
        s = cut;
        n = max - 1;
    }
    return intern ? tir_intern(k, s) : tpb_arena_strndup(&k->names, s, n);
}

const char *tir_name(tir_kernel_t *k, const char *s)
{
    return own_str(k, s, TIR_NAME_LEN, false);
}

const char *tir_name_n(tir_kernel_t *k, const char *s, size_t n)
{
    if (n >= TIR_NAME_LEN)
        return tir_name(k, s);
    return n ? tpb_arena_strndup(&k->names, s, n) : "";
}

static bool name_taken(const tir_kernel_t *k, const char *name)
{
    for (int i = 0; i < k->ntensors; i++)
        if (k->tensors[i].name[0] == name[0] && !strcmp(k->tensors[i].name, name))
            return true;
    return false;
}

const char *tir_free_name(const tir_kernel_t *k, const char *want, char *out)
{
    snprintf(out, TIR_NAME_LEN, "%s", want);
    for (int n = 1; name_taken(k, out) && n < INT_MAX; n++)
        snprintf(out, TIR_NAME_LEN, "%s_%d", want, n);
    return out;
}

bool tir_name_prefix_used(const tir_kernel_t *k, const char *prefix)
{
    size_t n = strlen(prefix);
    for (int i = 0; i < k->ntensors; i++)
        if (!strncmp(k->tensors[i].name, prefix, n))
            return true;
    return false;
}

int tir_add_tensor(tir_kernel_t *k, const tir_tensor_t *t)
{
    return tir_add_tensor_at(k, t, false);
}

int tir_add_tensor_at(tir_kernel_t *k, const tir_tensor_t *t, bool path_interned)
{
    return tir_add_tensor_owned(k, t, false, path_interned);
}

int tir_add_tensor_owned(tir_kernel_t *k, const tir_tensor_t *t, bool name_owned,
                         bool path_interned)
{
    tir_tensor_t c = *t;
    if (!(c.name = name_owned ? t->name : own_str(k, t->name, TIR_NAME_LEN, false)) ||
        !(c.path = path_interned ? t->path : own_str(k, t->path, TIR_PATH_LEN, true)) ||
        !(c.print_prefix = own_str(k, t->print_prefix, TIR_PRINT_PREFIX_LEN, true)) ||
        grow((void **)&k->tensors, &k->cap_tensors, k->ntensors, sizeof *t))
        return -1;
    k->tensors[k->ntensors] = c;
    return k->ntensors++;
}

int tir_add_op(tir_kernel_t *k, const tir_op_t *op)
{
    if (grow((void **)&k->ops, &k->cap_ops, k->nops, sizeof *op))
        return -1;
    k->ops[k->nops] = *op;
    return k->nops++;
}

int tir_add_loop(tir_kernel_t *k, const tir_loop_t *l)
{
    if (l->trips < 0 || l->trips >= INT32_MAX - 1 || k->nmarks > INT32_MAX - 1 - (int)l->trips ||
        grow_loops(k))
        return -1;
    int need = k->nmarks + (int)l->trips + 1;
    /* a loop of 10^5 trips: 400 KiB of marks, written whole below */
    int *marks = tir_array_reserve(k->loop_marks, &k->cap_marks, need, sizeof *marks, 64, false);
    if (!marks)
        return -1;
    k->loop_marks = marks;
    k->loops[k->nloops] = *l;
    k->loops[k->nloops].first = k->nmarks;
    for (int i = k->nmarks; i < need; i++)
        k->loop_marks[i] = k->nops;
    k->nmarks = need;
    return k->nloops++;
}

void tir_loop_mark(tir_kernel_t *k, int loop, int64_t i)
{
    if (loop >= 0 && loop < k->nloops && i >= 0 && i <= k->loops[loop].trips)
        k->loop_marks[k->loops[loop].first + i] = k->nops;
}

void tir_ops_renumber(tir_kernel_t *k, tir_op_t *ops, int n, int old_nops, const int *newpos,
                      const int *at)
{
    if (!at)
        at = newpos;
    for (int i = 0; i < n; i++) {
        tir_op_t *op = &ops[i];
        if (!op->rare->ndeps)
            continue;
        int deps[4], kept = 0;
        for (int d = 0; d < op->rare->ndeps && d < 4; d++) {
            int o = op->rare->deps[d], to = o >= 0 && o < old_nops ? at[o] : o;
            if (to >= 0)
                deps[kept++] = to;
        }
        /* out of memory: the old record, whose deps the scheduler bounds */
        (void)tir_op_set_deps(k, op, deps, kept);
    }
    for (int i = 0; i < k->nmarks; i++)
        k->loop_marks[i] = newpos[k->loop_marks[i]];
}

void tir_ops_replace(tir_kernel_t *k, tir_op_t *ops, int n, int cap, const int *newpos,
                     const int *at)
{
    tir_ops_renumber(k, ops, n, k->nops, newpos, at);
    tir_ops_set(k, ops, n, cap);
}

const tir_ap_t tir_ap_none = {.tensor = -1};

const tir_op_rare_t tir_rare_default = {
    .shuffle_mask = {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
                     255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
    .rgroup = {-1, -1, -1, -1, -1, -1, -1, -1},
    .perm_from = {-1, -1, -1, -1, -1, -1, -1, -1},
    .barrier_id = -1, .peer = -1,
    .cmp1 = ISA_CMP_GE,
    .remote_core = -1,
    .sync_core = -1, .sync_sem = -1,
    .src_reg = -1, .dst_reg = -1, .reg_src = -1,
    .s0_reg = -1,
};

/* The initial op: every field zero except these.  A static object (its
 * padding is zero too) copied whole: ops are made once per loop iteration,
 * and filling the op field by field cost ~480 instructions per op. */
#define AP_NONE (&tir_ap_none)
static const tir_op_t op_template = {
    .name = "",
    .path = "",
    .engine = ISA_ENG_UNASSIGNED,
    .dst = AP_NONE, .dst2 = AP_NONE,
    .src = {AP_NONE, AP_NONE, AP_NONE, AP_NONE},
    .index = AP_NONE, .bias = AP_NONE,
    .s0 = {.ap = AP_NONE}, .s1 = {.ap = AP_NONE},
    .op0 = ISA_ALU_BYPASS, .op1 = ISA_ALU_BYPASS, .reduce_op = ISA_ALU_BYPASS,
    .func = ISA_ACTFN_COPY,
    .cmp = ISA_CMP_GE,
    .rare = &tir_rare_default,
};
#undef AP_NONE

void tir_op_init(tir_op_t *op, tir_opkind_t kind)
{
    memcpy(op, &op_template, sizeof *op);
    op->kind = kind;
}

tir_scalar_t tir_scalar_imm(double v)
{
    return (tir_scalar_t){.is_ap = false, .imm = v, .ap = &tir_ap_none};
}

tir_asm_t *tir_new_asm(tir_kernel_t *k)
{
    tir_asm_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    for (int i = 0; i < 6; i++)
        a->asm_opnd[i] = -1;
    a->next = k->asms;
    k->asms = a;
    return a;
}

int tir_op_read_aps(const tir_op_t *op, const tir_ap_t **out)
{
    int n = 0;
    for (int i = 0; i < 4; i++)
        out[n++] = op->src[i];
    out[n++] = op->index;
    out[n++] = op->bias;
    out[n++] = op->s0.ap;
    out[n++] = op->s1.ap;
    return n;
}

int tir_op_read_slots(tir_op_t *op, const tir_ap_t **out[])
{
    int n = 0;
    for (int i = 0; i < 4; i++)
        out[n++] = &op->src[i];
    out[n++] = &op->index;
    out[n++] = &op->bias;
    out[n++] = &op->s0.ap;
    out[n++] = &op->s1.ap;
    return n;
}

tir_pred_t *tir_new_preds(tir_kernel_t *k, int n)
{
    tir_pred_t *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    if (!p)
        return NULL;
    p->next_block = k->preds;
    k->preds = p;
    return p;
}

/* A zero-filled block for a pool's set, freed with tpb_array_free(p,
 * bytes): a fresh mapping (zero already, not cleared again) from
 * TPB_ARRAY_MAP_MIN on, else cleared here. */
static void *zeroed_block(size_t bytes)
{
    void *p = tpb_array_grow(NULL, 0, bytes);
    if (p && !tpb_array_fresh_zero(bytes))
        memset(p, 0, bytes);
    return p;
}

static uint64_t str_hash(const char *s)
{
    return tpb_hash_bytes(0x9e3779b97f4a7c15ull, s, strlen(s));
}

/* The slot of s in the set: its entry, or the empty slot it goes in. */
static int str_slot(char *const *set, int cap, const char *s)
{
    int i = (int)(str_hash(s) & (uint64_t)(cap - 1));
    while (set[i] && strcmp(set[i], s))
        i = (i + 1) & (cap - 1);
    return i;
}

const char *tir_intern(tir_kernel_t *k, const char *s)
{
    int slot = -1;   /* s's empty slot while the set does not grow (one hash, not two) */
    if (k->cap_strs) {
        slot = str_slot(k->strs, k->cap_strs, s);
        if (k->strs[slot])
            return k->strs[slot];
    }
    if (2 * (k->nstrs + 1) > k->cap_strs) {   /* keep the set at most half full */
        slot = -1;
        if (k->cap_strs > INT32_MAX / 4)
            return NULL;
        int nc = k->cap_strs ? 2 * k->cap_strs : 64;
        char **set = zeroed_block((size_t)nc * sizeof *set);   /* huge pages when large */
        if (!set)
            return NULL;
        for (int i = 0; i < k->cap_strs; i++)
            if (k->strs[i])
                set[str_slot(set, nc, k->strs[i])] = k->strs[i];
        tpb_array_free(k->strs, (size_t)k->cap_strs * sizeof *k->strs);
        k->strs = set;
        k->cap_strs = nc;
    }
    char *copy = tpb_arena_copy(&k->names, s, strlen(s) + 1, 1);   /* freed with the arena */
    if (!copy)
        return NULL;
    k->strs[slot >= 0 ? slot : str_slot(k->strs, k->cap_strs, copy)] = copy;
    k->nstrs++;
    return copy;
}

/* The AP pool's chain nodes and per-tensor chains (chain_intern below). */
typedef struct ap_link {
    const tir_ap_t *ap;           /* a record of the pool */
    const struct ap_link *next;   /* the tensor's next older one, NULL at the end */
} ap_link_t;

/* A tensor's chain: its first record in place (a fresh tile mostly has
 * one AP: no node), the later ones as nodes, newest first. */
struct tir_ap_chain {
    const tir_ap_t *first;        /* NULL: none yet */
    const ap_link_t *more;        /* or &ap_spilled: the tensor's APs are in the set */
};

/* The pools (tir_pool_t): records in an arena (a record never moves, so
 * an op's pointers survive the pool's growth) and an open-addressing set of
 * pointers to them, at most half full.  Loop iterations mostly repeat the
 * same APs, so a pool stays far smaller than the ops; where it does not
 * (a fresh tile per iteration), the arena's large chunks and the set come
 * from tpb_array_grow, so they are 2 MiB-page mappings (one page fault per
 * 2 MiB, common/hugepage.h). */
static void pool_free(tir_pool_t *p, tpb_spare_t *spare)
{
    p->recs.spare = p->links.spare = spare;
    tpb_arena_free(&p->recs);
    tpb_arena_free(&p->links);
    tpb_spare_put(spare, p->by_tensor, (size_t)p->cap_tensors * sizeof *p->by_tensor);
    tpb_spare_put(spare, p->set, (size_t)p->cap * sizeof *p->set);
    tpb_spare_put(spare, p->hs, (size_t)p->cap * sizeof *p->hs);
    memset(p, 0, sizeof *p);
}

void tir_pools_detach(tir_kernel_t *k)
{
    memset(&k->aps, 0, sizeof k->aps);
    memset(&k->rares, 0, sizeof k->rares);
    memset(&k->names, 0, sizeof k->names);
    k->strs = NULL;
    k->nstrs = k->cap_strs = 0;
}

void tir_op_pools_free(tir_kernel_t *k, tpb_spare_t *spare)
{
    pool_free(&k->aps, spare);
    pool_free(&k->rares, spare);
}

void tir_pools_free(tir_kernel_t *k)
{
    pool_free(&k->aps, NULL);
    pool_free(&k->rares, NULL);
    tpb_arena_free(&k->names);   /* also the interned strings */
    tpb_array_free(k->strs, (size_t)k->cap_strs * sizeof *k->strs);
    k->strs = NULL;
    k->nstrs = k->cap_strs = 0;
}

static uint64_t pool_hash_bytes(const void *rec, size_t size)
{
    return tpb_hash_bytes(0x9e3779b97f4a7c15ull, rec, size);
}

/* An AP's hash over its used dims only (a 2-D AP: 6 of its 14 words); the
 * dims past ndim take no part, so equal APs still hash equal.  An ndim
 * outside 0..TIR_MAX_DIMS (a bad operand, reported by validation) hashes
 * every byte. */
static uint64_t pool_hash_ap(const void *rec, size_t size)
{
    const tir_ap_t *a = rec;
    if (a->ndim < 0 || a->ndim > TIR_MAX_DIMS)
        return pool_hash_bytes(rec, size);
    uint64_t h = 0x9e3779b97f4a7c15ull;
    h = tpb_hash_word(h, (uint64_t)(uint32_t)a->tensor | (uint64_t)(uint32_t)a->ndim << 32 |
                          (uint64_t)a->view << 48);
    h = tpb_hash_word(h, (uint64_t)a->offset);
    for (int d = 0; d < a->ndim; d++) {
        h = tpb_hash_word(h, (uint64_t)a->step[d]);
        h = tpb_hash_word(h, (uint64_t)a->count[d]);
    }
    return h;
}

/* The slot of the record equal to rec (size bytes, hash h): its entry, or
 * the empty slot it goes in.  A slot whose stored hash differs holds
 * another record: no compare. */
static int pool_slot(const tir_pool_t *p, const void *rec, size_t size, uint64_t h)
{
    int i = (int)(h & (uint64_t)(p->cap - 1));
    while (p->set[i] && (p->hs[i] != (uint32_t)h || memcmp(p->set[i], rec, size)))
        i = (i + 1) & (p->cap - 1);
    return i;
}

/* Every record in the set is distinct: the new set needs no comparisons,
 * and each record's stored hash places it (no record is hashed again).
 * A small set grows 4x (compile-live: the rows of `a` and `out`, 6 000
 * records, took six regrowths at 2x, 0.36 M instructions; three at 4x),
 * from SET_QUAD_MAX slots on 2x (its extra room stays bounded). */
enum { SET_QUAD_MAX = 1 << 16 };

static int pool_grow_set(tir_pool_t *p)
{
    if (p->cap > INT32_MAX / 4)
        return -1;
    int nc = !p->cap ? 256 : p->cap < SET_QUAD_MAX ? 4 * p->cap : 2 * p->cap;
    const void **set = zeroed_block((size_t)nc * sizeof *set);
    uint32_t *hs = tpb_array_grow(NULL, 0, (size_t)nc * sizeof *hs);   /* read where set is */
    if (!set || !hs) {
        tpb_array_free(set, (size_t)nc * sizeof *set);
        tpb_array_free(hs, (size_t)nc * sizeof *hs);
        return -1;
    }
    for (int i = 0; i < p->cap; i++)
        if (p->set[i]) {
            int j = (int)(p->hs[i] & (uint32_t)(nc - 1));   /* nc <= 2^31: the low bits suffice */
            while (set[j])
                j = (j + 1) & (nc - 1);
            set[j] = p->set[i];
            hs[j] = p->hs[i];
        }
    tpb_array_free(p->set, (size_t)p->cap * sizeof *p->set);
    tpb_array_free(p->hs, (size_t)p->cap * sizeof *p->hs);
    p->set = set;
    p->hs = hs;
    p->cap = nc;
    return 0;
}

/* The pool's record equal to rec (size: a multiple of 8, h: its hash),
 * added if new; NULL on out-of-memory.  One pool is always used with the
 * same hash, equal records hashing equal; the caller calls it directly
 * (inlined: an AP's hash through a pointer cost ~15 instructions a fresh
 * operand). */
static const void *pool_intern(tir_pool_t *p, const void *rec, size_t size, uint64_t h)
{
    p->nhash++;
    int i = -1;   /* rec's empty slot, while the set is not regrown */
    if (p->cap) {
        i = pool_slot(p, rec, size, h);
        if (p->set[i])
            return p->set[i];
    }
    if (2 * (p->nset + 1) > p->cap) {
        if (pool_grow_set(p))
            return NULL;
        i = pool_slot(p, rec, size, h);
    }
    void *copy = tpb_arena_copy(&p->recs, rec, size, 8);
    if (!copy)
        return NULL;
    p->set[i] = copy;
    p->hs[i] = (uint32_t)h;
    p->n++;
    p->nset++;
    return copy;
}

/* The AP pool's per-tensor chains (tir_pool_t.by_tensor).  A fresh tile
 * per loop iteration (compile-mixed: 80 000 tiles) makes every AP new, and
 * in a set of 10^5 slots each probe was a cache miss (pool_slot: 6 % of
 * the compile) and the set's regrowth touched 18 MiB of fresh huge pages;
 * the chain of the tensor just declared is in cache.  The links are nodes
 * of an arena of their own (none for a tensor's first record, which its
 * chain holds): the records stay 112 bytes apart in theirs,
 * as pointer-keyed memos elsewhere (check_kernel's, direct-mapped on the
 * address) were tuned for (a 120-byte record with its link made them
 * collide: +3 % instructions on compile-tiny). */
enum {
    AP_CHAIN_MAX = 8,             /* records in a chain before it moves to the set */
    AP_CHAIN_TENSORS = 1 << 22,   /* tensor indices with a chain (by_tensor's bound:
                                     a bad index past it goes to the set) */
};

/* A chain's `more` for a tensor whose APs are in the set. */
static const ap_link_t ap_spilled;

/* Put a record (distinct from the set's) in the set, which has room. */
static void set_put(tir_pool_t *p, const tir_ap_t *ap)
{
    uint64_t h = pool_hash_ap(ap, sizeof *ap);
    p->nhash++;
    int i = pool_slot(p, ap, sizeof *ap, h);
    p->set[i] = ap;
    p->hs[i] = (uint32_t)h;
    p->nset++;
}

/* Move a full chain's records to the set (each hashed once; distinct, so
 * each probe ends at an empty slot); -1 on out-of-memory, the chain then
 * untouched (the set is grown for all of them first). */
static int chain_spill(tir_pool_t *p, struct tir_ap_chain *c)
{
    while (2 * (p->nset + AP_CHAIN_MAX) > p->cap)
        if (pool_grow_set(p))
            return -1;
    set_put(p, c->first);
    for (const ap_link_t *l = c->more; l; l = l->next)
        set_put(p, l->ap);
    c->more = &ap_spilled;
    return 0;
}

/* Room for the AP chains of tensors 0..n-1 (tir_reserve_hint: compile-live's
 * 3 000 tiles grew by_tensor five times, 0.13 M instructions). */
static void reserve_chains(tir_kernel_t *k, int64_t n)
{
    k->aps.by_tensor = tir_array_hint(k->aps.by_tensor, &k->aps.cap_tensors, n,
                                      sizeof *k->aps.by_tensor);
}

/* tensor's chain (by_tensor grown to hold it), NULL on out-of-memory. */
static struct tir_ap_chain *chain_of(tir_pool_t *p, int tensor)
{
    if (tensor >= p->cap_tensors) {
        struct tir_ap_chain *b = tir_array_reserve(p->by_tensor, &p->cap_tensors, tensor + 1,
                                                   sizeof *b, 256, true);
        if (!b)
            return NULL;
        p->by_tensor = b;
    }
    return &p->by_tensor[tensor];
}

static bool ap_same(const tir_ap_t *a, const tir_ap_t *b)
{
    return a->offset == b->offset && !memcmp(a, b, sizeof *a);
}

/* Add ap to chain c (found in it: no); its new record, NULL on
 * out-of-memory. */
static const tir_ap_t *chain_add(tir_pool_t *p, struct tir_ap_chain *c, const tir_ap_t *ap)
{
    ap_link_t *l = NULL;
    if (c->first && !(l = tpb_arena_alloc(&p->links, sizeof *l, 8)))
        return NULL;
    const tir_ap_t *copy = tpb_arena_copy(&p->recs, ap, sizeof *ap, 8);
    if (!copy)
        return NULL;
    if (l) {
        l->ap = copy;
        l->next = c->more;
        c->more = l;
    } else {
        c->first = copy;
    }
    p->n++;
    return copy;
}

/* ap's record from its tensor's chain, added if new; the set's when the
 * tensor has more distinct APs than a chain holds. */
static const tir_ap_t *chain_intern(tir_pool_t *p, const tir_ap_t *ap)
{
    struct tir_ap_chain *c = chain_of(p, ap->tensor);
    if (!c)
        return NULL;
    if (c->more != &ap_spilled) {
        if (!c->first)
            return chain_add(p, c, ap);
        if (ap_same(c->first, ap))
            return c->first;
        int len = 1;
        for (const ap_link_t *l = c->more; l; l = l->next, len++)
            if (ap_same(l->ap, ap))
                return l->ap;
        if (len < AP_CHAIN_MAX)
            return chain_add(p, c, ap);
        if (chain_spill(p, c))
            return NULL;
    }
    return pool_intern(p, ap, sizeof *ap, pool_hash_ap(ap, sizeof *ap));
}

const tir_ap_t *tir_ap_intern(tir_kernel_t *k, const tir_ap_t *ap)
{
    if (ap->tensor == tir_ap_none.tensor && !memcmp(ap, &tir_ap_none, sizeof *ap))
        return &tir_ap_none;   /* (an operand names a tensor: one comparison) */
    if (ap->tensor >= 0 && ap->tensor < AP_CHAIN_TENSORS)
        return chain_intern(&k->aps, ap);
    return pool_intern(&k->aps, ap, sizeof *ap, pool_hash_ap(ap, sizeof *ap));
}

const tir_op_rare_t *tir_rare_intern(tir_kernel_t *k, const tir_op_rare_t *r)
{
    if (!memcmp(r, &tir_rare_default, sizeof *r))
        return &tir_rare_default;
    return pool_intern(&k->rares, r, sizeof *r, pool_hash_bytes(r, sizeof *r));
}

int tir_op_set_deps(tir_kernel_t *k, tir_op_t *op, const int *deps, int n)
{
    if (n < 0 || n > 4)
        return -1;
    tir_op_rare_t r = *op->rare;
    memcpy(r.deps, deps, (size_t)n * sizeof *deps);
    r.ndeps = n;
    const tir_op_rare_t *p = tir_rare_intern(k, &r);
    if (!p)
        return -1;
    op->rare = p;
    return 0;
}

int tir_op_copy_into(tir_kernel_t *k, tir_op_t *op)
{
    const tir_ap_t **slot[TIR_MAX_READ_APS + 2];
    int n = tir_op_read_slots(op, slot);
    slot[n++] = &op->dst;
    slot[n++] = &op->dst2;
    for (int i = 0; i < n; i++) {
        const tir_ap_t *ap = tir_ap_intern(k, *slot[i]);
        if (!ap)
            return -1;
        *slot[i] = ap;
    }
    return (op->rare = tir_rare_intern(k, op->rare)) ? 0 : -1;
}

void tir_ap_range(const tir_tensor_t *t, const tir_ap_t *ap, int64_t *lo, int64_t *hi)
{
    int64_t a = ap->offset, z = ap->offset;
    for (int d = 0; d < ap->ndim; d++) {
        int64_t span = ap->step[d] * (ap->count[d] - 1);
        if (span < 0)
            a += span;
        else
            z += span;
    }
    if (ap->view && t) {   /* view elements -> the tensor's elements their bytes touch */
        int64_t vs = isa_dtype_size(ap->view - 1u), ts = isa_dtype_size(t->dtype);
        a = a * vs / ts;
        z = (z * vs + vs - 1) / ts;
    }
    *lo = a;
    *hi = z;
}

bool tir_view_shape(const tir_tensor_t *t, unsigned dt, int *ndim, int64_t *shape)
{
    int64_t n = 1;
    bool tile = t->kind == TIR_T_SBUF || t->kind == TIR_T_PSUM;
    for (int d = tile ? 1 : 0; d < t->ndim; d++)
        n *= t->shape[d];
    int64_t bytes = n * (int64_t)isa_dtype_size(t->dtype), vs = isa_dtype_size(dt);
    if (bytes % vs)
        return false;
    *ndim = tile ? 2 : 1;
    if (tile)
        shape[0] = t->shape[0];
    shape[*ndim - 1] = bytes / vs;
    return true;
}

const tir_tensor_t *tir_ap_tensor(const tir_tensor_t *t, const tir_ap_t *a, tir_tensor_t *tmp)
{
    if (!a->view || !t)
        return t;
    *tmp = *t;
    tmp->dtype = a->view - 1u;
    if (!tir_view_shape(t, tmp->dtype, &tmp->ndim, tmp->shape))
        tmp->ndim = 0;   /* refused by the front-end; an empty tensor fails every bound */
    return tmp;
}

bool tir_ap_overlap(const tir_tensor_t *t, const tir_ap_t *a, const tir_ap_t *b)
{
    if (a->tensor < 0 || a->tensor != b->tensor)
        return false;
    if (!t && a->view != b->view)
        return true;   /* elements of two dtypes: taken as overlapping */
    int64_t lo[2], hi[2];
    tir_ap_range(t, a, &lo[0], &hi[0]);
    tir_ap_range(t, b, &lo[1], &hi[1]);
    return lo[0] <= hi[1] && lo[1] <= hi[0];
}

/* Whether any bit of [lo, lo + n) is set. */
static bool bits_any(const uint8_t *bits, uint64_t lo, uint64_t n)
{
    uint64_t e = lo + n;
    for (; lo < e && (lo & 7); lo++)
        if (bits[lo >> 3] >> (lo & 7) & 1)
            return true;
    for (; lo + 8 <= e; lo += 8)
        if (bits[lo >> 3])
            return true;
    for (; lo < e; lo++)
        if (bits[lo >> 3] >> (lo & 7) & 1)
            return true;
    return false;
}

static void bits_set(uint8_t *bits, uint64_t lo, uint64_t n)
{
    uint64_t e = lo + n;
    for (; lo < e && (lo & 7); lo++)
        bits[lo >> 3] |= (uint8_t)(1u << (lo & 7));
    if (lo + 8 <= e) {
        memset(&bits[lo >> 3], 0xff, (size_t)((e - lo) >> 3));
        lo += (e - lo) & ~(uint64_t)7;
    }
    for (; lo < e; lo++)
        bits[lo >> 3] |= (uint8_t)(1u << (lo & 7));
}

bool tir_ap_mark_bits(const tir_ap_t *a, uint8_t *bits, uint64_t nbits, bool disjoint)
{
    int nd = a->ndim;
    for (int d = 0; d < nd; d++)
        if (a->count[d] <= 0)
            return true;
    while (nd > 0 && a->count[nd - 1] == 1)   /* trailing single elements */
        nd--;
    int64_t run = 1;   /* the innermost dimension as one run when its step is 1 */
    int outer = nd;
    if (nd > 0 && a->step[nd - 1] == 1) {
        run = a->count[nd - 1];
        outer = nd - 1;
    }
    int64_t idx[TIR_MAX_DIMS] = { 0 };
    for (;;) {
        int64_t lo = a->offset, hi;
        for (int d = 0; d < outer; d++)
            lo += idx[d] * a->step[d];
        hi = lo + run;   /* exclusive */
        if (disjoint) {
            if (lo < 0 || (uint64_t)hi > nbits || bits_any(bits, (uint64_t)lo, (uint64_t)run))
                return false;
            bits_set(bits, (uint64_t)lo, (uint64_t)run);
        } else {
            int64_t l = lo < 0 ? 0 : lo, h = (uint64_t)hi > nbits ? (int64_t)nbits : hi;
            if (hi > 0 && l < h)
                bits_set(bits, (uint64_t)l, (uint64_t)(h - l));
        }
        int d = outer - 1;
        while (d >= 0 && ++idx[d] == a->count[d])
            idx[d--] = 0;
        if (d < 0)
            return true;
    }
}

bool tir_ap_equal(const tir_ap_t *a, const tir_ap_t *b)
{
    if (a->tensor != b->tensor || a->offset != b->offset || a->ndim != b->ndim ||
        a->view != b->view)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->step[d] != b->step[d] || a->count[d] != b->count[d])
            return false;
    return true;
}
