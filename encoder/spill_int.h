/* spill_int.h - what the two spillers share (encoder/spill.c: rounds of
 * whole placements, the reference; encoder/spill_fast.c: one placement
 * resumed after each spill): the victim rule's tests on a tile's writes,
 * the names and shapes of what a spill adds, and the refusal texts.  Not
 * part of the compiler's interface. */
#ifndef TPB_SPILL_INT_H
#define TPB_SPILL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spill.h"

/* Rounds before giving up: the round-by-round spiller places the whole
 * kernel once per victim. */
#define SPILL_MAX_ROUNDS 20000
/* Victims before the resumed placement (spill_fast.c) gives up: O(log) work
 * per victim there, so the bound only caps the spilled kernel's growth (two
 * ops per victim: 200 000 victims add ~120 MB of ops). */
#define SPILL_FAST_MAX_VICTIMS 200000

/* BODY for every operand of op naming a tensor: T its tensor, W whether
 * the operand is written (dst, dst2). */
#define SPILL_FOR_OPERANDS(op, T, W, BODY)                                               \
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

/* The whole of a [p, fr] tensor, row-major. */
tir_ap_t spill_whole(int tensor, int64_t p, int64_t fr);
/* Partitions and free elements of tile v ([p, fr] as its slot is shaped). */
void spill_shape(const tir_tensor_t *v, int64_t *p, int64_t *fr);
/* Whether op writes all `elems` elements of tensor t in one dense,
 * row-major operand (dst or dst2; a dtype view is a partial write). */
bool spill_op_writes_whole(const tir_op_t *op, int t, uint64_t elems);
/* Mark in bits the elements of tensor t that op's dst / dst2 write (a
 * dtype view marks nothing). */
void spill_op_mark(const tir_op_t *op, int t, uint8_t *bits, uint64_t nbits);
/* Whether bits[0..n) are all set. */
bool spill_all_set(const uint8_t *bits, uint64_t n);

/* A new spill slot tensor for tile vt (scratch [p, fr] of its dtype),
 * named spill_slot<nslots> (or a free variant when the kernel has such
 * names: *names_checked / *names_used remember the one pass that finds
 * out).  Its index, -1 when out of memory. */
int spill_slot_tensor(tir_kernel_t *k, const tir_tensor_t *vt, int nslots, bool *names_checked,
                      bool *names_used);
/* The reload tile of v (v_is_reload: v is itself a reload, whose ".s<n>"
 * suffix is replaced): same shape and dtype, "<base>.s<reloads>", path
 * "<path>.spill".  Its index, -1 when out of memory. */
int spill_reload_tensor(tir_kernel_t *k, int v, bool v_is_reload, unsigned reloads);
/* op := the spill store (flag TIR_F_SPILL_SAVE, "spill_save_<num>") or
 * reload ("spill_reload_<num>") dst <- src.  -1 when out of memory. */
int spill_make_op(tir_kernel_t *k, tir_op_t *op, const tir_ap_t *dst, const tir_ap_t *src,
                  const char *path, unsigned flag, unsigned num);

/* Rename tensor v to v2 in every operand of op (-1: out of memory). */
int spill_rename_op(tir_kernel_t *k, tir_op_t *op, int v, int v2);

/* why[] when there is no victim at op (path, kind): the last candidate
 * refused as partly written (partial, NULL: none), else the last refused
 * as reloaded for its next use (pinned, read by the op at pin_path /
 * pin_kind), else whether a tile live there is accessed by it (at_f). */
void spill_why_none(char *why, size_t len, const char *path, tir_opkind_t kind,
                    const char *partial, const char *pinned, const char *pin_path,
                    tir_opkind_t pin_kind, bool at_f);

/* Place k as the compile would (alloc_kernel_loops with buffers and the
 * rolling candidates); *fail_op: the op SBUF placement failed at, -1 when
 * it fitted or failed otherwise (then err is the error). */
int spill_place(const tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
                int *fail_op, tpb_err_t *err);

/* The reference's state, which the resumed spiller hands over when it
 * must finish with whole placements (spill_rounds). */
typedef struct {
    int tensor;          /* the scratch tensor */
    int holder;          /* the reload tile whose data it holds while that stays clean, -1 */
    int last_reload;     /* op index of its last reload */
} spill_slot_t;

typedef struct {
    spill_slot_t *slots;
    int nslots, cap_slots;
    int *slot_of;        /* per tensor: the slot it was reloaded from, -1 */
    int cap_slot_of;
    bool names_checked, names_used;
} spill_slots_t;

void spill_slots_free(spill_slots_t *s);
/* Room for slot_of[0..need) (new entries -1); -1 when out of memory. */
int spill_slot_of_reserve(spill_slots_t *s, int need);
/* Room for one more slot; -1 when out of memory. */
int spill_slots_reserve(spill_slots_t *s);

/* The rounds of whole placements (the reference) from k as it is, with
 * slots (taken over; freed here), `first` the error of the kernel as
 * given ("" when k is that kernel: the first round's then), st counting
 * on.  What enc_spill returns. */
int spill_rounds(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
                 enc_spill_stats_t *st, spill_slots_t *slots, const char *first,
                 tpb_err_t *err);

/* The resumed spiller (spill_fast.c): 0 when k now fits, -1 with err set
 * (the same verdicts and texts as spill_rounds), 1 when it does not apply
 * to k (fixed SBUF tiles, a dynamic loop) and spill_rounds must run. */
int spill_fast(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
               enc_spill_stats_t *st, tpb_err_t *err);

#endif
