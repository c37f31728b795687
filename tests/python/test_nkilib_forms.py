"""Forms the NKI Library's kernels (scripts/nki-library-check,
scripts/nkilib_refs.py) need, each checked against NumPy here, independent
of the library."""
import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(5)


def test_cross_quadrant_copy_and_tensor_tensor_numpy():
    """RoPE's moves between partition quadrants/halves: a tensor_copy of
    partitions h..2h to 0..h, and a tensor_tensor whose inputs sit at 0..h
    and whose dst starts at h (h = 32: cross-quadrant, 64: cross-half)."""
    for h in (32, 64):
        @nki.jit
        def k(x):
            t = nl.ndarray((2 * h, 16), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x)
            lo = nl.ndarray((h, 16), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=lo, src=t[h:, :])
            o = nl.ndarray((2 * h, 16), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=o[0:h, :], src=lo)
            nisa.tensor_tensor(dst=o[h:, :], data1=t[0:h, :], data2=lo, op=nl.subtract)
            out = nl.ndarray((2 * h, 16), dtype=x.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=o)
            return out
        x = RNG.standard_normal((2 * h, 16)).astype(np.float32)
        np.testing.assert_array_equal(k(x), np.concatenate([x[h:], x[:h] - x[h:]]))


def test_tensor_tensor_inputs_on_other_partitions_refused():
    """The two inputs of tensor_tensor must start on the same partition
    (only dst may move): a clear error naming both starts."""
    @nki.jit
    def k(x):
        t = nl.ndarray((64, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        o = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=o, data1=t[0:32, :], data2=t[32:64, :], op=nl.add)
        out = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=o)
        return out
    with pytest.raises(Exception, match="in0 starts at partition 0 and in1 at partition 32"):
        k(np.zeros((64, 16), np.float32))


def test_ap_dtype_same_as_tensor_numpy():
    """.ap(pattern, dtype=<the tensor's own dtype>) (nkilib's TensorView
    passes it always) is the plain pattern; another dtype is refused."""
    @nki.jit
    def k(x):
        t = nl.ndarray((64, 8), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.ap([[16, 64], [2, 8]], offset=1, dtype=x.dtype))
        out = nl.ndarray((64, 8), dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    x = RNG.standard_normal((64, 16)).astype(np.float32)
    np.testing.assert_array_equal(k(x), x[:, 1::2])

    @nki.jit
    def bad(x):
        t = nl.ndarray((64, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.ap([[16, 64], [1, 16]], dtype=nl.int32))
        return t
    with pytest.raises(NkiError, match=r"\.ap\(dtype=int32\) on '.*' \(float32\): reinterpreting"):
        bad(x)
