"""NumPy references for scripts/nki-library-check: the NKI Library's core
kernels (cumsum, RoPE, ...), on parameter sets taken from the library's
test/integration files.  Each reference is written here from what the
library's torch reference computes; nothing of the library is stored."""
import math

import numpy as np

from tpbsim.nki import language as nl


def _close(got, want, rtol, atol):
    """True, or a line saying how far got is from want."""
    got = np.asarray(got, np.float32)
    want = np.asarray(want, np.float32)
    if got.shape != want.shape:
        return f"shape {got.shape}, NumPy {want.shape}"
    if np.allclose(got, want, rtol=rtol, atol=atol):
        return True
    return f"max abs error {np.abs(got - want).max():.3g}"


def _close_max(got, want, rtol, atol):
    """The library's own comparison (test/integration/nkilib/utils/
    comparators.py maxAllClose, mode "max"): |got - want| <= atol + rtol *
    max|want| for every element.  Used where the kernel rounds
    intermediates to a 16-bit dtype the torch reference keeps in fp32."""
    got = np.asarray(got, np.float32)
    want = np.asarray(want, np.float32)
    if got.shape != want.shape:
        return f"shape {got.shape}, NumPy {want.shape}"
    err = np.abs(got - want)
    lim = atol + rtol * np.abs(want).max()
    if np.all(np.isfinite(got)) and err.max() <= lim:
        return True
    i = np.unravel_index(np.argmax(err), err.shape)
    return f"max abs error {err.max():.3g} > {lim:.3g}; worst at {i}: {got[i]:.5g} vs {want[i]:.5g}"


def _cumsum(lib, shape, dtype):
    """cumsum (core/cumsum/cumsum.py): running sum along the last axis,
    accumulated in fp32 (the kernel's tensor_tensor_scan)."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal(shape).astype(np.float32).astype(dtype)
    got = lib.mod("core.cumsum.cumsum").cumsum(x)
    want = np.cumsum(x.astype(np.float32), axis=-1)
    # bf16 output: one rounding of the fp32 running sum
    return _close(got, want.astype(dtype).astype(np.float32), 1e-2, 1e-2) if dtype != np.float32 else \
        _close(got, want, 1e-5, 1e-4)


def _bf16(a):
    """a rounded to bf16 (nearest even), as fp32: what a bf16 tile holds."""
    return np.asarray(a, np.float32).astype(nl.bfloat16).astype(np.float32)


def _rope(lib, d_head, b, heads, s, contiguous, relayout):
    """RoPE (core/embeddings/rope.py) on x [d_head, B, heads, S], cos/sin
    [d_head/2, B, S] in bf16: each pair (re, im) of d_head rotates by
    (cos, sin) of its position.  contiguous: re is the first half of d_head,
    im the second; else they interleave (even, odd).  The kernel keeps each
    product in a bf16 tile before the add/subtract, so the reference rounds
    there too.  Tolerances: the library's test (rtol 2^-7, atol 1e-3)."""
    rng = np.random.default_rng(7)
    x, cos, sin = (rng.standard_normal(sh).astype(np.float32).astype(nl.bfloat16)
                   for sh in ((d_head, b, heads, s), (d_head // 2, b, s), (d_head // 2, b, s)))
    got = lib.mod("core.embeddings.rope").RoPE(x, cos, sin, lnc_shard=True, contiguous_layout=contiguous,
                                               relayout_in_sbuf=relayout)
    xf = x.astype(np.float32)
    c, sn = cos.astype(np.float32)[:, :, None, :], sin.astype(np.float32)[:, :, None, :]
    re_idx, im_idx = (slice(0, d_head // 2), slice(d_head // 2, None)) if contiguous else \
        (slice(0, None, 2), slice(1, None, 2))
    re, im = xf[re_idx], xf[im_idx]
    want = np.empty_like(xf)
    want[re_idx] = _bf16(_bf16(re * c) - _bf16(im * sn))
    want[im_idx] = _bf16(_bf16(im * c) + _bf16(re * sn))
    return _close(got, want, 2.0 ** -7, 1e-3)


def _cascaded_max(lib, b, s, v):
    """cascaded_max (core/max/cascaded_max.py): the max of the last axis
    and its index, [B, S, 1] each (fp32 randn input, as the library's test;
    its tolerance 1e-5, the index exact)."""
    x = np.random.default_rng(42).standard_normal((b, s, v)).astype(np.float32)
    vals, idx = lib.mod("core.max.cascaded_max").cascaded_max(x)
    r = _close(vals, x.max(axis=-1, keepdims=True), 1e-5, 1e-5)
    if r is not True:
        return "max values: " + r
    want = x.argmax(axis=-1)[..., None]
    if np.shape(idx) != want.shape:
        return f"indices shape {np.shape(idx)}, NumPy {want.shape}"
    bad = np.asarray(idx).astype(np.int64) != want
    return True if not bad.any() else f"{int(bad.sum())} of {bad.size} indices differ"


def _depthwise_conv1d(lib, b, c, w, k, stride, pad, dtype):
    """depthwise_conv1d_implicit_gemm (experimental/conv/depthwise_conv1d.py):
    img [B, C, 1, W], filter [C, 1, 1, K], one filter per channel
    (feature_group_count C), padding ((0, 0), (left, right)), stride
    (1, s): out[b, c, 0, q] = sum_k img_padded[b, c, q*s + k] * filt[c, k].
    The kernel accumulates in fp32 PSUM and writes the input dtype, so the
    result is within one rounding to that dtype of the fp32 sum."""
    rng = np.random.default_rng(3)
    img = rng.standard_normal((b, c, 1, w)).astype(np.float32).astype(dtype)
    filt = rng.standard_normal((c, 1, 1, k)).astype(np.float32).astype(dtype)
    got = lib.mod("experimental.conv.depthwise_conv1d").depthwise_conv1d_implicit_gemm(
        img, filt, padding=((0, 0), pad), stride=(1, stride), feature_group_count=c)
    x = np.pad(img[:, :, 0, :].astype(np.float64), ((0, 0), (0, 0), pad))
    q = (x.shape[-1] - k) // stride + 1
    win = np.lib.stride_tricks.sliding_window_view(x, k, axis=-1)[:, :, ::stride][:, :, :q]
    want = np.einsum("bcqk,ck->bcq", win, filt[:, 0, 0, :].astype(np.float64))[:, :, None, :]
    rtol = 1e-5 if dtype == np.float32 else 2.0 ** -7
    return _close(got, want, rtol, 1e-2 if dtype != np.float32 else 1e-4)


def _act(name, z):
    """The library's activation types (torch: silu, exact erf gelu)."""
    if name is None:
        return z
    if name == "SiLU":
        return z / (1.0 + np.exp(-z))
    if name == "GELU":
        return 0.5 * z * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))
    raise ValueError(name)


def _conv1d(lib, b, cin, cout, length, k, stride, pad, dil, bias, act):
    """conv1d (experimental/conv/conv1d.py): x [B, C_in, L], filters
    [K, C_in, C_out], optional bias [C_out], (left, right) zero padding,
    stride, dilation, then the activation: out[b, o, t] =
    act(bias[o] + sum_{k, c} x_pad[b, c, t*stride + k*dil] * f[k, c, o]).
    fp32, the library's tolerance for fp32 (1e-5).  The sum is rounded as
    the kernel's matmuls round it (docs/semantics.md "Matmul"): per
    128-channel C_in tile, one matmul per group of K_REP taps stacked on the
    partitions (K_REP 4 for a tile of up to 32 channels, 2 up to 64, else 1;
    tap-major), each a sequential fp32 sum over its partitions, accumulated
    in fp32 PSUM in that order."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal((b, cin, length)).astype(np.float32)
    f = rng.standard_normal((k, cin, cout)).astype(np.float32)
    bv = rng.standard_normal(cout).astype(np.float32) if bias else None
    ct = lib.mod("core.utils.common_types")
    got = lib.mod("experimental.conv.conv1d").conv1d(
        x, f, bv, stride=stride, padding=pad, dilation=dil,
        activation_fn=getattr(ct.ActFnType, act) if act else None)
    xp = np.pad(x, ((0, 0), (0, 0), pad))
    lout = (xp.shape[-1] - dil * (k - 1) - 1) // stride + 1
    want = None
    for c0 in range(0, cin, 128):
        ct = min(128, cin - c0)
        rep = min(k, 4) if ct <= 32 else min(k, 2) if ct <= 64 else 1
        for k0 in range(0, k, rep):
            prod = np.concatenate([   # [B, taps x channels (tap-major), C_out, L_out], fp32
                xp[:, c0:c0 + ct, kk * dil: kk * dil + (lout - 1) * stride + 1: stride][:, :, None, :] *
                f[kk, c0:c0 + ct][None, :, :, None] for kk in range(k0, min(k, k0 + rep))], axis=1)
            s = np.cumsum(prod, axis=1, dtype=np.float32)[:, -1]   # sequential fp32 sum
            want = s if want is None else (want + s).astype(np.float32)
    if bias:
        want = (want + bv[None, :, None]).astype(np.float32)
    return _close(got, _act(act, want.astype(np.float64)), 1e-5, 1e-5)


def _cross_entropy(lib, n, v, pb, cs, dtype):
    """cross_entropy_forward (experimental/loss/cross_entropy.py): per
    position, lse = log(sum(exp(logits))) and loss = lse - logits[target]
    (the library's randn logits, randint targets).  The kernel runs an
    online log-sum-exp over chunks of cs columns with its state and
    temporaries in `dtype` tiles; the reference follows those steps,
    rounding to dtype where a tile of dtype holds the value (sums of a
    chunk in fp32, left to right).  Tolerance: a bf16 step (2^-7) for bf16,
    1e-5 for fp32."""
    rng = np.random.default_rng(42)
    logits = rng.standard_normal((n, v)).astype(np.float32).astype(dtype)
    targets = rng.integers(0, v, n).astype(np.int32)
    loss, lse = lib.mod("experimental.loss.cross_entropy").cross_entropy_forward(
        logits, targets, positions_per_batch=pb, chunk_size=cs, dtype=dtype)
    rd = (lambda a: _bf16(a)) if dtype != np.float32 else (lambda a: np.asarray(a, np.float32))
    x = logits.astype(np.float32)
    m = np.full(n, -np.inf, np.float32)
    d = np.zeros(n, np.float32)
    with np.errstate(invalid="ignore"):
        for c0 in range(0, v, cs):
            ch = np.full((n, cs), -np.inf, np.float32)
            ch[:, :min(cs, v - c0)] = x[:, c0:c0 + cs]
            m_new = np.maximum(m, ch.max(axis=1))
            corr = rd(np.exp(rd(m - m_new)))
            e = rd(np.exp(rd(ch - m_new[:, None])))
            d = rd(rd(d * corr) + rd(np.cumsum(e, axis=1, dtype=np.float32)[:, -1]))
            m = rd(m_new)
    want_lse = rd(m + rd(np.log(d)))
    want_loss = rd(want_lse - x[np.arange(n), targets])
    tol = (1e-5, 1e-5) if dtype == np.float32 else (2.0 ** -7, 1e-2)
    r = _close(lse, want_lse, *tol)
    return ("lse: " + r) if r is not True else _close(loss, want_loss, *tol)


def _rope_hf(lib, b, qh, kh, s, d, dtype, backward, packed):
    """rope_hf (core/embeddings/rope_hf.py), HuggingFace layout: q [B, Hq,
    S, D], k [B, Hk, S, D], cos/sin [B, S, D] (or packed rope_cache
    [S, 2D]), broadcast over the heads: x*cos + rotate_half(x)*sin
    (rotate_half(x) = [-x2, x1]); backward: x*cos + [x2*sin2, -x1*sin1].
    The kernel writes the q_out / k_out arguments and returns them.  Each
    product and sum is rounded to the dtype as its tiles hold them; the
    library's tolerance is 1e-6."""
    rng = np.random.default_rng(42)
    q = rng.standard_normal((b, qh, s, d)).astype(np.float32).astype(dtype)
    k = rng.standard_normal((b, kh, s, d)).astype(np.float32).astype(dtype)
    if packed:
        cache = rng.standard_normal((s, 2 * d)).astype(np.float32).astype(dtype)
        extra = {"rope_cache": cache}
        cos, sin = cache[None, :, :d], cache[None, :, d:]
    else:
        cos, sin = (rng.standard_normal((b, s, d)).astype(np.float32).astype(dtype) for _ in range(2))
        extra = {"cos": cos, "sin": sin}
    got = lib.mod("core.embeddings.rope_hf").rope_hf(q, k, np.zeros_like(q), np.zeros_like(k),
                                                    backward=backward, **extra)
    rd = (lambda a: _bf16(a)) if dtype != np.float32 else (lambda a: np.asarray(a, np.float32))
    c, sn, h = cos.astype(np.float32)[:, None], sin.astype(np.float32)[:, None], d // 2
    for g, x in zip(got, (q, k)):
        x = x.astype(np.float32)
        xc = rd(x * c)
        want = np.empty_like(xc)
        if not backward:
            want[..., :h] = rd(xc[..., :h] - rd(x[..., h:] * sn[..., :h]))
            want[..., h:] = rd(xc[..., h:] + rd(x[..., :h] * sn[..., h:]))
        else:
            want[..., :h] = rd(xc[..., :h] + rd(x[..., h:] * sn[..., h:]))
            want[..., h:] = rd(xc[..., h:] - rd(x[..., :h] * sn[..., :h]))
        r = _close(g, want, 1e-6, 1e-6)
        if r is not True:
            return r
    return True


def _rmsnorm(x, gamma, eps, hidden_actual):
    """RMSNorm in fp32 (the library's torch reference): x / sqrt(sum(x^2) /
    n + eps) * gamma, n = hidden_actual or the last dim."""
    x = x.astype(np.float64)
    n = hidden_actual or x.shape[-1]
    return x / np.sqrt((x * x).sum(-1, keepdims=True) / n + eps) * gamma.astype(np.float64)


def _tkg_layout(norm, hidden_dim_tp, lnc=1):
    """[B, S, H] -> the tkg kernels' output [128, B*S, H/128]: hidden index
    h = p * H/128 + j (or j * 128 + p with hidden_dim_tp); on two cores
    (the library's LNC2 reference) each half of H laid out so and the two
    concatenated along the last dim."""
    b, s, h = norm.shape
    r = norm.reshape(b * s, h)
    if hidden_dim_tp:
        return r.reshape(b * s, h // 128, 128).transpose(2, 0, 1)
    if lnc == 2:
        halves = [r[:, :h // 2], r[:, h // 2:]]
        return np.concatenate([x.reshape(b * s, 128, h // 256).transpose(1, 0, 2) for x in halves], 2)
    return r.reshape(b * s, 128, h // 128).transpose(1, 0, 2)


def _norm_tkg(lib, which, b, s, h, hidden_actual, hidden_dim_tp, dtype, lnc=1):
    """rmsnorm_tkg / layernorm_tkg (core/subkernels), one core: the
    library's test calls the subkernel as the kernel (its output argument
    aliased, returned); the reference normalises in fp32 and lays the
    result out as [128, B*S, H/128].  Tolerance: the test's (rtol 2e-2,
    atol 1e-5), relative to the largest |value| as the library compares:
    layernorm_tkg keeps x - mean, * gamma, * rsqrt and + beta in the input
    dtype, so a value that cancels to near 0 is off by an fp16 step of the
    operands (against a reference rounding those steps to fp16, 5 of 65536
    values of 1x8x8192 differ, by one step)."""
    from tpbsim import nki
    rng = np.random.default_rng(42)
    x = rng.standard_normal((b, s, h)).astype(dtype)
    gamma = rng.standard_normal((1, h)).astype(dtype)
    out0 = np.zeros((128, b * s, h // 128), dtype)
    if which == "rmsnorm":
        fn = lib.mod("core.subkernels.rmsnorm_tkg").rmsnorm_tkg
        k = nki.jit(fn)
        got = (k[2] if lnc == 2 else k)(x, gamma, out0, hidden_actual=hidden_actual, hidden_dim_tp=hidden_dim_tp)
        want = _rmsnorm(x, gamma, 1e-6, hidden_actual)
    else:
        beta = rng.standard_normal((1, h)).astype(dtype)
        fn = lib.mod("core.subkernels.layernorm_tkg").layernorm_tkg
        k = nki.jit(fn)
        got = (k[2] if lnc == 2 else k)(x, gamma, out0, beta=beta)
        xf = x.astype(np.float64)
        mu = xf.mean(-1, keepdims=True)
        var = ((xf - mu) ** 2).mean(-1, keepdims=True)
        want = (xf - mu) / np.sqrt(var + 1e-6) * gamma.astype(np.float64) + beta.astype(np.float64)
    want = _tkg_layout(want, hidden_dim_tp, lnc).astype(dtype)
    return _close_max(got, want, 2e-2, 1e-5)


def _cross_entropy_bwd(lib, n, v, pb, cs, dtype, reduction, inplace):
    """cross_entropy_backward (experimental/loss/cross_entropy.py): the
    gradient of the loss over the logits, g * (softmax(x) - onehot(target)),
    g = 1/n (mean) or 1 (sum), softmax from the saved lse (here the
    logsumexp rounded to dtype, as the forward kernel returns it).  The
    reference rounds where the kernel's dtype tiles hold a value (x - lse,
    its exp, times g, the subtraction).  inplace: the kernel writes over
    and returns its logits argument."""
    rng = np.random.default_rng(42)
    logits = rng.standard_normal((n, v)).astype(np.float32).astype(dtype)
    targets = rng.integers(0, v, n).astype(np.int32)
    x = logits.astype(np.float64)
    mx = x.max(1, keepdims=True)
    rd = (lambda a: _bf16(a)) if dtype != np.float32 else (lambda a: np.asarray(a, np.float32))
    lse = rd((mx + np.log(np.exp(x - mx).sum(1, keepdims=True)))[:, 0])
    got = lib.mod("experimental.loss.cross_entropy").cross_entropy_backward(
        logits, targets, lse.astype(dtype), reduction=reduction, positions_per_batch=pb, chunk_size=cs,
        dtype=dtype, inplace=inplace)
    g = np.float32(1.0 / n if reduction == "mean" else 1.0)
    xf = logits.astype(np.float32)
    e = rd(np.exp(rd(xf - lse[:, None])))
    onehot = (np.arange(v)[None, :] == targets[:, None]).astype(np.float32)
    want = rd(rd(e * g) - rd(onehot * g))
    tol = (1e-5, 1e-7) if dtype == np.float32 else (2.0 ** -7, 1e-6)
    return _close(got, want, *tol)


def _scipy_circulant():
    """rotational_topk's utils import scipy.linalg.circulant (at trace time,
    for a permutation-matrix constant); scipy is not installed here, so
    when it is missing a module with just that function goes in its place:
    NumPy's C[i, j] = c[(i - j) mod n], scipy's definition (first column
    c).  The kernel's code is unchanged."""
    import sys
    import types
    try:
        import scipy.linalg  # noqa: F401
        return
    except ImportError:
        pass
    sp, la = types.ModuleType("scipy"), types.ModuleType("scipy.linalg")

    def circulant(c):
        c = np.asarray(c).ravel()
        n = len(c)
        return c[(np.arange(n)[:, None] - np.arange(n)[None, :]) % n]
    la.circulant = circulant
    sp.linalg = la
    sys.modules.setdefault("scipy", sp)
    sys.modules.setdefault("scipy.linalg", la)


def _rotational_topk(lib, b, s, v, k, dtype, sort):
    """rotational_topk (core/topk): the k largest of each row of x
    [B*S, V] and their indices, as the library's test drives it
    (create_topk_config, create_rotational_topk_config,
    prepare_rotational_constants; one core, or two with an _Lnc2 lib).  Values: NumPy's sort
    (descending; sorted=False: compared as sets, sorted here); indices:
    each must point at its value in x (the test's rule: ties may pick any)."""
    _scipy_circulant()
    m = lib.mod("core.topk.rotational_topk")
    x = np.random.default_rng(42).standard_normal((b * s, v)).astype(np.float32).astype(dtype)
    tc = m.create_topk_config(inp_shape=(b, s, v), inp_dtype=dtype, k=k, sorted=sort,
                              num_programs=2 if isinstance(lib, _Lnc2) else 1)
    cfg = m.prepare_rotational_constants(m.create_rotational_topk_config(inp_shape=x.shape, topk_config=tc))
    try:
        vals, idx = m.rotational_topk(x, cfg)
    finally:
        m.cleanup_rotational_constants()
    vals = np.asarray(vals, np.float32)
    want = -np.sort(-x.astype(np.float32), axis=1)[:, :k]
    r = _close(vals if sort else -np.sort(-vals, axis=1), want, 0, 0)
    if r is not True:
        return "values: " + r
    at = np.take_along_axis(x.astype(np.float32), np.asarray(idx).astype(np.int64), 1)
    return True if np.array_equal(at, vals) else "indices do not point at their values"


def _router_topk(lib, t, h, e, k, act, bias, pre_norm, norm_prob, hbm_layout, sb_layout):
    """router_topk (core/router_topk), called as its test's wrapper calls it,
    on two cores (kernel[2]: the test's default LNC; its core_barrier names
    cores 0 and 1) (HBM x in layout [H, T] (0) or [T, H] (1), HBM outputs it writes and
    returns): logits = x^T w (+ bias) in bf16; expert_index the k largest
    logits (checked against the kernel's own logits: each index names one
    of the k largest, in order); expert_affinities softmax / sigmoid of all
    logits (pre_norm; norm_prob: of the top k, L1-normalised) or of the
    top k only, scattered to [T, E].  The library's comparison: rtol 2e-2
    of the largest value, inputs uniform in [-0.1, 0.1]."""
    from tpbsim import nki
    m, ct = lib.mod("core.router_topk.router_topk"), lib.mod("core.utils.common_types")
    act_fn = getattr(ct.RouterActFnType, act)
    rng = np.random.default_rng(0)
    xs = (t, h) if hbm_layout == 1 else (h, t)
    x = rng.uniform(-0.1, 0.1, xs).astype(np.float32).astype(nl.bfloat16)
    w = rng.uniform(-0.1, 0.1, (h, e)).astype(np.float32).astype(nl.bfloat16)
    wb = rng.uniform(-0.1, 0.1, (1, e)).astype(np.float32).astype(nl.bfloat16) if bias else None

    def kernel(x, w, w_bias, router_logits, expert_affinities, expert_index):
        m.router_topk(x=x, w=w, w_bias=w_bias, router_logits=router_logits,
                      expert_affinities=expert_affinities, expert_index=expert_index, act_fn=act_fn,
                      k=k, x_hbm_layout=hbm_layout, x_sb_layout=sb_layout, router_pre_norm=pre_norm,
                      norm_topk_prob=norm_prob)
        return router_logits, expert_index, expert_affinities
    logits, idx, aff = nki.jit(kernel)[2](x, w, wb, np.zeros((t, e), nl.bfloat16),
                                       np.zeros((t, e), nl.bfloat16), np.zeros((t, k), np.uint32))
    xf = x.astype(np.float64)
    lg = (xf.T if hbm_layout == 0 else xf) @ w.astype(np.float64)
    if bias:
        lg = lg + wb.astype(np.float64)
    r = _close_max(logits, lg.astype(nl.bfloat16), 2e-2, 1e-5)
    if r is not True:
        return "router_logits: " + r
    gl = np.asarray(logits, np.float32)
    idx = np.asarray(idx).astype(np.int64)
    if not np.array_equal(np.take_along_axis(gl, idx, 1), -np.sort(-gl, axis=1)[:, :k]):
        return "expert_index: not the k largest logits in order"
    sel = np.zeros((t, e), bool)
    np.put_along_axis(sel, idx, True, 1)

    def f(z, axis_mask=None):
        if act == "SIGMOID":
            return 1 / (1 + np.exp(-z))
        zz = np.where(axis_mask, z, -np.inf) if axis_mask is not None else z
        ez = np.exp(zz - zz.max(1, keepdims=True))
        return ez / ez.sum(1, keepdims=True)
    if pre_norm:
        want = f(lg)
        if norm_prob:
            want = np.where(sel, want, 0)
            want = want / want.sum(1, keepdims=True)
    else:
        want = np.where(sel, f(lg, sel) if act == "SOFTMAX" else f(lg), 0)
    r = _close_max(aff, want, 2e-2, 1e-5)
    return True if r is True else "expert_affinities: " + r


def _find_nonzero(lib, t, e, top_k, chunk, dtype, subset):
    """find_nonzero_indices (core/subkernels), on two cores (the test's
    LNC2): per column c of x [T, E] the T-indices of its nonzeros, then -1,
    and their count (the test's sparse input: T * top_k / E ones per
    column, 0.1 for fp32).  subset = (first column, n_cols): the column
    start read at run time from an HBM tensor (.ap(scalar_offset=))."""
    from tpbsim import nki
    rng = np.random.default_rng(42)
    kk = t * top_k // e
    x = rng.permutation(np.concatenate([np.ones(kk * e), np.zeros((t - kk) * e)])).reshape(e, t).T
    x = np.ascontiguousarray(x).astype(dtype)
    if dtype == np.float32:
        x[x > 0] = 0.1
    fn = lib.mod("core.subkernels.find_nonzero_indices").find_nonzero_indices
    if subset:
        c0, n = subset
        idx, cnt = fn[2](x, col_start_id=np.array([c0], np.int32), n_cols=n, chunk_size=chunk)
    else:
        c0, n = 0, e
        idx, cnt = fn[2](x, chunk_size=chunk)
    want_idx = np.full((n, t), -1, np.int64)
    want_cnt = np.zeros(n, np.int64)
    for c in range(n):
        nz = np.nonzero(x[:, c0 + c])[0]
        want_cnt[c] = len(nz)
        want_idx[c, :len(nz)] = nz
    if np.shape(cnt) != want_cnt.shape or not np.array_equal(np.asarray(cnt).astype(np.int64), want_cnt):
        return "nonzero_counts differ"
    bad = np.asarray(idx).astype(np.int64) != want_idx
    return True if not bad.any() else f"{int(bad.sum())} of {bad.size} indices differ"


def _indexed_flatten(lib, t, e, f_len):
    """indexed_flatten (core/subkernels), two cores: row r of x [E, T] in
    blocks of f_len written from block row_offsets[r] of a padded output
    (-1), as the test's first set (offsets T/f_len * r)."""
    x = np.arange(e * t, dtype=np.int32).reshape(e, t)
    ol = ((e * t + 1024 + 127) // 128) * 128
    offs = np.array([t // f_len * r for r in range(e)], np.int32)
    got = lib.mod("core.subkernels.indexed_flatten").indexed_flatten[2](x, f_len, ol, offs)
    want = np.full(ol, -1, np.int64)
    for r in range(e):
        want[offs[r] * f_len:offs[r] * f_len + t] = x[r]
    return _close(got, want, 0, 0)


class _Lnc2:
    """The ported package with every @nki.jit kernel launched on two
    cores (kernel[2], NKI 0.x's LNC launch), as the library's LNC2 tests
    run them; the same references apply."""

    def __init__(self, lib):
        self.lib = lib

    def mod(self, name):
        m = self.lib.mod(name)

        class _Mod:
            def __getattr__(_, a):
                v = getattr(m, a)
                return v[2] if type(v).__name__ == "Kernel" else v
        return _Mod()


def checks(lib):
    l2 = _Lnc2(lib)
    return [
        ("RoPE lnc2 64x1x8x16 contiguous", lambda: _rope(l2, 64, 1, 8, 16, True, False)),
        ("RoPE lnc2 128x2x4x64 contiguous", lambda: _rope(l2, 128, 2, 4, 64, True, False)),
        ("rope_hf lnc2 b1 q32 kv8 s256 d128 bfloat16",
         lambda: _rope_hf(l2, 1, 32, 8, 256, 128, nl.bfloat16, False, False)),
        ("rope_hf lnc2 b1 q32 kv8 s512 d64 float32 rope_cache",
         lambda: _rope_hf(l2, 1, 32, 8, 512, 64, np.float32, False, True)),
        ("depthwise_conv1d lnc2 1x256x512 k64 s1 pad10+10 bfloat16",
         lambda: _depthwise_conv1d(l2, 1, 256, 512, 64, 1, (10, 10), nl.bfloat16)),
        ("depthwise_conv1d lnc2 2x256x512 k64 s2 pad5+5 bfloat16",
         lambda: _depthwise_conv1d(l2, 2, 256, 512, 64, 2, (5, 5), nl.bfloat16))] + _checks_pid(l2) + _checks1(lib)


def _checks_pid(l2):
    """Two-core runs of kernels whose Python control flow depends on
    nl.program_id() (traced per program: docs/python.md "Control flow on
    nl.program_id()")."""
    return [
        ("RoPE lnc2 64x8x8x16 interleaved", lambda: _rope(l2, 64, 8, 8, 16, False, False)),
        ("RoPE lnc2 128x1x8x16 interleaved sbuf-relayout", lambda: _rope(l2, 128, 1, 8, 16, False, True))] + [
        ("cascaded_max lnc2 %dx%dx%d" % a, lambda a=a: _cascaded_max(l2, *a))
        for a in ((1, 1, 3168), (8, 5, 4058), (1, 7, 3999))] + [
        ("rotational_topk lnc2 %dx%dx%d k%d %s%s" % (a[:4] + (np.dtype(a[4]).name, "" if a[5] else " unsorted")),
         lambda a=a: _rotational_topk(l2, *a))
        for a in ((4, 5, 8192, 256, np.float32, True), (8, 1, 4058, 64, np.float32, False),
                  (16, 1, 2048, 8, nl.bfloat16, True))] + [
        ("cross_entropy_forward lnc2 %dx%d pb%d cs%d %s" % (a[:4] + (np.dtype(a[4]).name,)),
         lambda a=a: _cross_entropy(l2, *a))
        for a in ((8, 1000, 4, 512, nl.bfloat16), (16, 3000, 8, 1024, np.float32))] + [
        ("cross_entropy_backward lnc2 %dx%d pb%d cs%d %s %s%s" % (a[:4] + (np.dtype(a[4]).name, a[5],
                                                                      "" if a[6] else " not-inplace")),
         lambda a=a: _cross_entropy_bwd(l2, *a))
        for a in ((8, 1000, 4, 512, nl.bfloat16, "mean", True), (4, 3000, 4, 1024, np.float32, "sum", True))]


def _checks1(lib):
    rope = [(64, 1, 1, 16, True, False), (128, 8, 8, 128, True, False), (64, 8, 8, 16, False, False),
            (128, 1, 8, 16, False, True), (64, 64, 1, 16, True, True)]
    return [("RoPE %dx%dx%dx%d %s%s" % (d, b, h, s, "contiguous" if c else "interleaved",
                                         " sbuf-relayout" if r else ""),
             lambda a=(d, b, h, s, c, r): _rope(lib, *a)) for d, b, h, s, c, r in rope] + [
        ("rope_hf b%d q%d kv%d s%d d%d %s%s%s" % (a[:5] + (np.dtype(a[5]).name, " backward" if a[6] else "",
                                                  " rope_cache" if a[7] else "")),
         lambda a=a: _rope_hf(lib, *a))
        for a in ((1, 32, 8, 256, 128, nl.bfloat16, False, False), (1, 32, 8, 256, 128, np.float32, False, False),
                  (2, 16, 4, 512, 128, nl.bfloat16, False, False), (4, 1, 1, 512, 128, nl.bfloat16, False, True),
                  (1, 32, 8, 512, 64, np.float32, False, True), (1, 32, 8, 256, 128, np.float32, True, False),
                  (1, 4, 2, 128, 64, nl.bfloat16, True, True))] + [
        ("cascaded_max %dx%dx%d" % a, lambda a=a: _cascaded_max(lib, *a))
        for a in ((1, 1, 3168), (8, 5, 4058), (4, 5, 8192), (1, 7, 3999), (1, 127, 3999))] + [
        ("find_nonzero_indices T%d E%d top%d chunk%d %s%s" % (a[:4] + (np.dtype(a[4]).name,
                                                              " cols %d+%d" % a[5] if a[5] else "")),
         lambda a=a: _find_nonzero(lib, *a))
        for a in ((4096, 128, 8, 4096, np.int32, None), (4096, 128, 8, 4096, np.float32, None),
                  (10240, 128, 4, 10240, np.int32, None), (4096, 128, 8, 4096, np.int32, (0, 4)),
                  (10240, 128, 4, 10240, np.float32, (16, 16)), (10240, 128, 4, 10240, np.float32, (120, 8)),
                  (8192, 128, 4, 2048, np.int32, None))] + [
        ("indexed_flatten T4096 E2 f128", lambda: _indexed_flatten(lib, 4096, 2, 128)),
        ("indexed_flatten T4096 E3 f128", lambda: _indexed_flatten(lib, 4096, 3, 128))] + [
        ("router_topk T%d H%d E%d k%d %s%s%s%s x%s sb%d" % (a[:5] + (" bias" if a[5] else "",
                                                        "" if a[6] else " post-norm",
                                                        " norm-topk" if a[7] else "",
                                                        "[H,T]" if a[8] == 0 else "[T,H]", a[9])),
         lambda a=a: _router_topk(lib, *a))
        for a in ((4, 3072, 128, 4, "SOFTMAX", True, True, False, 0, 0),
                  (16, 3072, 128, 4, "SOFTMAX", True, True, False, 1, 1),
                  (4, 3072, 128, 4, "SOFTMAX", False, True, False, 0, 2),
                  (8, 8192, 128, 8, "SIGMOID", True, True, True, 1, 0),
                  (8, 8192, 128, 8, "SOFTMAX", True, False, False, 0, 1),
                  (2, 4096, 128, 8, "SOFTMAX", False, True, False, 1, 2),
                  (2, 5120, 16, 1, "SOFTMAX", False, True, False, 0, 0),
                  (128, 3072, 128, 4, "SOFTMAX", True, True, False, 0, 0))] + [
        ("rotational_topk %dx%dx%d k%d %s%s" % (a[:4] + (np.dtype(a[4]).name, "" if a[5] else " unsorted")),
         lambda a=a: _rotational_topk(lib, *a))
        for a in ((4, 5, 8192, 256, np.float32, True), (8, 5, 8192, 256, np.float32, True),
                  (1, 1, 3168, 256, np.float32, True), (150, 1, 1000, 50, np.float32, True),
                  (1, 1, 16000, 256, np.float32, True), (8, 1, 4058, 64, np.float32, False),
                  (16, 1, 2048, 8, nl.bfloat16, True))] + [
        ("%s_tkg %dx%dx%d%s%s %s" % (a[0], a[1], a[2], a[3], " hidden_actual=%d" % a[4] if a[4] else "",
                                    " hidden_dim_tp" if a[5] else "", np.dtype(a[6]).name),
         lambda a=a: _norm_tkg(lib, *a))
        for a in (("rmsnorm", 1, 1, 8192, None, False, np.float16), ("rmsnorm", 1, 8, 8192, None, False, np.float16),
                  ("rmsnorm", 1, 1, 4096, 3072, False, np.float16), ("rmsnorm", 1, 4, 2048, 1920, False, np.float16),
                  ("rmsnorm", 1, 1, 4096, 3072, True, np.float16),
                  ("layernorm", 1, 1, 8192, None, False, np.float16),
                  ("layernorm", 1, 8, 8192, None, False, np.float16),
                  ("layernorm", 1, 16, 2048, None, False, np.float32))] + [
        ("%s_tkg lnc2 %dx%dx%d%s%s %s" % (a[0], a[1], a[2], a[3], " hidden_actual=%d" % a[4] if a[4] else "",
                                         " hidden_dim_tp" if a[5] else "", np.dtype(a[6]).name),
         lambda a=a: _norm_tkg(lib, *a, lnc=2))
        for a in (("rmsnorm", 1, 1, 5120, None, False, np.float16), ("rmsnorm", 2, 8, 8192, None, False, np.float16),
                  ("rmsnorm", 128, 5, 3072, None, False, np.float16), ("rmsnorm", 2, 8, 3072, 2880, False, np.float16),
                  ("rmsnorm", 2, 1, 5120, None, True, np.float16),
                  ("layernorm", 1, 1, 5120, None, False, np.float16), ("layernorm", 2, 8, 8192, None, False, np.float16),
                  ("layernorm", 128, 5, 3072, None, False, np.float16))] + [
        ("cross_entropy_forward %dx%d pb%d cs%d %s" % (a[:4] + (np.dtype(a[4]).name,)),
         lambda a=a: _cross_entropy(lib, *a))
        for a in ((8, 1000, 4, 512, nl.bfloat16), (64, 4096, 64, 4096, nl.bfloat16),
                  (1, 32128, 1, 32128, nl.bfloat16), (16, 3000, 8, 1024, np.float32),
                  (130, 2048, 64, 2048, nl.bfloat16))] + [
        ("cross_entropy_backward %dx%d pb%d cs%d %s %s%s" % (a[:4] + (np.dtype(a[4]).name, a[5],
                                                                 "" if a[6] else " not-inplace")),
         lambda a=a: _cross_entropy_bwd(lib, *a))
        for a in ((8, 1000, 4, 512, nl.bfloat16, "mean", True), (4, 3000, 4, 1024, np.float32, "sum", True),
                  (130, 2048, 64, 2048, nl.bfloat16, "mean", False),
                  (1, 32128, 1, 16384, nl.bfloat16, "mean", True))] + [
        ("depthwise_conv1d %dx%dx%d k%d s%d pad%d+%d %s" % (b, c, w, k, st, pd[0], pd[1], np.dtype(dt).name),
         lambda a=(b, c, w, k, st, pd, dt): _depthwise_conv1d(lib, *a))
        for b, c, w, k, st, pd, dt in ((1, 16, 512, 64, 1, (0, 0), nl.bfloat16),
                                       (1, 256, 512, 64, 1, (10, 10), nl.bfloat16),
                                       (1, 256, 512, 64, 2, (5, 5), nl.bfloat16),
                                       (1, 16, 512, 3, 2, (0, 0), nl.bfloat16),
                                       (2, 256, 512, 64, 1, (0, 0), nl.bfloat16),
                                       (1, 256, 129, 128, 1, (0, 0), nl.bfloat16),
                                       (1, 256, 512, 64, 1, (0, 0), np.float32),
                                       (1, 512, 5000, 8, 1, (0, 0), nl.bfloat16))] + [
        ("conv1d b%d ci%d co%d l%d k%d s%d p%d+%d d%d%s%s" % (a[:6] + a[6] + (a[7], " bias" if a[8] else "",
                                                               " " + a[9] if a[9] else "")),
         lambda a=a: _conv1d(lib, *a))
        for a in ((1, 16, 32, 20, 3, 1, (0, 0), 1, False, None),
                  (1, 16, 32, 20, 3, 1, (0, 0), 1, True, "SiLU"),
                  (2, 64, 128, 40, 5, 2, (2, 2), 2, True, "GELU"),
                  (2, 96, 192, 80, 7, 2, (3, 3), 1, False, "SiLU"),
                  (1, 256, 256, 200, 3, 1, (1, 1), 1, False, None),
                  (1, 48, 64, 128, 100, 1, (1, 1), 1, True, None),
                  (1, 64, 128, 100, 5, 10, (2, 2), 1, True, "GELU"),
                  (1, 64, 128, 150, 5, 2, (4, 6), 2, False, "SiLU"),
                  (8, 32, 64, 50, 3, 1, (1, 1), 1, False, "SiLU"))] + [("cumsum 1x256 fp32", lambda: _cumsum(lib, (1, 256), np.float32)),
            ("cumsum 128x2048 fp32", lambda: _cumsum(lib, (128, 2048), np.float32)),
            ("cumsum 64x4x1024 bf16", lambda: _cumsum(lib, (64, 4, 1024), nl.bfloat16))]
