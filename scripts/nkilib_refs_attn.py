"""NumPy references for scripts/nki-library-check: the NKI Library's
attention-side kernels (core/attention, core/qkv, core/output_projection),
on parameter sets taken from the library's test/integration files.  Each
reference is written here from what the library's torch reference
computes; nothing of the library is stored."""
import numpy as np

from tpbsim import nki
from tpbsim.nki import isa as nisa
from tpbsim.nki import language as nl

from nkilib_refs import _close_max as _close   # the library's maxAllClose

P = 128


def _exact(got, want):
    """True, or a line saying where got differs from want (masks: 0/1)."""
    got = np.asarray(got, np.float32)
    want = np.asarray(want, np.float32)
    if got.shape != want.shape:
        return f"shape {got.shape}, NumPy {want.shape}"
    bad = np.argwhere(got != want)
    if not len(bad):
        return True
    i = tuple(bad[0])
    return f"{len(bad)} of {got.size} differ, first at {i}: {got[i]} vs {want[i]}"


# ---------------------------------------------------------------- gen_mask_tkg

def _mask_positions(pos, start, bs, qh, sa, s_ctx, active):
    """[bs, qh, sa, s_ctx] 0/1: key k is visible to query (b, i) when
    k < pos[b * sa] (no start), or, with per-query SWA starts, inside
    [start, end) (end = pos[b * sa + i]) or, when start > end (a wrapped
    circular window), outside [end, start).  active [sa_k, bs, qh, sa_q]
    overrides the last sa keys."""
    k = np.arange(s_ctx, dtype=np.float32)
    if start is None:
        lens = pos[::sa][:bs].astype(np.float32)
        m = (k[None, :] < lens[:, None])[:, None, None, :]
        m = np.broadcast_to(m, (bs, qh, sa, s_ctx))
    else:
        st = start[:bs * sa].reshape(bs, sa, 1).astype(np.float32)
        en = pos[:bs * sa].reshape(bs, sa, 1).astype(np.float32)
        inside = (k >= st) & (k < en)
        wrapped = (k >= st) | (k < en)
        m = np.where(st <= en, inside, wrapped)[:, None, :, :]
        m = np.broadcast_to(m, (bs, qh, sa, s_ctx))
    m = m.astype(np.float32).copy()
    if active is not None:
        m[..., s_ctx - sa:] = np.transpose(active[:, :bs], (1, 2, 3, 0))
    return m


def _kernel_layout(m, n_tile, block_len, strided):
    """[bs, qh, sa, n_tile * P] (one tile's keys) -> the kernel's SBUF
    layout [P, n_tile, bs, qh, sa]: key k sits at partition k // n_tile,
    column k % n_tile (strided); at k % P, k // P (not strided); block KV:
    k = fold * block_len * P + p * block_len + j sits at p, fold * block_len + j."""
    bs, qh, sa, _ = m.shape
    if block_len:
        r = m.reshape(bs, qh, sa, n_tile // block_len, P, block_len)
        r = np.transpose(r, (4, 3, 5, 0, 1, 2))
    elif strided:
        r = np.transpose(m.reshape(bs, qh, sa, P, n_tile), (3, 4, 0, 1, 2))
    else:
        r = np.transpose(m.reshape(bs, qh, sa, n_tile, P), (4, 3, 0, 1, 2))
    return r.reshape(P, n_tile, bs, qh, sa)


def _mask_inputs(bs, sa, s_ctx, swa, seed=42):
    """pos_ids (and SWA starts) as the library's tests make them: one cache
    length per batch row (each active token one further when SWA)."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, s_ctx - (sa if swa else 0), size=bs)
    if not swa:
        return np.repeat(lens, sa).astype(np.float32), None
    pos = (lens[:, None] + np.arange(sa)[None, :]).reshape(-1).astype(np.float32)
    # window starts: some inside [0, end), some past end (a wrapped window)
    start = np.where(rng.random(bs * sa) < 0.5, np.maximum(pos - swa, 0),
                     np.minimum(pos + rng.integers(1, s_ctx // 4, size=bs * sa), s_ctx - 1))
    return pos, start.astype(np.float32)


def _causal_active(bs, qh, sa):
    """[sa_k, bs, qh, sa_q]: query i sees active key j <= i (the tests'
    transposed causal active mask)."""
    tri = np.tril(np.ones((sa, sa), np.float32))          # [q, k]
    return np.ascontiguousarray(np.broadcast_to(tri.T[:, None, None, :], (sa, bs, qh, sa)))


def _resized_block_len(lib, block_len, bs, qh, sa, s_ctx, fa_tiling):
    """The block length the attention kernels use for a block KV cache
    (the library's own resize rule, LNC 1; 0 stays 0)."""
    if not block_len:
        return 0
    u = lib.mod("core.attention.attention_tkg_utils")
    return u.resize_cache_block_len_for_attention_tkg_kernel(
        s_ctx // block_len, block_len, 1, P, bs, qh, sa, enable_fa_s_prior_tiling=fa_tiling)[0]


def _gen_mask_hbm(lib, bs, qh, sa, s_ctx, block_len=0, swa=0, active=False):
    """gen_mask_tkg_hbm: the [s_prior, bs, qh, sa] mask in HBM, stored
    tile-major ([n_tile, P, ...] of the kernel layout)."""
    g = lib.mod("core.attention.gen_mask_tkg")
    pos, start = _mask_inputs(bs, sa, s_ctx, swa)
    am = _causal_active(bs, qh, sa) if active else None
    kw = {}
    if start is not None:
        kw["start_pos_hbm"] = start[None, :]
    if am is not None:
        kw["active_mask"] = am
    got = nki.jit(g.gen_mask_tkg_hbm)(pos[None, :], bs, qh, sa, s_ctx, block_len=block_len, **kw)
    bl = _resized_block_len(lib, block_len, bs, qh, sa, s_ctx, True)
    n_tile = s_ctx // P
    want = _kernel_layout(_mask_positions(pos, start, bs, qh, sa, s_ctx, am), n_tile, bl, bl == 0)
    want = np.transpose(want, (1, 0, 2, 3, 4)).reshape(s_ctx, bs, qh, sa)
    return _exact(got, want)


def _gen_mask_sbuf_kernel(g, sbm_cls, logger):
    """A kernel around gen_mask_tkg (its tests' wrapper, in our words):
    pos_ids (and starts) into SBUF, the mask built there, copied out."""

    def k(pos_ids, n_tile, bs, qh, sa, s_prior, start=None, s_prior_offset=0, block_len=0,
          strided_mm1=True, active=None):
        sbm = sbm_cls(0, P * n_tile * bs * qh * sa * 8 + 4096, logger("gen_mask_check"),
                      use_auto_alloc=True)
        sbm.open_scope(name="gen_mask_check")
        pos_sb = sbm.alloc_stack((P, bs * sa), dtype=pos_ids.dtype, buffer=nl.sbuf, name="pos_sb")
        nisa.dma_copy(dst=pos_sb, src=pos_ids)
        start_sb = None
        if start is not None:
            start_sb = sbm.alloc_stack((P, bs * sa), dtype=start.dtype, buffer=nl.sbuf, name="start_sb")
            nisa.dma_copy(dst=start_sb, src=start)
        m = sbm.alloc_stack((P, n_tile, bs, qh, sa), dtype=nl.float32, buffer=nl.sbuf, name="m")
        g.gen_mask_tkg(pos_ids=pos_sb, mask_out=m, bs=bs, q_head=qh, s_active=sa,
                       is_s_prior_sharded=False, s_prior_per_shard=s_prior, start_pos=start_sb,
                       s_prior_offset=s_prior_offset, block_len=block_len, strided_mm1=strided_mm1,
                       active_mask=active, sbm=sbm)
        out = nl.ndarray(m.shape, dtype=m.dtype, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=m)
        sbm.close_scope()
        return out
    return k


def _gen_mask(lib, bs, qh, sa, s_ctx, offset=0, fa=0, block_len=0, strided=True, swa=0,
              active=False):
    """gen_mask_tkg on one tile of fa keys (all s_ctx when fa is 0) from
    offset, LNC 1, in the layout strided / not / block KV."""
    g = lib.mod("core.attention.gen_mask_tkg")
    a = lib.mod("core.utils.allocator")
    lg = lib.mod("core.utils.logging")
    n_tile = (fa or s_ctx) // P
    block_len = _resized_block_len(lib, block_len, bs, qh, sa, s_ctx, fa > 0)
    pos, start = _mask_inputs(bs, sa, s_ctx, swa)
    am = _causal_active(bs, qh, sa) if active else None
    posb = np.ascontiguousarray(np.broadcast_to(pos, (P, bs * sa)))
    startb = None if start is None else np.ascontiguousarray(np.broadcast_to(start, (P, bs * sa)))
    got = nki.jit(_gen_mask_sbuf_kernel(g, a.SbufManager, lg.Logger))(
        posb, n_tile, bs, qh, sa, s_ctx, start=startb, s_prior_offset=offset, block_len=block_len,
        strided_mm1=strided, active=am)
    m = _mask_positions(pos, start, bs, qh, sa, s_ctx, am)[..., offset:offset + n_tile * P]
    return _exact(got, _kernel_layout(m, n_tile, block_len, strided))


def _mask_checks(lib):
    return [
        ("gen_mask_tkg_hbm b4 sc256 sa1", lambda: _gen_mask_hbm(lib, 4, 1, 1, 256)),
        ("gen_mask_tkg_hbm b4 qh2 sc2048 sa7 active", lambda: _gen_mask_hbm(lib, 4, 2, 7, 2048, active=True)),
        ("gen_mask_tkg_hbm b4 sc1024 sa5 bl16 active",
         lambda: _gen_mask_hbm(lib, 4, 1, 5, 1024, block_len=16, active=True)),
        ("gen_mask_tkg_hbm b4 sc1024 sa5 swa128", lambda: _gen_mask_hbm(lib, 4, 1, 5, 1024, swa=128)),
        ("gen_mask_tkg b4 sc1024 sa5 strided fa256@768 active",
         lambda: _gen_mask(lib, 4, 1, 5, 1024, offset=768, fa=256, active=True)),
        ("gen_mask_tkg b4 sc1024 sa5 nonstrided active",
         lambda: _gen_mask(lib, 4, 1, 5, 1024, strided=False, active=True)),
        ("gen_mask_tkg b4 sc1024 sa5 nonstrided fa256@256",
         lambda: _gen_mask(lib, 4, 1, 5, 1024, offset=256, fa=256, strided=False)),
        ("gen_mask_tkg b4 sc2048 sa5 bl32 swa512",
         lambda: _gen_mask(lib, 4, 1, 5, 2048, block_len=32, strided=False, swa=512)),
        ("gen_mask_tkg b4 qh2 sc2048 sa7 strided swa128",
         lambda: _gen_mask(lib, 4, 2, 7, 2048, swa=128)),
    ]


# ------------------------------------------------------- output projection

def _bf16(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32).astype(nl.bfloat16)


def _fp8(x):
    """x rounded to float8_e4m3 (tpbsim's dtype, as NKI's), back in fp32."""
    return np.asarray(x, np.float32).astype(nl.float8_e4m3).astype(np.float32)


FP8_MAX = 240.0


def _oproj_inputs(rng, B, N, S, D, H, quant, bias):
    """attention [D, B, N, S] and weight [N * D, H] in bf16 (fp8 weights with
    their scales when quantized, as the library's tests make them)."""
    att = _bf16(rng, (D, B, N, S))
    w = _bf16(rng, (N * D, H))
    kw = {}
    if quant == "static":
        ws = float(np.abs(w.astype(np.float32)).max()) / FP8_MAX
        ins = float(np.abs(att.astype(np.float32)).max()) / FP8_MAX * rng.uniform(0.995, 1.005)
        w = (w.astype(np.float32) / ws).astype(nl.float8_e4m3)
        kw = {"weight_scale": np.full((P, 1), ws, np.float32), "input_scale": np.full((P, 1), ins, np.float32)}
    elif quant == "row":
        ws = np.abs(w.astype(np.float32)).max(axis=0, keepdims=True) / FP8_MAX
        w = (w.astype(np.float32) / ws).astype(nl.float8_e4m3)
        kw = {"weight_scale": np.ascontiguousarray(np.broadcast_to(ws, (P, H))).astype(np.float32)}
    b = (rng.standard_normal((1, H)) * 100).astype(np.float32).astype(nl.bfloat16) if bias else None
    return att, w, b, kw


def _oproj_ref(att, w, b, quant, kw):
    """out [B * S, H] = attention rows (b, s) x (n, d) @ weight (+ bias), fp32;
    static: the attention divided by its scale and rounded to fp8 e4m3 (what
    the kernel feeds the PE), the product rescaled; row: the bf16 attention
    times the fp8 weight, each column rescaled."""
    D, B, N, S = att.shape
    a = np.transpose(att.astype(np.float32), (1, 3, 2, 0)).reshape(B * S, N * D)
    wf = w.astype(np.float32)
    if quant == "static":
        ins = kw["input_scale"][0, 0]
        a = _fp8(np.clip(a / ins, -FP8_MAX, FP8_MAX))
        out = (a @ wf) * (kw["weight_scale"][0, 0] * ins)
    elif quant == "row":
        out = (a @ wf) * kw["weight_scale"][0]     # the attention stays bf16
    else:
        out = a @ wf
    if b is not None:
        if quant != "none":
            # the dequantized product is stored in the bf16 output tile, then
            # the bias added to it (the unquantized path adds it to PSUM's fp32)
            out = out.astype(nl.bfloat16).astype(np.float32)
        out = out + b.astype(np.float32)
    return out


def _oproj_tkg(lib, B, N, S, D, H, quant, bias, transpose):
    """output_projection_tkg (LNC 1): transposed output [128, 1, H / 128, B * S]
    holds h = h1 * (H / 128) + h2 at [h1, 0, h2]."""
    m = lib.mod("core.output_projection.output_projection_tkg")
    ct = lib.mod("core.utils.common_types")
    qt = {"none": ct.QuantizationType.NONE, "static": ct.QuantizationType.STATIC,
          "row": ct.QuantizationType.ROW}[quant]
    rng = np.random.default_rng(7)
    att, w, b, kw = _oproj_inputs(rng, B, N, S, D, H, quant, bias)
    got = m.output_projection_tkg(att, w, bias=b, quantization_type=qt, TRANSPOSE_OUT=transpose, **kw)
    want = _oproj_ref(att, w, b, quant, kw)
    if transpose:
        want = np.transpose(want.reshape(B * S, 1, P, H // P), (2, 1, 3, 0))
    # the output is bf16: compare with the fp32 result rounded once
    return _close(got, want.astype(nl.bfloat16), 2e-2 if quant == "none" else 5e-2, 1e-5)


def _oproj_checks(lib):
    cases = [(4, 8, 4, 64, 3072, "none", False, False), (4, 8, 4, 32, 3072, "none", True, True),
             (4, 10, 8, 128, 602, "none", True, False), (4, 2, 4, 64, 7168, "none", False, True),
             (16, 8, 1, 128, 8192, "static", True, True), (32, 6, 3, 128, 3072, "static", False, False),
             (16, 8, 1, 128, 3072, "row", True, False), (16, 8, 1, 128, 3072, "row", False, True)]
    out = []
    for c in cases:
        B, N, S, D, H, q, bias, tp = c
        name = f"output_projection_tkg B{B} N{N} S{S} D{D} H{H} {q}{' bias' if bias else ''}{' T' if tp else ''}"
        out.append((name, lambda c=c: _oproj_tkg(lib, *c)))
    return out


def _oproj_cte(lib, B, S, H, N, D, bias):
    """output_projection_cte: attention [B, N, D, S] bf16 (randn * 0.1, as
    the tests), weight [N * D, H]; out [B, S, H] = sum over (n, d) + bias."""
    m = lib.mod("core.output_projection.output_projection_cte.output_projection_cte")
    rng = np.random.default_rng(9)
    att = (rng.standard_normal((B, N, D, S)) * 0.1).astype(np.float32).astype(nl.bfloat16)
    w = _bf16(rng, (N * D, H))
    b = (rng.standard_normal((1, H)) * 100).astype(np.float32).astype(nl.bfloat16) if bias else None
    got = m.output_projection_cte(att, w, bias=b)
    want = np.einsum("bnds,ndh->bsh", att.astype(np.float32), w.astype(np.float32).reshape(N, D, H))
    if b is not None:
        want = want + b.astype(np.float32)
    return _close(got, want, 2e-2, 1e-5)


def _oproj_cte_checks(lib):
    cases = [(1, 128, 3072, 16, 64, True), (1, 128, 3072, 16, 10, True), (1, 128, 3072, 8, 32, True),
             (1, 512, 8192, 2, 128, False), (1, 16, 5120, 10, 128, True)]
    return [(f"output_projection_cte B{c[0]} S{c[1]} H{c[2]} N{c[3]} D{c[4]}{' bias' if c[5] else ''}",
             lambda c=c: _oproj_cte(lib, *c)) for c in cases]


# --------------------------------------------------------------------- qkv

def _norm(x, kind, g, b, eps):
    """RMSNorm (x / sqrt(mean(x^2) + eps) * g) or LayerNorm ((x - mean) /
    sqrt(var + eps) * g + b) over the last axis, fp32; none: x."""
    if kind == "rms":
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g
    if kind == "layer":
        m = x.mean(axis=-1, keepdims=True)
        v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
        y = (x - m) / np.sqrt(v + eps) * g
        return y + b if b is not None else y
    return x


def _qkv_tkg(lib, B, S, H, I, nq, nkv, D, norm, eps, layout="bsd", norm_bias=False, qkv_bias=False,
             fused_add=False, dtype=np.float32):
    """qkv (the jit entry: qkv_tkg, or qkv_cte past 96 tokens or 128 rows):
    out = norm(hidden [+ mlp_prev + attn_prev]) @ w (+ bias), [B, S, I]
    (BSD) or [N, B, S, D] (NBSd); qkv_tkg with fused_add also returns the
    summed hidden."""
    m = lib.mod("core.qkv.qkv")
    ct = lib.mod("core.utils.common_types")
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (B, S, H)).astype(np.float32).astype(dtype)
    w = (rng.uniform(-1, 1, (H, I)) * 0.05).astype(np.float32).astype(dtype)
    kw = {"d_head": D, "num_q_heads": nq, "num_kv_heads": nkv, "norm_eps": eps,
          "fused_norm_type": {"rms": ct.NormType.RMS_NORM, "layer": ct.NormType.LAYER_NORM,
                              "none": ct.NormType.NO_NORM}[norm],
          "output_layout": ct.QKVOutputLayout.BSD if layout == "bsd" else ct.QKVOutputLayout.NBSd}
    g = nb = bias = None
    if norm != "none":
        g = kw["gamma_norm_weights"] = rng.uniform(0.5, 1.5, (1, H)).astype(np.float32).astype(dtype)
    if norm_bias:
        nb = kw["layer_norm_bias"] = rng.uniform(-1, 1, (1, H)).astype(np.float32).astype(dtype)
    if qkv_bias:
        bias = kw["bias"] = rng.uniform(-1, 1, (1, I)).astype(np.float32).astype(dtype)
    h = x.astype(np.float32)
    if fused_add:
        mp = rng.uniform(-1, 1, (B, S, H)).astype(np.float32).astype(dtype)
        ap = rng.uniform(-1, 1, (B, S, H)).astype(np.float32).astype(dtype)
        kw.update(fused_residual_add=True, mlp_prev=mp, attention_prev=ap)
        h = h + mp.astype(np.float32) + ap.astype(np.float32)
    got = m.qkv(x, w, **kw)
    hn = _norm(h, norm, None if g is None else g.astype(np.float32), None if nb is None else nb.astype(np.float32),
               eps)
    out = hn @ w.astype(np.float32)
    if bias is not None:
        out = out + bias.astype(np.float32)
    if layout != "bsd":
        out = np.transpose(out.reshape(B, S, I // D, D), (2, 0, 1, 3))
    tol = 2e-2
    if fused_add and S <= 96 and B * S <= P:   # qkv_tkg also returns the sum (qkv_cte does not)
        if not isinstance(got, (tuple, list)):
            return f"one output, want (out, fused hidden)"
        r = _close(got[1], h, tol, 1e-5)
        if r is not True:
            return "fused hidden: " + r
        got = got[0]
    return _close(got, out, tol, 1e-5)


def _qkv_cte_checks(lib):
    """qkv_cte through qkv(), on the tests' small data-type / d / sequence sets."""
    cases = [("B1 S128 H512 I512 rms fused_add", (1, 128, 512, 512, 2, 1, 128, "rms", 1e-6)),
             ("B1 S512 H1024 I256 rms fused_add", (1, 512, 1024, 256, 2, 1, 64, "rms", 1e-6)),
             ("B1 S1000 H512 I512 rms fused_add", (1, 1000, 512, 512, 2, 1, 128, "rms", 1e-6)),
             ("B2 S128 H512 I512", (2, 128, 512, 512, 2, 1, 128, "none", 1e-6))]
    out = []
    for name, args in cases:
        for dt in (nl.bfloat16, np.float16, np.float32)[:3 if "S128" in name else 1]:
            out.append((f"qkv_cte {name} {np.dtype(dt).name}",
                        lambda a=args, d=dt, f="fused_add" in name: _qkv_tkg(lib, *a, fused_add=f, dtype=d)))
    return out


def _qkv_checks(lib):
    cases = [("B1 S7 H8192 I384 rms", (1, 7, 8192, 384, 1, 1, 128, "rms", 1e-5)),
             ("B1 S5 H8192 I384 layer+bias", (1, 5, 8192, 384, 1, 1, 128, "layer", 1e-6),
              {"norm_bias": True}),
             ("B1 S3 H16384 I896 qkv_bias", (1, 3, 16384, 896, 5, 1, 128, "none", 1e-6), {"qkv_bias": True}),
             ("B1 S1 H8192 I768 NBSd", (1, 1, 8192, 768, 2, 2, 128, "none", 1e-6), {"layout": "nbsd"}),
             ("B1 S1 H8192 I512 rms fused_add eps77", (1, 1, 8192, 512, 2, 1, 128, "rms", 77.0),
              {"fused_add": True}),
             ("B8 S5 H3072 I640 D64 rms qkv_bias", (8, 5, 3072, 640, 8, 1, 64, "rms", 1e-6),
              {"qkv_bias": True})]
    out = []
    for c in cases:
        name, args = c[0], c[1]
        kw = c[2] if len(c) > 2 else {}
        out.append((f"qkv_tkg {name} fp32", lambda a=args, k=kw: _qkv_tkg(lib, *a, **k)))
    # bf16 as the tests run them (their golden in fp32, their maxAllClose)
    for c in cases[:2] + cases[3:]:
        name, args = c[0], c[1]
        kw = dict(c[2] if len(c) > 2 else {}, dtype=nl.bfloat16)
        out.append((f"qkv_tkg {name} bf16", lambda a=args, k=kw: _qkv_tkg(lib, *a, **k)))
    return out


# --------------------------------------------------------------- attention

def _bf(x):
    return np.asarray(x, np.float32).astype(nl.bfloat16).astype(np.float32)


def _attn_ref(q, k, v, scale, causal):
    """softmax(scale * q @ k^T [causal: key j <= query i]) @ v per batch;
    q [B, Sq, d], k and v [B, Skv, d].  As the kernel computes it: q, k, v
    and the exponentials enter the PE as bf16 ("float32 for softmax and
    bfloat16 for other operations"), sums and the softmax in fp32."""
    s = np.einsum("bqd,bkd->bqk", _bf(q), _bf(k)) * scale
    if causal:
        sq, sk = s.shape[1:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bqk,bkd->bqd", _bf(p), _bf(v)) / p.sum(-1, keepdims=True)


def _attn_cte(lib, B, skv, sq, d, scale, dtype, causal, tp_q, tp_out):
    """attention_cte: q (tp_q: [B, Sq, d], else [B, d, Sq]), k [B, d, Skv],
    v [B, Skv, d]; out [B, Sq, d] ([B, d, Sq] with tp_out)."""
    m = lib.mod("core.attention.attention_cte")
    rng = np.random.default_rng(5)
    # the library's tests draw uniform [0, 1) inputs
    q, k, v = (rng.random((B, n, d)).astype(np.float32).astype(dtype) for n in (sq, skv, skv))
    qa = q if tp_q else np.ascontiguousarray(np.transpose(q, (0, 2, 1)))
    got = m.attention_cte(qa, np.ascontiguousarray(np.transpose(k, (0, 2, 1))), v, scale=scale,
                          causal_mask=causal, tp_q=tp_q, tp_out=tp_out)
    want = _attn_ref(*(x.astype(np.float32) for x in (q, k, v)), scale, causal)
    if tp_out:
        want = np.transpose(want, (0, 2, 1))
    return _close(got, want, 2e-2, 1e-5)


def _attn_checks(lib):
    cases = [(1, 128, 128, 128, 1.0, np.float32, True, True, False),
             (1, 512, 256, 64, 0.5, np.float32, False, True, False),
             (3, 512, 1024, 128, 1.0, np.float16, False, False, True)]
    return [(f"attention_cte B{c[0]} kv{c[1]} q{c[2]} d{c[3]} {np.dtype(c[5]).name}"
             f"{' causal' if c[6] else ''}{'' if c[7] else ' q^T'}{' out^T' if c[8] else ''}",
             lambda c=c: _attn_cte(lib, *c)) for c in cases]


def checks(lib):
    return (_mask_checks(lib) + _oproj_checks(lib) + _oproj_cte_checks(lib) + _qkv_checks(lib) + _qkv_cte_checks(lib)
        + _attn_checks(lib))
