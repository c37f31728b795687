"""Findings of scripts/nki-fuzz's GpSimd / DMA-transpose / nc_matmul
families (2026-12, third round), each against an independent NumPy value."""
import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@pytest.mark.parametrize("shape", [(1, 42), (1, 4, 34), (1, 3, 2, 55)])
def test_dma_transpose_of_a_one_partition_sbuf_tile(shape):
    # NKI's permutations (1, 0), (2, 1, 0), (3, 1, 2, 0): a 1-partition SBUF
    # source was refused ("dim 0 of an access ... must step over partitions")
    axes = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}[len(shape)]
    oshape = tuple(shape[a] for a in axes)

    @nki.jit
    def k(a):
        x = nl.load(a)
        t = nl.ndarray(oshape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_transpose(dst=t, src=x)
        o = nl.ndarray(oshape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(o, t)
        return o

    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 1.5 - 7
    np.testing.assert_array_equal(k(a), np.transpose(a, axes))


@pytest.mark.parametrize("op,negate", [(nl.minimum, False), (nl.maximum, False), (nl.add, False),
                                       (nl.add, True), (nl.bitwise_or, False)])
def test_tensor_reduce_over_one_int32_element_goes_through_fp32(op, negate):
    # NKI: an arithmetic reduction casts to float32 and casts the result to
    # dst's dtype; a reduction over one element was an exact int32 copy
    # (741198599 stayed 741198599; fp32 holds 741198592).  Bitvec ops treat
    # the elements as bit patterns: exact.
    @nki.jit
    def k(a):
        x = nl.load(a)
        t = nl.ndarray((a.shape[0],), dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=t, op=op, data=x[:, 1:2], axis=(1,), negate=negate)
        o = nl.ndarray((a.shape[0],), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(o, t)
        return o

    a = np.array([[5, 741198599, -3], [0, -1514221400, 2], [1, 16777217, 1]], np.int32)
    col = a[:, 1].astype(np.int64)
    if op == nl.bitwise_or:
        want = col
    else:
        want = np.float32(col).astype(np.float64) * (-1 if negate else 1)
    np.testing.assert_array_equal(k(a).astype(np.int64), want.astype(np.int64))
