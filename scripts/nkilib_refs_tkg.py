"""NumPy references for scripts/nki-library-check: the NKI Library's
token-generation attention (core/attention/attention_tkg), on parameter sets
taken from the library's test/integration/nkilib/core/attention/
test_attention_tkg.py.  The reference is written here from what the
library's torch reference (attention_tkg_torch.py) computes; nothing of the
library is stored."""
import numpy as np

from tpbsim import nki
from tpbsim.nki import isa as nisa
from tpbsim.nki import language as nl

from nkilib_refs import _close_max as _close   # the library's maxAllClose
from nkilib_refs_attn import _mask_positions, _causal_active

P = 128


def _bf(x):
    return np.asarray(x, np.float32).astype(nl.bfloat16).astype(np.float32)


def _wrapper(attn, cfg_mod, sbm_mod, log_mod):
    """A kernel around attention_tkg as the library's test drives it (in
    our words): an SBUF manager over the SBUF less 16 KiB, outputs in SBUF
    or HBM as cfg says, q / k_active copied into SBUF when qk_in_sb, SBUF
    outputs copied out to HBM at the end."""

    def k(q, k_active, v_active, k_prior, v_prior, mask, inv_freqs, rope_pos_ids, start_pos_ids, sink,
          active_blocks_table, attn_out_shape, k_out_shape, cfg, dtype):
        sbm = sbm_mod.SbufManager(0, nl.tile_size.total_available_sbuf_size - 16 * 1024, log_mod.Logger("SBM"))
        sbm.open_scope()
        if cfg.out_in_sb:
            out = sbm.alloc_stack(attn_out_shape, dtype=dtype, buffer=nl.sbuf)
        else:
            out = nl.ndarray(attn_out_shape, dtype=dtype, buffer=nl.shared_hbm)
        k_out = None
        if cfg.fuse_rope:
            if cfg.k_out_in_sb:
                k_out = sbm.alloc_stack(k_out_shape, dtype=dtype, buffer=nl.sbuf)
            else:
                k_out = nl.ndarray(k_out_shape, dtype=dtype, buffer=nl.shared_hbm)
        qi, ki = q, k_active
        if cfg.qk_in_sb:
            qi = sbm.alloc_stack(q.shape, dtype=q.dtype, buffer=nl.sbuf)
            ki = sbm.alloc_stack(k_active.shape, dtype=k_active.dtype, buffer=nl.sbuf)
            nisa.dma_copy(qi, q)
            nisa.dma_copy(ki, k_active)
        o, ko = attn.attention_tkg(qi, ki, v_active, k_prior, v_prior, mask, out, cfg, sbm, inv_freqs,
                                   rope_pos_ids, start_pos_ids, sink, active_blocks_table, k_out)
        if cfg.out_in_sb:
            oh = nl.ndarray(o.shape, dtype=o.dtype, buffer=nl.shared_hbm, name="attn_out_hbm")
            nisa.dma_copy(dst=oh, src=o)
            o = oh
        if cfg.fuse_rope and cfg.k_out_in_sb:
            kh = nl.ndarray(ko.shape, dtype=ko.dtype, buffer=nl.shared_hbm, name="k_out_hbm")
            nisa.dma_copy(dst=kh, src=ko)
            ko = kh
        sbm.close_scope()
        if cfg.fuse_rope:
            return o, ko
        return o
    return k


def _rope_ref(x, inv_freqs, pos):
    """x [B, N, d, S] rotated by the angles inv_freqs[i] * pos[b, s] (the
    halves of d: x1 * cos - x2 * sin, x2 * cos + x1 * sin)."""
    ang = inv_freqs[:, 0][None, :, None] * pos[:, None, :]          # [B, d/2, S]
    c = np.concatenate([np.cos(ang)] * 2, axis=1)[:, None]
    s = np.concatenate([np.sin(ang)] * 2, axis=1)[:, None]
    h = x.shape[2] // 2
    rot = np.concatenate([-x[:, :, h:], x[:, :, :h]], axis=2)
    return x * c + rot * s


def _tkg_ref(q, ka, va, kp, vp, mask, cfg, inv_freqs, pos, sink, io_bf16):
    """out [B, H, d, S] and k_out [B, 1, d, S] as attention_tkg_torch
    computes them, from q [B, H, d, S], k_active [B, 1, d, S], v_active
    [B, 1, S, d], k_prior [B, 1, d, s_prior], v_prior [B, 1, s_prior, d]
    and the mask [B, H, s_prior, S] (0: hidden).  The exponentials enter
    the PV matmul as the io dtype (bf16: the kernel's exp tile)."""
    d = cfg.d_head
    sa = cfg.s_active
    if cfg.fuse_rope:
        q = _rope_ref(q, inv_freqs, pos) / np.sqrt(d)
        ka = _rope_ref(ka, inv_freqs, pos)
    kp = kp.copy()
    vp = vp.copy()
    kp[..., -sa:] = ka
    vp[..., -sa:, :] = va
    score = np.einsum("bxds,bhdt->bhst", kp, q)                     # [B, H, s_prior, S]
    score = np.where(mask == 0, -np.inf, score)
    if sink is not None:
        sk = np.broadcast_to(sink.reshape(1, -1, 1, 1), score.shape[:2] + (1, sa))
        score = np.concatenate([score, sk], axis=2)
    e = np.exp(score - score.max(axis=2, keepdims=True))
    tot = e.sum(axis=2, keepdims=True)
    if sink is not None:
        e = e[:, :, :-1]
    if io_bf16:
        e = _bf(e)
    out = np.einsum("bhst,bxsd->bhdt", e, vp) / tot
    return out, ka


def _block_table(rng, bs, sp, sa, pos, bl):
    """[bs, sp / bl] distinct cache block ids (of bs * sp / bl blocks),
    those past the blocks a row's pos + sa tokens cover set to 0 (the
    tests' gen_deterministic_active_block_table)."""
    nb = sp // bl
    t = rng.permutation(bs * nb)[:bs * nb].reshape(bs, nb).astype(np.uint32)
    for b in range(bs):
        t[b, -(-(int(pos[b, 0]) + sa) // bl):] = 0
    return t


def _attention_tkg(lib, bs, qh, sa, sp, spf, d, dtype=nl.bfloat16, sink=False, fp8=False, swa=0, lnc=1,
                   block_len=0, **flags):
    m = lib.mod("core.attention.attention_tkg")
    u = lib.mod("core.attention.attention_tkg_utils")
    al = lib.mod("core.utils.allocator")
    lg = lib.mod("core.utils.logging")
    cfg = u.AttnTKGConfig(bs, qh, sa, sp, spf, d, block_len, **flags)
    rng = np.random.default_rng(42)
    kvt = nl.float8_e4m3 if fp8 else dtype

    def draw(shape, dt=kvt):
        # the tests' inputs: uniform [0, 1); fp8 KV uniform [-240, 240)
        x = rng.random(shape).astype(np.float32)
        return (x * 480 - 240 if fp8 else x).astype(dt)
    q = rng.random((d, bs * qh * sa) if cfg.qk_in_sb else (bs, qh, sa, d)).astype(np.float32)
    q = q.astype(dtype).astype(kvt)
    ka = draw((d, bs * sa) if cfg.qk_in_sb else (bs, 1, sa, d))
    va = draw((bs, 1, sa, d))
    pos = ((np.arange(bs) * 3 + (sp // 4 * 3)) % (sp - sa))[:, None]
    table = None
    if block_len:
        # block KV: [bs * sp / block_len, block_len, d] caches and the table of each row's blocks
        kp = draw((bs * sp // block_len, block_len, d))
        vp = draw((bs * sp // block_len, block_len, d))
        table = _block_table(rng, bs, sp, sa, pos, block_len)
    else:
        kp = draw((bs, 1, spf, d) if cfg.tp_k_prior else (bs, 1, d, spf))
        vp = draw((bs, 1, spf, d))
    start = None
    if swa:
        # per-query windows on the circular flat cache (the tests' build_swa_positions)
        rope_pos = (pos + np.arange(sa)[None, :]).astype(np.float32)
        # (block KV's linear table clamps at 0 instead)
        start = np.maximum(rope_pos - swa + 1, 0) if block_len else (rope_pos - swa + 1) % sp
        start = start.astype(np.float32)
    else:
        rope_pos = np.ascontiguousarray(np.broadcast_to(pos, (bs, sa))).astype(np.float32)
    causal = _causal_active(bs, qh, sa)                                 # [S, B, H, S]
    if swa:
        full = _mask_positions(rope_pos.ravel(), start.ravel(), bs, qh, sa, sp, causal)
    else:
        full = _mask_positions(np.repeat(pos[:, 0], sa).astype(np.float32), None, bs, qh, sa, sp, causal)
    # [B, H, S, s_prior]; the kernel's input mask is [s_prior, B, H, S] (or the active part)
    if cfg.use_pos_id:
        mask_in = causal
    elif block_len:
        # block KV's mask in HBM: each 128 * rbl keys of a fold stored key-in-block major
        # (rbl: the kernel's resized block length)
        rbl = u.resize_cache_block_len_for_attention_tkg_kernel(
            sp // block_len, block_len, lnc, P, bs, qh, sa, full_sprior=spf,
            enable_fa_s_prior_tiling=cfg.enable_fa_s_prior_tiling)[0]
        n_sh = lnc if lnc > 1 and u.is_s_prior_sharded(bs, qh, sa, sp, P) else 1
        mk = full.reshape(bs, qh, sa, n_sh, -1, P, rbl).transpose(0, 1, 2, 3, 4, 6, 5)
        mask_in = np.transpose(mk.reshape(bs, qh, sa, sp), (3, 0, 1, 2))
    else:
        mask_in = np.transpose(full, (3, 0, 1, 2))
    mask_in = np.ascontiguousarray(mask_in).astype(np.uint8)
    inv = rng.random((d // 2, 1)).astype(np.float32) if cfg.fuse_rope else None
    rp = rope_pos if (cfg.fuse_rope or cfg.use_pos_id) else None
    sk = None
    if sink:
        sk = rng.random((qh, 1)).astype(np.float32)
        if sink == "heavy":
            # the tests' sink ([0, 1)) is lost beside scores near d / 4 (d / 4 / sqrt(d) with
            # RoPE's scaling): sinks of the scores' size make the sink path count
            sk = (0.75 + 0.5 * sk) * d / 4 / (np.sqrt(d) if cfg.fuse_rope else 1)
            sk = sk.astype(np.float32)
    out_shape = (d, bs * qh * sa) if cfg.out_in_sb else (bs, qh, d, sa)
    kout_shape = (d, bs * sa) if cfg.k_out_in_sb else (bs, 1, d, sa)
    kern = nki.jit(_wrapper(m, u, al, lg))
    if lnc > 1:
        kern = kern[lnc]
    got = kern(q, ka, va, kp, vp, mask_in, inv, rp, start, sk, table, out_shape, kout_shape, cfg, dtype)
    # the reference, in fp32 from the same (rounded) inputs
    f = np.float32
    if cfg.qk_in_sb:
        qr = np.transpose(q.astype(f).reshape(d, bs, qh, sa), (1, 2, 0, 3))
        kar = np.transpose(ka.astype(f).reshape(d, 1, bs, sa), (2, 1, 0, 3))
    else:
        qr = np.transpose(q.astype(f), (0, 1, 3, 2))
        kar = np.transpose(ka.astype(f), (0, 1, 3, 2))
    if block_len:
        # each row's blocks gathered into a flat [bs, 1, sp, d] cache
        kp = kp.astype(f)[table.astype(np.int64)].reshape(bs, 1, sp, d)
        vp = vp.astype(f)[table.astype(np.int64)].reshape(bs, 1, sp, d)
    kpr = kp.astype(f)[:, :, :sp, :].transpose(0, 1, 3, 2) if cfg.tp_k_prior else kp.astype(f)[..., :sp]
    vpr = vp.astype(f)[:, :, :sp, :]
    io_bf16 = dtype == nl.bfloat16
    out, kout = _tkg_ref(qr, kar, va.astype(f), kpr, vpr, np.transpose(full, (0, 1, 3, 2)), cfg, inv,
                         rope_pos, sk, io_bf16)
    if cfg.out_in_sb:
        out = np.transpose(out, (2, 0, 1, 3)).reshape(out_shape)
    if cfg.k_out_in_sb:
        kout = np.transpose(kout, (2, 0, 1, 3)).reshape(kout_shape)
    # the tests compare with the golden cast to the io dtype (maxAllClose,
    # rtol 1e-2, atol 1e-5; 3e-2 both with an fp8 KV cache)
    tol = (3e-2, 3e-2) if fp8 else (1e-2, 1e-5)
    got_o, got_k = (got if cfg.fuse_rope else (got, None))
    r = _close(got_o, _bf(out) if io_bf16 else out, *tol)
    if r is not True or not cfg.fuse_rope:
        return r if r is True else f"out: {r}"
    r = _close(got_k, _bf(kout) if io_bf16 else kout, *tol)
    return r if r is True else f"k_out: {r}"


# the flags in check names (the tests' cfg_repr abbreviations, shortened)
_ABBR = [("tp_k_prior", "tpk"), ("use_pos_id", "pid"), ("fuse_rope", "rope"), ("qk_in_sb", "qsb"),
         ("k_out_in_sb", "kosb"), ("out_in_sb", "osb")]


def _name(bs, qh, sa, sp, spf, d, dtype=nl.bfloat16, sink=False, fp8=False, swa=0, lnc=1, block_len=0,
          **flags):
    f = "".join(" " + a for k, a in _ABBR if flags.get(k))
    f += " no-strided" if flags.get("strided_mm1") is False else ""
    f += " no-fa" if flags.get("enable_fa_s_prior_tiling") is False else ""
    return (f"attention_tkg{' lnc%d' % lnc if lnc > 1 else ''} b{bs} qh{qh} sa{sa} sp{sp}/{spf} d{d}"
            f"{' bl%d' % block_len if block_len else ''} {np.dtype(dtype).name}{' fp8kv' if fp8 else ''}"
            f"{' sink' if sink is True else ' ' + sink + '-sink' if sink else ''}"
            f"{' swa%d' % swa if swa else ''}{f}")


SB = dict(qk_in_sb=True, k_out_in_sb=True, out_in_sb=True)
ROPE = dict(tp_k_prior=True, use_pos_id=True, fuse_rope=True)
BF = nl.bfloat16
# (bs, q_head, s_active, curr_sprior, full_sprior, d_head, options): the
# test's fast sets with the smallest s_prior
BLK = dict(tp_k_prior=True, strided_mm1=False, **SB)
CASES = [
    (1, 1, 1, 128, 256, 64, dict(tp_k_prior=True, **SB)),
    (8, 4, 4, 128, 256, 64, dict(sink=True, tp_k_prior=True, **SB)),
    (32, 8, 1, 128, 256, 64, dict(sink=True, tp_k_prior=True, **SB)),
    (128, 1, 1, 128, 256, 64, dict(sink=True, qk_in_sb=True)),
    (4, 2, 7, 256, 16384, 128, dict(ROPE)),
    (4, 2, 7, 512, 16384, 64, dict(ROPE)),
    (4, 2, 7, 256, 16384, 128, dict(use_pos_id=True, fuse_rope=True)),
    (4, 4, 5, 1024, 10240, 64, dict(sink=True, **ROPE)),
    (8, 8, 1, 1024, 10240, 64, dict(dtype=np.float32, sink=True, **ROPE)),
    (4, 1, 5, 1024, 10240, 128, dict(strided_mm1=False, **ROPE)),
    (4, 8, 7, 128, 10240, 64, dict(sink=True, tp_k_prior=True, **SB)),
    (4, 1, 5, 1024, 10240, 128, dict(fp8=True, strided_mm1=False, qk_in_sb=True)),
    (4, 1, 5, 1024, 10240, 128, dict(swa=128, **ROPE)),
    (4, 1, 5, 1024, 10240, 128, dict(swa=128, strided_mm1=False, **ROPE)),
    # block KV (block_len 16, resized by the kernel)
    (4, 8, 7, 3072, 10240, 64, dict(block_len=16, sink=True, **BLK)),
    (4, 8, 7, 3072, 10240, 64, dict(block_len=16, sink=True, use_pos_id=True, **BLK)),
    (4, 1, 5, 8192, 8192, 128, dict(block_len=16, sink=True, **BLK)),
    (4, 8, 7, 4096, 10240, 64, dict(block_len=16, fp8=True, **BLK)),
    (4, 1, 5, 8192, 8192, 128, dict(block_len=16, sink=True, swa=128, use_pos_id=True, **BLK)),
    (1, 2, 5, 26624, 36896, 128, dict(block_len=32, fp8=True, tp_k_prior=True, strided_mm1=False,
                                      qk_in_sb=True, enable_fa_s_prior_tiling=False)),
    # flash attention (s_prior past 8K: tiles of 8K)
    (4, 1, 5, 10240, 10240, 128, dict(qk_in_sb=True)),
    (4, 1, 5, 10240, 10240, 128, dict(swa=256, **ROPE)),
    (5, 7, 7, 24576, 24576, 64, dict(sink=True, use_pos_id=True, qk_in_sb=True)),
    # more of the fast sets
    (4, 10, 5, 5376, 5376, 64, dict(strided_mm1=False, qk_in_sb=True)),
    (4, 8, 7, 3072, 10240, 64, dict(swa=256, sink=True, tp_k_prior=True, use_pos_id=True, **SB)),
    # sinks the size of the scores (ours: the tests' are lost in the sum)
    (8, 4, 4, 128, 256, 64, dict(sink="heavy", tp_k_prior=True, **SB)),
    (4, 4, 5, 1024, 10240, 64, dict(sink="heavy", **ROPE)),
    (4, 1, 5, 8192, 8192, 128, dict(block_len=16, sink="heavy", **BLK)),
    # LNC 2 sharded on batch (the test runs its fast sets at LNC 1 and 2)
    (8, 4, 4, 128, 256, 64, dict(lnc=2, sink=True, tp_k_prior=True, **SB)),
    (32, 8, 1, 128, 256, 64, dict(lnc=2, sink="heavy", tp_k_prior=True, **SB)),
    (128, 1, 1, 128, 256, 64, dict(lnc=2, sink=True, qk_in_sb=True)),
    (4, 8, 7, 128, 10240, 64, dict(lnc=2, sink=True, tp_k_prior=True, **SB)),
    # LNC 2 sharded on s_prior (Python control flow on nl.program_id(): traced per program)
    (4, 2, 7, 256, 16384, 128, dict(lnc=2, **ROPE)),
]




# ------------------------------------------------------------- attention_bwd

def _bwd_ref(q, k, v, dy, scale, causal, sw, sinks, bmin, bmax, rnd):
    """attention_bwd_torch's gradients (dq, dk, dv[, dsinks]) and the
    forward's o and lse it is given, from q / dy [B, Hq, d, S] and k / v
    [B, Hkv, d, S] in fp32; rnd rounds to the io dtype where the torch
    reference's tensors are that dtype (norm_score, the matmul results,
    the softmax-backward products).  The contractions are np.matmul (BLAS;
    np.einsum of batched operands is NumPy's own loop, 6 s of the 7 s
    check at s2048)."""
    b, hq, d, s = q.shape
    g = hq // k.shape[1]
    ke, ve = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    qs = rnd(q * scale)
    raw = np.matmul(qs.swapaxes(-1, -2), ke)                          # bhqk
    qp, kp = np.arange(s)[:, None], np.arange(s)[None, :]
    hide = np.zeros((s, s), bool)
    if causal:
        hide |= kp > qp
    if sw:
        hide |= kp < qp - sw + 1
    if bmin is not None:
        hide |= (kp < bmin[:, None]) | (kp >= bmax[:, None])
    raw = np.where(hide, -np.inf, raw)
    ns = 0
    if sinks is not None:
        ns = sinks.shape[-1] if sinks.ndim == 3 else 1
        sk = np.broadcast_to(sinks.reshape(b, hq, 1, ns), (b, hq, s, ns))
        raw = np.concatenate([raw, sk], axis=-1)
    m = raw.max(-1, keepdims=True)
    e = np.exp(raw - m)
    tot = e.sum(-1, keepdims=True)
    p = rnd(e / tot)                                                   # norm_score (with sinks)
    lse = (m + np.log(tot))[..., 0].reshape(b, hq, s // P, P).transpose(0, 1, 3, 2)
    o = rnd(np.matmul(ve, p[..., :s].swapaxes(-1, -2)))               # bhdq
    dp = rnd(np.matmul(dy.swapaxes(-1, -2), ve))                       # softmax_dy, bhqk
    if ns:
        dp = np.concatenate([dp, np.zeros_like(p[..., -ns:])], axis=-1)
    red = rnd(rnd(dp * p).sum(-1, keepdims=True))
    dx = rnd(rnd(dp - red) * p)
    dsinks = None
    if ns:
        dsinks = rnd(dx[..., -ns:].sum(axis=2))
        dsinks = dsinks.reshape(sinks.shape)
        dx, p = dx[..., :-ns], p[..., :-ns]
    dv = rnd(np.matmul(dy, p))                                          # bhdk
    dq = rnd(rnd(np.matmul(ke, dx.swapaxes(-1, -2))) * scale)          # bhdq
    dk = rnd(np.matmul(qs, dx))                                         # bhdk
    hk = k.shape[1]
    dk = rnd(dk.reshape(b, hk, g, d, s).sum(2))
    dv = rnd(dv.reshape(b, hk, g, d, s).sum(2))
    return (dq, dk, dv, dsinks), o, lse


def _attention_bwd(lib, b, hq, hkv, s, d, dtype, causal, sw=None, n_sinks=0, seqlens=None, scale=None):
    m = lib.mod("core.attention.attention_bwd")
    rng = np.random.default_rng(0)

    def draw(shape):
        # the tests' inputs: standard normal, in the io dtype
        return rng.standard_normal(shape).astype(np.float32).astype(dtype)
    bmin = bmax = None
    if seqlens is not None:
        # sequence packing: each query sees the keys of its own sequence
        s = sum(seqlens)
        cu = np.concatenate([[0], np.cumsum(seqlens)])
        bmin = np.repeat(cu[:-1], seqlens).astype(np.float32)
        bmax = np.repeat(cu[1:], seqlens).astype(np.float32)
    q, k, v, dy = (draw(sh) for sh in ((b, hq, d, s), (b, hkv, d, s), (b, hkv, d, s), (b, hq, d, s)))
    sinks = None
    if n_sinks:
        sinks = draw((1, hq) if n_sinks == 1 else (1, hq, n_sinks))
        sinks = np.repeat(sinks, b, axis=0)
    f = np.float32
    rnd = (lambda x: _bf(x)) if dtype == nl.bfloat16 else (lambda x: np.asarray(x, f))
    sc = scale or 1.0 / np.sqrt(d)
    want, o, lse = _bwd_ref(q.astype(f), k.astype(f), v.astype(f), dy.astype(f), sc, causal, sw or 0,
                            None if sinks is None else sinks.astype(f), bmin, bmax, rnd)
    kern = m.attention_bwd
    if (b * hkv) % 2 == 0:    # the tests' LNC: 2 when batch * kv heads is even
        kern = kern[2]
    got = kern(q, k, v, o.astype(dtype), dy, lse.astype(f), sinks, bmin, bmax, use_causal_mask=causal,
               mixed_precision=True, softmax_scale=scale, sliding_window=sw)
    for nm, g_, w_ in zip(("dq", "dk", "dv", "dsinks"), got, want):
        r = _close(g_, w_, 2e-2, 1e-5)
        if r is not True:
            return f"{nm}: {r}"
    return True


BWD_CASES = [
    # (b, q heads, kv heads, s, d, dtype, causal, options): the fast sets
    # (softmax_scale 1 when causal, as the test) and sequence packing
    (1, 1, 1, 256, 128, nl.bfloat16, True, dict(seqlens=[128, 128])),
    (1, 1, 1, 512, 64, nl.bfloat16, True, dict(seqlens=[128, 256, 128])),
    (1, 1, 1, 256, 128, np.float32, False, dict(seqlens=[128, 128])),
    (1, 8, 1, 512, 128, nl.bfloat16, True, dict(seqlens=[256, 256])),
    (1, 1, 1, 512, 128, nl.bfloat16, True, dict(seqlens=[256, 256], sw=128)),
    (1, 1, 1, 2048, 128, nl.bfloat16, True, dict(scale=1.0)),
    (1, 1, 1, 2048, 128, nl.bfloat16, False, dict()),
    (1, 1, 1, 2048, 128, np.float32, True, dict(scale=1.0, n_sinks=2)),
    (1, 1, 1, 2048, 128, nl.bfloat16, True, dict(scale=1.0, n_sinks=2)),
    (1, 3, 3, 2048, 128, nl.bfloat16, False, dict(n_sinks=2)),
    (1, 3, 3, 2048, 128, np.float32, True, dict(scale=1.0)),
    (1, 1, 1, 256, 128, nl.bfloat16, True, dict(seqlens=[128, 128], n_sinks=1)),
    # the test's other head sizes and window + sink at S 1024 (ours; its sets are S 4096 - 8192)
    (1, 2, 1, 1024, 96, nl.bfloat16, True, dict()),
    (1, 2, 1, 1024, 256, nl.bfloat16, True, dict()),
    (1, 2, 1, 1024, 256, np.float32, True, dict()),
    (1, 1, 1, 1024, 64, nl.bfloat16, True, dict(sw=128, n_sinks=1)),
    # batch * kv heads even: the test runs these at LNC 2 (attention_bwd.py:1143
    # loops over a range whose bounds depend on the program id: traced per program)
    (2, 1, 1, 2048, 128, nl.bfloat16, True, dict(scale=1.0)),
]


def _bwd_name(b, hq, hkv, s, d, dtype, causal, seqlens=None, sw=None, n_sinks=0, scale=None):
    return (f"attention_bwd b{b} qh{hq} kvh{hkv} s{s} d{d} {np.dtype(dtype).name}"
            f"{' causal' if causal else ''}{' seqs' + '+'.join(map(str, seqlens)) if seqlens else ''}"
            f"{' sw%d' % sw if sw else ''}{' sinks%d' % n_sinks if n_sinks else ''}"
            f"{' scale%g' % scale if scale else ''}")


# ------------------------------------------------------ attention_block_tkg

def _block_module(lib):
    """experimental.transformer.attention_block_tkg, loaded without its
    package's __init__ (which imports the library's torch references,
    and torch is not installed here)."""
    import os
    import sys
    import types
    name = "nkilib.experimental.transformer"
    if name not in sys.modules:
        lib.mod("experimental")
        pkg = types.ModuleType(name)
        pkg.__path__ = [os.path.join(lib.work, "nkilib", "experimental", "transformer")]
        sys.modules[name] = pkg
    return lib.mod("experimental.transformer.attention_block_tkg")


def _rms(x, eps, gamma=None):
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y if gamma is None else y * gamma


def _block_ref(X, W, bqkv, gamma, eps, cos, sin, Kc, Vc, mask, idx, Wo, bo, kt, post_gamma, rnd,
               rope="contig", update=True, table=None, lin_mask=None):
    """attention_block_tkg_torch's outputs (X_out [B*S, H], K and V
    caches updated at idx) for one kv head, contiguous RoPE, no
    quantization: RMSNorm(X) @ W_qkv (+ bias) split into heads; RoPE on
    q and k ([d/2, B, S] tables: (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2
    cos)); the optional post-RoPE per-head RMSNorm; attention over the
    cache (its last S keys replaced by the new ones, q scaled by
    1/sqrt(d)); the output projection (+ bias).  rnd rounds where the
    kernel holds bf16 tiles (the projection and RoPE results, the
    exponentials, the attention output)."""
    b, s, h = X.shape
    d = cos.shape[0] * 2
    n = W.shape[1] // d - 2
    lin_mask = mask if lin_mask is None else lin_mask
    x = X if gamma is None else _rms(X, eps, gamma)
    qkv = x.reshape(b * s, h) @ W
    if bqkv is not None:
        qkv = qkv + bqkv
    qkv = rnd(qkv).reshape(b, s, n + 2, d)
    c = np.transpose(cos, (1, 2, 0))[:, :, None, :]                  # [B, S, 1, d/2]
    sn = np.transpose(sin, (1, 2, 0))[:, :, None, :]
    if rope is None:
        qk = qkv[:, :, :n + 1]
    elif rope == "contig":
        x1, x2 = qkv[..., :d // 2], qkv[..., d // 2:]
        qk = rnd(np.concatenate([x1 * c - x2 * sn, x1 * sn + x2 * c], axis=-1)[:, :, :n + 1])
    else:   # interleaved: pairs (x[2i], x[2i + 1])
        x1, x2 = qkv[..., 0::2], qkv[..., 1::2]
        qk = np.stack([x1 * c - x2 * sn, x1 * sn + x2 * c], axis=-1).reshape(qkv.shape)
        qk = rnd(qk[:, :, :n + 1])
    if post_gamma is not None:
        qk = np.concatenate([rnd(_rms(qk[:, :, :n], eps, post_gamma[0])),
                             rnd(_rms(qk[:, :, n:], eps, post_gamma[1]))], axis=2)
    q, k, v = qk[:, :, :n], qk[:, :, n], qkv[:, :, n + 1]             # [B,S,N,d], [B,S,d], [B,S,d]
    sc = s
    s_ctx = mask.shape[0]
    if table is not None:
        # block KV: each row's blocks gathered into a flat cache, the mask un-shuffled
        Kf = Kc[table.astype(np.int64)].reshape(b, 1, s_ctx, d)
        Vf = Vc[table.astype(np.int64)].reshape(b, 1, s_ctx, d)
        kp = np.transpose(Kf[:, 0], (0, 2, 1))
        Vuse = Vf
    else:
        kp = Kc[:, 0] if kt else np.transpose(Kc[:, 0], (0, 2, 1))    # [B, d, S_max]
        Vuse = Vc
    kp = kp[:, :, :s_ctx].copy()
    vp = Vuse[:, 0, :s_ctx].copy()
    kp[:, :, -sc:] = np.transpose(k, (0, 2, 1))
    vp[:, -sc:] = v
    score = np.einsum("bdk,bsnd->bnks", kp, q / np.sqrt(d))           # [B, N, S_ctx, S]
    score = np.where(np.transpose(lin_mask, (1, 2, 0, 3)) == 0, -np.inf, score)
    e = np.exp(score - score.max(axis=2, keepdims=True))
    att = np.einsum("bnks,bkd->bsnd", rnd(e), vp) / np.transpose(e.sum(axis=2), (0, 2, 1))[..., None]
    out = rnd(att).reshape(b * s, n * d) @ Wo
    if bo is not None:
        out = out + bo
    if not update:   # the new K [d, B, S] and V [B, 1, S, d]
        return out, np.transpose(k, (2, 0, 1)), v[:, None]
    kc, vc = Kc.copy(), Vc.copy()
    if table is not None:   # idx: the slot (block * block_len + offset); 2^32 - 1 skips the row
        bl = Kc.shape[1]
        kf, vf = kc.reshape(-1, d), vc.reshape(-1, d)
        for i in range(b):
            p0 = int(idx[i, 0])
            if p0 != 0xFFFFFFFF:
                kf[p0:p0 + s], vf[p0:p0 + s] = k[i], v[i]
        return out, kf.reshape(-1, bl, d), vf.reshape(-1, bl, d)
    for i in range(b):
        p0 = int(idx[i, 0])
        if kt:
            kc[i, 0, :, p0:p0 + s] = k[i].T
        else:
            kc[i, 0, p0:p0 + s, :] = k[i]
        vc[i, 0, p0:p0 + s, :] = v[i]
    return out, kc, vc


def _attention_block(lib, b, n, d, h, s_ctx, s, kt=True, rms_x=False, bias=False, post_norm=False,
                     rope="contig", update=True, tout=False, block_len=0):
    """attention_block_tkg on the test's generator's distributions (ours:
    NumPy's generator), flat KV cache updated in place, LNC 1."""
    m = _block_module(lib)
    ct = lib.mod("core.utils.common_types")
    rng = np.random.default_rng(0)
    bf = nl.bfloat16

    def uni(shape, lo=-1.0, hi=1.0):
        return rng.uniform(lo, hi, shape).astype(np.float32).astype(bf)

    def gauss(shape, std):
        return rng.normal(0.0, std, shape).astype(np.float32).astype(bf)
    eps = 1e-3
    X = uni((b, s, h))
    gamma = uni((1, h), 0.5, 1.5) if rms_x else None
    W = gauss((h, (n + 2) * d), 1 / np.sqrt(h))
    bqkv = uni((1, (n + 2) * d), -0.1, 0.1) if bias else None
    post = (uni((1, d), 0.5, 1.5), uni((1, d), 0.5, 1.5)) if post_norm else None
    cos, sin = uni((d // 2, b, s)), uni((d // 2, b, s))
    lens = ((np.arange(b) * 3 + (s_ctx // 4 * 3)) % (s_ctx - s))[:, None]
    table, upd_idx = None, lens.astype(np.uint32)
    if block_len:
        Kc = uni((b * s_ctx // block_len, block_len, d))
        Vc = uni((b * s_ctx // block_len, block_len, d))
        table = _block_table(rng, b, s_ctx, s, lens, block_len)
        # the new tokens' slots (physical block * block_len + offset); the last row skipped
        upd_idx = (table[np.arange(b), lens[:, 0] // block_len].astype(np.int64) * block_len
                   + lens[:, 0] % block_len)[:, None]
        if b > 1:
            upd_idx[-1] = 0xFFFFFFFF
        upd_idx = upd_idx.astype(np.uint32)
    else:
        Kc = uni((b, 1, d, s_ctx) if kt else (b, 1, s_ctx, d))
        Vc = uni((b, 1, s_ctx, d))
    mk = _mask_positions(np.repeat(lens[:, 0], s).astype(np.float32), None, b, n, s, s_ctx,
                         _causal_active(b, n, s))                       # [B, N, S, S_ctx]
    lin_mask = np.ascontiguousarray(np.transpose(mk, (3, 0, 1, 2))).astype(np.uint8)
    mask = lin_mask
    if block_len:   # the kernel's block-KV mask layout, as attention_tkg's checks make it
        u = lib.mod("core.attention.attention_tkg_utils")
        rbl = u.resize_cache_block_len_for_attention_tkg_kernel(s_ctx // block_len, block_len, 1, P, b, n, s)[0]
        mk2 = mk.reshape(b, n, s, 1, -1, P, rbl).transpose(0, 1, 2, 3, 4, 6, 5).reshape(b, n, s, s_ctx)
        mask = np.ascontiguousarray(np.transpose(mk2, (3, 0, 1, 2))).astype(np.uint8)
    Wo = gauss((n * d, h), 0.5)
    bo = uni((1, h), -0.1, 0.1) if bias else None
    none = ct.QuantizationType.NONE
    got = m.attention_block_tkg(
        X=X, X_hidden_dim_actual=h, rmsnorm_X_enabled=rms_x, rmsnorm_X_eps=eps, rmsnorm_X_gamma=gamma,
        W_qkv=W, bias_qkv=bqkv, quantization_type_qkv=none, weight_dequant_scale_qkv=None,
        input_dequant_scale_qkv=None, rmsnorm_QK_pre_rope_enabled=False, rmsnorm_QK_pre_rope_eps=eps,
        rmsnorm_QK_pre_rope_W_Q=None, rmsnorm_QK_pre_rope_W_K=None, cos=cos if rope else None,
        sin=sin if rope else None, rope_contiguous_layout=rope != "inter", rmsnorm_QK_post_rope_enabled=post_norm, rmsnorm_QK_post_rope_eps=eps,
        rmsnorm_QK_post_rope_W_Q=post[0] if post else None, rmsnorm_QK_post_rope_W_K=post[1] if post else None,
        K_cache_transposed=kt, active_blocks_table=table, K_cache=Kc, V_cache=Vc, attention_mask=mask,
        sink=None, update_cache=update, kv_cache_update_idx=upd_idx, W_out=Wo, bias_out=bo,
        quantization_type_out=none, weight_dequant_scale_out=None, input_dequant_scale_out=None,
        transposed_out=tout, out_in_sb=False)
    f = np.float32
    want = _block_ref(X.astype(f), W.astype(f), None if bqkv is None else bqkv.astype(f),
                      None if gamma is None else gamma.astype(f), eps, cos.astype(f), sin.astype(f),
                      Kc.astype(f), Vc.astype(f), mask, upd_idx, Wo.astype(f), None if bo is None else bo.astype(f),
                      kt, None if post is None else (post[0].astype(f), post[1].astype(f)), _bf, rope, update,
                      table, lin_mask)
    if tout:   # [128, 1, H / 128, B * S]: h = h1 * (H / 128) + h2 at [h1, 0, h2]
        want = (np.transpose(want[0].reshape(b * s, 1, P, h // P), (2, 1, 3, 0)),) + want[1:]
    for nm, g_, w_ in zip(("X_out", "K_cache", "V_cache"), got, want):
        # the test's comparison: maxAllClose (rtol 0.015, atol 1e-5) and cosine >= 0.99
        g32, w32 = np.asarray(g_, f), _bf(w_)
        r = _close(g32, w32, 0.015, 1e-5)
        if r is not True:
            return f"{nm}: {r}"
        cs = float(np.dot(g32.ravel(), w32.ravel()) / (np.linalg.norm(g32) * np.linalg.norm(w32) + 1e-12))
        if cs < 0.99:
            return f"{nm}: cosine similarity {cs:.4f} < 0.99"
    return True


BLOCK_CASES = [
    # (B, q heads, d, H, S_ctx, S_tkg, options): the test's S_ctx 128 / 256 sets, at LNC 1
    (1, 1, 64, 3072, 128, 1, dict(bias=True)),
    (4, 1, 64, 3072, 128, 1, dict(bias=True)),
    (32, 1, 64, 3072, 128, 1, dict(bias=True, kt=False)),
    # the K^T cache's per-batch column scatter addresses single elements of a
    # 262144-element cache: a table past 65535 rows (DIND rows_hi)
    (32, 1, 64, 3072, 128, 1, dict(bias=True)),
    (1, 1, 128, 7168, 256, 1, dict(rms_x=True, post_norm=True)),
    # variations of the test's options on small caches (ours: S_ctx 128 - 2048)
    (1, 1, 64, 3072, 128, 1, dict(bias=True, update=False)),
    (1, 1, 64, 3072, 128, 1, dict(bias=True, rope=None)),
    (1, 1, 64, 3072, 128, 1, dict(bias=True, rope="inter")),
    (1, 1, 64, 3072, 128, 1, dict(bias=True, tout=True)),
    (4, 8, 64, 3072, 256, 2, dict(bias=True)),
    (2, 2, 64, 3072, 256, 5, dict(kt=False, rms_x=True, tout=True)),
    (4, 1, 128, 8192, 2048, 5, dict(kt=False, block_len=16, update=False)),
    (4, 8, 64, 3072, 1024, 3, dict(kt=False, block_len=16, update=False, bias=True)),
    # block KV with the cache update (run-time slots, the last row skipped: oob_mode.skip)
    (4, 1, 128, 8192, 2048, 5, dict(kt=False, block_len=16)),
    (4, 8, 64, 3072, 1024, 3, dict(kt=False, block_len=16, bias=True)),
]


def _block_name(b, n, d, h, s_ctx, s, kt=True, rms_x=False, bias=False, post_norm=False, rope="contig",
                update=True, tout=False, block_len=0):
    return (f"attention_block_tkg b{b} qh{n} d{d} H{h} ctx{s_ctx} s{s}{' bl%d' % block_len if block_len else ''}"
            f"{' K^T' if kt else ''}"
            f"{' rmsnorm' if rms_x else ''}{' bias' if bias else ''}{' qk-post-norm' if post_norm else ''}"
            f"{' no-rope' if rope is None else ' rope-interleaved' if rope == 'inter' else ''}"
            f"{' no-update' if not update else ''}{' out^T' if tout else ''}")


# ------------------------------------------- find_nonzero_indices_with_count

def _nonzero_with_count(lib, t, frac):
    """experimental/benchmark find_nonzero_indices_with_count: [1, T + 1]
    int32: the nonzero positions in order, -1 after them, the count last
    (its test's golden); the input has frac * T nonzero values in [0, 1)
    at random positions (the test's sparse generator)."""
    m = lib.mod("experimental.benchmark.find_nonzero_indices_with_count")
    rng = np.random.default_rng(0)
    x = np.zeros((1, t), np.float32)
    pos = rng.permutation(t)[:int(t * frac)]
    x[0, pos] = rng.uniform(0.0, 1.0, len(pos)).astype(np.float32) + np.float32(1e-3)
    got = m.find_nonzero_indices_with_count(x)
    nz = np.nonzero(x[0])[0]
    want = np.full((1, t + 1), -1, np.int32)
    want[0, :len(nz)] = nz
    want[0, -1] = len(nz)
    return _close(got, want, 0, 0)


NZ_CASES = [(32, 0.0), (128, 1 / 32), (512, 5 / 32), (2048, 5 / 32), (64, 1.0), (2048, 1.0)]


def _nz_checks(lib):
    return [(f"find_nonzero_indices_with_count T{t} nonzero{f:.3g}", lambda t=t, f=f: _nonzero_with_count(lib, t, f))
            for t, f in NZ_CASES]


def checks(lib):
    return ([(_name(*c[:6], **c[6]), lambda c=c: _attention_tkg(lib, *c[:6], **c[6])) for c in CASES] +
            [(_bwd_name(*c[:7], **c[7]), lambda c=c: _attention_bwd(lib, *c[:7], **c[7]))
             for c in BWD_CASES] +
            [(_block_name(*c[:6], **c[6]), lambda c=c: _attention_block(lib, *c[:6], **c[6]))
             for c in BLOCK_CASES] + _nz_checks(lib))
