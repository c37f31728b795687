"""NumPy references for scripts/nki-library-check: the NKI Library's core
kernels (cumsum, RoPE, ...), on parameter sets taken from the library's
test/integration files.  Each reference is written here from what the
library's torch reference computes; nothing of the library is stored."""
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


def checks(lib):
    rope = [(64, 1, 1, 16, True, False), (128, 8, 8, 128, True, False), (64, 8, 8, 16, False, False),
            (128, 1, 8, 16, False, True), (64, 64, 1, 16, True, True)]
    return [("RoPE %dx%dx%dx%d %s%s" % (d, b, h, s, "contiguous" if c else "interleaved",
                                         " sbuf-relayout" if r else ""),
             lambda a=(d, b, h, s, c, r): _rope(lib, *a)) for d, b, h, s, c, r in rope] + [
        ("cascaded_max %dx%dx%d" % a, lambda a=a: _cascaded_max(lib, *a))
        for a in ((1, 1, 3168), (8, 5, 4058), (4, 5, 8192), (1, 7, 3999), (1, 127, 3999))] + [("cumsum 1x256 fp32", lambda: _cumsum(lib, (1, 256), np.float32)),
            ("cumsum 128x2048 fp32", lambda: _cumsum(lib, (128, 2048), np.float32)),
            ("cumsum 64x4x1024 bf16", lambda: _cumsum(lib, (64, 4, 1024), nl.bfloat16))]
