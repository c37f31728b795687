/* alloc_fit.h - free runs of fixed-size granules (encoder/alloc.c: first
 * fit over many live SBUF tiles without sweeping them all per tile). */
#ifndef TPB_ALLOC_FIT_H
#define TPB_ALLOC_FIT_H

#include <stdbool.h>

/* Granules 0..n-1, each free or used (all free at first); everything at n
 * and beyond counts as free.  A segment tree: per node the free run at its
 * start, at its end and the longest inside, and a pending assignment.
 * Besides the tree, one used run [top_lo, top_hi) above everything the tree
 * holds used (the tree's granules from top_lo on are free): runs marked
 * used at its end, or above the tree's last used granule, only move
 * top_hi, so tiles placed one above another (all live at once) cost O(1)
 * each; the run enters the tree when a change reaches below its end. */
typedef struct {
    int pre, suf, best;
} fit_node_t;
typedef struct {
    int n;
    /* the nodes (root 1) and their pending assignments, one block below
     * malloc's mapping threshold (SBUF's 3072 granules: 104 KiB), a node's
     * runs in one cache line; NULL until a change needs the tree (all
     * free: tiles placed one above another keep to the top run) */
    fit_node_t *t;
    signed char *lazy;   /* -1 none, 0 free, 1 used: the whole node */
    int top_lo, top_hi;  /* the used run beside the tree (top_lo == top_hi: none) */
    long visits;         /* nodes the tree's updates entered (tests: O(log n) each) */
} fit_runs_t;

/* 0 (r is safe to free either way).  The tree is made when a change
 * first needs it (fit_runs_set). */
int fit_runs_init(fit_runs_t *r, int n);
void fit_runs_free(fit_runs_t *r);
/* Mark granules [lo, hi) (clipped to 0..n) used or free; -1 when the tree
 * cannot be made (out of memory; r unchanged), else 0. */
int fit_runs_set(fit_runs_t *r, int lo, int hi, bool used);
/* The lowest g such that granules [g, g + need) are all free (need 0: 0).
 * O(log n). */
int fit_runs_first(const fit_runs_t *r, int need);

#endif
