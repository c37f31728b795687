"""Gathers and scatters (.ap(vector_offset=, indirect_dim=0)) the NKI
Library's MX MoE kernels write, against NumPy:

- moe_cte_mx_utils (PE mode) gathers rows of hidden_states.reshape((T * 4,
  H // 512, 128)) of a 2-D [T, H] tensor: the index steps by the
  reshape's row (H / 4), not the tensor's (H), and the rows' [1, 3, 128]
  land in a 4-D pattern of a tile (equal element counts, C order);
- bwmm_shard_on_block_mx gathers the gate / up scales [E, 16, 2, n, I]
  through their (E * 16, 2, n, I) reshape into a [P, 2, n, I] tile slice
  (rows one run of 2 n I against a 4-D destination, or n_sharded < n:
  several runs per row);
- bwmm_shard_on_I_mx gathers a half of every I of those rows (2 n runs of
  I / 2 per index: one DMA per run).

The references index the NumPy arrays directly."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(586)
P = 128


# ---- moe_cte_mx_utils: hidden_states.reshape((T * 4, H // 512, 128)) ----

T, H, NB = 64, 1024, 2          # tokens, hidden, index columns (B // 32)
Q, NH = 4, H // 512             # the 4H fold, 512-wide H tiles


def _gather_4h(dst4):
    """out[p, b * NH * 128:(b + 1) * NH * 128] = row indices[p, b] of the
    [T * 4, H / 4] reshape, as moe_cte_mx_utils' PE-mode load writes it
    (dst4: into the 4-D pattern of the block tile the kernel writes, else
    into a [P, NH * 128] tile, the same element count in one run)."""
    @nki.jit
    def k(hidden_states, indices):
        idx = nl.ndarray((P, NB), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=indices)
        block = nl.ndarray((P, NB * NH * 128), dtype=hidden_states.dtype, buffer=nl.sbuf)
        view = hidden_states.reshape((T * Q, NH, 128))
        for b in range(NB):
            src = view.ap(pattern=[[NH * 128, P], [1, 1], [128, NH], [1, 128]], offset=0,
                          vector_offset=idx.ap([[NB, P], [1, 1]], offset=b), indirect_dim=0)
            if dst4:
                nisa.dma_copy(src=src, dst=block.ap(
                    pattern=[[NB * NH * 128, P], [NH * 128, 1], [128, NH], [1, 128]],
                    offset=b * NH * 128))
            else:
                t = nl.ndarray((P, NH * 128), dtype=hidden_states.dtype, buffer=nl.sbuf)
                nisa.dma_copy(src=src, dst=t)
                nisa.tensor_copy(dst=block[:, b * NH * 128:(b + 1) * NH * 128], src=t)
        out = nl.ndarray((P, NB * NH * 128), dtype=hidden_states.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=block)
        return out
    return k


@pytest.mark.parametrize("dst4", [False, True], ids=["tile", "4d-dst"])
@pytest.mark.parametrize("high", [T, T * Q], ids=["rows-below-T", "all-4T-rows"])
def test_gather_rows_of_a_3d_reshape_of_a_2d_tensor_numpy(high, dst4):
    """The index steps by the reshape's row, H / 4: by H, indices below T
    would read other rows silently, and the others would leave the
    tensor."""
    hs = RNG.standard_normal((T, H)).astype(np.float32)
    ind = RNG.integers(0, high, (P, NB)).astype(np.int32)
    want = np.concatenate([hs.reshape(T * Q, NH, 128)[ind[:, b]].reshape(P, NH * 128)
                           for b in range(NB)], axis=1)
    np.testing.assert_array_equal(_gather_4h(dst4)(hs, ind), want)


def test_gather_rows_of_a_slice_of_a_reshape_numpy():
    """A slice of the reshape keeps its rows: row idx[p] of [T * 4, H / 4],
    columns 128:256."""
    @nki.jit
    def k(hidden_states, indices):
        idx = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=indices)
        t = nl.ndarray((P, 128), dtype=hidden_states.dtype, buffer=nl.sbuf)
        part = hidden_states.reshape((T * Q, H // Q))[:, 128:256]
        nisa.dma_copy(dst=t, src=part.ap(pattern=[[H // Q, P], [1, 128]], offset=0,
                                         vector_offset=idx, indirect_dim=0))
        out = nl.ndarray((P, 128), dtype=hidden_states.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    hs = RNG.standard_normal((T, H)).astype(np.float32)
    ind = RNG.integers(0, T * Q, (P, 1)).astype(np.int32)
    np.testing.assert_array_equal(k(hs, ind), hs.reshape(T * Q, H // Q)[ind[:, 0], 128:256])


# ---- the gate / up scales [E, 16, 2, n, I] through their (E * 16, 2, n, I) reshape ----

E, G, N, I = 3, 16, 3, 48


def _scale_gather(n_loaded, lo, width):
    """bwmm_shard_on_{block,I}_mx's scale gather: dst[p, g, j, :width] =
    scale[idx[p] // 16, idx[p] % 16, g, j, lo:lo + width] for j < n_loaded;
    the rest of dst (and the rows of skipped indices) zero."""
    @nki.jit
    def k(scale, indices):
        idx = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=indices)
        view = scale.reshape((E * G, 2, N, I))
        sb = nl.ndarray((P, 2, N, I), dtype=scale.dtype, buffer=nl.sbuf)
        nisa.memset(dst=sb, value=0)
        nisa.dma_copy(src=view.ap(pattern=[[2 * N * I, P], [N * I, 2], [I, n_loaded], [1, width]],
                                  offset=lo, vector_offset=idx, indirect_dim=0),
                      dst=sb[:P, :2, :n_loaded, :width], oob_mode=nisa.oob_mode.skip)
        out = nl.ndarray((P, 2, N, I), dtype=scale.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=sb)
        return out
    return k


def _scale_inputs():
    scale = RNG.integers(0, 256, (E, G, 2, N, I)).astype(np.uint8)
    ind = RNG.integers(0, E * G, (P, 1)).astype(np.int32)
    ind[RNG.random(P) < 0.25] = -1      # skipped, as the kernel's -1 padding
    return scale, ind


def _scale_want(scale, ind, n_loaded, lo, width):
    want = np.zeros((P, 2, N, I), np.uint8)
    ok = ind[:, 0] >= 0
    rows = scale.reshape(E * G, 2, N, I)[ind[ok, 0]]
    want[ok, :, :n_loaded, :width] = rows[:, :, :n_loaded, lo:lo + width]
    return want


def test_gather_scale_rows_one_run_into_a_4d_tile_numpy():
    """bwmm_shard_on_block_mx (all n tiles): each row one run of 2 n I
    elements against dst [P, 2, n, I]."""
    scale, ind = _scale_inputs()
    np.testing.assert_array_equal(_scale_gather(N, 0, I)(scale, ind),
                                  _scale_want(scale, ind, N, 0, I))


def test_gather_scale_rows_sharded_tiles_numpy():
    """bwmm_shard_on_block_mx with n_sharded < n: two runs per row."""
    scale, ind = _scale_inputs()
    np.testing.assert_array_equal(_scale_gather(2, 0, I)(scale, ind),
                                  _scale_want(scale, ind, 2, 0, I))


@pytest.mark.parametrize("shard", [0, 1])
def test_gather_strided_half_of_each_row_numpy(shard):
    """bwmm_shard_on_I_mx: I / 2 of every I, at offset shard * I / 2 (2 n
    runs per index, one DMA each)."""
    scale, ind = _scale_inputs()
    np.testing.assert_array_equal(_scale_gather(N, shard * I // 2, I // 2)(scale, ind),
                                  _scale_want(scale, ind, N, shard * I // 2, I // 2))


def test_scatter_strided_half_of_each_row_numpy():
    """The same runs written: out[idx[p], :, :, lo:lo + I / 2] = src[p]
    (E * 16 partitions, a permutation of the rows)."""
    lo, ps = I // 2, E * G

    @nki.jit
    def k(src_data, indices):
        out = nl.ndarray((E * G, 2, N, I), dtype=src_data.dtype, buffer=nl.shared_hbm)
        z = nl.ndarray((E * G, 2 * N * I), dtype=src_data.dtype, buffer=nl.sbuf)
        nisa.memset(dst=z, value=0.0)
        nisa.dma_copy(dst=out.reshape((E * G, 2 * N * I)), src=z)
        idx = nl.ndarray((ps, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=indices)
        t = nl.ndarray((ps, 2, N, I // 2), dtype=src_data.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=src_data)
        nisa.dma_copy(dst=out.ap(pattern=[[2 * N * I, ps], [N * I, 2], [I, N], [1, I // 2]],
                                 offset=lo, vector_offset=idx, indirect_dim=0), src=t)
        return out
    src = RNG.standard_normal((ps, 2, N, I // 2)).astype(np.float32)
    ind = RNG.permutation(ps).astype(np.int32).reshape(ps, 1)
    want = np.zeros((E * G, 2, N, I), np.float32)
    want[ind[:, 0], :, :, lo:] = src
    np.testing.assert_array_equal(k(src, ind), want)


def test_gather_of_another_element_count_refused():
    """Gathered rows of 2 x 3 x 24 elements against a [P, 2, 3, 48] tile."""
    @nki.jit
    def k(scale, indices):
        idx = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=indices)
        sb = nl.ndarray((P, 2, N, I), dtype=scale.dtype, buffer=nl.sbuf)
        nisa.dma_copy(src=scale.reshape((E * G, 2, N, I)).ap(
            pattern=[[2 * N * I, P], [N * I, 2], [I, N], [1, I // 2]], offset=0,
            vector_offset=idx, indirect_dim=0), dst=sb)
        return sb
    scale, ind = _scale_inputs()
    with pytest.raises(tpbsim.NkiError, match=r"128 indices x 144 elements against"):
        k(scale, np.abs(ind))


def test_several_runs_per_index_taken_by_dma_copy_only():
    """A gather of several runs per index is no dma_transpose source."""
    @nki.jit
    def k(scale, indices):
        idx = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=indices)
        sb = nl.ndarray((I // 2, P), dtype=scale.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(dst=sb, src=scale.reshape((E * G, 2, N, I)).ap(
            pattern=[[2 * N * I, P], [N * I, 1], [I, 2], [1, I // 2]], offset=0,
            vector_offset=idx, indirect_dim=0))
        return sb
    scale, ind = _scale_inputs()
    with pytest.raises(tpbsim.NkiError, match=r"several runs per index.*only by nisa.dma_copy"):
        k(scale.astype(np.float32), np.abs(ind))
