/* validate_pe.c - build-time validation of the Tensor-engine ops: the
 * matmul family (nc_matmul, nc_matmul_mx, the sparse matmul) and
 * transposes (PE or Vector engine).  Messages as validate.c. */
#include "validate_int.h"

int enc_check_matmul(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    const tir_ap_t *d = op->dst, *st = op->src[0], *mv = op->src[1];
    if (need_space(v, d, -1, K(PSUM), "a PSUM tile") ||
        need_space(v, st, 0, K(SBUF), "an SBUF tile") ||
        need_space(v, mv, 1, K(SBUF), "an SBUF tile"))
        return -1;
    unsigned ddt = odt(v, d), sdt = odt(v, st), mdt = odt(v, mv);
    for (int i = 0; i < 2; i++) {
        unsigned t = i ? mdt : sdt;
        if (op->kind == TIR_MATMUL_MX && is_quad(t))
            continue;   /* checked below */
        if (!is_float(t))
            return vfail(v, enc_operand_name(op->kind, i), "dtype %s not allowed on the PE "
                         "(float32, bfloat16, float16, float8)", isa_dtype_numpy_name(t));
    }
    /* NKI nc_matmul: legacy float8_e4m3 and OCP float8_e4m3fn cannot be
     * mixed in one matmul (either operand order) */
    if ((sdt == ISA_DT_FP8E4M3IEEE && mdt == ISA_DT_FP8E4M3) ||
        (sdt == ISA_DT_FP8E4M3 && mdt == ISA_DT_FP8E4M3IEEE))
        return vfail(v, "moving", "dtype %s with stationary %s: float8_e4m3 (legacy) and "
                     "float8_e4m3fn (OCP) cannot be mixed in one matmul",
                     isa_dtype_numpy_name(mdt), isa_dtype_numpy_name(sdt));
    if (op->kind == TIR_MATMUL_MX) {
        bool quads = is_quad(sdt) && is_quad(mdt);
        if (!quads && (is_quad(sdt) || is_quad(mdt)))
            return vfail(v, is_quad(sdt) ? "moving" : "stationary",
                         "matmul_mx takes two packed quads (float8_e5m2_x4, float8_e4m3fn_x4, "
                         "float4_e2m1fn_x4) or two OCP float8 operands, not %s with %s",
                         isa_dtype_numpy_name(mdt), isa_dtype_numpy_name(sdt));
        if (!quads && (!is_mx_fp8(sdt) || !is_mx_fp8(mdt)))
            return vfail(v, is_mx_fp8(sdt) ? "moving" : "stationary",
                         "matmul_mx takes OCP float8 operands (float8_e4m3fn, float8_e5m2) or "
                         "packed quads (float8_e5m2_x4, float8_e4m3fn_x4, float4_e2m1fn_x4)");
        for (int i = 2; i < 4; i++) {
            if (need_space(v, op->src[i], i, K(SBUF), "an SBUF tile"))
                return -1;
            if (!isa_mx_scale_dtype(odt(v, op->src[i])))
                return vfail(v, enc_operand_name(op->kind, i),
                             "dtype %s: scales are float8_e8m0fnu or uint8 (E8M0)",
                             isa_dtype_numpy_name(odt(v, op->src[i])));
        }
    }
    if (op->kind == TIR_MATMUL_SPARSE) {
        if (need_space(v, op->src[2], 2, K(SBUF), "an SBUF tile"))
            return -1;
        if (odt(v, op->src[2]) != ISA_DT_UINT8)
            return vfail(v, "tags", "tags are uint8");
        if (op->rare->compress_ratio != 2 && op->rare->compress_ratio != 4)
            return vfail(v, "compress_ratio", "%u (2 or 4)", op->rare->compress_ratio);
    }
    bool tr = op->flags & TIR_F_TRANSPOSE;
    /* transpose mode (NKI is_transpose): stationary is the data, moving an
     * identity, dst = stationary.T copied bit-exactly in stationary's dtype */
    /* NKI nc_matmul_mx: dst float32 or bfloat16 (a bfloat16 dst holds each
     * result rounded once, accumulation adds to the rounded value) */
    /* NKI nc_matmul from NeuronCore-v4 (pe_v4_matmul) and nc_matmul_mx:
     * dst float32 or bfloat16, and a moving free size up to the whole PSUM
     * (below) */
    bool v4 = op->kind == TIR_MATMUL_MX || (op->kind == TIR_MATMUL && v->tg->pe_v4_matmul && !tr);
    bool v4_bf16 = v4 && ddt == ISA_DT_BF16;
    if (tr ? ddt != sdt : (ddt != ISA_DT_FP32 && !v4_bf16))
        return vfail(v, "dst", "PSUM dtype %s; %s", isa_dtype_numpy_name(ddt),
                     tr ? "transpose mode writes the stationary dtype" :
                     op->kind == TIR_MATMUL_MX ? "matmul_mx writes float32 or bfloat16" :
                     v4 ? "matmul writes float32 or bfloat16" :
                          "matmul accumulates in float32");
    if (tr && (op->flags & TIR_F_ACCUMULATE))
        return vfail(v, "accumulate", "a transpose (is_transpose) cannot accumulate");
    int64_t K_ = ap_parts(st), M_ = ap_free(st), N_ = ap_free(mv);
    int64_t kmax = 128;
    if (op->flags & TIR_F_DOUBLE_ROW) {
        /* two contraction rows per partition: stationary [K, 2, M], moving
         * [K, 2, N] (rows k and 128 + k of a K = 256 matmul; semantics.md) */
        if (!is_fp8(sdt) || !is_fp8(mdt))
            return vfail(v, "perf_mode", "double_row is a float8 mode (stationary %s, moving %s)",
                         isa_dtype_numpy_name(sdt), isa_dtype_numpy_name(mdt));
        if (tr)
            return vfail(v, "perf_mode", "double_row cannot be combined with transpose");
        if (op->rare->tile_pos[0] || op->rare->tile_pos[1] || (op->rare->tile_size[0] && op->rare->tile_size[0] != 128) ||
            (op->rare->tile_size[1] && op->rare->tile_size[1] != 128))
            return vfail(v, "perf_mode", "double_row uses the whole 128x128 PE array (no "
                         "tile_position / tile_size)");
        if (M_ % 2 || N_ % 2)
            return vfail(v, M_ % 2 ? "stationary" : "moving", "double_row takes [K, 2, n] data: "
                         "free size %lld is odd", (long long)(M_ % 2 ? M_ : N_));
        M_ /= 2;
        N_ /= 2;
    }
    if (op->kind == TIR_MATMUL_SPARSE) {
        /* stationary holds Kc compressed rows, 4/r per group of 4 dense
         * rows; the contraction runs over the dense K = Kc * r rows, which
         * moving has (semantics.md "LdWeightsSparse / MatmulSparse") */
        int64_t r = op->rare->compress_ratio, keep = 4 / r;
        if (K_ % keep)
            return vfail(v, "stationary", "%lld compressed rows are not whole groups of %lld "
                         "(compress_ratio %lld keeps %lld of every 4 dense rows)", (long long)K_,
                         (long long)keep, (long long)r, (long long)keep);
        if (ap_parts(mv) != K_ * r)
            return vfail(v, "moving", "%lld partitions; the sparse stationary's %lld compressed "
                         "rows expand to K = %lld x compress_ratio %lld = %lld dense rows, which "
                         "moving must have", (long long)ap_parts(mv), (long long)K_,
                         (long long)K_, (long long)r, (long long)(K_ * r));
        K_ *= r;
    } else if (ap_parts(mv) != K_) {
        return vfail(v, "moving", "contraction (partition) size %lld differs from stationary's "
                     "%lld", (long long)ap_parts(mv), (long long)K_);
    }
    if (K_ > kmax)
        return vfail(v, "stationary", "contraction size %lld > %lld", (long long)K_,
                     (long long)kmax);
    if (M_ > 128)
        return vfail(v, "stationary", "free size %lld > 128 (M)", (long long)M_);
    /* NKI: on NeuronCore-v2/-v3 N <= 512, one PSUM bank of float32; from
     * v4 N up to 8x PSUM banks (the entire PSUM): 4096 float32, 8192
     * bfloat16.  One Matmul writes one bank: lower_matmul.c splits a wider
     * one into Matmuls of <= 512 columns */
    if (v4) {
        int64_t most = (int64_t)(v->tg->psum_partition_bytes / isa_dtype_size(ddt));
        if (N_ > most)
            return vfail(v, "moving", "free size %lld > %lld (N: dst %s fills at most the "
                         "whole %u-byte PSUM partition, %u banks)", (long long)N_,
                         (long long)most, isa_dtype_numpy_name(ddt),
                         v->tg->psum_partition_bytes, v->tg->psum_banks);
    } else if (N_ > 512)
        return vfail(v, "moving", "free size %lld > 512 (N, one PSUM bank of float32)",
                     (long long)N_);
    if (ap_parts(d) != M_ || ap_free(d) != N_)
        return vfail(v, "dst", "shape is %lld x %lld, expected [M, N] = [%lld, %lld] "
                     "(stationary.T @ moving)", (long long)ap_parts(d), (long long)ap_free(d),
                     (long long)M_, (long long)N_);
    for (int i = 0; i < 2; i++) {
        if (op->rare->tile_pos[i] < 0 || op->rare->tile_size[i] < 0 || op->rare->tile_pos[i] + op->rare->tile_size[i] > 128)
            return vfail(v, i ? "tile_position" : "tile_position",
                         "tile position %d + size %d outside the 128x128 PE array",
                         op->rare->tile_pos[i], op->rare->tile_size[i]);
        int sz = op->rare->tile_size[i];
        if (sz && sz != 32 && sz != 64 && sz != 128)
            return vfail(v, "tile_size", "%d (32, 64 or 128)", sz);
        if (sz && op->rare->tile_pos[i] % sz)
            return vfail(v, "tile_position", "%d is not a multiple of the tile size %d",
                         op->rare->tile_pos[i], sz);
    }
    if (op->rare->tile_size[0] && K_ > op->rare->tile_size[0])
        return vfail(v, "tile_size", "contraction size %lld exceeds the PE tile rows %d",
                     (long long)K_, op->rare->tile_size[0]);
    if (op->rare->tile_size[1] && M_ > op->rare->tile_size[1])
        return vfail(v, "tile_size", "stationary free size %lld exceeds the PE tile columns %d",
                     (long long)M_, op->rare->tile_size[1]);
    return 0;
}


int enc_check_transpose(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    const tir_ap_t *d = op->dst, *s = op->src[0];
    unsigned ddt = odt(v, d), sdt = odt(v, s);
    if (ap_parts(d) != ap_free(s) || ap_free(d) != ap_parts(s))
        return vfail(v, "dst", "shape %lld x %lld is not the transpose of src %lld x %lld",
                     (long long)ap_parts(d), (long long)ap_free(d), (long long)ap_parts(s),
                     (long long)ap_free(s));
    /* a PE transpose may change the dtype (bf16 -> fp32 PSUM): the back-end
     * multiplies by the lazily loaded identity (get_identity_tensor) */
    if (ddt != sdt && op->engine == ISA_ENG_DVE)
        return vfail(v, "dst", "dtype %s differs from src dtype %s",
                     isa_dtype_numpy_name(ddt), isa_dtype_numpy_name(sdt));
    if (op->engine == ISA_ENG_DVE) {
        if (ap_parts(s) > 32 || ap_free(s) > 32)
            return vfail(v, "src", "the Vector engine transposes at most 32x32 (got %lld x %lld)",
                         (long long)ap_parts(s), (long long)ap_free(s));
    } else {
        if (need_space(v, d, -1, K(PSUM), "a PSUM tile (PE transpose)") ||
            need_space(v, s, 0, K(SBUF), "an SBUF tile (PE transpose)"))
            return -1;
        if (!is_float(sdt))
            return vfail(v, "src", "dtype %s not allowed on the PE", isa_dtype_numpy_name(sdt));
    }
    return 0;
}
