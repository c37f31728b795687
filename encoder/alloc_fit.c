/* alloc_fit.c - free runs of granules (alloc_fit.h). */
#include "alloc_fit.h"

#include <stdlib.h>

enum { NONE = -1, FREE = 0, USED = 1 };

static inline void apply(fit_runs_t *r, int node, int len, int v)
{
    int f = v == USED ? 0 : len;
    r->t[node].pre = r->t[node].suf = r->t[node].best = f;
    r->lazy[node] = (signed char)v;
}

static inline void push(fit_runs_t *r, int node, int lo, int mid, int hi)
{
    if (r->lazy[node] == NONE)
        return;
    apply(r, 2 * node, mid - lo, r->lazy[node]);
    apply(r, 2 * node + 1, hi - mid, r->lazy[node]);
    r->lazy[node] = NONE;
}

static int max3(int a, int b, int c)
{
    int m = a > b ? a : b;
    return m > c ? m : c;
}

static inline void pull(fit_runs_t *r, int node, int lo, int mid, int hi)
{
    int L = 2 * node, R = L + 1;
    r->t[node].pre = r->t[L].pre == mid - lo ? mid - lo + r->t[R].pre : r->t[L].pre;
    r->t[node].suf = r->t[R].suf == hi - mid ? hi - mid + r->t[L].suf : r->t[R].suf;
    r->t[node].best = max3(r->t[L].best, r->t[R].best, r->t[L].suf + r->t[R].pre);
}

int fit_runs_init(fit_runs_t *r, int n)
{
    r->n = n > 0 ? n : 1;
    r->visits = 0;
    r->t = NULL;   /* made when first marked used (tree_make) */
    r->lazy = NULL;
    r->top_lo = r->top_hi = 0;
    return 0;
}

/* The tree, all free, when it is first needed: tiles placed one above
 * another (a small kernel's few, or thousands live at once) stay in the
 * top run and never need it, nor its 100 KiB.  -1 when out of memory. */
static int tree_make(fit_runs_t *r)
{
    /* halving [0, n) reaches a leaf within ceil(log2 n) levels: node
     * indices stay below twice the next power of two */
    size_t nodes = 2;
    while (nodes < 2 * (size_t)r->n)
        nodes *= 2;
    r->t = malloc(nodes * (sizeof *r->t + sizeof *r->lazy));
    if (!r->t)
        return -1;
    r->lazy = (signed char *)(r->t + nodes);
    apply(r, 1, r->n, FREE);   /* children are set when first pushed into */
    return 0;
}

void fit_runs_free(fit_runs_t *r)
{
    free(r->t);
    r->t = NULL;
    r->lazy = NULL;
}

/* [a, b) overlaps [lo, hi): only the children it overlaps are entered (a
 * one-granule set visits one node per level, not two). */
static void set_rec(fit_runs_t *r, int node, int lo, int hi, int a, int b, int v)
{
    r->visits++;
    if (a <= lo && hi <= b) {
        apply(r, node, hi - lo, v);
        return;
    }
    int mid = lo + (hi - lo) / 2;
    push(r, node, lo, mid, hi);
    if (a < mid)
        set_rec(r, 2 * node, lo, mid, a, b, v);
    if (mid < b)
        set_rec(r, 2 * node + 1, mid, hi, a, b, v);
    pull(r, node, lo, mid, hi);
}

/* set_rec from the root, without a call per level while [lo, hi) lies
 * inside one child (a tile's few granules: all the way down): the same
 * pushes on the way down and pulls on the way up, in the same order.
 * 0 <= lo < hi <= n. */
static int tree_set(fit_runs_t *r, int lo, int hi, int v)
{
    if (!r->t && (v == FREE || tree_make(r)))   /* not made: all free already */
        return v == FREE ? 0 : -1;
    int pn[64], pl[64], ph[64], depth = 0;   /* the path: node and its range */
    int node = 1, a = 0, b = r->n;
    for (;;) {
        r->visits++;
        if (lo <= a && b <= hi) {
            apply(r, node, b - a, v);
            break;
        }
        int mid = a + (b - a) / 2;
        push(r, node, a, mid, b);
        pn[depth] = node, pl[depth] = a, ph[depth] = b, depth++;
        if (hi <= mid) {
            node = 2 * node, b = mid;
        } else if (mid <= lo) {
            node = 2 * node + 1, a = mid;
        } else {   /* the range splits here: both children */
            set_rec(r, 2 * node, a, mid, lo, hi, v);
            set_rec(r, 2 * node + 1, mid, b, lo, hi, v);
            break;
        }
    }
    while (depth-- > 0)
        pull(r, pn[depth], pl[depth], pl[depth] + (ph[depth] - pl[depth]) / 2, ph[depth]);
    return 0;
}

/* Leftmost start of `need` free granules inside node (best >= need).  A
 * node with a pending assignment is all free (best >= need > 0) or all
 * used (never entered), so its stale children are never read. */
static int first_rec(const fit_runs_t *r, int node, int lo, int hi, int need)
{
    while (r->t[node].best < hi - lo) {   /* not all free */
        int mid = lo + (hi - lo) / 2, L = 2 * node, R = L + 1;
        if (r->t[L].best >= need) {
            node = L, hi = mid;
        } else if (r->t[L].suf + r->t[R].pre >= need) {
            return mid - r->t[L].suf;
        } else {
            node = R, lo = mid;
        }
    }
    return lo;
}

/* The tree alone: its lowest fit, or the start of its free run at the end
 * (continued past n). */
static int tree_first(const fit_runs_t *r, int need)
{
    if (!r->t)   /* all free */
        return 0;
    if (r->t[1].best >= need)
        return first_rec(r, 1, 0, r->n, need);
    return r->n - r->t[1].suf;
}

/* Where the tree's free run at the end starts: it holds nothing used from
 * there on. */
static inline int tree_tail(const fit_runs_t *r) { return r->t ? r->n - r->t[1].suf : 0; }

/* [lo, hi) used when it joins the top run (or starts one) wholly above
 * the tree's used granules: the top run grows to cover it. */
static bool top_take(fit_runs_t *r, int lo, int hi)
{
    bool top = r->top_lo < r->top_hi;
    if (top ? lo > r->top_hi || hi < r->top_lo || lo < tree_tail(r) : lo < tree_tail(r))
        return false;
    r->top_lo = top && r->top_lo < lo ? r->top_lo : lo;
    r->top_hi = top && r->top_hi > hi ? r->top_hi : hi;
    return true;
}

/* [lo, hi) freed: the tree frees its part below the top run (the tree is
 * free from the run on), the run loses what it covers; a hole in the
 * middle of the run moves the run's part below the hole into the tree.
 * -1 when the tree cannot be made (nothing changed). */
static int top_free(fit_runs_t *r, int lo, int hi)
{
    int tl = r->top_lo, th = r->top_hi;
    if (lo < tl)
        tree_set(r, lo, hi < tl ? hi : tl, FREE);   /* (frees: never fails) */
    if (hi <= tl || lo >= th)
        return 0;
    if (lo > tl && hi < th) {
        if (tree_set(r, tl, lo, USED))
            return -1;
        r->top_lo = hi;
    } else if (lo > tl) {
        r->top_hi = lo;
    } else if (hi < th) {
        r->top_lo = hi;
    } else {
        r->top_lo = r->top_hi = 0;
    }
    return 0;
}

int fit_runs_set(fit_runs_t *r, int lo, int hi, bool used)
{
    if (lo < 0)
        lo = 0;
    if (hi > r->n)
        hi = r->n;
    if (lo >= hi)
        return 0;
    if (!used)
        return r->top_lo < r->top_hi ? top_free(r, lo, hi) : tree_set(r, lo, hi, FREE);
    if (top_take(r, lo, hi))
        return 0;
    if (r->top_lo < r->top_hi && hi > r->top_lo) {   /* reaches the run: into the tree */
        if (tree_set(r, r->top_lo, r->top_hi, USED))
            return -1;
        r->top_lo = r->top_hi = 0;
    }
    return tree_set(r, lo, hi, USED);
}

/* The tree's answer, unless that is its free run at the end: the top run
 * splits that one into the part below the run and everything above it. */
int fit_runs_first(const fit_runs_t *r, int need)
{
    if (need <= 0)
        return 0;
    int g = tree_first(r, need);
    if (r->top_lo >= r->top_hi || g < tree_tail(r))
        return g;
    return r->top_lo - g >= need ? g : r->top_hi;
}
