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
    # LNC 2 sharded on s_prior: fails (Python control flow on nl.program_id(), below)
    (4, 2, 7, 256, 16384, 128, dict(lnc=2, **ROPE)),
]


def checks(lib):
    return [(_name(*c[:6], **c[6]), lambda c=c: _attention_tkg(lib, *c[:6], **c[6])) for c in CASES]
