"""NumPy references for scripts/nki-library-check: the NKI Library's MX
kernels on NeuronCore-v4 (trn3) quads (and mxfp_load below).

rmsnorm_mx_quantize_tkg (core/subkernels): optional residual add, RMSNorm
and MX quantization of the normalised tokens, at LNC 2 as its test runs it.
A wrapper kernel written here gives it SBUF outputs and copies them out:
each program its own token half of the fp16 output and the other program's
half of the quads and scales (the kernel exchanges them between the cores).
Checked in two stages: the fp16 output against RMSNorm in fp64 (the test's
tolerance), and the quads and scales exactly against NKI's quantize_mx
(scripts/mx_ref.py) of the kernel's own fp16 output, laid out as the test
lays its golden: lane a of quad (i, t) is hidden column a * H/512 + i of
token t, the group scales in the first four partitions of each quadrant.
Nothing of the library is stored."""
import contextlib
import os

import numpy as np

from tpbsim import nki
from tpbsim.nki import isa as nisa
from tpbsim.nki import language as nl

from mx_ref import quantize_ref, scale_rows
from nkilib_refs import _close_max, _rmsnorm, _tkg_layout


@contextlib.contextmanager
def _on_trn3():
    """Run on trn3, as the library's tests do, through the environment:
    NKI's platform_target= jit option would make an NKI 0.x kernel a beta-1
    launch."""
    old = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE")
    os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = "trn3"
    try:
        yield
    finally:
        if old is None:
            del os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"]
        else:
            os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = old


def _wrapper(fn, residual_given):
    def k(inp, gamma, residual=None, hidden_actual=None):
        pid, n = nl.program_id(0), nl.num_programs(0)
        B, S, H = inp.shape
        T, H1 = B * S, H // 128
        out_sb = nl.ndarray((128, T, H1), dtype=inp.dtype, buffer=nl.sbuf)
        q_sb = nl.ndarray((128, H1 // 4, T), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
        s_sb = nl.ndarray((128, H1 // 4, T), dtype=nl.uint8, buffer=nl.sbuf)
        res_out = nl.ndarray((T, H), dtype=inp.dtype, buffer=nl.shared_hbm) if residual_given else None
        fn(input=inp, gamma=gamma, output=out_sb, output_quant=q_sb, output_scale=s_sb,
           residual=residual, output_residual=res_out, hidden_actual=hidden_actual)
        out = nl.ndarray((128, T, H1), dtype=inp.dtype, buffer=nl.shared_hbm)
        q = nl.ndarray((128, H1 // 4, T), dtype=nl.float8_e4m3fn_x4, buffer=nl.shared_hbm)
        sc = nl.ndarray((128, H1 // 4, T), dtype=nl.uint8, buffer=nl.shared_hbm)
        half = T // n
        mine, other = nl.ds(half * pid, half), nl.ds(half * (1 - pid), half)
        nisa.dma_copy(dst=out[:, mine, :], src=out_sb[:, mine, :])
        nisa.dma_copy(dst=q[:, :, other], src=q_sb[:, :, other])
        for quad in range(4):
            nisa.dma_copy(dst=sc[nl.ds(32 * quad, 4), :, other], src=s_sb[nl.ds(32 * quad, 4), :, other])
        return (out, q, sc, res_out) if residual_given else (out, q, sc)
    return k


def _rmsnorm_mx(lib, b, s, h, hidden_actual, residual):
    fn = lib.mod("core.subkernels.rmsnorm_mx_quantize_tkg").rmsnorm_mx_quantize_tkg
    rng = np.random.default_rng(7)
    x = rng.standard_normal((b, s, h)).astype(np.float16)
    gamma = rng.standard_normal((1, h)).astype(np.float16)
    res = rng.standard_normal((b, s, h)).astype(np.float16) if residual else None
    k = nki.jit(_wrapper(fn, residual))
    args = (x, gamma, res) if residual else (x, gamma)
    with _on_trn3():
        got = k[2](*args, hidden_actual=hidden_actual)
    out, q, sc = got[0], got[1], got[2]
    hidden = x.astype(np.float64) + (res.astype(np.float64) if residual else 0.0)
    if residual:
        r = _close_max(got[3], hidden.reshape(b * s, h).astype(np.float16), 1e-2, 1e-3)
        if r is not True:
            return "output_residual: %s" % r
    want = _tkg_layout(_rmsnorm(hidden, gamma, 1e-6, hidden_actual), True).astype(np.float16)
    r = _close_max(out, want, 1e-2, 1e-3)
    if r is not True:
        return "output: %s" % r
    T, H1 = b * s, h // 128
    n512 = H1 // 4
    # the quantize stage on the kernel's own fp16 output
    qin = out.astype(np.float64).reshape(128, T, 4, n512).transpose(0, 3, 1, 2).reshape(128, -1)
    wq, ws = quantize_ref(qin, True)
    wq = wq.reshape(128, n512, T, 4)
    ws = ws.reshape(16, n512, T)
    half = T // 2
    gq = q.view(np.uint8).reshape(128, n512, T, 4)
    for lo, hi in ((0, half), (half, T)):   # each half was copied out by the other program
        if not np.array_equal(gq[:, :, lo:hi], wq[:, :, lo:hi]):
            bad = np.argwhere(gq[:, :, lo:hi] != wq[:, :, lo:hi])[0]
            return "output_quant differs first at %s" % (tuple(bad),)
        if not np.array_equal(sc[scale_rows(np.arange(0, 128, 8))][:, :, lo:hi], ws[:, :, lo:hi]):
            return "output_scale differs"
    return True


def _mxfp_load(lib, K):
    """experimental/mxfp_subkernels mxfp_load_performance_wrapper: a bf16
    [128, K] tensor, per 512-column block swizzled to [128, 128 * 4] (row m,
    column 4k + l of the block to partition k, element 4m + l) and
    quantized; blocks side by side.  Quads and scales exact against NKI's
    quantize_mx (the untouched scale partitions are not compared: the
    kernel leaves them as the SBUF held them)."""
    from mx_ref import bf16
    fn = lib.mod("experimental.mxfp_subkernels.mxfp_load_utils").mxfp_load_performance_wrapper
    rng = np.random.default_rng(42)
    x = bf16(rng.standard_normal((128, K)))
    with _on_trn3():
        q, sc = fn(nki.typed(x.astype(np.float32), nl.bfloat16))
    rows = scale_rows(np.arange(0, 128, 8))
    for blk in range(K // 512):
        sw = x[:, blk * 512:(blk + 1) * 512].reshape(128, 128, 4).transpose(1, 0, 2).reshape(128, 512)
        wq, ws = quantize_ref(sw, True)
        cols = slice(blk * 128, (blk + 1) * 128)
        if not np.array_equal(q[:, cols].view(np.uint8).reshape(128, 128, 4), wq):
            return "K block %d: quads differ" % blk
        if not np.array_equal(sc[rows][:, cols], ws):
            return "K block %d: scales differ" % blk
    return True


CASES = [
    # (B, S, H, hidden_actual, residual): the test's first sets and a residual one
    (32, 1, 512, None, False),
    (64, 1, 512, None, False),
    (16, 3, 3072, 2880, False),
    (256, 1, 1024, None, True),
]


def checks(lib):
    return ([(f"rmsnorm_mx_quantize_tkg lnc2 {b}x{s}x{h}{' ha%d' % ha if ha else ''}"
              f"{' residual' if r else ''}", lambda c=(b, s, h, ha, r): _rmsnorm_mx(lib, *c))
             for b, s, h, ha, r in CASES] +
            [(f"mxfp_load 128x{K}", lambda K=K: _mxfp_load(lib, K)) for K in (1024, 2560, 4096)])
