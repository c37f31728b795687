/* alloc_live.h - the allocator's liveness (encoder/alloc.c): the first and
 * last op that touches each tensor and each op's scratch partial. */
#ifndef TPB_ALLOC_LIVE_H
#define TPB_ALLOC_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "bir.h"
#include "compile.h"
#include "target.h"
#include "tir.h"

/* Those facts gathered by a pass that reads every op anyway (compile.c's
 * check_kernel), so the allocator needs no pass of its own over the ops:
 * on a 10^5-op kernel each pass pulls the 30 MB op array and the operands
 * through the cache again.  Op indices are the gathering kernel's; the
 * allocator's kernel may have `shift` ops put in front of them (the
 * identity load, compile.c), whose touches it works out itself.  A zeroed
 * enc_live_t gathers nothing (use NULL: the allocator makes its pass). */
typedef struct {
    uint32_t (*use)[2];       /* per tensor: 1 + its first, 1 + its last op (0: none) */
    int ntensors, nops;       /* of the gathering kernel */
    size_t use_bytes;
    int ident_lo, ident_hi;   /* first, last op reading the shared identity tile (a PE
                                 transpose, lower_pe_transpose_needs_identity); -1 none */
    struct enc_live_scratch {
        int op;
        uint64_t bytes;
    } *scratch;               /* the ops with a scratch partial (lower_scratch_bytes) */
    int nscratch, cap_scratch;
    int shift;
    int nuse;                 /* ntensors while gathering, else 0 */
    bool failed;              /* out of memory while gathering: not used */
    bool deps_seen;           /* an op names explicit deps (ndeps > 0) */
    /* the HBM tensors (kind not SBUF / PSUM), ascending, for the HBM layout
     * (enc_hbm_layout_live); hbm_ok false: not gathered */
    int *hbm;
    int nhbm, cap_hbm;
    bool hbm_ok;
} enc_live_t;

/* Start gathering for k (l zeroed first); without memory l stays unusable
 * and the allocator makes its own pass (no error). */
void enc_live_begin(enc_live_t *l, const tir_kernel_t *k);
/* Tensor i of k (every tensor, in order, before the ops). */
void enc_live_tensor(enc_live_t *l, int i, const tir_tensor_t *t);
/* Op i of k: needs_ident is lower_pe_transpose_needs_identity(k, op). */
void enc_live_op(enc_live_t *l, const tir_kernel_t *k, const tir_op_t *op, int i,
                 bool needs_ident);
/* Whether l was gathered whole for k's ops past its first l->shift (then
 * the allocator uses it, and deps_seen answers for every op). */
bool enc_live_fits(const enc_live_t *l, const tir_kernel_t *k);
void enc_live_free(enc_live_t *l);

/* Liveness into m->mlocs (first_use, last_use) and m->op_scratch for k,
 * from live when it was gathered for k's ops past its first live->shift,
 * else by a pass over k's ops; m->ident_tile set.  -1 when out of memory. */
int alloc_liveness(const tir_kernel_t *k, const tpb_target_t *t, bir_module_t *m,
                   const enc_live_t *live);

/* enc_hbm_layout (compile.h) with the HBM tensors among k's first
 * live->ntensors from live (NULL or not gathered: a pass over them). */
int enc_hbm_layout_live(const tir_kernel_t *k, const enc_live_t *live, enc_hbm_layout_t *out,
                        tpb_err_t *err);
/* alloc_kernel_loops (backend.h) with the liveness from live (NULL: the
 * allocator's own pass). */
int alloc_kernel_live(const tir_kernel_t *k, const tpb_target_t *t, const enc_hbm_layout_t *hbm,
                      bir_module_t *m, enc_stats_t *st, int buffers, const unsigned char *cand,
                      const enc_live_t *live, tpb_err_t *err);

#endif
