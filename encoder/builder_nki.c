/* builder_nki.c - typed builders of the NKI ops added for issue 12
 * (builder.h): the random-number ops and dma_compute; each fills tir_op_t
 * (tir.h) and hands it to enc_emit(). */
#include "builder.h"
#include "rng.h"

#include <math.h>
#include <string.h>

static int emit_rng(enc_builder_t *b, tir_opkind_t kind, tir_ap_t dst, tir_ap_t src, int engine)
{
    tir_op_t op;
    tir_op_init(&op, kind);
    op.dst = enc_in(b, dst);
    op.src[0] = enc_in(b, src);
    op.nsrc = src.tensor >= 0 ? 1 : 0;
    op.engine = enc_field_i8(b, kind, engine == ISA_ENG_UNASSIGNED ? enc_rng_default_engine(kind)
                                                                   : engine, "engine");
    return enc_emit(b, &op);
}

int enc_rng(enc_builder_t *b, tir_ap_t dst, int engine)
{
    return emit_rng(b, TIR_RNG, dst, enc_ap_none(), engine);
}

int enc_rand_get_state(enc_builder_t *b, tir_ap_t dst, int engine)
{
    return emit_rng(b, TIR_RAND_GET_STATE, dst, enc_ap_none(), engine);
}

int enc_rand_set_state(enc_builder_t *b, tir_ap_t src_seeds, int engine)
{
    return emit_rng(b, TIR_RAND_SET_STATE, enc_ap_none(), src_seeds, engine);
}

int enc_set_rng_seed(enc_builder_t *b, tir_ap_t src_seeds)
{
    return emit_rng(b, TIR_SET_RNG_SEED, enc_ap_none(), src_seeds, ISA_ENG_DVE);
}

int enc_rand2(enc_builder_t *b, tir_ap_t dst, enc_scalar_t min, enc_scalar_t max)
{
    tir_op_t op;
    tir_op_init(&op, TIR_RAND2);
    op.dst = enc_in(b, dst);
    op.nsrc = 0;
    op.s0 = enc_scalar_in(b, min);
    op.s1 = enc_scalar_in(b, max);
    op.engine = ISA_ENG_DVE;
    return enc_emit(b, &op);
}

/* Whether a narrow dst still rounds once: two sources, the first copied
 * exactly (scale 1, dst's own dtype), so the second DMA's fp32 add is the
 * only rounding -- what the engine's fp32 accumulation gives (the NKI
 * Library's fused residual add: bf16 + bf16 into bf16). */
static bool one_rounding(const enc_builder_t *b, tir_ap_t dst, const tir_ap_t *srcs,
                         const double *scales, int n)
{
    int s0 = srcs[0].tensor;
    return n == 2 && scales[0] == 1.0 && s0 >= 0 && s0 < b->k->ntensors &&
           b->k->tensors[s0].dtype == b->k->tensors[dst.tensor].dtype;
}

/* dma_compute: dst = sum_i srcs[i] * scales[i], fp32 inside the DMA engine.
 * One DMA_COPY per source: the first writes src0*scale0, each next one
 * accumulates (compute add) src_i*scale_i; a dst other than float32 would
 * round between the sources, so several sources need a float32 dst, but
 * for one_rounding's case. */
int enc_dma_compute(enc_builder_t *b, tir_ap_t dst, const tir_ap_t *srcs, const double *scales,
                    int n)
{
    if (b->failed)
        return -1;
    const char *path = b->path[0] ? b->path : "op";
    if (n < 1 || n > ENC_DMA_COMPUTE_MAX_SRCS)
        return enc_fail(b, "%s (dma_compute): field 'srcs': %d sources; 1 to %d", path, n,
                        ENC_DMA_COMPUTE_MAX_SRCS);
    /* dst named again as a later source (NKI's srcs=[x, dst], the NKI
     * Library's topk_reduce accumulator): that source goes first, before the
     * first copy overwrites it -- the same sum */
    tir_ap_t ord[ENC_DMA_COMPUTE_MAX_SRCS];
    double sc[ENC_DMA_COMPUTE_MAX_SRCS];
    memcpy(ord, srcs, (size_t)n * sizeof *ord);
    memcpy(sc, scales, (size_t)n * sizeof *sc);
    const tir_tensor_t *dt = dst.tensor >= 0 && dst.tensor < b->k->ntensors
                                 ? &b->k->tensors[dst.tensor] : NULL;
    for (int i = 1; dt && i < n; i++) {
        if (tir_ap_equal(&ord[i], &dst)) {
            tir_ap_t a = ord[0];
            double s = sc[0];
            ord[0] = ord[i], sc[0] = sc[i];
            ord[i] = a, sc[i] = s;
        } else if (tir_ap_overlap(dt, &ord[i], &dst))
            return enc_fail(b, "%s (dma_compute): field 'srcs': source %d overlaps dst without "
                            "being the same access (it would be read after being written)",
                            path, i);
    }
    srcs = ord, scales = sc;
    if (n > 1 && dst.tensor >= 0 && dst.tensor < b->k->ntensors &&
        b->k->tensors[dst.tensor].dtype != ISA_DT_FP32 && !one_rounding(b, dst, srcs, scales, n))
        return enc_fail(b, "%s (dma_compute): field 'dst': dtype %s with %d sources: the DMA "
                        "accumulates source by source in dst, so a non-float32 dst would round "
                        "between them (use a float32 dst, then a cast)", path,
                        isa_dtype_numpy_name(b->k->tensors[dst.tensor].dtype), n);
    for (int i = 0; i < n; i++) {
        if (!isfinite(scales[i]))
            return enc_fail(b, "%s (dma_compute): field 'scales': scale %d is not finite",
                            path, i);
        tir_op_t op;
        tir_op_init(&op, TIR_DMA_COPY);
        op.dst = enc_in(b, dst);
        op.src[0] = enc_in(b, srcs[i]);
        op.nsrc = 1;
        tir_op_rare_t r = *op.rare;
        r.dma_scaled = scales[i] != 1.0;
        r.dma_scale = (float)scales[i];
        op.rare = enc_rare_in(b, &r);
        if (i > 0)
            op.flags |= TIR_F_RMW_ADD;
        if (enc_emit(b, &op) < 0)
            return -1;
    }
    return 0;
}
