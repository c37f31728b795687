"""NumPy references for scripts/nki-library-check: the NKI Library's moe_cte
(core/moe/moe_cte), blockwise MoE for context encoding, launched at LNC 2
as its tests launch it (`moe_cte[2]`).  The inputs follow the library's test
generators (test_moe_cte_common.py: a router choosing top-k experts per
token, tokens laid out in blocks of B per expert, the last expert padded
to N blocks, position -> token id with T for an empty slot), re-written
here; the reference is the blockwise MoE those tests compute in fp32:
out[t] = sum over t's experts e of affinity[t, e] * (act(x W_gate[e] +
b_gate) * (x W_up[e] + b_up)) W_down[e] + b_down[e] (POST_SCALE).
Nothing of the library is stored."""
import math

import numpy as np

from tpbsim.nki import language as nl

from nkilib_refs import _close_max


def _inputs(T, E, B, K, block_parallel, skip_token=False):
    """(token_experts [T, E] 0/1, token_position_to_id [N*B], block_to_expert
    [N]); an empty slot holds T, or -1 when the kernel skips token DMAs."""
    N = math.ceil((T * K - (E - 1)) / B) + E - 1
    if block_parallel:   # shard_on_block: blocks in pairs, one per core
        N = 2 * math.ceil(N / 2)
    np.random.seed(0)
    router = np.zeros((T, K))
    for i in range(T):
        router[i] = np.random.choice(range(E), K, replace=False)
    tok_exp = np.zeros((T, E))
    for i in range(K):
        tok_exp += router[:, i:i + 1] == np.arange(E)[None]
    per = np.ceil(tok_exp.sum(0) / B).astype(np.int32)
    per[E - 1] += N - per.sum()
    b2e = np.arange(E).repeat(per).astype(np.int32)
    pos = np.cumsum(tok_exp, axis=0)
    pos[:, 1:] += (np.cumsum(per) * B)[:-1]
    pos = np.where(tok_exp, pos, 0).astype(np.int32)
    t2id = np.full((N * B + 1,), -1 if skip_token else T)
    t2id[pos] = np.arange(T)[:, None]
    return tok_exp, t2id[1:].astype(np.int32), b2e


def _moe_cte(lib, impl, T, H, I, E, B, K, bias=False, skip_token=False, swish=False,
             clamps=(None, None, None, None)):
    """clamps: (gate upper, gate lower, up upper, up lower) limits or None;
    swish: NKI's ActFnType.Swish, x * sigmoid(1.702 x) (the tests'
    gelu_apprx_sigmoid), else SiLU; skip_token: the kernel skips the DMAs of
    empty slots (-1), hidden states and affinities without the zero row."""
    m = lib.mod("core.moe.moe_cte.moe_cte")
    u = lib.mod("core.moe.moe_cte.moe_cte_utils")
    ct = lib.mod("core.utils.common_types")
    dt = nl.bfloat16
    tok_exp, t2id, b2e = _inputs(T, E, B, K, impl == "shard_on_block", skip_token)
    np.random.seed(0)
    if skip_token:
        aff = (np.random.random_sample([T, E]) * tok_exp).astype(dt)
        x = np.random.random_sample([T, H]).astype(dt)
    else:
        aff = np.random.random_sample([T + 1, E]).astype(dt)
        aff[:T] = aff[:T] * tok_exp
        aff[T] = 0
        x = np.random.random_sample([T + 1, H]).astype(dt)
        x[T] = 0
    ip = math.ceil(I / 16) * 16
    w_down = np.random.uniform(-0.1, 0.1, size=[E, ip, H]).astype(dt)
    w_gu = np.random.uniform(-0.1, 0.1, size=[E, H, 2, I]).astype(dt)
    kw = {}
    if bias:
        kw["down_proj_bias"] = np.random.uniform(-1.632, 1.4375, size=[E, H]).astype(dt)
        kw["gate_and_up_proj_bias"] = np.random.uniform(-1, 1, size=[E, 2, I]).astype(dt)
    kind = getattr(m.MoECTEImplementation, impl)
    spec = (m.MoECTESpec(implementation=kind, shard_on_block=m.ShardOnBlockConfig())
            if impl == "shard_on_block" else
            m.MoECTESpec(implementation=kind, shard_on_I=m.ShardOnIConfig()))
    gcu, gcl, ucu, ucl = clamps
    for name, v in (("gate_clamp_upper_limit", gcu), ("gate_clamp_lower_limit", gcl),
                    ("up_clamp_upper_limit", ucu), ("up_clamp_lower_limit", ucl)):
        if v is not None:
            kw[name] = v
    act = ct.ActFnType.Swish if swish else ct.ActFnType.SiLU
    got = m.moe_cte[2](x, aff.reshape(-1, 1), w_gu, w_down, t2id, b2e.reshape(-1, 1), B, spec,
                       activation_function=act, skip_dma=u.SkipMode(skip_token, False),
                       compute_dtype=dt, is_tensor_update_accumulating=K != 1,
                       expert_affinities_scaling_mode=ct.ExpertAffinityScaleMode.POST_SCALE, **kw)
    f = lambda a: np.asarray(a, np.float32)   # noqa: E731
    want = np.zeros((T + 1, H), np.float32)
    for e in range(E):
        rows = np.nonzero(tok_exp[:, e])[0]
        xe = f(x[rows])
        g = xe @ f(w_gu[e, :, 0, :])
        up = xe @ f(w_gu[e, :, 1, :])
        y_bias = 0
        if bias:
            g = g + f(kw["gate_and_up_proj_bias"][e, 0])
            up = up + f(kw["gate_and_up_proj_bias"][e, 1])
            y_bias = f(kw["down_proj_bias"][e])
        if gcu is not None or gcl is not None:
            g = np.clip(g, gcl, gcu)
        if ucu is not None or ucl is not None:
            up = np.clip(up, ucl, ucu)
        a = g / (1 + np.exp(-(1.702 if swish else 1.0) * g)) * up
        want[rows] += f(aff[rows, e])[:, None] * (a @ f(w_down[e, :I, :]) + y_bias)
    got = f(got)[:T]
    want = want[:T]
    if got.ndim == 3:   # shard_on_block with top-k > 1: [T, 2, H], the sum in slot 0 (the
        wide = np.zeros(got.shape, np.float32)   # test's golden), slot 1 zeros
        wide[:, 0] = want
        want = wide
    # the test's tolerance: rtol 2e-2 of the largest value (maxAllClose), atol 1e-5
    return _close_max(got, want, 2e-2, 1e-5)


CASES = [
    # (implementation, T, H, I, E, B, top-k, bias): ours, small; then the test's shard_on_I set
    ("shard_on_i", 512, 512, 256, 2, 256, 1, False),
    ("shard_on_i", 512, 512, 256, 4, 256, 2, False),
    ("shard_on_i", 1024, 1024, 512, 4, 256, 2, True),
    ("shard_on_i", 1024, 3072, 2048, 8, 512, 4, True),
    ("shard_on_block", 512, 512, 256, 2, 256, 1, False),
    ("shard_on_block", 1024, 1024, 512, 4, 256, 2, True),
    # the test's shard_on_block set: skipped token DMAs, Swish, gate / up clamps
    ("shard_on_block", 1024, 3072, 384, 8, 512, 4, True, True, True, (7.0, None, 8.0, -9.0)),
]


def _name(impl, T, H, I, E, B, K, bias, skip=False, swish=False, clamps=None):
    return (f"moe_cte lnc2 {impl} T{T} H{H} I{I} E{E} B{B} k{K}{' bias' if bias else ''}"
            f"{' skip_token' if skip else ''}{' swish' if swish else ''}{' clamps' if clamps else ''}")


def checks(lib):
    return [(_name(*c), lambda c=c: _moe_cte(lib, *c)) for c in CASES]
