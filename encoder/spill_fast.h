/* spill_fast.h - the resumed spiller's state (encoder/spill_fast.c) and
 * its op order, tile accesses and heaps (encoder/spill_fast_ops.c).  Not
 * part of the compiler's interface. */
#ifndef TPB_SPILL_FAST_H
#define TPB_SPILL_FAST_H

#include "alloc_fit.h"
#include "spill_int.h"

typedef struct sf sf_t;

/* ---- an indexed binary heap of item ids ---- */

/* whether item x comes out before item y */
typedef bool (*before_fn)(const sf_t *e, int x, int y);

typedef struct {
    int *a;
    int n, cap;
    int *pos;   /* per item: its index in a, -1 */
    int cap_pos;
    before_fn before;
} heap_t;

/* ---- the state ---- */

typedef struct {   /* an inserted op */
    int gap;       /* it comes before the kernel's op gap (nops: at the end) */
    uint32_t label;
    int prev, next;   /* neighbours in its gap, -1 */
    int tile;      /* the tile it accesses: a store reads it, a reload writes it */
    int xnext;     /* the tile's next inserted access, -1 */
    int slot;      /* the HBM slot tensor */
    unsigned num;  /* spill_save_<num> / spill_reload_<num> */
    bool save;
    const char *path;
} ins_t;

typedef struct {   /* per tensor */
    int root;      /* the tensor of the kernel as given whose op list [lo, hi) are */
    int lo, hi;
    int xhead;     /* its first inserted access, -1 */
    int rq;        /* its placement request, -1 */
    int key;       /* Belady: pending, its first access; live, its next one (op id) */
    uint64_t bytes;
    int whole_at;  /* an op before which it was found wholly written (+1; 0: none) */
    unsigned char bstate;   /* 0 not a candidate, 1 pending, 2 live, 3 done */
} tu_t;

typedef struct {   /* a placement request */
    int tensor;    /* -1: an op's scratch partial */
    int first, last;   /* op ids */
    uint64_t bytes;    /* per partition */
    int need, addr;    /* granules */
    int order;     /* index in order[]; -1: a reload tile's (pend) */
} rq_t;

/* The slots of one dtype and shape, in creation order, and a tree of the
 * least last-reload position below each node: the first slot free for a
 * store (its last reload before it) in O(log) -- a scan of every slot per
 * victim made a kernel spilling 10^4 tiles quadratic. */
typedef struct {
    unsigned dtype;
    int64_t p, fr;
    int *slot;
    int n, size;     /* size: leaves, a power of two (min[size + i]: slot i) */
    uint64_t *min;   /* [2 size] */
} sclass_t;

struct sf {
    tir_kernel_t *k;
    enc_spill_stats_t *st;
    int N;                     /* ops of the kernel as given */
    ins_t *ins;
    int nins, cap_ins;
    int *gap_head, *gap_tail;  /* [N + 1] */
    int *ent_op;               /* per root tensor, its ops ascending (CSR) */
    int *ent_lw;               /* the last write entry at or before this one, -1 */
    unsigned char *ent_w;
    tu_t *tu;
    int cap_tu;
    rq_t *rq;
    int nrq, cap_rq;
    int *order;                /* the kernel's requests in first-use order */
    int norder, oi;            /* oi: the next to place */
    heap_t pend;               /* reload tiles' requests not placed, by first use */
    heap_t rel;                /* placed requests not freed, by last use */
    fit_runs_t fit;
    uint64_t cap;
    int *log;                  /* placement steps: rq << 1 | placed (else freed) */
    int nlog, cap_log;
    heap_t ev;                 /* Belady: pending and live tiles by key */
    heap_t bel;                /* live tiles, furthest next use first */
    int x;                     /* accesses before op x are passed (-1: none yet) */
    spill_slots_t sl;          /* last_reload: op ids */
    sclass_t *cls;             /* the slots by dtype and shape */
    int ncls, cap_cls;
    int *slot_cls, *slot_pos;  /* per slot: its class, its index there */
    int cap_sp;
    bool cls_stale;            /* labels moved: the classes' keys are recomputed */
};

static inline uint64_t pk(const sf_t *e, int id)
{
    if (id < e->N)
        return (uint64_t)id << 32 | 0xffffffffu;
    const ins_t *i = &e->ins[id - e->N];
    return (uint64_t)i->gap << 32 | i->label;
}

/* ---- spill_fast_ops.c ---- */

/* Room for `need` elements of elem bytes in *p (capacity *cap); -1 when
 * out of memory. */
int sf_grow(void **p, int *cap, int need, size_t elem);
/* Indexed heaps of item ids (h->before orders them). */
int sf_h_push(const sf_t *e, heap_t *h, int item);
bool sf_h_has(const heap_t *h, int item);
void sf_h_remove(const sf_t *e, heap_t *h, int item);
void sf_h_fix(const sf_t *e, heap_t *h, int item);   /* after item's key changed */
int sf_h_top(const heap_t *h);                       /* -1: empty */
void sf_h_free(heap_t *h);
/* A new inserted op right after op w / right before op n: its id, -1
 * when out of memory (its fields but the position zero). */
int sf_ins_after(sf_t *e, int w);
int sf_ins_before(sf_t *e, int n);
/* The op after id in program order (-1: none); an op's path and kind. */
int sf_op_after(const sf_t *e, int id);
const char *sf_op_path(const sf_t *e, int id, tir_opkind_t *kind);
/* First entry of [lo, hi) whose op is >= val. */
int sf_lower(const sf_t *e, int lo, int hi, int val);
/* The kernel's ops before op f are those below sf_lim_before, after it
 * those from sf_lim_after on. */
int sf_lim_before(const sf_t *e, int f);
int sf_lim_after(const sf_t *e, int f);
/* The earlier / later of two op ids (-1: none). */
int sf_earlier(const sf_t *e, int a, int b);
int sf_later(const sf_t *e, int a, int b);
/* Tile t's first access after op f, its last access (writes: last write)
 * before f, whether f accesses it, its first access (-1: none). */
int sf_next_after(const sf_t *e, int t, int f);
int sf_last_before(const sf_t *e, int t, int f, bool writes);
bool sf_accessed_at(const sf_t *e, int t, int f);
int sf_first_access(const sf_t *e, int t);
/* The per-root op lists of k's SBUF tiles; -1 when out of memory. */
int sf_build_uses(sf_t *e);

#endif
