"""nisa.dma_compute into a bfloat16 / float16 dst: NKI sums in float32 and
casts the result to dst's dtype once, for any number of sources and any
source dtypes (vllm-neuron's depthwise_conv1d adds two float32 chains
into its bf16 output).  Checked bit for bit against NumPy: the float32
sum in source order, rounded once (docs/python.md, dma_compute)."""
import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(77)
P, F = 128, 64


def _want(parts, scales, dt):
    acc = np.float32(scales[0]) * parts[0].astype(np.float32)
    for a, s in zip(parts[1:], scales[1:]):
        acc = acc + np.float32(s) * a.astype(np.float32)
    return acc.astype(dt).astype(np.float32)


def _kernel(nsrc, dt, in_sbuf, scales):
    @nki.jit
    def k(a):                                  # a [nsrc, P, F] float32
        ts = []
        for i in range(nsrc):
            t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[i])
            ts.append(t)
        out = nl.ndarray((P, F), dtype=dt, buffer=nl.shared_hbm)
        if in_sbuf:
            o = nl.ndarray((P, F), dtype=dt, buffer=nl.sbuf)
            nisa.dma_compute(dst=o, srcs=ts, reduce_op=nl.add, scales=scales)
            nisa.dma_copy(dst=out, src=o)
        else:
            nisa.dma_compute(dst=out, srcs=ts, reduce_op=nl.add, scales=scales)
        return out
    return k


@pytest.mark.parametrize("nsrc", [1, 2, 3, 4])
@pytest.mark.parametrize("dt", [nl.bfloat16, np.float16])
@pytest.mark.parametrize("in_sbuf", [False, True])
def test_float32_sources_into_narrow_dst_numpy(nsrc, dt, in_sbuf):
    """repro_6: float32 sources into an HBM or SBUF bf16 / fp16 dst (two
    sources used to be refused); the values make a second rounding show
    (sums of 1 + tiny parts)."""
    a = RNG.standard_normal((nsrc, P, F)).astype(np.float32)
    a[0] += 1.0
    scales = [1.0, 0.5, 2.0, -1.0][:nsrc]
    got = _kernel(nsrc, dt, in_sbuf, scales)(a)
    np.testing.assert_array_equal(np.asarray(got, np.float32), _want(list(a), scales, dt))


def test_two_sources_one_rounding_numpy():
    """A sum a second rounding changes: (1 + 3 * 2^-10) + 3 * 2^-10 is
    1 + 0.75 ulp of bf16 in float32, so 1 + 2^-7; rounding after the first
    source gives 1 (0.375 ulp), then 1 again."""
    a = np.zeros((2, P, F), np.float32)
    a[0] = 1.0 + 3 * 2.0 ** -10
    a[1] = 3 * 2.0 ** -10
    got = _kernel(2, nl.bfloat16, False, None)(a)
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.full((P, F), 1 + 2.0 ** -7))
    np.testing.assert_array_equal(_want(list(a), [1.0, 1.0], nl.bfloat16),
                                  np.full((P, F), 1 + 2.0 ** -7, np.float32))


def test_mixed_dtypes_and_dst_as_source_numpy():
    """Two sources of which the second is bf16 at scale 1 (taken first, so
    no scratch), and the bf16 dst named as a scaled source (its old value
    read before it is overwritten)."""
    @nki.jit
    def k(x, r):
        t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        res = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=res, src=r)
        out = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[t, res], reduce_op=nl.add, scales=[0.5, 1.0])
        acc = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=acc, src=r)
        nisa.dma_compute(dst=acc, srcs=[t, acc], reduce_op=nl.add, scales=[1.0, 2.0])
        out2 = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out2, src=acc)
        return out, out2
    x = RNG.standard_normal((P, F)).astype(np.float32)
    r = RNG.standard_normal((P, F)).astype(nl.bfloat16)
    out, out2 = k(x, r)
    np.testing.assert_array_equal(np.asarray(out, np.float32),
                                  _want([r, x], [1.0, 0.5], nl.bfloat16))
    np.testing.assert_array_equal(np.asarray(out2, np.float32),
                                  _want([r, x], [2.0, 1.0], nl.bfloat16))


def test_large_dst_through_hbm_scratch_numpy():
    """A dst too large for the SBUF scratch ([2, 8192] float32: 32 KiB a
    partition): the float32 sum goes to HBM, the same values."""
    @nki.jit
    def k(a, b):
        out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[a, b], reduce_op=nl.add)
        return out
    a = RNG.standard_normal((2, 8192)).astype(np.float32)
    b = RNG.standard_normal((2, 8192)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(k(a, b), np.float32),
                                  _want([a, b], [1.0, 1.0], nl.bfloat16))
