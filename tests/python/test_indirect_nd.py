"""NKI's .ap(vector_offset=idx, indirect_dim=0) on a whole N-D HBM tensor:
the index picks rows along dim 0 and the pattern runs inside one row of all
the other dims (the NKI Library's moe_cte scatters into its [T, 2, H]
output with [[2 * H, P], [1, H]] at offset shard * H).  Against NumPy."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(21)
T, S, H, P = 300, 2, 32, 128


@nki.jit
def scatter_half(src_data, indices, half):
    """out[T, 2, H] zero; out[indices[p], half, :] = src_data[p, :]."""
    out = nl.ndarray((T, S, H), dtype=src_data.dtype, buffer=nl.shared_hbm)
    z = nl.ndarray((100, S * H), dtype=src_data.dtype, buffer=nl.sbuf)
    nisa.memset(dst=z, value=0.0)
    for r in range(T // 100):
        nisa.dma_copy(dst=out.reshape((T, S * H))[r * 100:(r + 1) * 100, :], src=z)
    src = nl.ndarray((P, H), dtype=src_data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=src_data)
    idx = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    nisa.dma_copy(dst=out.ap(pattern=[[S * H, P], [1, H]], offset=half * H, vector_offset=idx,
                             indirect_dim=0), src=src)
    return out


@nki.jit
def gather_half(data, indices, half):
    """out[p, :] = data[indices[p], half, :] of a [T, 2, H] tensor."""
    out = nl.ndarray((P, H), dtype=data.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    t = nl.ndarray((P, H), dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=data.ap(pattern=[[S * H, P], [1, H]], offset=half * H,
                                     vector_offset=idx, indirect_dim=0))
    nisa.dma_copy(dst=out, src=t)
    return out


@pytest.mark.parametrize("half", [0, 1])
def test_scatter_rows_of_a_3d_tensor_numpy(half):
    src = RNG.standard_normal((P, H)).astype(np.float32)
    ind = RNG.permutation(T)[:P].astype(np.int32).reshape(P, 1)
    want = np.zeros((T, S, H), np.float32)
    want[ind[:, 0], half, :] = src
    np.testing.assert_array_equal(scatter_half(src, ind, half), want)


@pytest.mark.parametrize("half", [0, 1])
def test_gather_rows_of_a_3d_tensor_numpy(half):
    data = RNG.standard_normal((T, S, H)).astype(np.float32)
    ind = RNG.integers(0, T, P).astype(np.int32).reshape(P, 1)
    np.testing.assert_array_equal(gather_half(data, ind, half), data[ind[:, 0], half, :])


def test_pattern_past_one_row_of_a_3d_tensor_refused():
    """A pattern running past one [2, H] row is refused, naming the pattern."""
    @nki.jit
    def k(data, indices):
        idx = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=indices)
        t = nl.ndarray((P, 2 * H), dtype=data.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=data.ap(pattern=[[S * H, P], [1, 2 * H]], offset=H,
                                         vector_offset=idx, indirect_dim=0))
        return t
    data = np.zeros((T, S, H), np.float32)
    with pytest.raises(tpbsim.NkiError, match=r"not \[\[64, P\], \[1, n\]\] within one row"):
        k(data, np.zeros((P, 1), np.int32))
