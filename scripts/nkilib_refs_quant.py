"""NumPy references for scripts/nki-library-check: the NKI Library's
rmsnorm_quant_kernel (core/rmsnorm), whose ROW quantisation packs each
row's fp32 dequantisation scale after the row's fp8 values by viewing it as
4 fp8 values (`.ap(dtype=nl.float8_e4m3)`: docs/python.md "NKI 0.x tensor
views").  Written here from what the library's test reference
(test_rmsnorm_quant.py rmsnorm_quant_ref) computes; nothing of the library
is stored."""
import numpy as np

from tpbsim.nki import language as nl

from nkilib_refs import _Lnc2, _close_max

FP8_RANGE = 240.0   # float8_e4m3 (NKI's IEEE-style e4m3): its largest finite value


def _ref(x, gamma, dequant_in, lower_bound, quant_only, row, eps=1e-6):
    """The reference in fp32: (fp8 values as float32, per-row fp32 dequant
    scale or None).  The fp8 rounding is tpbsim's float8_e4m3 cast (NKI's
    round to nearest even, saturating at 240 where the values are clipped)."""
    x = x.astype(np.float32)
    if quant_only:
        norm = x
    else:
        rms = np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True))
        norm = x * np.reciprocal(rms + eps) * gamma.astype(np.float32)
    if row:
        amax = np.abs(norm).max(axis=-1, keepdims=True)
        if lower_bound > 0:
            amax = np.minimum(amax, lower_bound)
            norm = np.clip(norm, -lower_bound, lower_bound)
        deq = (amax / FP8_RANGE).astype(np.float32)
        q = norm * np.reciprocal(deq)
    else:
        deq = None
        q = np.clip(norm * np.reciprocal(np.float32(dequant_in[0, 0])), -FP8_RANGE, FP8_RANGE)
    return q.astype(np.float32).astype(nl.float8_e4m3).astype(np.float32), deq


def _rmsnorm_quant(lib, b, s, h, row, lower_bound, quant_only, lnc=1):
    mod = (_Lnc2(lib) if lnc == 2 else lib).mod("core.rmsnorm.rmsnorm_quant")
    ct = lib.mod("core.utils.common_types")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((b, s, h)).astype(np.float32).astype(nl.bfloat16)
    # the test's gamma: [H], [1, H] at LNC 2
    gamma = rng.standard_normal((1, h) if lnc == 2 else (h,)).astype(np.float32).astype(nl.bfloat16)
    dequant_in = None
    if not row:   # the test's static scale: one value broadcast to (128, 1)
        dequant_in = np.full((128, 1), rng.normal(loc=0.5, scale=0.1), np.float32)
    kargs = mod.RmsNormQuantKernelArgs(
        lower_bound=lower_bound,
        norm_type=ct.NormType.NO_NORM if quant_only else ct.NormType.RMS_NORM,
        quantization_type=ct.QuantizationType.ROW if row else ct.QuantizationType.STATIC,
        eps=1e-6)
    got = np.asarray(mod.rmsnorm_quant_kernel(x, gamma, kargs, dequant_in))
    want, deq = _ref(x, gamma, dequant_in, lower_bound, quant_only, row)
    if got.shape != (b, s, h + (4 if row else 0)):
        return f"shape {got.shape}"
    if got.dtype.itemsize != 1:
        return f"dtype {got.dtype} (not 1-byte fp8)"
    # the test's tolerances: maxAllClose rtol 0.072 on the fp8 values, 0.007
    # on the scales, which are the last 4 fp8 values of a row read as fp32
    r = _close_max(got[..., :h].astype(np.float32), want, 0.072, 0)
    if r is not True or not row:
        return r
    scales = np.ascontiguousarray(got[..., h:]).view(np.uint8).view(np.float32)
    r = _close_max(scales, deq, 0.007, 0)
    return r if r is not True else True


def checks(lib):
    # the library's test sets are LNC 2 at H 16384 (up to S 32768); here
    # one core at smaller H, the same kinds: ROW with and without the
    # norm and a lower bound, a partial last row tile, STATIC
    sets = [(1, 2, 1024, True, 0.0, False), (1, 2, 1024, True, 0.5, False),
            (1, 2, 1024, True, 0.0, True), (1, 160, 2048, True, 0.0, False),
            (2, 128, 1024, True, 0.5, True), (1, 160, 2048, False, 0.0, False),
            (1, 2, 1024, False, 0.0, True)]
    out = []
    for b, s, h, row, lb, qo in sets:
        name = (f"rmsnorm_quant {b}x{s}x{h} {'row' if row else 'static'}"
                f"{' lower_bound ' + str(lb) if lb else ''}{' quant_only' if qo else ''}")
        out.append((name, lambda b=b, s=s, h=h, row=row, lb=lb, qo=qo:
                    _rmsnorm_quant(lib, b, s, h, row, lb, qo)))
    # two cores (kernel[2], the library's LNC 2 launch: rows split over the cores)
    for b, s, h, row, lb, qo in [(1, 2, 1024, True, 0.0, False), (1, 160, 1024, True, 0.5, False),
                                 (1, 160, 1024, False, 0.0, False)]:
        name = (f"rmsnorm_quant lnc2 {b}x{s}x{h} {'row' if row else 'static'}"
                f"{' lower_bound ' + str(lb) if lb else ''}")
        out.append((name, lambda b=b, s=s, h=h, row=row, lb=lb, qo=qo:
                    _rmsnorm_quant(lib, b, s, h, row, lb, qo, lnc=2)))
    return out
