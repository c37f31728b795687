"""NumPy references for scripts/nki-library-check: more of the NKI Library's
MX (microscaling) tests on NeuronCore-v4 (trn3), beside nkilib_refs_mx.py.

quantize_to_mx (test/integration/nkilib/core/utils/test_quantize_to_mx.py):
the test's own kernel is a thin wrapper around nisa.quantize_mx (HBM ->
SBUF, quantize, both outputs back to the mutable HBM arguments); one
written here does the same.

The MXFP4 projections (core/mlp/mlp_tkg: gate_up_projection_mx_shard_H,
down_projection_mx_shard_H; test_mlp_proj_mxfp4.py), at LNC 2 as the test
runs them, called from wrappers written here that load their inputs as
the test's wrappers do.

The blockwise MX MoE (core/moe/moe_cte: bwmm_shard_on_block_mx,
blockwise_mm_shard_intermediate_mx; test_moe_bwmm_mx_cte.py) at LNC 2,
static block loops, routed as nkilib_refs_moe routes (the test's
generator, re-written there).

Inputs are drawn here: fp4 quads any bit pattern, fp8 quads with a bounded
exponent field (values of order 1), group scales near 127.  The references
decode the quads and scales (scripts/mx_ref.py, from the OCP bit layouts
and NKI's definitions), quantize what the kernel quantizes with NKI's
quantize_mx (a block scale twice OCP's, as NKI's API reference states),
and contract in fp64.  Nothing of the library is stored."""
import math

import numpy as np

from tpbsim import nki
from tpbsim.nki import isa as nisa
from tpbsim.nki import language as nl

from mx_ref import quantize_ref, scale_rows, unpack
from nkilib_refs import _close_max
from nkilib_refs_moe import _inputs as _moe_routing
from nkilib_refs_mx import _on_trn3

_X4 = {"e4m3": nl.float8_e4m3fn_x4, "e5m2": nl.float8_e5m2_x4, "fp4": nl.float4_e2m1fn_x4}


def _quads(rng, shape, kind):
    """Random quad bits (uint16 fp4, uint32 fp8) of shape: fp4 any nibble;
    fp8 lanes of either sign with exponents near the bias (|v| ~ 1/8 .. 8)."""
    if kind == "fp4":
        return rng.integers(0, 1 << 16, shape, dtype=np.uint16)
    e4m3 = kind == "e4m3"
    mb, bias = (3, 7) if e4m3 else (2, 15)
    e = rng.integers(bias - 3, bias + 4, shape + (4,))
    m = rng.integers(0, 1 << mb, shape + (4,))
    s = rng.integers(0, 2, shape + (4,))
    b = ((s << 7) | (e << mb) | m).astype(np.uint8)
    return b.view(np.uint32).reshape(shape)


def _scales(rng, shape):
    return rng.integers(123, 131, shape, dtype=np.uint8)


def _deq(bits, kind, scale):
    """bits [P, ...cols] quads, scale [P // 8, ...cols] -> values [P, ...cols, 4]."""
    v = unpack(bits.reshape(bits.shape[0], -1), kind).reshape(bits.shape + (4,))
    return v * np.repeat(2.0 ** (scale.astype(np.float64) - 127), 8, 0)[..., None]


# ---- quantize_to_mx ----

def _qmx_kernel(src_hbm, out_data_hbm, out_scale_hbm):
    P, F = src_hbm.shape
    x = nl.ndarray((P, F), dtype=src_hbm.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=src_hbm)
    q = nl.ndarray((P, F // 4), dtype=out_data_hbm.dtype, buffer=nl.sbuf)
    s = nl.ndarray((P, F // 4), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(src=x, dst=q, dst_scale=s)
    nisa.dma_copy(dst=out_data_hbm, src=q)
    nisa.dma_copy(dst=out_scale_hbm, src=s)
    return out_data_hbm, out_scale_hbm


def _quantize_to_mx(P, F, kind, in_dt):
    """quantize_mx of a [P, F] fp16/bf16 tile (standard normal values) to
    fp8 quads: quads and the group scales (partition 32q + j of quadrant q)
    exactly against NKI's quantize_mx (scripts/mx_ref.py).  The test
    compares with maxAllClose (rtol 2e-2, atol 1e-5) against a golden that
    computes OCP's scale (half of NKI's), and with zeros in the scale
    partitions quantize_mx does not write: the kernel copies them out of
    SBUF as they were, so they are not compared here."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal((P, F)).astype(np.float32)
    if in_dt == "bf16":
        x = x.astype(nl.bfloat16).astype(np.float32)
        src = nki.typed(x, nl.bfloat16)
    else:
        x = x.astype(np.float16).astype(np.float32)
        src = x.astype(np.float16)
    out_q = nki.typed(np.zeros((P, F // 4), np.uint32), _X4[kind])
    out_s = np.zeros((P, F // 4), np.uint8)
    with _on_trn3():
        q, s = nki.jit(_qmx_kernel)(src, out_q, out_s)
    wq, ws = quantize_ref(x.astype(np.float64), kind == "e4m3")
    gq = q.view(np.uint8).reshape(P, F // 4, 4)
    if not np.array_equal(gq, wq):
        bad = np.argwhere(gq != wq)[0]
        return "quads differ first at %s: %d vs %d" % (tuple(bad), gq[tuple(bad)], wq[tuple(bad)])
    gs = s[scale_rows(np.arange(0, P, 8))]
    if not np.array_equal(gs, ws):
        bad = np.argwhere(gs != ws)[0]
        return "scales differ first at group %s: %d vs %d" % (tuple(bad), gs[tuple(bad)], ws[tuple(bad)])
    return True


# ---- MXFP4 MLP projections (LNC 2, sharded on H) ----

def _gate_up_wrapper(fn, ProjConfig, TensorView):
    def k(hidden_qtz, hidden_scale, weight_qtz, weight_scale, bias, H, I, BxS):
        n, pid = nl.num_programs(0), nl.program_id(0)
        cfg = ProjConfig(H, I, BxS, n, pid)
        nh = H // 512 // n
        mine = nl.ds(pid * nh, nh)
        h_sb = nl.ndarray((128, nh, BxS), dtype=hidden_qtz.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=h_sb, src=hidden_qtz[:, mine, :])
        b_sb = nl.ndarray((128, math.ceil(I / 512), 4), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.memset(dst=b_sb, value=0.0)
        nisa.dma_copy(dst=b_sb[:bias.shape[0], :, :], src=bias)
        hs_sb = nl.ndarray((128, nh, BxS), dtype=nl.uint8, buffer=nl.sbuf)
        for quad in range(4):   # a quadrant's four group rows
            nisa.dma_copy(dst=hs_sb[32 * quad:32 * quad + 4, :, :],
                          src=hidden_scale[4 * quad:4 * quad + 4, mine, :])
        res = fn(hidden_qtz_sb=TensorView(h_sb), hidden_scale_sb=TensorView(hs_sb),
                 weight_qtz=TensorView(weight_qtz), weight_scale=TensorView(weight_scale),
                 bias_sb=TensorView(b_sb), cfg=cfg)
        out = nl.ndarray(res.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        if pid == 0:
            nisa.dma_copy(dst=out, src=res)
        return out
    return k


def _gate_up(lib, BxS, H, I):
    """gate_up_projection_mx_tp_shard_H: e5m2 hidden quads [128, H/512, BxS]
    (scales [16, H/512, BxS]) times fp4 weight quads [128, H/512, I]
    (scales [16, H/512, I]), contracting partition, H/512 tile and lane:
    r[i, b]; out [128, ceil(I/512), BxS, 4] holds r[512 t + q * sz/4 + p, b]
    at (p, t, b, q), sz the I512 tile's size, plus bias [p, t, q].  Only the
    rows p < sz/4 of each tile are compared (the others the kernel leaves).
    Tolerance: the test's maxAllClose, rtol 2e-2, atol 1e-5."""
    m = lib.mod("core.mlp.mlp_tkg.gate_up_projection_mx_shard_H")
    cfgmod = lib.mod("core.mlp.mlp_tkg.projection_mx_constants")
    tv = lib.mod("core.utils.tensor_view")
    rng = np.random.default_rng(42)
    nH, nI = H // 512, math.ceil(I / 512)
    hq, hs = _quads(rng, (128, nH, BxS), "e5m2"), _scales(rng, (16, nH, BxS))
    wq, ws = _quads(rng, (128, nH, I), "fp4"), _scales(rng, (16, nH, I))
    bp = 128 if I >= 512 else I // 4
    bias = rng.random((bp, nI, 4)).astype(np.float32).astype(nl.bfloat16).astype(np.float32)
    k = nki.jit(_gate_up_wrapper(m.gate_up_projection_mx_tp_shard_H, cfgmod.ProjConfig, tv.TensorView))
    with _on_trn3():
        got = k[2](nki.typed(hq, nl.float8_e5m2_x4), hs, nki.typed(wq, nl.float4_e2m1fn_x4), ws,
                   nki.typed(bias, nl.bfloat16), H=H, I=I, BxS=BxS)
    # "pjil,pjbl->ib" (np.tensordot: BLAS; np.einsum is NumPy's own loop here)
    r = np.tensordot(_deq(wq, "fp4", ws), _deq(hq, "e5m2", hs), axes=([0, 1, 3], [0, 1, 3]))
    got = np.asarray(got, np.float32)
    gl, wl = [], []
    for t in range(nI):
        sz = min(512, I - 512 * t)
        want = r[512 * t:512 * t + sz].reshape(4, sz // 4, BxS).transpose(1, 2, 0)
        want = want + np.pad(bias, ((0, 128 - bp), (0, 0), (0, 0)))[:sz // 4, t][:, None, :]
        gl.append(got[:sz // 4, t].ravel())
        wl.append(want.ravel())
    return _close_max(np.concatenate(gl), np.concatenate(wl), 2e-2, 1e-5)


def _down_wrapper(fn, ProjConfig):
    def k(inter, weight_qtz, weight_scale, bias, H, I, BxS, use_stream_shuffle_broadcast):
        n, pid = nl.num_programs(0), nl.program_id(0)
        cfg = ProjConfig(H, I, BxS, n, pid, use_stream_shuffle_broadcast=use_stream_shuffle_broadcast)
        hs = H // n
        x_sb = nl.ndarray(inter.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_sb, src=inter)
        b_sb = nl.ndarray((1, hs), dtype=bias.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=b_sb, src=bias[:, nl.ds(pid * hs, hs)])
        res = fn(inter_sb=x_sb, weight=weight_qtz, weight_scale=weight_scale, bias_sb=b_sb, cfg=cfg)
        out = nl.ndarray((BxS, H), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        if pid == 0:
            for t in range(math.ceil(BxS / 128)):
                rows = min(128, BxS - 128 * t)
                nisa.dma_copy(dst=out[nl.ds(128 * t, rows), :], src=res[:rows, t, :])
        return out
    return k


def _down(lib, BxS, H, I, ssb):
    """down_projection_mx_shard_H: the bf16 intermediate [128, ceil(I/512),
    BxS, 4] (I on partition, tile and lane; partitions past I/4 of a short
    last tile hold filler the zero weights cancel) quantized in the kernel
    to e4m3 quads (NKI's quantize_mx), times fp4 weight quads [I/4 or 128,
    ceil(I/512), H] (scales [.../8, ceil(I/512), H]), plus bias [1, H]:
    out [BxS, H].  ssb: the bias broadcast by stream shuffle, else by a
    matmul with ones.  Tolerance: the test's maxAllClose, rtol 2e-2, atol
    1e-5."""
    m = lib.mod("core.mlp.mlp_tkg.down_projection_mx_shard_H")
    cfgmod = lib.mod("core.mlp.mlp_tkg.projection_mx_constants")
    rng = np.random.default_rng(42)
    nI = math.ceil(I / 512)
    pI = 128 if I >= 512 else I // 4
    x = np.full((128, nI, BxS, 4), 6767.0)
    x[:pI] = rng.standard_normal((pI, nI, BxS, 4))
    x = x.astype(np.float32).astype(nl.bfloat16).astype(np.float32)
    wq, ws = _quads(rng, (pI, nI, H), "fp4"), _scales(rng, (pI // 8, nI, H))
    bias = rng.random((1, H)).astype(np.float32).astype(nl.bfloat16).astype(np.float32)
    k = nki.jit(_down_wrapper(m.down_projection_mx_shard_H, cfgmod.ProjConfig))
    with _on_trn3():
        got = k[2](nki.typed(x, nl.bfloat16), nki.typed(wq, nl.float4_e2m1fn_x4), ws,
                   nki.typed(bias, nl.bfloat16), H=H, I=I, BxS=BxS, use_stream_shuffle_broadcast=ssb)
    xq, xs = quantize_ref(x.reshape(128, -1).astype(np.float64), True)
    xv = unpack(xq.view(np.uint32).reshape(128, -1), "e4m3") * \
        np.repeat(2.0 ** (xs.astype(np.float64) - 127), 8, 0)[:, :, None]
    xv = xv.reshape(128, nI, BxS, 4)[:pI]
    want = np.tensordot(xv, _deq(wq, "fp4", ws), axes=([0, 1, 3], [0, 1, 3])) + bias   # ptbl,pthl->bh
    return _close_max(got, want, 2e-2, 1e-5)


# ---- MoE blockwise MX (moe_cte) ----

def _round_e4m3(y):
    """y (|y| < 464) rounded to the nearest float8_e4m3fn value, ties to the
    even mantissa (subnormals below 2^-6)."""
    _, e = np.frexp(np.abs(y))
    q = 2.0 ** (np.maximum(e - 1, -6) - 3)
    return np.round(y / q) * q


def _qmx(v):
    """NKI's quantize_mx to e4m3 quads, dequantized: v [P, F, 4] (P a
    multiple of 8; groups of 8 partitions x the 4 lanes of a column)."""
    P, F, _ = v.shape
    g = v.reshape(P // 8, 8, F, 4)
    amax = np.abs(g).max(axis=(1, 3))
    _, e = np.frexp(amax)
    s = np.where(amax > 0, np.clip(e - 1 - 7 + 127, 0, 254), 0)
    sc = 2.0 ** (s - 127.0)[:, None, :, None]
    return (_round_e4m3(g / sc) * sc).reshape(P, F, 4)


def _moe_mx_inputs(rng, T, H, I, E, B, K, kind, shard_on_block, skip_token):
    tok_exp, t2id, b2e = _moe_routing(T, E, B, K, shard_on_block, skip_token)
    rows = T if skip_token else T + 1
    x = (2 * rng.standard_normal((rows, H))).astype(np.float32).astype(nl.bfloat16).astype(np.float32)
    aff = (rng.random((rows, E)) * np.vstack([tok_exp, np.zeros((rows - T, E))])).astype(np.float32)
    aff = aff.astype(nl.bfloat16).astype(np.float32)
    if not skip_token:
        x[T] = 0
    nH, nI = H // 512, math.ceil(I / 512)
    pI = 128 if I >= 512 else I // 4
    wg = _quads(rng, (E, 128, 2, nH, I), kind)
    sg = rng.integers(121, 124, (E, 16, 2, nH, I), dtype=np.uint8)
    wd = _quads(rng, (E, pI, nI, H), kind)
    sd = rng.integers(121, 124, (E, pI // 8, nI, H), dtype=np.uint8)
    bg = rng.uniform(-2, 0.5, (E, pI, 2, nI, 4)).astype(np.float32).astype(nl.bfloat16).astype(np.float32)
    bd = rng.uniform(-1.5, 1.5, (E, H)).astype(np.float32).astype(nl.bfloat16).astype(np.float32)
    return tok_exp, t2id, b2e, x, aff, (wg, sg, wd, sd, bg, bd)


def _moe_mx_ref(T, H, I, E, kind, tok_exp, x, aff, w, swish, clamps):
    """out [T, H]: for each token t and each of its experts e, affinity[t, e]
    * (q(act(clamp(g)) * clamp(u)) . W_down[e] + b_down[e]), g / u = q(x[t])
    . W_gate / W_up[e] + bias; q: NKI's quantize_mx to e4m3 (groups of 8
    partitions x 4 lanes, per token) in the kernel's layouts: hidden h at
    partition p, H512 tile j, lane l for h = l H/4 + 128 j + p;
    intermediate i at partition p, I512 tile t (of size sz), lane q for
    i = 512 t + q sz/4 + p (gate / up weight column i, down weight quad
    (p, t, h) lane q, gate / up bias [p, gate|up, t, q]); "." the MX
    contraction in fp64."""
    wg, sg, wd, sd, bg, bd = w
    nH, nI = H // 512, math.ceil(I / 512)
    sz = [min(512, I - 512 * t) for t in range(nI)]
    out = np.zeros((T, H))
    for e in range(E):
        rows = np.nonzero(tok_exp[:, e])[0]
        n = len(rows)
        if not n:
            continue
        # hidden h = l * H/4 + j * 128 + p -> [p, (j, token), l]; the kernel quantizes that
        xh = x[rows].reshape(n, 4, nH, 128).transpose(3, 2, 0, 1).reshape(128, nH * n, 4)
        xq = _qmx(xh).reshape(128, nH, n, 4)
        # "pjnl,pgjil->gni" [2, n, I] (np.tensordot: BLAS; np.einsum is NumPy's own loop here)
        gu = np.tensordot(xq, _deq(wg[e], kind, sg[e]), axes=([0, 1, 3], [0, 2, 4])).transpose(1, 0, 2)
        bias = np.zeros((2, I))
        for t in range(nI):
            p = sz[t] // 4
            bias[:, 512 * t:512 * t + sz[t]] = bg[e][:p, :, t, :].transpose(1, 2, 0).reshape(2, sz[t])
        g, u = gu[0] + bias[0], gu[1] + bias[1]
        gcu, gcl, ucu, ucl = clamps
        if gcu is not None or gcl is not None:
            g = np.clip(g, gcl, gcu)
        if ucu is not None or ucl is not None:
            u = np.clip(u, ucl, ucu)
        a = g / (1 + np.exp(-(1.702 if swish else 1.0) * g)) * u   # [n, I]
        # the kernel's [128, nI, token, 4] layout of a, quantized; padded partitions hold zeros
        lay = np.zeros((128, nI, n, 4))
        for t in range(nI):
            p = sz[t] // 4
            lay[:p, t] = a[:, 512 * t:512 * t + sz[t]].reshape(n, 4, p).transpose(2, 0, 1)
        aq = _qmx(lay.reshape(128, nI * n, 4)).reshape(128, nI, n, 4)
        pI = wd.shape[1]
        y = np.tensordot(aq[:pI], _deq(wd[e], kind, sd[e]), axes=([0, 1, 3], [0, 1, 3])) + bd[e]   # ptnl,pthl->nh
        out[rows] += aff[rows, e][:, None] * y
    return out


def _moe_mx(lib, impl, T, H, I, E, B, K, kind, skip_token=True, swish=True, clamps=(7.0, None, 7.0, -7.0),
            uint_weights=False):
    """bwmm_shard_on_block_mx / blockwise_mm_shard_intermediate_mx (core/moe/
    moe_cte) at LNC 2 as test_moe_bwmm_mx_cte.py runs them: bf16 hidden
    states quantized in the kernel to e4m3 quads, MX gate / up weights
    [E, 128, 2, H/512, I] (scales [E, 16, 2, H/512, I]) and down weights
    [E, I/4 or 128, ceil(I/512), H] of `kind` (fp4, e4m3, e5m2), biases,
    gate / up clamps, Swish (x sigmoid(1.702 x)), POST_SCALE affinities,
    routing as nkilib_refs_moe's (the test's generator).  uint_weights: the
    quads passed as uint16 / uint32, as NxD passes them (weight_dtype names
    the format).  The output: [T, H], or for shard_on_block with top-k > 1
    [2, T, H] with the sum in [0] and zeros in [1] (the test's golden).
    Tolerance: the test's maxAllClose, rtol 5e-2, atol 1e-5."""
    u = lib.mod("core.moe.moe_cte.moe_cte_utils")
    ct = lib.mod("core.utils.common_types")
    rng = np.random.default_rng(0)
    tok_exp, t2id, b2e, x, aff, w = _moe_mx_inputs(rng, T, H, I, E, B, K, kind, impl == "shard_on_block",
                                                   skip_token)
    wg, sg, wd, sd, bg, bd = w
    if uint_weights:
        wq = lambda a: a   # noqa: E731
    else:
        wq = lambda a: nki.typed(a, _X4[kind])   # noqa: E731
    bf = lambda a: nki.typed(a, nl.bfloat16)   # noqa: E731
    gcu, gcl, ucu, ucl = clamps
    kw = dict(gate_and_up_proj_bias=bf(bg), down_proj_bias=bf(bd), gate_up_proj_scale=sg, down_proj_scale=sd,
              block_size=B, activation_function=ct.ActFnType.Swish if swish else ct.ActFnType.SiLU,
              skip_dma=u.SkipMode(skip_token, False), compute_dtype=nl.bfloat16, weight_dtype=_X4[kind],
              is_tensor_update_accumulating=K != 1,
              expert_affinities_scaling_mode=ct.ExpertAffinityScaleMode.POST_SCALE,
              gate_clamp_upper_limit=gcu, gate_clamp_lower_limit=gcl,
              up_clamp_lower_limit=ucl, up_clamp_upper_limit=ucu)
    if impl == "shard_on_block":
        fn = lib.mod("core.moe.moe_cte.bwmm_shard_on_block_mx").bwmm_shard_on_block_mx
    else:
        fn = lib.mod("core.moe.moe_cte.bwmm_shard_on_I_mx").blockwise_mm_shard_intermediate_mx
    with _on_trn3():
        got = fn[2](bf(x), bf(aff.reshape(-1, 1)), wq(wg), wq(wd), t2id, b2e.reshape(-1, 1), **kw)
    want = _moe_mx_ref(T, H, I, E, kind, tok_exp, x, aff, w, swish, clamps)
    got = np.asarray(got, np.float32)
    if got.ndim == 3:   # shard_on_block, top-k > 1: [2, T, H], the sum in [0] and zeros in [1]
        want = np.stack([want, np.zeros_like(want)])
        got = got[:, :T]
    else:
        got = got[:T]
    return _close_max(got, want, 5e-2, 1e-5)


MOE_CASES = [
    # (implementation, T, H, I, E, B, top-k, weight kind, skip_token, swish, clamps, uint weights):
    # of the test's sweeps (H 1536 / 1024 and E 8 the smallest values they draw)
    ("shard_on_block", 1024, 1536, 384, 8, 256, 4, "fp4"),
    ("shard_on_block", 1024, 1536, 512, 8, 256, 2, "e4m3"),
    # the same as its uint-weight unit sets pass it (quads as uint32)
    ("shard_on_block", 1024, 1536, 512, 8, 256, 2, "e4m3", True, True, (7.0, None, 7.0, -7.0), True),
    ("shard_on_I", 1024, 1024, 1024, 8, 256, 2, "fp4"),
]


def _moe_name(impl, T, H, I, E, B, K, kind, skip=True, swish=True, clamps=(7.0, None, 7.0, -7.0), uint=False):
    return (f"moe_cte_mx lnc2 {impl} T{T} H{H} I{I} E{E} B{B} k{K} {kind}"
            f"{' skip_token' if skip else ''}{' swish' if swish else ''}{' clamps' if clamps else ''}"
            f"{' uint' if uint else ''}")


def checks(lib):
    return ([(f"quantize_to_mx {P}x{F} {kind} {dt}", lambda c=(P, F, kind, dt): _quantize_to_mx(*c))
             # of the test's sweep: the smallest, two quadrants, the full partition set
             for P, F, kind, dt in ((32, 4, "e4m3", "bf16"), (64, 256, "e5m2", "fp16"),
                                    (128, 512, "e4m3", "bf16"))] +
            [(f"mlp gate_up_proj_mxfp4 lnc2 bs{b} H{h} I{i}", lambda c=(b, h, i): _gate_up(lib, *c))
             for b, h, i in ((4, 3072, 192), (4, 3072, 1536), (256, 3072, 384))] +
            [(f"mlp down_proj_mxfp4 lnc2 bs{b} H{h} I{i}{' ssb' if s else ''}",
              lambda c=(b, h, i, s): _down(lib, *c))
             # the test's sweep (H 3072: 512-column H tiles per program), and ours with H a
             # multiple of 2048, whose 1024-column H tiles give nc_matmul_mx a [BxS, 1024]
             # bfloat16 dst (NKI: moving up to 8192 columns into bfloat16)
             for b, h, i, s in ((4, 3072, 768, True), (4, 3072, 1536, False), (256, 3072, 384, False),
                                (4, 4096, 768, False), (4, 2048, 1536, True))] +
            [(_moe_name(*c), lambda c=c: _moe_mx(lib, *c)) for c in MOE_CASES])
