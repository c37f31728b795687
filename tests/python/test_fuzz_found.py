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
