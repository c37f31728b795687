"""NumPy references for scripts/nki-library-check: the NKI Library's MLP and
MoE kernels (core/mlp, core/moe, core/moe_block), on parameter sets taken
from the library's test/integration files.  Each reference is written here
from what the library's torch / NumPy golden computes; nothing of the
library is stored.

core/mlp/mlp.py (the `mlp` entry) does not parse at the library's HEAD (an
IndentationError in its docstring), so the checks call the TKG / CTE
implementations (core/mlp/mlp_tkg, core/mlp/mlp_cte) the way `mlp` does:
from a kernel of ours that builds the library's MLPParameters, validates
them, allocates the outputs and passes the same SBUF manager `mlp` makes."""
import numpy as np

from tpbsim import nki
from tpbsim.nki import language as nl



def _maxclose(got, want, rtol, atol):
    """The library's comparison (its tests' maxAllClose, "max" mode): every
    |got - want| <= atol + rtol * max|want|.  True, or how far it is."""
    got = np.asarray(got, np.float32)
    want = np.asarray(want, np.float32)
    if got.shape != want.shape:
        return f"shape {got.shape}, NumPy {want.shape}"
    err = np.abs(got - want).max()
    if np.all(np.isfinite(got)) and err <= atol + rtol * np.abs(want).max():
        return True
    return f"max abs error {err:.3g} (max |NumPy| {np.abs(want).max():.3g})"


def _bf16(x):
    return np.asarray(x, np.float32).astype(nl.bfloat16)


def _f32(x):
    return np.asarray(x, np.float32)


def _silu(x):
    return 0.5 * x * (1.0 + np.tanh(0.5 * x))   # x * sigmoid(x), without overflow


def _rmsnorm(x, gamma, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma


def _layernorm(x, gamma, beta, eps):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps) * gamma
    return y + beta if beta is not None else y


def _mlp_kernel(lib, mode):
    """A kernel calling core/mlp's `mode` implementation ("tkg" / "cte") as
    the library's `mlp` entry does (mlp.py at commit 0759719, the last that
    parses, plus HEAD's SBUF manager for TKG)."""
    P = lib.mod("core.mlp.mlp_parameters")
    ct = lib.mod("core.utils.common_types")
    alloc = lib.mod("core.utils.allocator")
    logging = lib.mod("core.utils.logging")

    @nki.jit
    def mlp_kernel(hidden, gate_w, up_w, down_w, gamma=None, gate_b=None, up_b=None, down_b=None,
                   norm_b=None, fused_add=None, store_add=False, norm="NO_NORM",
                   gate_col=True, down_col=True, down_opt=False, skip_gate=False, eps=1e-6,
                   quant="NONE", gate_w_scale=None, up_w_scale=None, down_w_scale=None,
                   gate_up_in_scale=None, down_in_scale=None):
        params = P.MLPParameters(
            hidden_tensor=hidden, gate_proj_weights_tensor=gate_w, up_proj_weights_tensor=up_w,
            down_proj_weights_tensor=down_w, normalization_weights_tensor=gamma,
            gate_proj_bias_tensor=gate_b, up_proj_bias_tensor=up_b, down_proj_bias_tensor=down_b,
            normalization_bias_tensor=norm_b, fused_add_tensor=fused_add,
            store_fused_add_result=store_add, activation_fn=ct.ActFnType.SiLU,
            normalization_type=getattr(ct.NormType, norm),
            quantization_type=getattr(ct.QuantizationType, quant), gate_w_scale=gate_w_scale,
            up_w_scale=up_w_scale, down_w_scale=down_w_scale, gate_up_in_scale=gate_up_in_scale,
            down_in_scale=down_in_scale,
            output_dtype=nl.bfloat16, store_output_in_sbuf=False, eps=eps, skip_gate_proj=skip_gate,
            use_tkg_gate_up_proj_column_tiling=gate_col, use_tkg_down_proj_column_tiling=down_col,
            use_tkg_down_proj_optimized_layout=down_opt)
        P.validate_mlp_arguments(params)
        shape = (params.batch_size, params.sequence_len, params.hidden_size)
        out = nl.ndarray(shape, dtype=params.output_dtype, buffer=nl.shared_hbm, name="output_tensor_hbm")
        add_out = None
        if P.mlpp_store_fused_add(params):
            add_out = nl.ndarray(shape, dtype=params.output_dtype, buffer=nl.shared_hbm,
                                 name="output_stored_add_tensor_hbm")
        if mode == "tkg":
            sbm = alloc.SbufManager(0, 200 * 1024, logging.Logger("mlp"))
            sbm.set_name_prefix("mlp_")
            res = lib.mod("core.mlp.mlp_tkg.mlp_tkg").mlp_tkg(params, out, add_out, sbm=sbm)
        else:
            lib.mod("core.mlp.mlp_cte.mlp_cte").mlp_cte(params, out, add_out)
            res = [out, add_out] if add_out is not None else [out]
        return tuple(res) if len(res) > 1 else res[0]

    return mlp_kernel


def _mlp_ref(ins, norm, skip_gate, down_opt, eps, lnc=1):
    """The library's golden (norm_mlp_ref: float32 from the bf16 inputs, the
    output rounded to bf16).  Returns (out, sum)."""
    h = _f32(ins["hidden"])
    if ins.get("fused_add") is not None:
        h = h + _f32(ins["fused_add"])
    s = h
    if norm == "RMS_NORM":
        h = _rmsnorm(h, _f32(ins["gamma"]), eps)
    elif norm == "LAYER_NORM":
        nb = ins.get("norm_b")
        h = _layernorm(h, _f32(ins["gamma"]), None if nb is None else _f32(nb), eps)
    def proj(x, w):
        y = x @ _f32(ins[w])
        sc = ins.get(w + "_scale")
        return y if sc is None else y * _f32(sc)[0]   # (128, N) rows alike, or (128, 1)
    up = proj(h, "up_w")
    if ins.get("up_b") is not None:
        up = up + _f32(ins["up_b"])
    if skip_gate:
        mult = _silu(up)
    else:
        gate = proj(h, "gate_w")
        if ins.get("gate_b") is not None:
            gate = gate + _f32(ins["gate_b"])
        mult = _silu(gate) * up
    down = _f32(ins["down_w"])
    if down_opt:   # the optimised layout back to [I, H] (the test's inverse)
        I, H = down.shape
        down = down.reshape(I, lnc, H // 128 // lnc, 128).transpose(0, 1, 3, 2).reshape(I, H)
    sc = ins.get("down_w_scale")
    out = mult @ down if sc is None else (mult @ down) * _f32(sc)[0]
    if ins.get("down_b") is not None:
        out = out + _f32(ins["down_b"])
    return out, s


def _mlp(lib, mode, B, S, H, I, norm="NO_NORM", fused=False, store=False, bias=False,
         norm_bias=False, gate_col=True, down_col=True, down_opt=False, skip_gate=False,
         quant="NONE"):
    """One MLP check: inputs as the library's build_fused_norm_mlp makes
    them (bf16, Gaussian; gamma uniform in [-0.1, 0.1]), compared as its
    tests compare (relative 2e-2 of the largest value, absolute 1e-5)."""
    rng = np.random.default_rng(42)

    def g(*shape):
        return _bf16(rng.standard_normal(shape))
    ins = {"hidden": g(B, S, H), "gate_w": g(H, I), "up_w": g(H, I), "down_w": g(I, H)}
    if fused:
        ins["fused_add"] = g(B, S, H)
    if norm != "NO_NORM":
        ins["gamma"] = _bf16(rng.uniform(-0.1, 0.1, (1, H)))
        if norm_bias:
            ins["norm_b"] = g(1, H)
    if bias:
        ins.update(gate_b=g(1, I), up_b=g(1, I), down_b=g(1, H))
    q = {}
    if quant == "ROW":   # fp8 weights, a per-column fp32 scale (the test's rows alike)
        for w, n in (("gate_w", I), ("up_w", I), ("down_w", H)):
            ins[w] = ins[w].astype(np.float32).astype(nl.float8_e4m3)
            ins[w + "_scale"] = np.repeat(rng.normal(size=(1, n)) * 0.001, 128, 0).astype(np.float32)
            q[w + "_scale"] = ins[w + "_scale"]
    elif quant == "STATIC":   # fp8 weights, one fp32 scale each (the test's (128, 1) alike)
        for w in ("gate_w", "up_w", "down_w"):
            ins[w] = ins[w].astype(np.float32).astype(nl.float8_e4m3)
            ins[w + "_scale"] = np.full((128, 1), rng.normal() * 0.5, np.float32)
            q[w + "_scale"] = ins[w + "_scale"]
        # input scales: given as the kernel requires; TKG leaves the input unquantised
        q.update(gate_up_in_scale=np.full((128, 1), rng.random() * 0.01, np.float32),
                 down_in_scale=np.full((128, 1), rng.random() * 0.01, np.float32))
    k = _mlp_kernel(lib, mode)
    got = k(ins["hidden"], ins["gate_w"], ins["up_w"], ins["down_w"], gamma=ins.get("gamma"),
            gate_b=ins.get("gate_b"), up_b=ins.get("up_b"), down_b=ins.get("down_b"),
            norm_b=ins.get("norm_b"), fused_add=ins.get("fused_add"), store_add=store, norm=norm,
            gate_col=gate_col, down_col=down_col, down_opt=down_opt, skip_gate=skip_gate,
            quant=quant, **q)
    want, want_sum = _mlp_ref(ins, norm, skip_gate, down_opt, 1e-6)
    outs = got if isinstance(got, tuple) else (got,)
    res = _maxclose(outs[0], _f32(_bf16(want)).reshape(B, S, H), 2e-2, 1e-5)
    if res is not True or not (fused and store):
        return res
    r2 = _maxclose(outs[1], _f32(_bf16(want_sum)).reshape(B, S, H), 2e-2, 1e-5)
    return True if r2 is True else "fused-add result: " + r2


# (name, mode, B, S, H, I, options): the library's test_mlp_tkg.py sets with
# vnc 1 and small H, and its feature configurations on the small-H shape
_MLP = [
    ("mlp_tkg 1x1x256x448 bf16", "tkg", 1, 1, 256, 448, {}),
    ("mlp_tkg 1x1x256x448 rmsnorm fused-add stored bias", "tkg", 1, 1, 256, 448,
     dict(norm="RMS_NORM", fused=True, store=True, bias=True)),
    ("mlp_tkg 1x1x256x448 layernorm fused-add stored bias", "tkg", 1, 1, 256, 448,
     dict(norm="LAYER_NORM", fused=True, store=True, bias=True, norm_bias=True)),
    ("mlp_tkg 1x1x256x448 no column tiling", "tkg", 1, 1, 256, 448,
     dict(gate_col=False, down_col=False)),
    ("mlp_tkg 4x1x256x448 rmsnorm fused-add bias optimized down layout", "tkg", 4, 1, 256, 448,
     dict(norm="RMS_NORM", fused=True, store=True, bias=True, gate_col=False, down_col=False,
          down_opt=True)),
    ("mlp_tkg 4x1x256x448 skip gate", "tkg", 4, 1, 256, 448, dict(skip_gate=True)),
    ("mlp_tkg 1x1x2048x512 rmsnorm", "tkg", 1, 1, 2048, 512, dict(norm="RMS_NORM")),
    ("mlp_tkg 3x8x1024x832 layernorm", "tkg", 3, 8, 1024, 832, dict(norm="LAYER_NORM")),
    # test_mlp_tkg.py's fp8 (float8_e4m3 weights) vnc-1 sets, and the small-H shape
    ("mlp_tkg 1x1x256x448 fp8 row", "tkg", 1, 1, 256, 448, dict(quant="ROW")),
    ("mlp_tkg 1x1x16384x896 fp8 row", "tkg", 1, 1, 16384, 896, dict(quant="ROW")),
    ("mlp_tkg 4x7x16384x896 fp8 row rmsnorm", "tkg", 4, 7, 16384, 896,
     dict(quant="ROW", norm="RMS_NORM")),
    ("mlp_tkg 4x1x8192x1024 fp8 row rmsnorm optimized down layout", "tkg", 4, 1, 8192, 1024,
     dict(quant="ROW", norm="RMS_NORM", gate_col=False, down_col=False, down_opt=True)),
    ("mlp_tkg 1x1x256x448 fp8 static", "tkg", 1, 1, 256, 448, dict(quant="STATIC")),
    ("mlp_tkg 1x5x16384x896 fp8 static", "tkg", 1, 5, 16384, 896, dict(quant="STATIC")),
    # test_mlp_cte.py's vnc-1 sets with H 1024
    ("mlp_cte 1x512x1024x448 rmsnorm fused-add", "cte", 1, 512, 1024, 448,
     dict(norm="RMS_NORM", fused=True)),
    ("mlp_cte 1x768x1024x896 rmsnorm fused-add", "cte", 1, 768, 1024, 896,
     dict(norm="RMS_NORM", fused=True)),
    ("mlp_cte 1x1024x1024x448 bf16", "cte", 1, 1024, 1024, 448, {}),
]




def _moe_kernel(lib):
    """core/moe/moe_tkg called from a kernel of ours (the library's tests
    give it to their harness as the kernel entry; it is not @nki.jit)."""
    m = lib.mod("core.moe.moe_tkg.moe_tkg")

    @nki.jit
    def moe_kernel(x, gate_up_w, down_w, aff, idx, rank, all_expert=True):
        return m.moe_tkg(x, gate_up_w, down_w, aff, idx, all_expert, rank_id=rank,
                         expert_affinities_scaling_mode=m.ExpertAffinityScaleMode.POST_SCALE)
    return moe_kernel


def _moe_ref(x, gate_up_w, down_w, aff, idx, all_expert):
    """moe_tkg_torch_ref (SiLU, POST_SCALE, no bias or clamp): each chosen
    expert's MLP in float32, cast to the io dtype, scaled by its affinity
    and summed in the io dtype, as the torch reference's tensors are."""
    dt = x.dtype
    T, H = x.shape
    out = np.zeros((T, H), dt)
    xf = _f32(x)

    def expert(e, rows):
        g = xf[rows] @ _f32(gate_up_w[e, :, 0, :])
        u = xf[rows] @ _f32(gate_up_w[e, :, 1, :])
        return ((_silu(g) * u) @ _f32(down_w[e])).astype(dt)
    if all_expert:
        for e in range(gate_up_w.shape[0]):
            if np.any(_f32(aff[:, e]) != 0):
                out = (out + (aff[:, e:e + 1] * expert(e, slice(None))).astype(dt)).astype(dt)
    else:
        for t in range(T):
            for e in idx[t]:
                out[t:t + 1] = (out[t:t + 1] + (aff[t, e] * expert(e, slice(t, t + 1))).astype(dt)).astype(dt)
    return out


def _moe(lib, T, H, I, E, K, all_expert, dtype=np.float16):
    """moe_tkg on inputs like the library's build_moe_tkg: top-K experts
    per token with normalised random affinities at their columns, rank 0;
    weights scaled by 1/sqrt(fan-in) to keep fp16 finite."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((T, H)).astype(dtype)
    gate_up_w = (rng.standard_normal((E, H, 2, I)) / np.sqrt(H)).astype(dtype)
    down_w = (rng.standard_normal((E, I, H)) / np.sqrt(I)).astype(dtype)
    idx = np.stack([rng.choice(E, size=K, replace=False) for _ in range(T)]).astype(np.int32)
    w = rng.random((T, K))
    w = w / w.sum(1, keepdims=True)
    aff = np.zeros((T, E), dtype)
    for t in range(T):
        aff[t, idx[t]] = w[t]
    got = _moe_kernel(lib)(x, gate_up_w, down_w, aff, idx, np.zeros((1, 1), np.int32),
                           all_expert=all_expert)
    return _maxclose(got, _moe_ref(x, gate_up_w, down_w, aff, idx, all_expert), 2e-2, 1e-5)


# (name, T, H, I, E, K, all experts): test_moe_tkg.py's sets at vnc 1
_MOE = [
    ("moe_tkg all-expert T4 H3072 I64 E4 fp16", 4, 3072, 64, 4, 4, True),
    ("moe_tkg all-expert T4 H3072 I192 E4 fp16", 4, 3072, 192, 4, 4, True),
    ("moe_tkg all-expert T128 H256 I128 E2 fp16", 128, 256, 128, 2, 2, True),
    ("moe_tkg selective T2 H512 I128 E2 K1 fp16", 2, 512, 128, 2, 1, False),
]



def _moe_block(lib, B, S, H, I, E, K, all_expert, dtype=np.float16):
    """moe_block_tkg (core/moe_block) on two cores (kernel[2]: it requires
    LNC 2), as its torch reference composes it: RMSNorm (float32, cast to
    the io dtype) -> router logits x @ w -> softmax over all experts, top K
    -> moe_tkg (SiLU, POST_SCALE; all-expert mode with rank 0 and the
    unselected experts masked).  The top K are taken from the kernel's own
    router logits (checked first against NumPy), so a near tie cannot
    make the check pick other experts."""
    m = lib.mod("core.moe_block.moe_block_tkg")
    ct = lib.mod("core.utils.common_types")
    rng = np.random.default_rng(1)
    T = B * S
    x = rng.standard_normal((B, S, H)).astype(dtype)
    gamma = rng.uniform(0.5, 1.5, (1, H)).astype(dtype)
    w = (rng.standard_normal((H, E)) * 0.5 / np.sqrt(H)).astype(dtype)   # softmax spread out
    gate_up_w = (rng.standard_normal((E, H, 2, I)) / np.sqrt(H)).astype(dtype)
    down_w = (rng.standard_normal((E, I, H)) / np.sqrt(I)).astype(dtype)
    kw = dict(top_k=K, router_act_fn=ct.RouterActFnType.SOFTMAX, router_pre_norm=True,
              expert_affinities_scaling_mode=ct.ExpertAffinityScaleMode.POST_SCALE,
              router_mm_dtype=nl.float16 if dtype == np.float16 else nl.bfloat16,
              is_all_expert=all_expert)
    if all_expert:
        kw["rank_id"] = np.zeros((1, 1), np.int32)
    out, logits = m.moe_block_tkg[2](x, gamma, w, gate_up_w, down_w, **kw)
    xf = _f32(x).reshape(T, H)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + 1e-6) * _f32(gamma)).astype(dtype)
    want_logits = _f32(xn) @ _f32(w)
    r = _maxclose(logits, want_logits.astype(dtype), 2e-2, 1e-5)
    if r is not True:
        return "router logits: " + r
    lg = _f32(logits).reshape(T, E)
    idx = np.argsort(-lg, axis=1, kind="stable")[:, :K].astype(np.int32)
    srt = np.sort(lg, axis=1)[:, ::-1]
    if K < E and np.any(srt[:, K - 1] == srt[:, K]):
        return "a tie at the top-K boundary of the kernel's logits (choose another seed)"
    ex = np.exp(want_logits - want_logits.max(1, keepdims=True))
    soft = (ex / ex.sum(1, keepdims=True)).astype(dtype)
    aff = np.zeros((T, E), dtype)
    for t in range(T):
        aff[t, idx[t]] = soft[t, idx[t]]
    want = _moe_ref(xn, gate_up_w, down_w, aff, idx, all_expert)
    return _maxclose(np.asarray(out).reshape(T, H), want, 2e-2, 1e-5)


# (name, B, S, H, I, E, K, all experts): test_moe_block_tkg.py's shapes (H
# 3072, I 192 / 384) with 8 experts instead of its 128
_MOE_BLOCK = [
    ("moe_block_tkg selective 1x1 H3072 I192 E8 K4 fp16", 1, 1, 3072, 192, 8, 4, False),
    ("moe_block_tkg all-expert 1x4 H3072 I384 E8 K4 fp16", 1, 4, 3072, 384, 8, 4, True),
    # T > 1 selective: router_topk's shard_on_tokens branches on the program id
    ("moe_block_tkg selective 1x4 H3072 I192 E8 K4 fp16", 1, 4, 3072, 192, 8, 4, False),
    ("moe_block_tkg selective 2x2 H3072 I192 E8 K4 fp16", 2, 2, 3072, 192, 8, 4, False),
]


def checks(lib):
    return ([(name, (lambda m=m, a=(B, S, H, I), o=o: _mlp(lib, m, *a, **o)))
             for name, m, B, S, H, I, o in _MLP] +
            [(name, (lambda a=a: _moe(lib, *a))) for name, *a in _MOE] +
            [(name, (lambda a=a: _moe_block(lib, *a))) for name, *a in _MOE_BLOCK])
